// The terminal for `swipectl tui`: raw mode through termios, the alternate screen, SGR mouse
// reporting, and their undoing on every way out: a normal exit (q, Ctrl-C, SIGTERM, SIGINT,
// SIGHUP, a failure) through `restore()`, and a crash signal (SIGSEGV, SIGBUS, SIGILL, SIGFPE,
// SIGABRT, SIGTRAP: Swift's traps among them; SIGQUIT, SIGSYS, SIGXCPU, SIGXFSZ, which dump core
// too) through a handler that writes the same bytes with async-signal-safe calls only and then
// dies of the signal as it would have.
//
// Meanwhile standard error goes to a pipe: what is written there (a Swift runtime's "Fatal
// error: …" before its trap) would land on the alternate screen and vanish with it, so it is
// written to the real standard error once the terminal is back.
#if canImport(Glibc)
    import Glibc
#endif

/// Alternate screen, hidden cursor, mouse button-event tracking (1002) in SGR encoding (1006),
/// and a question: does the terminal know synchronized output (DECRQM for mode 2026)? One that
/// does answers `ESC [ ? 2026 ; 2 $ y`; others say 0 or nothing, and frames go unwrapped.
let tuiEnterBytes = Array(
    "\u{1B}[?1049h\u{1B}[?25l\u{1B}[?1002h\u{1B}[?1006h\u{1B}[H\u{1B}[2J\u{1B}[?2026$p".utf8)
/// Undoes `tuiEnterBytes`: mouse off, attributes reset, cursor shown, main screen back.
let tuiLeaveBytes = Array("\u{1B}[?1006l\u{1B}[?1002l\u{1B}[0m\u{1B}[?25h\u{1B}[?1049l".utf8)

// What the crash handler needs, set once before the handlers are installed and never freed: a
// signal handler may not allocate, lock or touch Swift objects.
nonisolated(unsafe) private var crashTermios = termios()
nonisolated(unsafe) private var crashBytes: UnsafeMutablePointer<UInt8>? = nil
nonisolated(unsafe) private var crashCount = 0
nonisolated(unsafe) private var crashArmed: sig_atomic_t = 0
/// The real standard error, and the read end of the pipe that stands in for it.
nonisolated(unsafe) private var savedStderr: Int32 = -1
nonisolated(unsafe) private var stderrPipe: Int32 = -1

/// Puts the real standard error back and copies what the pipe holds to it (async-signal-safe).
private func replayStandardError() {
    guard savedStderr >= 0, stderrPipe >= 0 else { return }
    _ = dup2(savedStderr, 2)
    var buffer: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
    withUnsafeMutableBytes(of: &buffer) { raw in
        while true {
            let n = read(stderrPipe, raw.baseAddress, raw.count)
            if n <= 0 { break }
            _ = write(2, raw.baseAddress, n)
        }
    }
}

private let crashSignals = [
    SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGQUIT, SIGSYS, SIGXCPU, SIGXFSZ,
]

private func crashHandler(_ signal: Int32) {
    if crashArmed != 0, let bytes = crashBytes {
        crashArmed = 0
        _ = write(1, bytes, crashCount)
        _ = tcsetattr(0, TCSAFLUSH, &crashTermios)
        replayStandardError()
    }
    // SA_RESETHAND put the default action back: die of the same signal.
    _ = raise(signal)
}

final class TuiTerminal {
    private var saved = termios()
    private var active = false

    /// Enters raw mode and the alternate screen; fails when standard input or output is not a
    /// terminal.
    init() throws(Failure) {
        guard isatty(0) == 1, isatty(1) == 1 else {
            throw Failure(.usage, "tui needs a terminal on standard input and output")
        }
        guard tcgetattr(0, &saved) == 0 else {
            throw Failure(.usage, "tui: tcgetattr: \(String(cString: strerror(errno)))")
        }
        var raw = saved
        // cfmakeraw(3), spelled out: no echo, no line editing, no signals from keys (Ctrl-C
        // arrives as a byte and quits), no CR/NL translation, 8-bit characters.
        raw.c_iflag &= ~tcflag_t(IGNBRK | BRKINT | PARMRK | ISTRIP | INLCR | IGNCR | ICRNL | IXON)
        raw.c_oflag &= ~tcflag_t(OPOST)
        raw.c_lflag &= ~tcflag_t(ECHO | ECHONL | ICANON | ISIG | IEXTEN)
        raw.c_cflag &= ~tcflag_t(CSIZE | PARENB)
        raw.c_cflag |= tcflag_t(CS8)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        crashTermios = saved
        let bytes = UnsafeMutablePointer<UInt8>.allocate(capacity: tuiLeaveBytes.count)
        bytes.initialize(from: tuiLeaveBytes, count: tuiLeaveBytes.count)
        crashBytes = bytes
        crashCount = tuiLeaveBytes.count
        for signal in crashSignals {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = crashHandler
            action.sa_flags = Int32(bitPattern: UInt32(SA_RESETHAND))
            sigemptyset(&action.sa_mask)
            sigaction(signal, &action, nil)
        }
        guard tcsetattr(0, TCSAFLUSH, &raw) == 0 else {
            throw Failure(.usage, "tui: tcsetattr: \(String(cString: strerror(errno)))")
        }
        active = true
        crashArmed = 1
        captureStandardError()
        write(tuiEnterBytes)
    }

    /// Standard error into a non-blocking pipe until `restore` (see the top of the file). When
    /// no pipe can be made, standard error stays where it is: only messages written during a
    /// crash are then lost, which is said once on it.
    private func captureStandardError() {
        var fds: [Int32] = [-1, -1]
        let saved = fcntl(2, F_DUPFD_CLOEXEC, 3)
        guard saved >= 0, pipe(&fds) == 0 else {
            Output.error(
                "tui: cannot hold back standard error (\(String(cString: strerror(errno)))); going on without"
            )
            if saved >= 0 { close(saved) }
            return
        }
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        dup2(fds[1], 2)
        close(fds[1])
        savedStderr = saved
        stderrPipe = fds[0]
    }

    deinit { restore() }

    /// Puts the terminal back as it was; safe to call more than once.
    func restore() {
        guard active else { return }
        active = false
        crashArmed = 0
        write(tuiLeaveBytes)
        _ = tcsetattr(0, TCSAFLUSH, &saved)
        replayStandardError()
        if stderrPipe >= 0 { close(stderrPipe) }
        if savedStderr >= 0 { close(savedStderr) }
        (stderrPipe, savedStderr) = (-1, -1)
    }

    /// The terminal's size in cells (80×24 when it does not say).
    func size() -> (columns: Int, lines: Int) {
        var size = winsize()
        guard ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0 else {
            return (80, 24)
        }
        return (Int(size.ws_col), Int(size.ws_row))
    }

    /// Writes all of `bytes` to standard output (blocking: a terminal drains quickly).
    func write(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(1, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }  // the terminal is gone; the loop ends on its hang-up
            offset += n
        }
    }
}

/// SIGWINCH, SIGTERM, SIGINT and SIGHUP, blocked and read from a signalfd that the loop polls.
struct TuiSignals {
    let fd: Int32

    init() throws(Failure) {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in [SIGWINCH, SIGTERM, SIGINT, SIGHUP] { sigaddset(&set, signal) }
        pthread_sigmask(SIG_BLOCK, &set, nil)
        typealias SignalFD = @convention(c) (Int32, UnsafePointer<sigset_t>, Int32) -> Int32
        guard let symbol = dlsym(nil, "signalfd") else {
            throw Failure(.unreachable, "signalfd is missing from the C library")
        }
        // SFD_CLOEXEC == O_CLOEXEC, SFD_NONBLOCK == O_NONBLOCK
        let fd = unsafeBitCast(symbol, to: SignalFD.self)(-1, &set, O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw Failure(.unreachable, "signalfd: \(String(cString: strerror(errno)))") }
        self.fd = fd
    }

    /// The signals that arrived since the last call.
    func read() -> [Int32] {
        var signals: [Int32] = []
        var info = [UInt8](repeating: 0, count: 128)  // struct signalfd_siginfo
        while true {
            let n = info.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, 128) }
            if n < 0 && errno == EINTR { continue }
            guard n == 128 else { return signals }
            signals.append(Int32(info[0]) | Int32(info[1]) << 8 | Int32(info[2]) << 16 | Int32(info[3]) << 24)
        }
    }

    func close() { _ = Glibc.close(fd) }
}

/// Seconds on the monotonic clock.
func monotonicNow() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

// tui-bench: input to screen for `swipectl tui`, without a terminal emulator in the way (tmux
// and capture-pane cost milliseconds of their own). It starts swiped on a temporary socket,
// runs the front end on a pseudo-terminal (openpty, 80×24), presses the mouse on a row, then
// writes 1,000 drag steps (SGR 1006 motion reports, one column each, back and forth within the
// trailing edge's buttons) to the master and times each one until the frame it causes has come
// back (it answers the front end's DECRQM as a terminal with synchronized output would, so that
// each frame ends with the end of synchronized output, ESC [ ? 2026 l). Steps are 20 ms
// apart, as a mouse reports at 50 to 125 Hz, so that the front end's 60-frames-a-second cap
// never holds a frame back. Prints p50, p99 and the bytes written per step.
//
// Then long lists (issue 33), for each of --movies (10,000 and 100,000): a daemon of its own
// (`--durability normal`) given that many movies by pipelined `add`s, and `swipectl tui`
// started on it: the first screen (from the spawn until the list's first rows are on the pty),
// then a search typed key by key (`/`, "movie 77777", five backspaces: each time from the key
// to the end of its frame; the first letter matches every title, each next one narrows, a
// backspace looks through them all again), and j for comparison.
//
//     swift build -c release && .build/release/tui-bench [--steps N] [--movies N,N] [--bin DIR]
#if canImport(Glibc)
    import Glibc
#endif

func fail(_ message: String) -> Never {
    let text = Array("tui-bench: \(message)\n".utf8)
    _ = write(2, text, text.count)
    exit(1)
}

func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// Milliseconds with two decimals.
func ms(_ seconds: Double) -> String {
    let hundredths = Int((seconds * 100_000).rounded())
    let fraction = hundredths % 100
    return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
}

/// Spawns `argv` with its standard streams on `fd` (or inherited when nil), in a new session.
func spawn(_ argv: [String], stdio fd: Int32?) -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    if let fd {
        for target in [Int32(0), 1, 2] { posix_spawn_file_actions_adddup2(&actions, fd, target) }
    }
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    posix_spawnattr_setflags(&attributes, Int16(0x80))  // POSIX_SPAWN_SETSID
    var pid = pid_t()
    let cArgs = argv.map { strdup($0) } + [nil]
    let r = posix_spawn(&pid, argv[0], &actions, &attributes, cArgs, environ)
    for a in cArgs { free(a) }
    guard r == 0 else { fail("cannot start \(argv[0]): \(String(cString: strerror(r)))") }
    return pid
}

func reap(_ pid: pid_t, signal: Int32?) {
    if let signal { kill(pid, signal) }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
}

/// The pty's master side.
struct Master {
    let fd: Int32

    /// Reads until `done` holds for what came since the call; nil after `timeout` seconds.
    func read(until timeout: Double, _ done: ([UInt8]) -> Bool) -> [UInt8]? {
        var got: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        let deadline = now() + timeout
        while !done(got) {
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let left = Int32(max(0, (deadline - now()) * 1000))
            if left == 0 || poll(&pfd, 1, left) <= 0 { return nil }
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { return nil }
            got += buffer[0..<n]
        }
        return got
    }

    func write(_ text: String) {
        let bytes = Array(text.utf8)
        guard Glibc.write(fd, bytes, bytes.count) == bytes.count else { fail("write to the pty failed") }
    }
}

let frameEnd = Array("\u{1B}[?2026l".utf8)
func endsFrame(_ bytes: [UInt8]) -> Bool {
    bytes.count >= frameEnd.count && Array(bytes.suffix(frameEnd.count)) == frameEnd
}
func contains(_ bytes: [UInt8], _ text: String) -> Bool {
    let needle = Array(text.utf8)
    guard bytes.count >= needle.count else { return false }
    return (0...(bytes.count - needle.count)).contains { Array(bytes[$0..<($0 + needle.count)]) == needle }
}

/// An 80×24 pseudo-terminal: its master and slave descriptors.
func openPTY() -> (master: Int32, slave: Int32) {
    // openpty(3) is in the C library (glibc 2.34 and later) but not in Swift's Glibc module.
    typealias OpenPTY =
        @convention(c) (
            UnsafeMutablePointer<Int32>, UnsafeMutablePointer<Int32>, UnsafeMutablePointer<CChar>?,
            UnsafeRawPointer?, UnsafeRawPointer?
        ) -> Int32
    guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "openpty") else {
        fail("openpty is missing from the C library")
    }
    var master: Int32 = -1
    var slave: Int32 = -1
    var size = winsize(ws_row: 24, ws_col: 80, ws_xpixel: 0, ws_ypixel: 0)
    guard unsafeBitCast(symbol, to: OpenPTY.self)(&master, &slave, nil, nil, &size) == 0 else {
        fail("openpty: \(String(cString: strerror(errno)))")
    }
    return (master, slave)
}

func run() {
    var steps = 1000
    var lists = [10_000, 100_000]
    var bin = String(CommandLine.arguments[0].reversed().drop(while: { $0 != "/" }).dropFirst().reversed())
    if bin.isEmpty { bin = "." }
    var arguments = CommandLine.arguments.dropFirst()
    while let option = arguments.popFirst() {
        switch option {
        case "--steps":
            guard let n = Int(arguments.popFirst() ?? ""), n > 0 else { fail("--steps needs a number") }
            steps = n
        case "--movies":
            lists = (arguments.popFirst() ?? "").split(separator: ",").compactMap { Int($0) }
            guard !lists.isEmpty, lists.allSatisfy({ $0 >= 10 }) else {
                fail("--movies needs N,N… (10 or more)")
            }
        case "--bin":
            guard let d = arguments.popFirst() else { fail("--bin needs a directory") }
            bin = d
        default: fail("usage: tui-bench [--steps N] [--movies N,N] [--bin DIR]")
        }
    }

    // A private directory for the socket and the state.
    var template = Array("/tmp/tui-bench.XXXXXX".utf8CString)
    guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
        fail("mkdtemp: \(String(cString: strerror(errno)))")
    }
    let dir = String(cString: made)
    let socketPath = "\(dir)/swiped.sock"
    let daemon = spawn(["\(bin)/swiped", "--socket", socketPath, "--state", "\(dir)/state"], stdio: nil)
    let started = now()
    while access(socketPath, F_OK) != 0 {
        if now() - started > 10 { fail("swiped did not create \(socketPath)") }
        usleep(10_000)
    }

    let (masterFD, slave) = openPTY()
    let tui = spawn(["\(bin)/swipectl", "--socket", socketPath, "tui"], stdio: slave)
    close(slave)
    let master = Master(fd: masterFD)

    // Answer the front end's question as a terminal with synchronized output does (DECRQM:
    // mode 2026 known, reset), so that every frame ends with ESC [ ? 2026 l.
    guard master.read(until: 10, { contains($0, "\u{1B}[?2026$p") }) != nil else {
        fail("the front end did not ask about synchronized output")
    }
    master.write("\u{1B}[?2026;2$y")
    guard master.read(until: 10, { contains($0, "The Godfather") && contains($0, "connected") }) != nil else {
        fail("the front end did not draw its list")
    }
    master.write("j")  // a frame after the answer: wrapped
    guard master.read(until: 5, endsFrame) != nil else { fail("frames are not wrapped in mode 2026") }
    _ = master.read(until: 0.3) { _ in false }  // whatever else the first frames hold

    // Press on the second row (its title is on line 6, from 1) and start the gesture 4 columns
    // left (20 points: past rule 1's 10).
    master.write("\u{1B}[<0;60;6M")
    master.write("\u{1B}[<32;56;6M")
    guard master.read(until: 5, endsFrame) != nil else { fail("no frame for the first drag step") }
    _ = master.read(until: 0.1) { _ in false }

    var latencies: [Double] = []
    var bytesPerStep: [Int] = []
    var column = 56
    var direction = -1
    for _ in 0..<steps {
        column += direction
        if column <= 32 || column >= 56 { direction = -direction }  // dx −20 … −140 points
        let sent = now()
        master.write("\u{1B}[<32;\(column);6M")
        guard let frame = master.read(until: 2, endsFrame) else {
            fail("no frame within 2 s for a drag step")
        }
        latencies.append(now() - sent)
        bytesPerStep.append(frame.count)
        let wait = 0.020 - (now() - sent)
        if wait > 0 { usleep(UInt32(wait * 1e6)) }
    }
    master.write("\u{1B}[<0;\(column);6m")
    master.write("q")
    _ = master.read(until: 2) { contains($0, "\u{1B}[?1049l") }
    reap(tui, signal: nil)
    reap(daemon, signal: SIGTERM)
    close(masterFD)
    unlink(socketPath)
    _ = system("rm -rf '\(dir)'")

    latencies.sort()
    let p50 = latencies[latencies.count / 2]
    let p99 = latencies[min(latencies.count - 1, latencies.count * 99 / 100)]
    let mean = bytesPerStep.reduce(0, +) / bytesPerStep.count
    print(
        "tui-bench: \(steps) drag steps, input to frame: p50 \(ms(p50)) ms, p99 \(ms(p99)) ms, "
            + "max \(ms(latencies.last!)) ms; \(mean) bytes per step "
            + "(min \(bytesPerStep.min()!), max \(bytesPerStep.max()!))")
    for count in lists { longList(count, bin: bin) }
}

run()

// The journal's entries as readable lines on fd 2, for a daemon run in a terminal, or with its
// stderr in a pipe or a file (Journal says when). A thread of its own writes them, with plain
// blocking writes, so that a terminal stopped with Ctrl-S or a pipe nobody reads never holds up
// the event loop: the loop only copies a line into a bounded buffer. Not O_NONBLOCK on fd 2
// instead: that flag belongs to the open file description, which the shell and every other
// process on the same terminal or pipe share (their own writes would start failing with
// EAGAIN). When the buffer is full, lines are dropped and counted until the thread takes the
// buffer; once it has written what it took, it says how many: "N lines dropped".
import JSONCodec
import Plumbing
import StoreSQLite

#if canImport(Glibc)
    import Glibc
#endif

final class StderrLines: @unchecked Sendable {
    /// At most this many bytes wait for the thread: 64 KiB, about 600 lines.
    static let defaultCapacity = 64 * 1024

    private let fd: Int32
    private let capacity: Int
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    /// Signalled when lines are queued (the thread waits) and when a batch is written (`drain`).
    private let changed = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    // Guarded by `mutex`.
    private var queued: [UInt8] = []
    /// Lines dropped since the thread last took the buffer; while non-zero, every line is
    /// dropped, so that the count stands where the lines were lost, not after later ones.
    private var dropped = 0
    /// The thread holds a batch it has not finished writing.
    private var writing = false
    private var started = false
    /// Why fd 2 cannot be written (nil while it can), and whether the loop was told.
    private var failure: String?
    private var failureTold = false

    init(fd: Int32 = 2, capacity: Int = StderrLines.defaultCapacity) {
        self.fd = fd
        self.capacity = capacity
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(changed, nil)
        queued.reserveCapacity(capacity)
    }

    /// Only without a thread: a started one keeps its object for as long as the process lives.
    deinit {
        pthread_cond_destroy(changed)
        pthread_mutex_destroy(mutex)
        changed.deallocate()
        mutex.deallocate()
    }

    /// Queues `line` (one line, with its newline) and returns at once. Returns why fd 2 cannot be
    /// written, once, the first time a line meets that failure (the caller says so elsewhere).
    func append(_ line: [UInt8]) -> String? {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        if let failure {
            guard !failureTold else { return nil }
            failureTold = true
            return failure
        }
        if !started {
            started = true
            if let error = startThread() {
                failure = error
                failureTold = true
                return error
            }
        }
        if dropped > 0 || queued.count + line.count > capacity {
            dropped += 1
            return nil
        }
        queued.append(contentsOf: line)
        pthread_cond_signal(changed)
        return nil
    }

    /// Waits until every queued line is written, or `milliseconds` have passed (a stopped
    /// terminal must not keep the daemon from exiting). For the way out.
    func drain(milliseconds: Int) {
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        let nanoseconds = Int(deadline.tv_nsec) + (milliseconds % 1000) * 1_000_000
        deadline.tv_sec += milliseconds / 1000 + nanoseconds / 1_000_000_000
        deadline.tv_nsec = nanoseconds % 1_000_000_000
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while started && failure == nil && (writing || !queued.isEmpty || dropped > 0) {
            if pthread_cond_timedwait(changed, mutex, &deadline) == ETIMEDOUT { return }
        }
    }

    /// Starts the writer with every signal blocked: it must never take the SIGTERM meant for the
    /// loop's signalfd (the thread may start before the loop blocks them), and a write to a pipe
    /// whose reader went then fails with EPIPE instead of killing the daemon with SIGPIPE.
    private func startThread() -> String? {
        var all = sigset_t()
        var previous = sigset_t()
        sigfillset(&all)
        pthread_sigmask(SIG_BLOCK, &all, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        var thread = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        let r = pthread_create(
            &thread, nil,
            { context in
                Unmanaged<StderrLines>.fromOpaque(context!).takeRetainedValue().run()
                return nil
            }, context)
        guard r == 0 else {
            Unmanaged<StderrLines>.fromOpaque(context).release()
            return "pthread_create: \(String(cString: strerror(r)))"
        }
        pthread_detach(thread)
        return nil
    }

    /// The thread: takes everything queued, writes it (then the count of lines dropped after
    /// it), and again, until fd 2 fails; it then ends, and lines are discarded from then on.
    private func run() {
        var batch: [UInt8] = []
        batch.reserveCapacity(capacity + 128)
        pthread_mutex_lock(mutex)
        while true {
            while queued.isEmpty && dropped == 0 { pthread_cond_wait(changed, mutex) }
            swap(&queued, &batch)
            let lost = dropped
            dropped = 0
            writing = true
            pthread_mutex_unlock(mutex)
            if lost > 0 {
                batch += Self.format(
                    microseconds: SystemClock.wallMicroseconds(), .warning,
                    "\(lost) line\(lost == 1 ? "" : "s") dropped: stderr was not read fast enough", [])
            }
            let error = writeAll(batch)
            batch.removeAll(keepingCapacity: true)
            pthread_mutex_lock(mutex)
            writing = false
            pthread_cond_broadcast(changed)
            if let error {
                failure = error
                queued = []
                dropped = 0
                pthread_mutex_unlock(mutex)
                return
            }
        }
    }

    /// Writes `bytes` whole to fd 2, blocking as long as it takes; nil, or why it cannot.
    private func writeAll(_ bytes: [UInt8]) -> String? {
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n > 0 {
                    offset += n
                    continue
                }
                let error = n == 0 ? EIO : errno
                switch error {
                case EINTR: continue
                case EAGAIN:
                    // Another process set O_NONBLOCK on the description we share: wait for room.
                    var pfd = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&pfd, 1, -1)
                default:
                    return "write: \(String(cString: strerror(error)))"
                }
            }
            return nil
        }
    }

    // MARK: - The line

    /// `2026-12-03T11:40:02.123Z info client connected client=7 peer_uid=1000`: the time (UTC, to
    /// the millisecond), the level, the message, then the fields as `key=value` with the key in
    /// lower case. A value with a space, a quote, `=` or a backslash, or an empty one, is quoted,
    /// so that a line splits back into its fields. Control characters are written as escapes
    /// (`\n`, `\x1b`), so that one entry stays one line and a movie id chosen by a client cannot
    /// drive the terminal.
    static func format(
        microseconds: Int64, _ priority: Priority, _ message: String, _ fields: [(String, String)]
    ) -> [UInt8] {
        var line: [UInt8] = []
        line.reserveCapacity(64 + message.utf8.count + fields.count * 24)
        RFC3339.append(microsecondsSinceEpoch: microseconds, to: &line)
        // `….123456Z` to `….123Z`: milliseconds are what a person reads.
        line.removeSubrange((line.count - 4)..<(line.count - 1))
        line.append(UInt8(ascii: " "))
        line += priority.name.utf8
        line.append(UInt8(ascii: " "))
        appendEscaped(message, to: &line)
        for (key, value) in fields {
            line.append(UInt8(ascii: " "))
            for byte in key.utf8 {
                line.append(byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte)
            }
            line.append(UInt8(ascii: "="))
            let quoted =
                value.isEmpty
                || value.utf8.contains {
                    $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "=")
                        || $0 == UInt8(ascii: "\\")
                }
            if quoted { line.append(UInt8(ascii: "\"")) }
            appendEscaped(value, to: &line, quoting: quoted)
            if quoted { line.append(UInt8(ascii: "\"")) }
        }
        line.append(UInt8(ascii: "\n"))
        return line
    }

    private static func appendEscaped(_ text: String, to line: inout [UInt8], quoting: Bool = false) {
        let hex = Array("0123456789abcdef".utf8)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\n"): line += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case UInt8(ascii: "\t"): line += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                if quoting { line.append(UInt8(ascii: "\\")) }
                line.append(byte)
            case 0..<0x20, 0x7f:
                line += [UInt8(ascii: "\\"), UInt8(ascii: "x"), hex[Int(byte >> 4)], hex[Int(byte & 0xf)]]
            default: line.append(byte)
            }
        }
    }
}

// The daemon's file descriptors: one per client, and a few of its own. A daemon that serves
// 10,000 clients must not stop at the 1,024 descriptors a shell or a unit gives by default: it
// raises its soft RLIMIT_NOFILE to the hard limit at start, and its default --max-clients
// follows from what it got.

#if canImport(Glibc)
    import Glibc
#endif

enum FileLimit {
    /// Descriptors kept for the daemon itself: the listener, the epoll sets, eventfds and
    /// signalfds, SQLite's files (the log, its WAL and shared memory, for the writer and the
    /// reader), the lock file, the journal's socket, and room for a client to be accepted and
    /// told `too-many-clients`.
    static let reserved = 64

    private static let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)

    /// What `raise()` found and did.
    struct Outcome: Equatable {
        /// The soft limit in force now.
        var soft: Int
        var hard: Int
        /// Why the soft limit could not be raised to the hard one, if it could not.
        var failure: String?
    }

    /// Raises the soft limit to the hard one (or to the kernel's `nr_open` when the hard limit
    /// is unlimited, which the kernel would refuse).
    static func raise() -> Outcome {
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else {
            return Outcome(soft: 1024, hard: 1024, failure: "getrlimit: \(String(cString: strerror(errno)))")
        }
        var target = limit.rlim_max
        var failure: String?
        if target == rlim_t.max {  // RLIM_INFINITY
            switch nrOpen() {
            case .read(let most): target = most
            case .unread(let why):
                target = limit.rlim_cur
                failure = why
            }
        }
        var outcome = Outcome(soft: clamp(limit.rlim_cur), hard: clamp(target), failure: failure)
        guard limit.rlim_cur < target else { return outcome }
        var raised = limit
        raised.rlim_cur = target
        if setrlimit(resource, &raised) == 0 {
            outcome.soft = clamp(target)
        } else {
            outcome.failure = "setrlimit: \(String(cString: strerror(errno)))"
        }
        return outcome
    }

    /// The clients a soft limit of `limit` descriptors can serve.
    static func clients(forLimit limit: Int) -> Int { max(1, limit - reserved) }

    private static func clamp(_ value: rlim_t) -> Int { value > rlim_t(Int.max) ? Int.max : Int(value) }

    private enum NrOpen {
        case read(rlim_t)
        case unread(String)
    }

    /// The kernel's most descriptors per process, or why it could not be read (then the soft
    /// limit stays, and the caller says so).
    private static func nrOpen() -> NrOpen {
        let path = "/proc/sys/fs/nr_open"
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .unread("open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 32)
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard n > 0 else {
            return .unread("read \(path): \(n < 0 ? String(cString: strerror(errno)) : "empty")")
        }
        let digits = buffer[0..<n].prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
        guard let most = UInt64(String(decoding: digits, as: UTF8.self)) else {
            return .unread("\(path): not a number")
        }
        return .read(rlim_t(most))
    }
}

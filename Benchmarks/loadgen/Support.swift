// Small system helpers for loadgen: a monotonic clock, Unix-socket connects, non-blocking mode,
// and an HDR-style latency histogram (log-linear buckets, about 3 % wide).
import CSystemd  // sys/socket.h (SOCK_*, MSG_NOSIGNAL)

#if canImport(Glibc)
    import Glibc
#endif

/// CLOCK_MONOTONIC in nanoseconds.
@inline(__always)
func nowNanos() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
}

func fail(_ message: String) -> Never {
    var text = "loadgen: \(message)\n"
    text.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    exit(1)
}

/// A connect to a Unix stream socket; nil (with errno) on failure. Non-blocking, a full listen
/// backlog fails at once with EAGAIN (a blocking connect waits for room).
func connectUnix(_ path: String, nonBlocking: Bool = false) -> Int32? {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
        fail("socket path too long: \(path)")
    }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        raw.copyBytes(from: bytes)
        raw[bytes.count] = 0
    }
    let flags =
        Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        | (nonBlocking ? Int32(SOCK_NONBLOCK.rawValue) : 0)
    let fd = socket(AF_UNIX, flags, 0)
    guard fd >= 0 else { return nil }
    let r = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
    }
    if r != 0 {
        let saved = errno
        close(fd)
        errno = saved
        return nil
    }
    return fd
}

/// Raises this process's soft limit on descriptors to at least `needed` (up to the hard limit):
/// 10,000 clients need more than the 1,024 a shell gives.
func raiseFileLimit(to needed: Int) {
    let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    var limit = rlimit()
    guard getrlimit(resource, &limit) == 0, limit.rlim_cur < rlim_t(needed) else { return }
    limit.rlim_cur = min(limit.rlim_max, rlim_t(needed))
    _ = setrlimit(resource, &limit)
    if limit.rlim_cur < rlim_t(needed) {
        fail("need \(needed) descriptors; the hard limit is \(limit.rlim_max)")
    }
}

/// Connects, retrying for up to `seconds` while the server is not there yet.
func connectRetrying(_ path: String, seconds: Double = 5) -> Int32 {
    let deadline = nowNanos() + UInt64(seconds * 1e9)
    while true {
        if let fd = connectUnix(path) { return fd }
        if nowNanos() > deadline { fail("cannot connect to \(path): \(String(cString: strerror(errno)))") }
        usleep(2000)
    }
}

func setNonBlocking(_ fd: Int32) {
    let flags = fcntl(fd, F_GETFL)
    _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
}

/// Writes all of `bytes` to a blocking or non-blocking fd (spinning on EAGAIN: only for small
/// control messages, never on the measured path).
func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
    var offset = 0
    while offset < bytes.count {
        let n = bytes.withUnsafeBytes {
            send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
        }
        if n > 0 {
            offset += n
        } else if n < 0 && (errno == EINTR || errno == EAGAIN) {
            continue
        } else {
            return false
        }
    }
    return true
}

/// CPU time a process has run, all threads, in ns (the first field of each task's schedstat);
/// nil when unreadable. On a shared machine this is the steadiest measure of a server's cost.
func cpuNanos(pid: Int32) -> UInt64? {
    guard let dir = opendir("/proc/\(pid)/task") else { return nil }
    defer { closedir(dir) }
    var total: UInt64 = 0
    while let entry = readdir(dir) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
            String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
        guard name.first?.isNumber == true, let file = fopen("/proc/\(pid)/task/\(name)/schedstat", "r")
        else { continue }
        var ns: UInt64 = 0
        var line = [CChar](repeating: 0, count: 128)
        if fgets(&line, Int32(line.count), file) != nil {
            let text = line.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            ns = UInt64(text.split(separator: " ").first ?? "") ?? 0
        }
        fclose(file)
        total += ns
    }
    return total
}

/// Resident set size of a process in KiB (VmRSS in /proc/PID/status), nil when unreadable.
func residentKiB(pid: Int32) -> Int? {
    guard let file = fopen("/proc/\(pid)/status", "r") else { return nil }
    defer { fclose(file) }
    var line = [CChar](repeating: 0, count: 256)
    while fgets(&line, Int32(line.count), file) != nil {
        let text = line.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        if text.hasPrefix("VmRSS:") {
            return Int(text.dropFirst(6).filter { $0.isNumber })
        }
    }
    return nil
}

/// Log-linear histogram of nanosecond values: 32 sub-buckets per power of two (≤ 3.1 % error).
struct Histogram {
    static let subBits = 5
    static let subCount = 1 << subBits
    var counts = [UInt64](repeating: 0, count: (64 - subBits + 1) * subCount)
    var total: UInt64 = 0
    var maxValue: UInt64 = 0

    @inline(__always)
    static func index(_ v: UInt64) -> Int {
        if v < UInt64(subCount) { return Int(v) }
        let e = 63 - v.leadingZeroBitCount
        let sub = Int((v >> UInt64(e - subBits)) & UInt64(subCount - 1))
        return (e - subBits + 1) * subCount + sub
    }

    /// The middle of bucket `i`.
    static func value(_ i: Int) -> UInt64 {
        if i < subCount { return UInt64(i) }
        let e = i / subCount + subBits - 1
        let sub = UInt64(i % subCount)
        let low = (UInt64(subCount) + sub) << UInt64(e - subBits)
        return low + (UInt64(1) << UInt64(e - subBits)) / 2
    }

    @inline(__always)
    mutating func record(_ v: UInt64) {
        counts[Histogram.index(v)] &+= 1
        total &+= 1
        if v > maxValue { maxValue = v }
    }

    mutating func merge(_ other: Histogram) {
        for i in counts.indices { counts[i] &+= other.counts[i] }
        total += other.total
        maxValue = max(maxValue, other.maxValue)
    }

    /// The value at quantile q (0…1), in ns.
    func quantile(_ q: Double) -> UInt64 {
        guard total > 0 else { return 0 }
        let rank = UInt64((Double(total) * q).rounded(.up))
        var seen: UInt64 = 0
        for (i, c) in counts.enumerated() where c > 0 {
            seen += c
            if seen >= max(rank, 1) { return min(Histogram.value(i), maxValue) }
        }
        return maxValue
    }
}

/// "12.3" µs from ns, for tables.
func micros(_ ns: UInt64) -> String { formatted(Double(ns) / 1000, digits: ns < 100_000 ? 1 : 0) }

func formatted(_ x: Double, digits: Int) -> String {
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let r = (x * scale).rounded() / scale
    if digits == 0 { return String(Int(r)) }
    var s = String(r)
    if let dot = s.firstIndex(of: ".") {
        let decimals = s.distance(from: dot, to: s.endIndex) - 1
        if decimals < digits { s += String(repeating: "0", count: digits - decimals) }
    }
    return s
}

// The process's own figures for `status` and `/metrics` (MetricsSnapshot.Process): resident
// memory and open file descriptors, read from /proc/self, which the shipped unit leaves readable
// (ProtectProc=invisible and ProcSubset=pid hide other processes, not this one). Read on a
// `status` request or a scrape, never on a hot path: counting descriptors lists /proc/self/fd,
// one entry per client (about a millisecond for 10,000).
#if canImport(Glibc)
    import Glibc
#endif

enum ProcessFigures {
    /// Resident memory in bytes (`/proc/self/statm`'s second field, in pages); nil if unreadable.
    static func residentBytes(statm: String = "/proc/self/statm") -> UInt64? {
        guard let text = readSmallFile(statm) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count >= 2, let pages = UInt64(fields[1]) else { return nil }
        return pages * UInt64(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// Open file descriptors (the entries of `/proc/self/fd`, less the one listing them); nil if
    /// unreadable.
    static func openFiles(directory: String = "/proc/self/fd") -> Int? {
        guard let dir = opendir(directory) else { return nil }
        defer { closedir(dir) }
        var count = 0
        while let entry = readdir(dir) {
            let isDot = withUnsafeBytes(of: entry.pointee.d_name) { name in
                name[0] == UInt8(ascii: ".")
                    && (name[1] == 0 || (name[1] == UInt8(ascii: ".") && name[2] == 0))
            }
            if !isDot { count += 1 }
        }
        return count - 1
    }

    /// A file of at most 4 KiB, whole; nil if it cannot be read.
    static func readSmallFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        var length = 0
        while length < buffer.count {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + length, $0.count - length) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            length += n
        }
        return String(decoding: buffer[..<length], as: UTF8.self)
    }
}

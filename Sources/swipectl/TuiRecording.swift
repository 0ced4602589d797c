// Where `swipectl tui` saves a recording (the `r` key, issue 18): a new file named after the
// local time, never one that is there already, next to the rows its connection received, so
// that `swipectl replay FILE --expect FILE.rows` checks it as it does `swipe --record`'s.
import JSONCodec

#if canImport(Glibc)
    import Glibc
#endif

enum TuiRecording {
    /// `swiped-recording-YYYYMMDD-HHMMSS.json` (local time), with `-2`, `-3`… before `.json`
    /// when a recording of the same second (or its `.rows`) is there already.
    /// Returns the file's name (in `directory`).
    static func save(recording: JSON, rows: [String], in directory: String) throws(Failure) -> String {
        var clock = time(nil)
        var parts = tm()
        localtime_r(&clock, &parts)
        let stamp =
            String(parts.tm_year + 1900) + pad(parts.tm_mon + 1) + pad(parts.tm_mday) + "-"
            + pad(parts.tm_hour) + pad(parts.tm_min) + pad(parts.tm_sec)
        let prefix = directory.hasSuffix("/") ? directory : directory + "/"
        let base = "swiped-recording-" + stamp
        var out = JSONWriter()
        out.value(recording)
        out.newline()
        let rowBytes = Array(rows.map { $0 + "\n" }.joined().utf8)
        for n in 1...100 {
            let name = base + (n == 1 ? "" : "-\(n)") + ".json"
            let path = prefix + name
            guard access(path, F_OK) != 0, access(path + ".rows", F_OK) != 0 else { continue }
            // Created exclusively: a file that appeared meanwhile is left alone, the next name tried.
            guard try create(path, out.bytes) else { continue }
            do {
                if try create(path + ".rows", rowBytes) { return name }
            } catch {
                unlink(path)
                throw error
            }
            unlink(path)  // its .rows appeared meanwhile: both go under the next name
        }
        throw Failure(
            .refused, "cannot save the recording: \(prefix)\(base).json and 99 more names are taken")
    }

    /// Why recordings cannot be saved in `directory`; nil when they can.
    static func unwritable(_ directory: String) -> String? {
        var info = stat()
        guard stat(directory, &info) == 0 else { return String(cString: strerror(errno)) }
        guard info.st_mode & S_IFMT == S_IFDIR else { return "not a directory" }
        guard access(directory, W_OK | X_OK) == 0 else {
            return "cannot write in it (\(String(cString: strerror(errno))))"
        }
        return nil
    }

    private static func pad(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }

    /// Writes `bytes` to a new file at `path` and syncs it; false when the file exists already.
    private static func create(_ path: String, _ bytes: [UInt8]) throws(Failure) -> Bool {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        if fd < 0 && errno == EEXIST { return false }
        guard fd >= 0 else { throw failure("cannot create", path) }
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                let error = failure("cannot write", path)
                close(fd)
                unlink(path)  // a partial recording would not replay: leave none
                throw error
            }
            offset += n
        }
        let synced = fsync(fd) == 0
        guard close(fd) == 0, synced else {
            let error = failure("cannot write", path)
            unlink(path)
            throw error
        }
        return true
    }

    private static func failure(_ what: String, _ path: String) -> Failure {
        Failure(.refused, "\(what) \(path): \(String(cString: strerror(errno)))")
    }
}

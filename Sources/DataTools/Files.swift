// Files as `backup`, `export` and `import` write them (issue 32): never a file that looks whole
// before it is — a temporary name made with O_EXCL and mode 0600 next to the target, fsynced,
// then renamed (or linked, when an existing file must not be replaced) and the directory fsynced.
import Glibc

enum Files {
    static func errno(_ what: String) -> Fault { Fault("\(what): \(String(cString: strerror(Glibc.errno)))") }

    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    static func base(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }

    /// `.<name>.tmp-<pid>` beside `path`: hidden, and named for what it will become.
    static func temporary(for path: String) -> String {
        directory(of: path) + "/." + base(of: path) + ".tmp-\(getpid())"
    }

    static func exists(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0
    }

    /// Creates `path` empty, mode 0600 whatever the umask; refuses an existing one.
    static func createExclusive(_ path: String) throws(Fault) -> Int32 {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw errno("\(path): cannot create") }
        guard fchmod(fd, 0o600) == 0 else {
            let f = errno("\(path): cannot set its mode")
            close(fd)
            unlink(path)
            throw f
        }
        return fd
    }

    static func fsync(path: String) throws(Fault) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw errno("\(path): cannot open to fsync") }
        defer { close(fd) }
        guard Glibc.fsync(fd) == 0 else { throw errno("\(path): fsync failed") }
    }

    /// Puts the finished `temporary` at `path` and fsyncs the directory. Without `replace`, an
    /// existing `path` is kept and refused (a hard link cannot replace a file, as rename would).
    static func publish(_ temporary: String, as path: String, replace: Bool) throws(Fault) {
        if replace {
            guard rename(temporary, path) == 0 else {
                throw errno("\(path): cannot rename \(temporary) to it")
            }
        } else {
            guard link(temporary, path) == 0 else {
                let f =
                    Glibc.errno == EEXIST
                    ? Fault("\(path) exists: not replaced (--force replaces it)")
                    : errno("\(path): cannot create")
                throw f
            }
            unlink(temporary)
        }
        try fsync(path: directory(of: path))
    }

    /// The names in `directory` (empty when it cannot be read).
    static func names(in directory: String) -> [String] {
        guard let d = opendir(directory) else { return [] }
        defer { closedir(d) }
        var out: [String] = []
        while let e = readdir(d) {
            let name = withUnsafeBytes(of: e.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { out.append(name) }
        }
        return out
    }

    /// Removes a file SQLite used and its companions.
    static func removeDatabase(_ path: String) {
        for suffix in ["", "-wal", "-shm", "-journal"] { unlink(path + suffix) }
    }
}

/// Bytes out, buffered, with the SHA-256 of everything written (the export's trailer).
final class Output {
    let fd: Int32
    /// The file being written (nil for standard output).
    let temporary: String?
    private var buffer: [UInt8] = []
    private(set) var hash = SHA256()
    private(set) var written = 0
    private var closed = false

    /// Standard output.
    init() {
        fd = 1
        temporary = nil
    }

    /// A new temporary file beside `path` (see `Files`).
    init(beside path: String) throws(Fault) {
        let t = Files.temporary(for: path)
        fd = try Files.createExclusive(t)
        temporary = t
    }

    func write(_ bytes: [UInt8], hashed: Bool = true) throws(Fault) {
        if hashed { hash.update(bytes) }
        buffer += bytes
        written += bytes.count
        if buffer.count >= 1 << 20 { try flush() }
    }

    func flush() throws(Fault) {
        var at = 0
        while at < buffer.count {
            let n = buffer.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + at, $0.count - at) }
            if n < 0 {
                if Glibc.errno == EINTR { continue }
                throw Files.errno("\(temporary ?? "standard output"): write failed")
            }
            at += n
        }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Flushes and fsyncs (a file) and closes it.
    func finish() throws(Fault) {
        try flush()
        guard let temporary else { return }
        guard fsync(fd) == 0 else { throw Files.errno("\(temporary): fsync failed") }
        close(fd)
        closed = true
    }

    /// Closes and removes the temporary file.
    func discard() {
        guard let temporary else { return }
        if !closed { close(fd) }
        closed = true
        unlink(temporary)
    }
}

/// Lines in from a file or standard input, with their numbers, each at most `maxLine` bytes: a
/// longer one is refused before more of it is read. The buffer is allocated once, `maxLine +
/// chunk` bytes, and never grows whatever the input (the framing of STYLE.md's
/// LineBasedFrameDecoder: a cap, and no rescans).
final class LineInput {
    /// Bytes read at a time, at most.
    static let chunk = 1 << 20
    private let fd: Int32
    let name: String
    /// The longest line accepted, newline excluded.
    let maxLine: Int
    /// `buffer[start..<end]` is read and not yet returned.
    private var buffer: [UInt8]
    private var start = 0
    private var end = 0
    /// Where the search for a newline resumes: `buffer[start..<scanned]` has none.
    private var scanned = 0
    private var eof = false
    private(set) var number = 0
    /// Whether the last line returned ended without a newline (the file was cut).
    private(set) var unterminated = false

    init(fd: Int32, name: String, maxLine: Int = ExportFormat.maxLineBytes) {
        self.fd = fd
        self.name = name
        self.maxLine = maxLine
        buffer = [UInt8](repeating: 0, count: maxLine + LineInput.chunk)
    }

    deinit { if fd > 2 { close(fd) } }

    static func open(_ path: String) throws(Fault) -> LineInput {
        if path == "-" { return LineInput(fd: 0, name: "standard input") }
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Files.errno("\(path): cannot open") }
        return LineInput(fd: fd, name: path)
    }

    /// The bytes the buffer holds room for (the bound above, for tests).
    var buffered: Int { buffer.capacity }

    /// The next line without its newline, nil at the end.
    func next() throws(Fault) -> ArraySlice<UInt8>? {
        while true {
            if let nl = buffer[scanned..<end].firstIndex(of: 0x0A) {
                guard nl - start <= maxLine else { throw tooLong() }
                let line = buffer[start..<nl]
                start = nl + 1
                scanned = start
                number += 1
                return line
            }
            scanned = end
            guard end - start <= maxLine else { throw tooLong() }
            if eof {
                guard start < end else { return nil }
                let line = buffer[start..<end]
                start = end
                scanned = end
                number += 1
                unterminated = true
                return line
            }
            try fill()
        }
    }

    /// Reads what comes next after `end`, first moving the bytes not yet returned to the front
    /// when less than a chunk is left after them (they are at most `maxLine`, so a chunk fits).
    private func fill() throws(Fault) {
        if buffer.count - end < LineInput.chunk {
            let (from, count) = (start, end - start)
            buffer.withUnsafeMutableBytes { b in _ = memmove(b.baseAddress!, b.baseAddress! + from, count) }
            scanned -= start
            end -= start
            start = 0
        }
        let at = end
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + at, $0.count - at) }
        if n < 0 {
            if Glibc.errno == EINTR { return }
            throw Files.errno("\(name): read failed")
        }
        if n == 0 { eof = true }
        end += n
    }

    private func tooLong() -> Fault {
        Fault(
            "\(name): line \(number + 1) is longer than \(maxLine) bytes, which no line of a swiped export is: not an export, or a damaged one"
        )
    }

    /// The first bytes of a file, to tell an SQLite database from an export.
    static func isSQLite(_ path: String) -> Bool {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var magic = [UInt8](repeating: 0, count: 16)
        let n = magic.withUnsafeMutableBytes { read(fd, $0.baseAddress!, 16) }
        return n == 16 && magic == Array("SQLite format 3\0".utf8)
    }
}

// The web page's files (`--web-root DIR`), read into memory at start and at SIGHUP: the web
// listener then never touches the file system for a browser (HTTPScrape's StaticSite decides
// every request from this table). What is loaded: every regular file under DIR whose path has no
// segment starting with a dot, through symlinks that stay inside DIR (one that points out is
// skipped, with a warning: a link to /etc/shadow in the root must not serve it), up to
// `maxFiles` files, `maxDepth` directories deep, `maxFileBytes` a file and `maxBytes` in all
// (a root by mistake at / must not fill the memory).
import HTTPScrape
import WebSocket

#if canImport(Glibc)
    import Glibc
#endif

enum WebRoot {
    static let maxFiles = 1000
    static let maxDepth = 8
    static let maxFileBytes = 16 << 20
    static let maxBytes = 64 << 20

    struct Loaded {
        var site = StaticSite()
        var bytes = 0
        /// What was left out, and why: for the journal (one warning each).
        var skipped: [(path: String, why: String)] = []
    }

    struct LoadError: Error, CustomStringConvertible {
        let description: String
    }

    /// The files under `directory`, or why none can be read (the directory itself).
    static func load(_ directory: String) throws(LoadError) -> Loaded {
        guard let real = realpath(directory, nil) else {
            throw LoadError(description: "\(directory): \(String(cString: strerror(errno)))")
        }
        let root = String(cString: real)
        free(real)
        var st = stat()
        guard stat(root, &st) == 0, st.st_mode & S_IFMT == S_IFDIR else {
            throw LoadError(description: "\(directory): not a directory")
        }
        var loaded = Loaded()
        walk(root: root, relative: "", depth: 0, into: &loaded)
        if loaded.site.files["index.html"] == nil {
            loaded.skipped.append(("index.html", "missing: / is answered 404"))
        }
        return loaded
    }

    private static func walk(root: String, relative: String, depth: Int, into loaded: inout Loaded) {
        let path = relative.isEmpty ? root : root + "/" + relative
        guard let dir = opendir(path) else {
            loaded.skipped.append((relative.isEmpty ? "." : relative, String(cString: strerror(errno))))
            return
        }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if !name.hasPrefix(".") { names.append(name) }
        }
        for name in names.sorted() {
            let child = relative.isEmpty ? name : relative + "/" + name
            guard let real = realpath(root + "/" + child, nil) else {
                loaded.skipped.append((child, String(cString: strerror(errno))))
                continue
            }
            let target = String(cString: real)
            free(real)
            guard target.hasPrefix(root + "/") else {
                loaded.skipped.append((child, "a symlink out of the web root (to \(target))"))
                continue
            }
            var st = stat()
            guard stat(target, &st) == 0 else {
                loaded.skipped.append((child, String(cString: strerror(errno))))
                continue
            }
            switch st.st_mode & S_IFMT {
            case S_IFDIR:
                guard depth < maxDepth else {
                    loaded.skipped.append((child, "deeper than \(maxDepth) directories"))
                    continue
                }
                walk(root: root, relative: child, depth: depth + 1, into: &loaded)
            case S_IFREG:
                add(child, target, size: Int(st.st_size), into: &loaded)
            default:
                loaded.skipped.append((child, "not a regular file"))
            }
        }
    }

    private static func add(_ name: String, _ path: String, size: Int, into loaded: inout Loaded) {
        guard loaded.site.files.count < maxFiles else {
            loaded.skipped.append((name, "more than \(maxFiles) files"))
            return
        }
        guard size <= maxFileBytes, loaded.bytes + size <= maxBytes else {
            loaded.skipped.append(
                (name, "over \(maxFileBytes >> 20) MiB, or the root over \(maxBytes >> 20) MiB"))
            return
        }
        let body: [UInt8]
        switch read(path, size: size) {
        case .success(let bytes): body = bytes
        case .failure(let error):
            loaded.skipped.append((name, "\(error)"))
            return
        }
        let etag = "\"" + Digest.sha256Hex(body).prefix(32) + "\""
        loaded.site.files[name] = StaticFile(
            body: body, contentType: StaticPath.contentType(name), etag: etag)
        loaded.bytes += body.count
    }

    /// A file's bytes: at most `size` (what stat said: a file growing meanwhile is cut there).
    private static func read(_ path: String, size: Int) -> Result<[UInt8], SystemError> {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(SystemError("open")) }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: size)
        var got = 0
        while got < size {
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + got, size - got) }
            if n < 0 {
                if errno == EINTR { continue }
                return .failure(SystemError("read"))
            }
            if n == 0 { break }
            got += n
        }
        return .success(Array(bytes[0..<got]))
    }
}

// The web page's static files as decisions (issue 43): which file a request path names, its
// media type, and the response to a GET or HEAD of it. The files themselves are the daemon's
// to read: it loads the `--web-root` directory once, at start and at SIGHUP, into a StaticSite
// (Sources/Daemon/WebRoot.swift). So a request never reaches the file system: nothing outside
// the root can be named (no `..`, no percent-encoded slash or dot segment, no NUL, no symlink
// out: those were never loaded), there is no directory listing (a directory is not a file of
// the table), and a browser that reads slowly costs a reference to bytes already in memory.
//
// Caching: every response carries a strong ETag (a digest of the file's bytes, made by the
// loader) and `Cache-Control: no-cache`: a browser keeps the files but asks again on every use
// with `If-None-Match`, and is answered 304 without a body while the file is unchanged. So an
// edited page is seen at the next load after a reload of the daemon (SIGHUP), never stale.

/// One file as served: its bytes, its media type, its ETag (quoted).
public struct StaticFile: Equatable, Sendable {
    public let body: [UInt8]
    public let contentType: String
    /// A strong entity tag with its quotes: `"5f2b…"`.
    public let etag: String

    public init(body: [UInt8], contentType: String, etag: String) {
        self.body = body
        self.contentType = contentType
        self.etag = etag
    }
}

/// The files of the page, by their path relative to the root (`index.html`, `sub/a.css`).
public struct StaticSite: Equatable, Sendable {
    public var files: [String: StaticFile]

    public init(files: [String: StaticFile] = [:]) { self.files = files }

    /// The answer to a GET or HEAD of `request.path`: the file (200), 304 when the browser's
    /// copy is current, else 404 (and why, for the journal).
    public func response(to request: HTTPRequest) -> (status: Status, bytes: [UInt8], refusal: String?) {
        guard let name = StaticPath.file(request.path) else {
            return (
                .notFound, Response.error(.notFound, head: request.head),
                "not a file name the page could have"
            )
        }
        guard let file = files[name] else {
            return (.notFound, Response.error(.notFound, head: request.head), "no such file in the web root")
        }
        if let tags = request.value("if-none-match"), StaticPath.matches(tags, file.etag) {
            return (.notModified, Response.notModified(etag: file.etag), nil)
        }
        return (.ok, Response.file(file, head: request.head), nil)
    }
}

extension Response {
    /// A file: its type, length and ETag; revalidated on every use (`no-cache`).
    public static func file(_ file: StaticFile, head: Bool) -> [UInt8] {
        var text = "HTTP/1.1 200 OK\r\n"
        text += "Content-Type: \(file.contentType)\r\n"
        text += "Content-Length: \(file.body.count)\r\n"
        text += "ETag: \(file.etag)\r\n"
        text += "Cache-Control: no-cache\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n"
        return Array(text.utf8) + (head ? [] : file.body)
    }

    /// The browser's copy is current (RFC 9110, 15.4.5: the headers a 200 would have had that
    /// matter to its cache, no body).
    public static func notModified(etag: String) -> [UInt8] {
        Array(
            "HTTP/1.1 304 Not Modified\r\nETag: \(etag)\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n"
                .utf8)
    }
}

public enum StaticPath {
    /// The file a request path names, relative to the root: `/` and any path ending in `/` name
    /// that directory's `index.html`. Nil for a path no file of the root can have: not starting
    /// with `/`, a `%` without two hex digits, an encoded `/` (`%2F`: one name, or two?), an
    /// empty segment (`//`), a segment that is `.`, `..` or starts with a dot (hidden files,
    /// `.git`), a NUL or another control byte, a backslash, bytes that are not UTF-8. Checked
    /// after percent-decoding, so `%2e%2e` is `..`.
    public static func file(_ path: some Collection<UInt8>) -> String? {
        guard path.first == UInt8(ascii: "/") else { return nil }
        var segments: [[UInt8]] = [[]]
        var bytes = path.dropFirst().makeIterator()
        while let b = bytes.next() {
            if b == UInt8(ascii: "/") {
                segments.append([])
                continue
            }
            var byte = b
            if b == UInt8(ascii: "%") {
                guard let high = bytes.next().flatMap(hexValue), let low = bytes.next().flatMap(hexValue)
                else {
                    return nil
                }
                byte = high << 4 | low
                guard byte != UInt8(ascii: "/") else { return nil }
            }
            guard byte >= 0x20, byte != 0x7F, byte != UInt8(ascii: "\\") else { return nil }
            segments[segments.count - 1].append(byte)
        }
        if segments[segments.count - 1].isEmpty { segments[segments.count - 1] = Array("index.html".utf8) }
        var names: [String] = []
        for segment in segments {
            guard !segment.isEmpty, segment.first != UInt8(ascii: ".") else { return nil }
            let name = String(decoding: segment, as: UTF8.self)
            guard name.utf8.elementsEqual(segment) else { return nil }  // not UTF-8
            names.append(name)
        }
        return names.joined(separator: "/")
    }

    /// The media type of a file, by its extension; `application/octet-stream` for the rest
    /// (with `nosniff`, a browser then neither runs nor shows it).
    public static func contentType(_ name: String) -> String {
        let ext = name.split(separator: ".").last.map { $0.lowercased() } ?? ""
        switch ext {
        case "html", "htm": return "text/html; charset=utf-8"
        case "css": return "text/css; charset=utf-8"
        case "js", "mjs": return "text/javascript; charset=utf-8"
        case "json", "map": return "application/json"
        case "webmanifest": return "application/manifest+json"
        case "txt": return "text/plain; charset=utf-8"
        case "svg": return "image/svg+xml"
        case "png": return "image/png"
        case "jpg", "jpeg": return "image/jpeg"
        case "gif": return "image/gif"
        case "webp": return "image/webp"
        case "ico": return "image/x-icon"
        case "woff2": return "font/woff2"
        case "wasm": return "application/wasm"
        default: return "application/octet-stream"
        }
    }

    /// Whether `If-None-Match: tags` matches `etag` (RFC 9110, 13.1.2: `*`, or a list of entity
    /// tags compared weakly, so `W/"x"` matches `"x"`).
    public static func matches(_ tags: String, _ etag: String) -> Bool {
        if tags.trimmingSpaces == "*" { return true }
        for tag in tags.split(separator: ",") {
            var t = Substring(tag.trimmingSpaces)
            if t.hasPrefix("W/") { t = t.dropFirst(2) }
            if t == etag { return true }
        }
        return false
    }

    static func hexValue(_ b: UInt8) -> UInt8? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): b - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): b - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): b - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

extension StringProtocol {
    /// Without the spaces and tabs around it (a header value's list items, RFC 9110, 5.6.1).
    public var trimmingSpaces: String {
        let isSpace = { (c: Character) in c == " " || c == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) })
        else {
            return ""
        }
        return String(self[first...last])
    }
}

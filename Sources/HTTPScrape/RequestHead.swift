// One HTTP/1.1 request head (RFC 9112), parsed strictly, for the metrics listener (its two
// routes) and the web listener (its files and its WebSocket handshake, which read header
// lines): the method, the path, the version and the header lines. Anything it cannot read is
// refused (400), never a guess. Pure: bytes in, a decision out.

/// What the metrics listener serves.
public enum Route: Equatable, Sendable {
    /// `/metrics`: the Prometheus text format.
    case metrics
    /// `/health`: 200 `ok` when the store is usable, else 503 and why.
    case health
}

/// A request the metrics listener answers with its route (`head`: a HEAD request, headers only).
public struct ScrapeRequest: Equatable, Sendable {
    public let route: Route
    public let head: Bool

    public init(route: Route, head: Bool) {
        self.route = route
        self.head = head
    }
}

/// What a complete request head comes to.
public enum HeadOutcome: Equatable, Sendable {
    case request(ScrapeRequest)
    /// A status to answer with and why (for the journal at debug); `head`: the request was a
    /// HEAD, so the answer has no body.
    case refuse(Status, reason: String, head: Bool)
}

/// One header line: its name in lowercase, its value without the spaces around it.
public struct HeaderField: Equatable, Sendable {
    public let name: String
    public let value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// A GET or HEAD request whose head is well-formed, as both listeners read it: what they decide
/// on (the web listener's route, its files, its WebSocket handshake) and nothing else; or, on the
/// web listener only, a POST with its small body (the page's sign-in, issue 45).
public struct HTTPRequest: Equatable, Sendable {
    /// A HEAD request (the answer has no body); else a GET, or a POST when `post`.
    public let head: Bool
    /// A POST (only the web listener takes one: `RequestHead.parseRequest(_:allowPost:)`).
    public let post: Bool
    /// A POST's body, once read whole (`Content-Length` bytes); empty otherwise.
    public var body: [UInt8] = []
    /// The target's path, as sent (still percent-encoded), without its query: an origin-form
    /// target as it is, an absolute-form one without its scheme and authority.
    public let path: [UInt8]
    /// HTTP/1.`minor`.
    public let minor: UInt8
    /// Every header line, in order.
    public let fields: [HeaderField]

    public init(head: Bool, path: [UInt8], minor: UInt8, fields: [HeaderField], post: Bool = false) {
        self.head = head
        self.post = post
        self.path = path
        self.minor = minor
        self.fields = fields
    }

    /// The values of the header lines named `name` (lowercase), in order.
    public func values(_ name: String) -> [String] {
        fields.filter { $0.name == name }.map(\.value)
    }

    /// The value of the one header line named `name`; nil when there is none or several.
    public func value(_ name: String) -> String? {
        let found = values(name)
        return found.count == 1 ? found[0] : nil
    }
}

/// Why a head is answered with an error: the status, and why (for the journal at debug).
public struct Refusal: Equatable, Sendable, Error {
    public let status: Status
    public let reason: String
    /// The request was a HEAD: the answer has no body.
    public let head: Bool

    public init(_ status: Status, _ reason: String, head: Bool) {
        self.status = status
        self.reason = reason
        self.head = head
    }
}

public enum RequestHead {
    /// The metrics listener's decision on a complete head: `bytes` holds its lines, the empty
    /// line that ends it included.
    public static func parse(_ bytes: ArraySlice<UInt8>) -> HeadOutcome {
        let request: HTTPRequest
        switch parseRequest(bytes) {
        case .success(let r): request = r
        case .failure(let refusal): return .refuse(refusal.status, reason: refusal.reason, head: refusal.head)
        }
        if request.path.elementsEqual("/metrics".utf8) {
            return .request(ScrapeRequest(route: .metrics, head: request.head))
        }
        if request.path.elementsEqual("/health".utf8) {
            return .request(ScrapeRequest(route: .health, head: request.head))
        }
        return .refuse(.notFound, reason: "unknown path", head: request.head)
    }

    /// A complete head read strictly (RFC 9112): a GET or HEAD request (or a POST when
    /// `allowPost`), or why not. Anything it cannot read is a refusal (400), never a guess; any
    /// other method is 405.
    public static func parseRequest(_ bytes: ArraySlice<UInt8>, allowPost: Bool = false) -> Result<
        HTTPRequest, Refusal
    > {
        var lines = Lines(bytes)
        guard let requestLine = lines.next() else {
            return .failure(Refusal(.badRequest, "no request line", head: false))
        }
        let parts = requestLine.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard parts.count == 3 else {
            return .failure(Refusal(.badRequest, "request line is not METHOD TARGET VERSION", head: false))
        }
        let (method, target, version) = (parts[0], parts[1], parts[2])
        let isHead = method.elementsEqual("HEAD".utf8)
        func refuse(_ status: Status, _ reason: String) -> Result<HTTPRequest, Refusal> {
            .failure(Refusal(status, reason, head: isHead))
        }
        guard !method.isEmpty, method.allSatisfy(isTokenByte) else {
            return refuse(.badRequest, "bad method")
        }
        guard version.count == 8, version.starts(with: "HTTP/".utf8),
            version[version.startIndex + 6] == UInt8(ascii: "."),
            isDigit(version[version.startIndex + 5]), isDigit(version[version.startIndex + 7])
        else { return refuse(.badRequest, "bad HTTP version") }
        guard version[version.startIndex + 5] == UInt8(ascii: "1") else {
            return refuse(.versionNotSupported, "not HTTP/1.x")
        }
        guard target.allSatisfy(isTargetByte), let origin = originForm(target) else {
            return refuse(.badRequest, "request target is not an absolute path or an absolute URI")
        }
        var hosts = 0
        var fields: [HeaderField] = []
        while let line = lines.next() {
            if line.isEmpty { break }
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex,
                line[line.startIndex..<colon].allSatisfy(isTokenByte),
                line[(colon + 1)...].allSatisfy(isFieldValueByte)
            else { return refuse(.badRequest, "malformed header line") }
            let name = String(decoding: asciiLowercased(line[line.startIndex..<colon]), as: UTF8.self)
            if name == "host" { hosts += 1 }
            fields.append(HeaderField(name: name, value: trimmed(line[(colon + 1)...])))
        }
        if lines.malformed { return refuse(.badRequest, "a bare CR in the head") }
        // RFC 9112, 3.2: a server must answer 400 to an HTTP/1.1 request with no Host or several.
        let minor = version[version.startIndex + 7] - UInt8(ascii: "0")
        if hosts > 1 || (hosts == 0 && minor != 0) {
            return refuse(.badRequest, "HTTP/1.1 needs exactly one Host header")
        }
        let isPost = allowPost && method.elementsEqual("POST".utf8)
        guard isHead || isPost || method.elementsEqual("GET".utf8) else {
            return refuse(.methodNotAllowed, allowPost ? "only GET, HEAD and POST" : "only GET and HEAD")
        }
        let path = Array(origin.prefix { $0 != UInt8(ascii: "?") })
        return .success(HTTPRequest(head: isHead, path: path, minor: minor, fields: fields, post: isPost))
    }

    /// A field value without the spaces and tabs around it (RFC 9110, 5.5), as text (obs-text
    /// bytes that are not UTF-8 become U+FFFD: no value the listeners compare holds any).
    static func trimmed(_ value: ArraySlice<UInt8>) -> String {
        let isSpace = { (b: UInt8) in b == 0x20 || b == 0x09 }
        guard let first = value.firstIndex(where: { !isSpace($0) }) else { return "" }
        let last = value.lastIndex(where: { !isSpace($0) })!
        return String(decoding: value[first...last], as: UTF8.self)
    }

    /// The path and query of a request target: an origin-form target as it is, an absolute-form
    /// one (`http://host:port/metrics`, which RFC 9112, 3.2.2 says a server must accept, as
    /// proxies send it) without its scheme and authority ("/" when it has no path). Nil for any
    /// other form (`*`, authority-form, a scheme that is not http or https). The authority is
    /// not checked against the listener's address: the metrics listener serves whoever reaches
    /// its socket, whatever name they used (the web listener's handshake checks `Host` and
    /// `Origin`, Sources/WebSocket/OriginPolicy.swift).
    static func originForm(_ target: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        if target.first == UInt8(ascii: "/") { return target }
        let lower = asciiLowercased(target.prefix(8))
        let schemeLength: Int
        if lower.starts(with: "http://".utf8) {
            schemeLength = 7
        } else if lower.starts(with: "https://".utf8) {
            schemeLength = 8
        } else {
            return nil
        }
        let authority = target.dropFirst(schemeLength)
        guard let end = authority.firstIndex(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") })
        else {
            return authority.isEmpty ? nil : ArraySlice("/".utf8)
        }
        guard end > authority.startIndex else { return nil }  // no host
        let rest = target[end...]
        return rest.first == UInt8(ascii: "/") ? rest : ArraySlice("/".utf8) + rest
    }

    /// tchar (RFC 9110, 5.6.2).
    static func isTokenByte(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default: Array("!#$%&'*+-.^_`|~".utf8).contains(b)
        }
    }

    /// Visible ASCII: what a request target may hold (no spaces, no controls, no raw UTF-8).
    static func isTargetByte(_ b: UInt8) -> Bool { b > 0x20 && b < 0x7F }

    /// A field value: visible bytes, spaces and tabs, obs-text; no controls.
    static func isFieldValueByte(_ b: UInt8) -> Bool { b == 0x09 || (b >= 0x20 && b != 0x7F) }

    static func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }

    static func asciiLowercased(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        bytes.map { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") ? $0 + 32 : $0 }
    }
}

/// The head's lines, each without its CRLF (or bare LF, which RFC 9112, 2.2 lets a recipient
/// accept). A CR anywhere else makes the head malformed.
struct Lines {
    var rest: ArraySlice<UInt8>
    var malformed = false

    init(_ bytes: ArraySlice<UInt8>) { rest = bytes }

    mutating func next() -> ArraySlice<UInt8>? {
        guard let lf = rest.firstIndex(of: UInt8(ascii: "\n")) else { return nil }
        var line = rest[rest.startIndex..<lf]
        rest = rest[(lf + 1)...]
        if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
        if line.contains(UInt8(ascii: "\r")) { malformed = true }
        return line
    }
}

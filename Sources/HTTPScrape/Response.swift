// The listeners' responses: status line, a few headers, a body; always `Connection: close`
// (one request per connection keeps a connection's state to one head and one write: a scraper
// asks once; the web page is six small files, fetched once and then revalidated by ETag).

public enum Status: Int, Equatable, Sendable {
    case switchingProtocols = 101
    case ok = 200
    case notModified = 304
    case badRequest = 400
    case forbidden = 403
    case notFound = 404
    case methodNotAllowed = 405
    case requestTimeout = 408
    case lengthRequired = 411
    case contentTooLarge = 413
    case upgradeRequired = 426
    case tooManyRequests = 429
    case headerFieldsTooLarge = 431
    case serviceUnavailable = 503
    case versionNotSupported = 505

    public var reason: String {
        switch self {
        case .switchingProtocols: "Switching Protocols"
        case .ok: "OK"
        case .notModified: "Not Modified"
        case .badRequest: "Bad Request"
        case .forbidden: "Forbidden"
        case .notFound: "Not Found"
        case .methodNotAllowed: "Method Not Allowed"
        case .requestTimeout: "Request Timeout"
        case .lengthRequired: "Length Required"
        case .contentTooLarge: "Content Too Large"
        case .tooManyRequests: "Too Many Requests"
        case .upgradeRequired: "Upgrade Required"
        case .headerFieldsTooLarge: "Request Header Fields Too Large"
        case .serviceUnavailable: "Service Unavailable"
        case .versionNotSupported: "HTTP Version Not Supported"
        }
    }
}

public enum Response {
    /// A complete response. `head`: the headers of the response a GET would get, no body.
    /// `extra`: header lines to add, each without its CRLF.
    public static func make(
        _ status: Status, contentType: String, body: String, head: Bool = false, extra: [String] = []
    ) -> [UInt8] {
        let bodyBytes = Array(body.utf8)
        var text = "HTTP/1.1 \(status.rawValue) \(status.reason)\r\n"
        text += "Content-Type: \(contentType)\r\n"
        text += "Content-Length: \(bodyBytes.count)\r\n"
        if status == .methodNotAllowed { text += "Allow: GET, HEAD\r\n" }
        for line in extra { text += line + "\r\n" }
        text += "Cache-Control: no-store\r\nConnection: close\r\n\r\n"
        return Array(text.utf8) + (head ? [] : bodyBytes)
    }

    /// An error page: the status's reason as plain text.
    public static func error(_ status: Status, head: Bool = false, extra: [String] = []) -> [UInt8] {
        make(status, contentType: plainText, body: "\(status.reason)\n", head: head, extra: extra)
    }

    /// `/health`: 200 `ok`, or 503 with the reason the store is not usable (`unavailable`,
    /// `reconnecting`).
    public static func health(problem: String?, head: Bool) -> [UInt8] {
        if let problem {
            return make(.serviceUnavailable, contentType: plainText, body: "\(problem)\n", head: head)
        }
        return make(.ok, contentType: plainText, body: "ok\n", head: head)
    }

    public static let plainText = "text/plain; charset=utf-8"
}

// libFuzzer target: the HTTP request heads of the metrics listener and of the web listener
// (issue 43), without the sockets: HTTPScrape's ScrapeConnection, WebConnection, RequestHead and
// the static files' decisions (StaticPath, StaticSite). The first byte picks how the rest is cut
// into reads; the rest is the bytes a client sends. Invariants checked (a violation is a crash
// libFuzzer reports), for the metrics listener:
// - the outcome does not depend on how the input is cut into reads;
// - the connection never keeps more than the head limit and one byte;
// - every answer the machine writes by itself is one complete HTTP/1.1 response with a status
//   of its own list and a Content-Length equal to its body's length;
// - a request handed out to be served was a GET or HEAD of /metrics or /health within the limit;
// - after the response is sent the connection closes; and the deadline always passes to a close.
// For the web listener (`web`):
// - the outcome does not depend on the cut either, the bytes after the head (`rest`) included,
//   which are exactly the input's after the head's end;
// - a request handed out is a GET or HEAD whose path is the request target's up to its query;
// - a path StaticPath names a file for has no empty, dot or dot-dot segment, no NUL or control
//   byte, no backslash, and the file is served (200, or 304 when asked with its ETag) only from
//   the site's table; anything else is 404.
// Build and run: `make fuzz` (see Fuzz/HTTPFuzz/build.sh).
import HTTPScrape

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size)
    guard !input.isEmpty else { return 0 }
    let piece = Int(input[0]) + 1
    let body = Array(input[1...])

    let whole = run(body, piece: body.count + 1)
    let split = run(body, piece: piece)
    precondition(whole == split, "the outcome depends on how the input is cut: \(whole) \(split)")
    let webWhole = web(body, piece: body.count + 1)
    let webSplit = web(body, piece: piece)
    precondition(webWhole == webSplit, "the web outcome depends on the cut: \(webWhole) \(webSplit)")
    return 0
}

enum WebOutcome: Equatable {
    case waiting
    case served(HTTPRequest, rest: [UInt8])
    case answered([UInt8])
}

/// The site the web fuzzing serves: a page and a file in a folder.
let site = StaticSite(files: [
    "index.html": StaticFile(body: Array("<p>".utf8), contentType: "text/html; charset=utf-8", etag: "\"a\""),
    "sub/b.css": StaticFile(body: Array("b{}".utf8), contentType: "text/css; charset=utf-8", etag: "\"b\""),
])

func web(_ bytes: [UInt8], piece: Int) -> WebOutcome {
    var c = WebConnection(now: 0)
    var i = 0
    while i < bytes.count {
        let end = min(i + piece, bytes.count)
        switch c.received(bytes[i..<end], now: 1) {
        case .read:
            i = end
        case .serve(let request):
            check(request, bytes, rest: c.rest, readTo: end)
            return .served(request, rest: Array(bytes[(end - c.rest.count)...]))
        case .write:
            return .answered(Array(c.pending))
        case .close:
            preconditionFailure("closed on bytes")
        }
    }
    return .waiting
}

/// A request handed out: a GET or HEAD of its target's path; what StaticPath makes of the path
/// is a name of the root or nothing; the site answers from its table only.
func check(_ request: HTTPRequest, _ bytes: [UInt8], rest: [UInt8], readTo end: Int) {
    precondition(Array(bytes[(end - rest.count)..<end]) == rest, "rest is not the bytes after the head")
    let text = String(decoding: bytes, as: UTF8.self)
    precondition(
        text.hasPrefix(request.head ? "HEAD " : "GET "), "served \(request) for \(text.debugDescription)")
    guard let name = StaticPath.file(request.path) else {
        precondition(site.response(to: request).status == .notFound, "no file name, yet not 404")
        return
    }
    for segment in name.split(separator: "/", omittingEmptySubsequences: false) {
        precondition(!segment.isEmpty && !segment.hasPrefix("."), "a segment StaticPath let through: \(name)")
        precondition(
            !segment.utf8.contains { $0 < 0x20 || $0 == 0x7F || $0 == UInt8(ascii: "\\") },
            "a byte StaticPath let through: \(name.debugDescription)")
    }
    let (status, _, _) = site.response(to: request)
    precondition(
        site.files[name] != nil ? [.ok, .notModified].contains(status) : status == .notFound,
        "\(name): \(status)")
}

enum Outcome: Equatable {
    case waiting
    case served(ScrapeRequest)
    case answered([UInt8])
}

func run(_ bytes: [UInt8], piece: Int) -> Outcome {
    let limits = ScrapeLimits()
    var c = ScrapeConnection(now: 0, limits: limits)
    var i = 0
    while i < bytes.count {
        let end = min(i + piece, bytes.count)
        switch c.received(bytes[i..<end], now: 1) {
        case .read:
            i = end
        case .serve(let request):
            let text = String(decoding: bytes, as: UTF8.self)
            let method = request.head ? "HEAD " : "GET "
            let path = request.route == .metrics ? "/metrics" : "/health"
            precondition(
                text.hasPrefix(method) && targetPath(text) == path,
                "served \(request) for \(text.debugDescription)")
            precondition(i < limits.headBytes, "served a head past the limit")
            finish(&c, c.respond(Response.health(problem: nil, head: request.head), now: 2))
            return .served(request)
        case .write:
            let response = Array(c.pending)
            checkResponse(response)
            finish(&c, .write)
            return .answered(response)
        case .close:
            preconditionFailure("closed on bytes")
        }
    }
    // Bytes that never finish a head: the deadline answers 408, then closes.
    precondition(c.timerFired(now: c.deadline) == .write, "no answer at the deadline")
    checkResponse(Array(c.pending))
    precondition(c.timerFired(now: c.deadline) == .close, "not closed at the write deadline")
    return .waiting
}

/// The path of the request line's target: an absolute-form target (`http://host/metrics?x`)
/// without its scheme and authority, any target without its query.
func targetPath(_ text: String) -> String {
    var target = Substring(text.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)[1])
    for scheme in ["http://", "https://"] where target.lowercased().hasPrefix(scheme) {
        target = target.dropFirst(scheme.count)
        target = target.firstIndex { $0 == "/" || $0 == "?" }.map { target[$0...] } ?? ""
        if !target.hasPrefix("/") { target = "/" + target }
    }
    return String(target.prefix { $0 != "?" })
}

/// Sends the response in two writes; the connection must then close.
func finish(_ c: inout ScrapeConnection, _ action: ScrapeConnection.Action) {
    precondition(action == .write, "no write after the response: \(action)")
    let half = c.pending.count / 2
    precondition(c.sent(half) == .write || half == 0, "closed before the response was sent")
    precondition(c.sent(c.pending.count) == .close, "not closed after the response")
}

func checkResponse(_ response: [UInt8]) {
    let text = String(decoding: response, as: UTF8.self)
    let statuses = ["400", "404", "405", "408", "431", "505"]
    precondition(
        statuses.contains { text.hasPrefix("HTTP/1.1 \($0) ") },
        "not an error response: \(text.debugDescription)")
    let parts = text.split(separator: "\r\n\r\n", maxSplits: 1, omittingEmptySubsequences: false)
    precondition(parts.count == 2, "no end of head")
    let length = parts[0].split(separator: "\r\n").first { $0.hasPrefix("Content-Length: ") }
        .flatMap { Int($0.dropFirst(16)) }
    precondition(length == parts[1].utf8.count || parts[1].isEmpty, "Content-Length is not the body's")
}

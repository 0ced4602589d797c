// libFuzzer target: the metrics listener's HTTP request handling without the sockets
// (HTTPScrape's ScrapeConnection and RequestHead). The first byte picks how the rest is cut into
// reads; the rest is the bytes a scraper sends. Invariants checked (a violation is a crash
// libFuzzer reports):
// - the outcome does not depend on how the input is cut into reads;
// - the connection never keeps more than the head limit and one byte;
// - every answer the machine writes by itself is one complete HTTP/1.1 response with a status
//   of its own list and a Content-Length equal to its body's length;
// - a request handed out to be served was a GET or HEAD of /metrics or /health within the limit;
// - after the response is sent the connection closes; and the deadline always passes to a close.
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
    return 0
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
            precondition(text.hasPrefix(method + path), "served \(request) for \(text.debugDescription)")
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

import HTTPScrape
import XCTest

final class ScrapeConnectionTests: XCTestCase {
    let second: UInt64 = 1_000_000_000

    /// Feeds `text` in pieces of `split` bytes (0: all at once), the same way every time.
    func feed(_ text: String, split: Int = 0, now: UInt64 = 0) -> (ScrapeConnection, ScrapeConnection.Action)
    {
        var c = ScrapeConnection(now: now)
        let bytes = Array(text.utf8)
        var action = ScrapeConnection.Action.read
        var i = 0
        repeat {
            let end = split == 0 ? bytes.count : min(i + split, bytes.count)
            action = c.received(bytes[i..<end], now: now)
            i = end
        } while i < bytes.count && action == .read
        return (c, action)
    }

    func response(_ text: String) -> String {
        var (c, action) = feed(text)
        XCTAssertEqual(action, .write, text)
        let sent = String(decoding: c.pending, as: UTF8.self)
        XCTAssertEqual(c.sent(c.pending.count), .close)
        return sent
    }

    let get = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:9464\r\nAccept: text/plain\r\n\r\n"

    func testAGetOfMetricsIsServedWhateverTheSplit() {
        for split in [0, 1, 2, 3, 7, get.utf8.count - 1] {
            XCTAssertEqual(
                feed(get, split: split).1, .serve(ScrapeRequest(route: .metrics, head: false)),
                "split \(split)")
        }
        // Split at every offset into two reads.
        let bytes = Array(get.utf8)
        for cut in 1..<bytes.count {
            var c = ScrapeConnection(now: 0)
            XCTAssertEqual(c.received(bytes[..<cut], now: 0), .read, "cut \(cut)")
            XCTAssertEqual(
                c.received(bytes[cut...], now: 0), .serve(ScrapeRequest(route: .metrics, head: false)))
        }
    }

    func testHeadHealthBareLineFeedsAndAQueryAreAccepted() {
        XCTAssertEqual(
            feed("HEAD /health?x=1 HTTP/1.1\nHost: h\n\n").1,
            .serve(ScrapeRequest(route: .health, head: true)))
        XCTAssertEqual(
            feed("GET /health HTTP/1.0\r\n\r\n").1, .serve(ScrapeRequest(route: .health, head: false)))
    }

    func testTheResponseIsWrittenThenTheConnectionClosed() {
        var (c, _) = feed(get)
        XCTAssertEqual(c.respond(Response.health(problem: nil, head: false), now: 0), .write)
        let all = Array(c.pending)
        XCTAssertEqual(
            String(decoding: all, as: UTF8.self),
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 3\r\nCache-Control: no-store\r\nConnection: close\r\n\r\nok\n"
        )
        XCTAssertEqual(c.sent(10), .write)
        XCTAssertEqual(Array(c.pending), Array(all[10...]))
        XCTAssertEqual(c.sent(0), .write)
        XCTAssertEqual(c.sent(all.count - 10), .close)
    }

    func testBadRequestsGetTheirStatus() {
        let cases: [(String, String)] = [
            ("POST /metrics HTTP/1.1\r\nHost: h\r\n\r\n", "HTTP/1.1 405 Method Not Allowed\r\n"),
            ("DELETE /health HTTP/1.1\r\nHost: h\r\n\r\n", "HTTP/1.1 405 "),
            ("GET /metricsx HTTP/1.1\r\nHost: h\r\n\r\n", "HTTP/1.1 404 Not Found\r\n"),
            ("GET / HTTP/1.1\r\nHost: h\r\n\r\n", "HTTP/1.1 404 "),
            ("GET /metrics HTTP/1.1\r\n\r\n", "HTTP/1.1 400 Bad Request\r\n"),  // no Host
            ("GET /metrics HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", "HTTP/1.1 400 "),
            ("GET /metrics HTTP/2.0\r\nHost: h\r\n\r\n", "HTTP/1.1 505 "),
            ("GET /metrics HTTP/1.1 x\r\nHost: h\r\n\r\n", "HTTP/1.1 400 "),
            ("GET  /metrics HTTP/1.1\r\nHost: h\r\n\r\n", "HTTP/1.1 400 "),
            ("GET metrics HTTP/1.1\r\nHost: h\r\n\r\n", "HTTP/1.1 400 "),
            ("GET /metrics HTTP/1.1\r\nHost : h\r\n\r\n", "HTTP/1.1 400 "),
            ("GET /metrics HTTP/1.1\r\nHost: h\r\n folded\r\n\r\n", "HTTP/1.1 400 "),
            ("GET /metrics HTTP/1.1\r\nHost: h\r\nNoColon\r\n\r\n", "HTTP/1.1 400 "),
            ("GET /metrics HTTP/1.1\r\nHost: h\rX: y\r\n\r\n", "HTTP/1.1 400 "),
            ("GET /metrics HTTP/1.1\r\nHost: h\u{1}\r\n\r\n", "HTTP/1.1 400 "),
            ("G(T /metrics HTTP/1.1\r\nHost: h\r\n\r\n", "HTTP/1.1 400 "),
            ("\r\n\r\n", "HTTP/1.1 400 "),
            // Absolute-form: its path decides; other forms and schemes are not a target here.
            ("GET http://h/metricsx HTTP/1.1\r\nHost: h\r\n\r\n", "HTTP/1.1 404 "),
            ("GET http://h HTTP/1.1\r\nHost: h\r\n\r\n", "HTTP/1.1 404 "),
            ("GET http:///metrics HTTP/1.1\r\nHost: h\r\n\r\n", "HTTP/1.1 400 "),
            ("GET http:// HTTP/1.1\r\nHost: h\r\n\r\n", "HTTP/1.1 400 "),
            ("GET ftp://h/metrics HTTP/1.1\r\nHost: h\r\n\r\n", "HTTP/1.1 400 "),
            ("GET * HTTP/1.1\r\nHost: h\r\n\r\n", "HTTP/1.1 400 "),
            ("GET h:9464 HTTP/1.1\r\nHost: h\r\n\r\n", "HTTP/1.1 400 "),
        ]
        for (request, status) in cases {
            XCTAssertTrue(
                response(request).hasPrefix(status), "\(request.debugDescription) → \(response(request))")
        }
        XCTAssertTrue(response(cases[0].0).contains("\r\nAllow: GET, HEAD\r\n"))
    }

    func testAHeadRequestsErrorHasNoBody() {
        let text = response("HEAD /nothing HTTP/1.1\r\nHost: h\r\n\r\n")
        XCTAssertTrue(text.hasPrefix("HTTP/1.1 404 "), text)
        XCTAssertTrue(text.hasSuffix("\r\n\r\n"), text)
        XCTAssertTrue(text.contains("Content-Length: 10\r\n"), text)
    }

    func testAHeadOfExactlyTheLimitIsReadAndOneByteMoreIs431() {
        let start = "GET /metrics HTTP/1.1\r\nHost: h\r\nX: "
        let padding = 8192 - start.utf8.count - 4
        let exact = start + String(repeating: "a", count: padding) + "\r\n\r\n"
        XCTAssertEqual(exact.utf8.count, 8192)
        XCTAssertEqual(feed(exact, split: 1000).1, .serve(ScrapeRequest(route: .metrics, head: false)))
        let over = start + String(repeating: "a", count: padding + 1) + "\r\n\r\n"
        let (c, action) = feed(over, split: 1000)
        XCTAssertEqual(action, .write)
        XCTAssertTrue(String(decoding: c.pending, as: UTF8.self).hasPrefix("HTTP/1.1 431 "))
        XCTAssertEqual(c.refusal?.0, .headerFieldsTooLarge)
    }

    func testAnEndlessHeadIsCutAtTheLimitWithoutKeepingMore() {
        var c = ScrapeConnection(now: 0)
        XCTAssertEqual(c.received(Array("GET /metrics HTTP/1.1\r\nX: ".utf8), now: 0), .read)
        var action = ScrapeConnection.Action.read
        var chunks = 0
        while action == .read {
            action = c.received([UInt8](repeating: 0x61, count: 1000), now: 0)
            chunks += 1
        }
        XCTAssertEqual(action, .write)
        XCTAssertEqual(chunks, 9)
    }

    func testASlowHeadGets408AtItsDeadlineThenIsClosed() {
        var c = ScrapeConnection(now: 10 * second)
        XCTAssertEqual(c.deadline, 15 * second)
        XCTAssertEqual(c.received(Array("GET /met".utf8), now: 11 * second), .read)
        XCTAssertEqual(c.timerFired(now: 14 * second), .read, "early")
        XCTAssertEqual(c.timerFired(now: 15 * second), .write)
        XCTAssertTrue(String(decoding: c.pending, as: UTF8.self).hasPrefix("HTTP/1.1 408 "))
        XCTAssertEqual(c.deadline, 20 * second)
        // A peer that does not read its 408 either is closed at the write deadline.
        XCTAssertEqual(c.timerFired(now: 19 * second), .write)
        XCTAssertEqual(c.timerFired(now: 20 * second), .close)
    }

    func testAStuckReaderIsClosedAtTheWriteDeadline() {
        var (c, _) = feed(get, now: 0)
        XCTAssertEqual(c.respond(Array(repeating: 0x41, count: 100_000), now: 2 * second), .write)
        XCTAssertEqual(c.sent(65_536), .write)
        XCTAssertEqual(c.timerFired(now: 7 * second), .close)
    }

    func testThePeerClosingEndsTheConnection() {
        var c = ScrapeConnection(now: 0)
        XCTAssertEqual(c.received(Array("GET /".utf8), now: 0), .read)
        XCTAssertEqual(c.received([], now: 0), .close)
    }

    /// RFC 9112, 3.2.2: "A server MUST accept the absolute-form in requests".
    func testAnAbsoluteFormTargetIsServedByItsPath() {
        for target in [
            "http://127.0.0.1:9464/metrics", "HTTP://host/metrics?x=1", "https://[::1]:9464/metrics",
            "http://h?x=/health",
        ] {
            let (_, action) = feed("GET \(target) HTTP/1.1\r\nHost: h\r\n\r\n")
            let route: Route = target.contains("health") ? .health : .metrics
            XCTAssertEqual(
                action,
                target == "http://h?x=/health" ? .write : .serve(ScrapeRequest(route: route, head: false)),
                target)
        }
    }

    /// Four sockets sending a byte every 0.5 s cannot keep scrapes out: the stalest one still
    /// sending its head gives its place (408), those being answered never do.
    func testTheStalestHeadStillComingInIsEvictedForANewConnection() {
        var slow = (0..<4).map { ScrapeConnection(now: UInt64($0) * second) }
        for i in slow.indices { XCTAssertEqual(slow[i].received(Array("G".utf8), now: 5 * second), .read) }
        XCTAssertEqual(ScrapeConnection.stalest(slow), 0)
        var answered = ScrapeConnection(now: 0)
        XCTAssertEqual(
            answered.received(Array(get.utf8), now: 0), .serve(ScrapeRequest(route: .metrics, head: false)))
        XCTAssertEqual(ScrapeConnection.stalest([answered] + slow), 1, "one being answered is never evicted")
        XCTAssertNil(ScrapeConnection.stalest([answered, answered]))
        XCTAssertEqual(slow[0].evict(now: 6 * second), .write)
        XCTAssertTrue(String(decoding: slow[0].pending, as: UTF8.self).hasPrefix("HTTP/1.1 408 "))
        XCTAssertFalse(slow[0].isReadingHead)
        XCTAssertEqual(ScrapeConnection.stalest(slow), 1)
        // Accepted in one wake-up, they share a time: the order of accepts decides.
        let batch = [2, 0, 1].map { ScrapeConnection(now: 7 * second, serial: UInt64($0)) }
        XCTAssertEqual(ScrapeConnection.stalest(batch), 1)
    }

    func testAtMostFourAtOnce() {
        let limits = ScrapeLimits()
        XCTAssertEqual(limits.admit(active: 3), .accept)
        guard case .refuse(let bytes) = limits.admit(active: 4) else {
            return XCTFail("a fifth was admitted")
        }
        XCTAssertTrue(
            String(decoding: bytes, as: UTF8.self).hasPrefix("HTTP/1.1 503 Service Unavailable\r\n"))
    }

    func testHealthSaysWhyTheStoreIsNotUsable() {
        let text = String(decoding: Response.health(problem: "unavailable", head: false), as: UTF8.self)
        XCTAssertTrue(text.hasPrefix("HTTP/1.1 503 "), text)
        XCTAssertTrue(text.hasSuffix("\r\n\r\nunavailable\n"), text)
        XCTAssertTrue(
            String(decoding: Response.health(problem: nil, head: true), as: UTF8.self).hasSuffix("\r\n\r\n"))
    }
}

// The web listener's POST (the page's sign-in, issue 45): a body of `Content-Length` bytes, in
// any pieces, with the head or after it; bounded in size and in time; nothing else.
import XCTest

@testable import HTTPScrape

final class WebConnectionPostTests: XCTestCase {
    static let head = "POST /login HTTP/1.1\r\nHost: x\r\nContent-Length: 8\r\n\r\n"

    func testABodyWithItsHeadIsServedWhole() {
        var c = WebConnection(now: 0)
        guard case .serve(let request) = c.received(Array((Self.head + "swp_abcd").utf8), now: 1) else {
            return XCTFail("not served")
        }
        XCTAssertTrue(request.post)
        XCTAssertFalse(request.head)
        XCTAssertEqual(request.path, Array("/login".utf8))
        XCTAssertEqual(request.body, Array("swp_abcd".utf8))
        XCTAssertEqual(c.rest, [], "a POST never becomes a WebSocket: nothing is kept for one")
    }

    func testABodyInPiecesIsWaitedForAndWhatFollowsItIsNotRead() {
        var c = WebConnection(now: 0)
        XCTAssertEqual(c.received(Array((Self.head + "swp").utf8), now: 1), .read)
        XCTAssertTrue(c.isReadingHead, "a body still coming may be evicted as a head")
        XCTAssertEqual(c.received(Array("_a".utf8), now: 2), .read)
        guard case .serve(let request) = c.received(Array("bcdEXTRA".utf8), now: 3) else {
            return XCTFail("not served")
        }
        XCTAssertEqual(request.body, Array("swp_abcd".utf8))
    }

    func testAnEmptyBody() {
        var c = WebConnection(now: 0)
        let head = "POST /logout HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"
        guard case .serve(let request) = c.received(Array(head.utf8), now: 1) else {
            return XCTFail("not served")
        }
        XCTAssertEqual(request.body, [])
    }

    func testBodiesThatAreNotOneKnownSmallLengthAreRefused() {
        for (head, status) in [
            ("POST /login HTTP/1.1\r\nHost: x\r\n\r\n", Status.lengthRequired),
            ("POST /login HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n", .lengthRequired),
            ("POST /login HTTP/1.1\r\nHost: x\r\nContent-Length: 4097\r\n\r\n", .contentTooLarge),
            ("POST /login HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", .badRequest),
            (
                "POST /login HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n",
                .badRequest
            ),
            ("POST /login HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999\r\n\r\n", .badRequest),
            ("PUT /login HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\n", .methodNotAllowed),
            ("POST /index.html HTTP/1.1\r\nHost: x\r\n\r\n", .methodNotAllowed),
            ("POST /ws HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", .methodNotAllowed),
        ] {
            var c = WebConnection(now: 0)
            XCTAssertEqual(c.received(Array(head.utf8), now: 1), .write, head)
            XCTAssertEqual(c.refusal?.status, status, head)
        }
    }

    func testABodyNotSentInTimeIs408() {
        var c = WebConnection(now: 0)
        XCTAssertEqual(c.received(Array((Self.head + "swp").utf8), now: 1), .read)
        XCTAssertEqual(c.timerFired(now: c.deadline - 1), .read)
        XCTAssertEqual(c.timerFired(now: c.deadline), .write)
        XCTAssertEqual(c.refusal?.status, .requestTimeout)
    }

    func testThePeerClosingMidBodyClosesIt() {
        var c = WebConnection(now: 0)
        XCTAssertEqual(c.received(Array((Self.head + "swp").utf8), now: 1), .read)
        XCTAssertEqual(c.received([UInt8](), now: 2), .close)
    }

    /// The metrics listener takes no POST.
    func testTheMetricsListenerStillRefusesAPost() {
        let head = Array("POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n".utf8)
        guard case .refuse(let status, _, _) = RequestHead.parse(head[...]) else { return XCTFail("served") }
        XCTAssertEqual(status, .methodNotAllowed)
    }
}

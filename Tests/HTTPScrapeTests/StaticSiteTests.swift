import XCTest

@testable import HTTPScrape

final class StaticSiteTests: XCTestCase {
    func testPathsNameFilesOfTheRootOnly() {
        XCTAssertEqual(StaticPath.file(Array("/".utf8)), "index.html")
        XCTAssertEqual(StaticPath.file(Array("/app.js".utf8)), "app.js")
        XCTAssertEqual(StaticPath.file(Array("/sub/".utf8)), "sub/index.html")
        XCTAssertEqual(StaticPath.file(Array("/sub/a%20b.css".utf8)), "sub/a b.css")
        XCTAssertEqual(StaticPath.file(Array("/%C3%A9.txt".utf8)), "é.txt")
        for path in [
            "", "app.js", "/../etc/passwd", "/sub/../../x", "/%2e%2e/etc/passwd", "/%2E%2E%2Fetc", "/a%2Fb",
            "/a%00.js", "/a%0a", "/.git/config", "/sub/.hidden", "//etc/passwd", "/a//b", "/a\\b", "/a%5Cb",
            "/%", "/%4", "/%zz", "/%FF.js", "/.", "/sub/.", "/./app.js",
        ] {
            XCTAssertNil(StaticPath.file(Array(path.utf8)), path)
        }
    }

    func testMediaTypes() {
        XCTAssertEqual(StaticPath.contentType("index.html"), "text/html; charset=utf-8")
        XCTAssertEqual(StaticPath.contentType("a/style.CSS"), "text/css; charset=utf-8")
        XCTAssertEqual(StaticPath.contentType("app.js"), "text/javascript; charset=utf-8")
        XCTAssertEqual(StaticPath.contentType("x.png"), "image/png")
        XCTAssertEqual(StaticPath.contentType("x.svg"), "image/svg+xml")
        XCTAssertEqual(StaticPath.contentType("README"), "application/octet-stream")
    }

    static let site = StaticSite(files: [
        "index.html": StaticFile(
            body: Array("<p>hi</p>".utf8), contentType: "text/html; charset=utf-8", etag: "\"abc\"")
    ])

    func request(_ text: String) -> HTTPRequest {
        guard case .success(let r) = RequestHead.parseRequest(ArraySlice(text.utf8)) else {
            preconditionFailure(text)
        }
        return r
    }

    func testAFileHasItsTypeLengthETagAndCacheControl() {
        let (status, bytes, refusal) = Self.site.response(to: request("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
        XCTAssertEqual(status, .ok)
        XCTAssertNil(refusal)
        XCTAssertEqual(
            String(decoding: bytes, as: UTF8.self),
            "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: 9\r\nETag: \"abc\"\r\n"
                + "Cache-Control: no-cache\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n<p>hi</p>"
        )
        let head = Self.site.response(to: request("HEAD /index.html HTTP/1.1\r\nHost: x\r\n\r\n"))
        XCTAssertTrue(
            String(decoding: head.bytes, as: UTF8.self).hasSuffix(
                "Content-Length: 9\r\nETag: \"abc\"\r\nCache-Control: no-cache\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n"
            ))
    }

    func testACurrentCopyIs304() {
        for tags in ["\"abc\"", "W/\"abc\"", "\"x\", \"abc\"", "*"] {
            let r = Self.site.response(
                to: request("GET / HTTP/1.1\r\nHost: x\r\nIf-None-Match: \(tags)\r\n\r\n"))
            XCTAssertEqual(r.status, .notModified, tags)
            XCTAssertEqual(
                String(decoding: r.bytes, as: UTF8.self),
                "HTTP/1.1 304 Not Modified\r\nETag: \"abc\"\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n"
            )
        }
        XCTAssertEqual(
            Self.site.response(to: request("GET / HTTP/1.1\r\nHost: x\r\nIf-None-Match: \"old\"\r\n\r\n"))
                .status, .ok)
    }

    func testNoFileIs404AndADirectoryIsNotListed() {
        let site = StaticSite(files: [
            "sub/a.css": StaticFile(body: [], contentType: "text/css", etag: "\"1\"")
        ])
        for path in ["/sub", "/sub/", "/missing.js", "/%2e%2e/etc/passwd"] {
            let r = site.response(to: request("GET \(path) HTTP/1.1\r\nHost: x\r\n\r\n"))
            XCTAssertEqual(r.status, .notFound, path)
            XCTAssertNotNil(r.refusal)
        }
    }
}

final class WebConnectionTests: XCTestCase {
    func testAHeadIsServedAndTheBytesAfterItKept() {
        var c = WebConnection(now: 0)
        let head = "GET /ws HTTP/1.1\r\nHost: x\r\n\r\n"
        guard case .serve(let request) = c.received(Array((head + "\u{81}\u{80}").utf8), now: 1) else {
            return XCTFail("not served")
        }
        XCTAssertEqual(request.path, Array("/ws".utf8))
        XCTAssertEqual(c.rest, [0xC2, 0x81, 0xC2, 0x80])
        c.upgraded()
        XCTAssertFalse(c.isReadingHead)
    }

    func testASlowlorisGets408AtItsDeadlineAndTheAnswerIsBounded() {
        var c = WebConnection(now: 0)
        XCTAssertEqual(c.received(Array("GET / HTTP/1.1\r\nHo".utf8), now: 1), .read)
        XCTAssertEqual(c.timerFired(now: c.deadline - 1), .read)
        XCTAssertEqual(c.timerFired(now: c.deadline), .write)
        XCTAssertEqual(c.refusal?.status, .requestTimeout)
        XCTAssertTrue(String(decoding: c.pending, as: UTF8.self).hasPrefix("HTTP/1.1 408 "))
        XCTAssertEqual(c.timerFired(now: c.deadline), .close, "a reader that does not take its answer")
    }

    func testAHeadPastItsLimitIs431() {
        var c = WebConnection(now: 0)
        XCTAssertEqual(c.received([UInt8](repeating: 0x61, count: 8193), now: 1), .write)
        XCTAssertEqual(c.refusal?.status, .headerFieldsTooLarge)
    }

    func testTheStalestHeadIsEvicted() {
        let heads = (0..<3).map { WebConnection(now: UInt64(10 - $0), serial: UInt64($0)) }
        XCTAssertEqual(Stalest.index(heads), 2)
        var c = heads[2]
        XCTAssertEqual(c.evict(now: 20), .write)
        XCTAssertEqual(c.refusal?.status, .requestTimeout)
    }
}

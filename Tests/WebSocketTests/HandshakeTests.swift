import HTTPScrape
import XCTest

@testable import WebSocket

final class HandshakeTests: XCTestCase {
    static let key = "dGhlIHNhbXBsZSBub25jZQ=="

    /// A browser's head for the WebSocket, with these lines changed (nil: left out).
    static func request(_ changes: [String: String?] = [:], method: String = "GET") -> HTTPRequest {
        var lines: [(String, String)] = [
            ("Host", "127.0.0.1:8080"), ("Upgrade", "websocket"), ("Connection", "keep-alive, Upgrade"),
            ("Sec-WebSocket-Key", key), ("Sec-WebSocket-Version", "13"), ("Origin", "http://127.0.0.1:8080"),
            ("Sec-WebSocket-Extensions", "permessage-deflate; client_max_window_bits"),
        ]
        for (name, value) in changes {
            lines.removeAll { $0.0 == name }
            if let value { lines.append((name, value)) }
        }
        let text = "\(method) /ws HTTP/1.1\r\n" + lines.map { "\($0.0): \($0.1)\r\n" }.joined() + "\r\n"
        guard case .success(let request) = RequestHead.parseRequest(ArraySlice(text.utf8)) else {
            preconditionFailure("not a request: \(text)")
        }
        return request
    }

    /// RFC 6455, 1.3's own example.
    func testTheAcceptValueOfTheRFCsExample() {
        XCTAssertEqual(Handshake.accept(key: Self.key), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    /// A browser's handshake is answered 101, with no extension (permessage-deflate is asked
    /// for and not given) and no subprotocol.
    func testABrowsersHandshakeIsAnswered101WithoutExtensions() {
        guard case .upgrade(let response) = Handshake.answer(Self.request(), policy: OriginPolicy()) else {
            return XCTFail("not upgraded")
        }
        XCTAssertEqual(
            String(decoding: response, as: UTF8.self),
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n")
    }

    func testEachMissingOrWrongHeaderIsRefusedWithItsStatus() {
        let cases: [([String: String?], String, Status, WebRefusal)] = [
            (["Upgrade": nil], "GET", .badRequest, .badRequest),
            (["Upgrade": "h2c"], "GET", .badRequest, .badRequest),
            (["Connection": "keep-alive"], "GET", .badRequest, .badRequest),
            (["Sec-WebSocket-Key": nil], "GET", .badRequest, .badRequest),
            (["Sec-WebSocket-Key": "short=="], "GET", .badRequest, .badRequest),
            (["Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ"], "GET", .badRequest, .badRequest),
            (["Sec-WebSocket-Version": "8"], "GET", .upgradeRequired, .version),
            (["Sec-WebSocket-Version": nil], "GET", .upgradeRequired, .version),
            (["Origin": "http://evil.example"], "GET", .forbidden, .origin),
            ([:], "HEAD", .methodNotAllowed, .method),
        ]
        for (changes, method, status, reason) in cases {
            guard
                case .refuse(let s, let r, _, let extra) = Handshake.answer(
                    Self.request(changes, method: method), policy: OriginPolicy())
            else {
                XCTFail("\(changes) \(method): upgraded")
                continue
            }
            XCTAssertEqual(s, status, "\(changes) \(method)")
            XCTAssertEqual(r, reason, "\(changes) \(method)")
            XCTAssertEqual(extra, status == .upgradeRequired ? ["Sec-WebSocket-Version: 13"] : [])
        }
    }

    func testAnHTTP10HeadIsNoHandshake() {
        let text = "GET /ws HTTP/1.0\r\nUpgrade: websocket\r\nConnection: upgrade\r\n\r\n"
        guard case .success(let request) = RequestHead.parseRequest(ArraySlice(text.utf8)),
            case .refuse(.badRequest, .badRequest, _, _) = Handshake.answer(request, policy: OriginPolicy())
        else { return XCTFail("answered") }
    }
}

final class OriginPolicyTests: XCTestCase {
    func check(_ policy: OriginPolicy, _ origin: String?, _ host: String?) -> Bool {
        policy.check(origin: origin.map { [$0] } ?? [], host: host) == .allowed
    }

    /// The page's own origin, as an address or localhost names it, with or without default ports.
    func testThePagesOwnOriginByAddressOrLocalhost() {
        let p = OriginPolicy()
        XCTAssertTrue(check(p, "http://127.0.0.1:8080", "127.0.0.1:8080"))
        XCTAssertTrue(check(p, "http://localhost:8080", "localhost:8080"))
        XCTAssertTrue(check(p, "http://LOCALHOST:8080", "localhost:8080"))
        XCTAssertTrue(check(p, "http://[::1]:8080", "[::1]:8080"))
        XCTAssertTrue(check(p, "http://192.168.1.5:8080", "192.168.1.5:8080"))
        XCTAssertTrue(check(p, "http://10.0.0.1", "10.0.0.1:80"))
        XCTAssertTrue(check(p, "https://10.0.0.1", "10.0.0.1"))
    }

    /// Another page, another port of this host, and DNS rebinding (a name whose Origin and Host
    /// agree) are refused; so are `null` and several Origin lines.
    func testOtherPagesAndRebindingAreRefused() {
        let p = OriginPolicy()
        XCTAssertFalse(check(p, "http://evil.example", "127.0.0.1:8080"))
        XCTAssertFalse(check(p, "http://127.0.0.1:1", "127.0.0.1:8080"))
        XCTAssertFalse(check(p, "http://evil.example:8080", "evil.example:8080"))
        XCTAssertFalse(check(p, "null", "127.0.0.1:8080"))
        XCTAssertFalse(check(p, "http://127.0.0.1:8080", nil))
        XCTAssertFalse(check(p, "ftp://127.0.0.1:8080", "127.0.0.1:8080"))
        XCTAssertEqual(
            p.check(origin: ["http://127.0.0.1:8080", "http://127.0.0.1:8080"], host: "127.0.0.1:8080"),
            .refused("several Origin header lines"))
    }

    /// No Origin: not a browser (which always sends one), served as a Unix client is.
    func testNoOriginIsNotABrowser() {
        XCTAssertTrue(check(OriginPolicy(), nil, "evil.example"))
    }

    /// `--web-origin`: a full origin, or a bare HOST[:PORT] for http and https alike.
    func testConfiguredOrigins() throws {
        let p = try OriginPolicy(configured: ["https://Swiped.Example.org:443/", "lan-host:8080"])
        XCTAssertEqual(p.origins, ["https://swiped.example.org"])
        XCTAssertTrue(check(p, "https://swiped.example.org", "swiped.example.org"))
        XCTAssertTrue(check(p, "https://swiped.example.org", "127.0.0.1:8080"))
        XCTAssertFalse(check(p, "http://swiped.example.org", "swiped.example.org"))
        XCTAssertTrue(check(p, "http://lan-host:8080", "lan-host:8080"))
        XCTAssertTrue(check(p, "https://lan-host:8080", "lan-host:8080"))
        XCTAssertFalse(check(p, "http://lan-host:9090", "lan-host:9090"))
        for bad in ["https://x/path", "ws://x", "https://", "x:0", "x:99999", "a b"] {
            XCTAssertThrowsError(try OriginPolicy(configured: [bad]), bad)
        }
    }
}

final class WebRouteTests: XCTestCase {
    func testOnlyTheSocketPathUpgradesAndOtherPathsAreFiles() {
        let site = StaticSite(files: [
            "index.html": StaticFile(body: [1], contentType: "text/html", etag: "\"1\"")
        ])
        guard case .upgrade = WebRoute.answer(HandshakeTests.request(), site: site, policy: OriginPolicy())
        else {
            return XCTFail("not upgraded")
        }
        let page = RequestHead.parseRequest(ArraySlice("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        guard case .success(let request) = page,
            case .respond(let bytes, nil, nil) = WebRoute.answer(request, site: site, policy: OriginPolicy())
        else { return XCTFail("no page") }
        XCTAssertTrue(bytes.starts(with: Array("HTTP/1.1 200 OK\r\n".utf8)))
        let missing = RequestHead.parseRequest(ArraySlice("GET /wsx HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        guard case .success(let other) = missing,
            case .respond(_, .notFound?, _) = WebRoute.answer(other, site: site, policy: OriginPolicy())
        else { return XCTFail("found") }
    }
}

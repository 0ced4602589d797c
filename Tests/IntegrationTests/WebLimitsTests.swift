// Safe by default (issue 43, point 4): who may open a WebSocket (Origin, Host), and every
// resource a browser controls bounded: heads (a count, a time, a size), frames (binary, unmasked,
// not UTF-8, too many fragments, control frames), the write queue, dead peers, --max-clients,
// and who may write.

import Foundation
import Glibc
import XCTest

final class WebLimitsTests: XCTestCase {
    func startDaemon(_ arguments: [String] = []) throws -> (SwipedDaemon, UInt16) {
        let port = try freeTCPPort()
        let daemon = try SwipedDaemon(
            arguments: ["--web", "127.0.0.1:\(port)", "--web-root", "web", "--web-anonymous", "writer"]
                + arguments,
            prefix: "swiped-wl")
        return (daemon, port)
    }

    /// Pages of other origins are refused 403, DNS rebinding too (a name in Host, whose Origin
    /// agrees); the page's own address or localhost, no Origin (not a browser) and a
    /// --web-origin are let in.
    func testOnlyThePagesOwnOriginsMayOpenAWebSocket() throws {
        let (daemon, port) = try startDaemon(["--web-origin", "https://swiped.example.org"])
        let open = { (origin: String?, host: String?) in
            try WebSocketClient.open(port: port, origin: origin, host: host).status
        }
        XCTAssertEqual(try open("http://127.0.0.1:\(port)", nil), 101)
        XCTAssertEqual(try open("http://localhost:\(port)", "localhost:\(port)"), 101)
        XCTAssertEqual(try open(nil, nil), 101, "no Origin: not a browser")
        XCTAssertEqual(try open("https://swiped.example.org", "swiped.example.org"), 101)
        for (origin, host) in [
            ("http://evil.example", nil), ("http://evil.example:\(port)", "evil.example:\(port)"),
            ("http://127.0.0.1:1", nil), ("null", nil), ("http://localhost:\(port)", nil),
            ("https://swiped.example.org.evil.example", "swiped.example.org.evil.example"),
        ] as [(String, String?)] {
            XCTAssertEqual(try open(origin, host), 403, "\(origin) \(host ?? "")")
        }
        // Refusals are counted by reason, WebSockets by transport, close frames by code: status
        // and /metrics render the same figures.
        let unix = try daemon.connect()
        let status = try XCTUnwrap(unix.request(["op": "status"])["status"] as? [String: Any])
        let web = try XCTUnwrap(status["web"] as? [String: Any], "\(status)")
        XCTAssertEqual((web["refused"] as? [String: Any])?["origin"] as? Int, 6)
        let transports = (status["clients"] as? [String: Any])?["transports"] as? [String: Any]
        XCTAssertEqual(transports?["unix"] as? Int, 1)
        guard let ws = try WebSocketClient.open(port: port).client else { return XCTFail("no WebSocket") }
        try ws.sendFrame(.binary, [1])
        XCTAssertEqual(try ws.readClose()?.code, 1003)
        let again = try XCTUnwrap(unix.request(["op": "status"])["status"] as? [String: Any])
        XCTAssertEqual(
            ((again["web"] as? [String: Any])?["closeCodes"] as? [String: Any])?["1003"] as? Int, 1)
        XCTAssertEqual(try daemon.stop(), .exited(0))
    }

    /// A slowloris is answered 408 at its deadline (5 s) and closed.
    func testASlowHeadIsClosedAtItsDeadline() throws {
        let (daemon, port) = try startDaemon()
        let slow = try TCPClient(port: port)
        try slow.send(Array("GET / HTTP/1.1\r\nHost: 127".utf8))
        let started = ContinuousClock.now
        let (status, _) = try slow.readHead(timeout: .seconds(8))
        XCTAssertEqual(status, 408)
        XCTAssertGreaterThan(ContinuousClock.now - started, .seconds(4))
        _ = try slow.readAll()
        let big = try TCPClient(port: port)
        try big.send(Array(("GET / HTTP/1.1\r\nX: " + String(repeating: "a", count: 9000)).utf8))
        XCTAssertEqual(try big.readHead().status, 431)
        XCTAssertEqual(try daemon.stop(), .exited(0))
    }

    /// 300 slow heads (past the 256 that may wait) still let a browser in within 1 s once they
    /// have waited 2 s: the stalest head gives its place (408), the newcomer is never the
    /// one refused.
    func testSlowHeadsCannotKeepABrowserOut() throws {
        let (daemon, port) = try startDaemon()
        var slow: [TCPClient] = []
        for _ in 0..<300 {
            let c = try TCPClient(port: port)
            try c.send(Array("GET / HTTP/1.1\r\n".utf8))
            slow.append(c)
        }
        usleep(2_200_000)  // past WebLimits.evictAfter: they are slow heads now
        let started = ContinuousClock.now
        let page = try WebListenerTests.get(port, "/")
        XCTAssertEqual(page.status, 200)
        guard let ws = try WebSocketClient.open(port: port).client else { return XCTFail("no WebSocket") }
        XCTAssertEqual(try ws.request(["op": "ping", "id": 1])["ok"] as? Bool, true)
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(1))
        XCTAssertEqual(try slow[0].readHead().status, 408, "the stalest was evicted")
        let status = try XCTUnwrap(try ws.request(["op": "status", "id": 2])["status"] as? [String: Any])
        let refused = try XCTUnwrap((status["web"] as? [String: Any])?["refused"] as? [String: Any])
        XCTAssertGreaterThanOrEqual(int(refused["evicted"]) ?? 0, 1, "\(refused)")
        XCTAssertEqual(int(refused["busy"]), 0)
        XCTAssertEqual(try daemon.stop(), .exited(0))
    }

    /// A connect storm is not a slowloris (issue 44): 600 connections made at once, each sending
    /// its head only once all are connected, are all served, none evicted nor refused (fresh
    /// heads are not evicted; the newcomers wait in the kernel's backlog meanwhile).
    func testAConnectStormIsServedWhole() throws {
        let (daemon, port) = try startDaemon()
        let storm = try (0..<600).map { _ in try TCPClient(port: port) }
        for c in storm { try c.send(Array(WebSocketClient.handshake(port: port).utf8)) }
        for (i, c) in storm.enumerated() {
            XCTAssertEqual(try c.readHead(timeout: .seconds(10)).status, 101, "connection \(i)")
        }
        let unix = try daemon.connect()
        let status = try XCTUnwrap(try unix.request(["op": "status"])["status"] as? [String: Any])
        let refused = try XCTUnwrap((status["web"] as? [String: Any])?["refused"] as? [String: Any])
        XCTAssertEqual(int(refused["evicted"]), 0, "\(refused)")
        XCTAssertEqual(int(refused["busy"]), 0)
        XCTAssertEqual(int((status["clients"] as? [String: Any])?["peak"]), 601)
        XCTAssertEqual(try daemon.stop(), .exited(0))
    }

    /// Each frame a browser must not send closes its WebSocket with its code (and the others go on).
    func testFramesABrowserMustNotSendCloseWithTheirCodes() throws {
        let (daemon, port) = try startDaemon()
        let cases: [(String, [UInt8], UInt16?)] = [
            ("binary", WebSocketClient.frame(2, [1, 2, 3]), 1003),
            ("unmasked", WebSocketClient.frame(1, Array(#"{"op":"ping"}"#.utf8), masked: false), 1002),
            ("not UTF-8", WebSocketClient.frame(1, [0x22, 0xC3, 0x28, 0x22]), 1007),
            ("reserved opcode", WebSocketClient.frame(3, []), 1002),
            (
                "a control frame over 125 bytes",
                WebSocketClient.frame(9, [UInt8](repeating: 0x61, count: 126)), nil
            ),
            (
                "257 fragments",
                WebSocketClient.frame(1, [0x20], fin: false)
                    + Array((0..<256).map { _ in WebSocketClient.frame(0, [0x20], fin: false) }.joined()),
                1008
            ),
        ]
        let witness = try daemon.connect()
        for (name, bytes, code) in cases {
            guard let ws = try WebSocketClient.open(port: port).client else { return XCTFail(name) }
            try ws.tcp.send(bytes)
            let close = try XCTUnwrap(try ws.readClose(), name)
            XCTAssertEqual(close.code, code, name)
            XCTAssertNil(try ws.readFrame(timeout: .seconds(3)), "\(name): not closed after its close frame")
            XCTAssertEqual(try witness.request(["op": "ping"])["ok"] as? Bool, true)
        }
        XCTAssertEqual(try daemon.stop(), .exited(0))
    }

    /// A subscriber that does not read is told `bye` (slow-consumer), then closed 1008 saying so.
    func testABrowserThatDoesNotReadIsClosedAsASlowConsumer() throws {
        let (daemon, port) = try startDaemon(["--max-queue", "4096", "--durability", "normal"])
        guard let lazy = try WebSocketClient.open(port: port, receiveBuffer: 4096).client else {
            return XCTFail("no WebSocket")
        }
        XCTAssertEqual(try lazy.request(["op": "subscribe", "id": 1])["ok"] as? Bool, true)
        let writer = try daemon.connect()
        let deadline = Deadline(.seconds(30))
        while !deadline.hasPassed && !daemon.process.standardError.contains("subscriber too slow") {
            for i in 0..<32 { try writer.send(json: ["op": "toggle-watched", "movie": "matrix", "id": i]) }
            for _ in 0..<32 { XCTAssertEqual(try writer.readReply()["ok"] as? Bool, true) }
        }
        XCTAssertFalse(deadline.hasPassed, "never told it was too slow")
        var bye: [String: Any]?
        while let text = try lazy.readText(timeout: .seconds(5)) {
            let object = try LineClient.parse(text)
            if object["event"] as? String == "bye" { bye = object }
        }
        XCTAssertEqual(bye?["reason"] as? String, "slow-consumer")
        XCTAssertEqual(lazy.closeFrame?.closeCode, 1008)
        XCTAssertEqual(lazy.closeFrame?.closeReason, "slow-consumer")
        XCTAssertEqual(try daemon.stop(), .exited(0))
    }

    /// Dead peers are found by pings: one that answers stays, one that does not is closed.
    func testAPeerThatDoesNotAnswerPingsIsClosed() throws {
        let (daemon, port) = try startDaemon(["--web-ping", "1"])
        guard let dead = try WebSocketClient.open(port: port).client else { return XCTFail("no WebSocket") }
        dead.answersPings = false
        let started = ContinuousClock.now
        XCTAssertEqual(try dead.readFrame(timeout: .seconds(3))?.opcode, WebSocketClient.Opcode.ping.rawValue)
        XCTAssertNil(try dead.readFrame(timeout: .seconds(4)), "not closed")
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(4))
        // One that answers (readText answers pings on the way) is still served after as long.
        guard let alive = try WebSocketClient.open(port: port).client else { return XCTFail("no WebSocket") }
        XCTAssertThrowsError(try alive.readText(timeout: .milliseconds(2500)), "only pings come")
        XCTAssertEqual(try alive.request(["op": "ping", "id": 2])["id"] as? Int, 2)
        XCTAssertEqual(try daemon.stop(), .exited(0))
        XCTAssertTrue(
            daemon.process.standardError.contains("no answer to a ping in 1 s"), daemon.process.standardError)
    }

    /// --max-clients counts WebSockets with Unix clients.
    func testMaxClientsCountsWebSockets() throws {
        let (daemon, port) = try startDaemon(["--max-clients", "2"])
        let unix = try daemon.connect()
        guard let ws = try WebSocketClient.open(port: port).client else { return XCTFail("no WebSocket") }
        XCTAssertEqual(try WebSocketClient.open(port: port).status, 503)
        let third = try LineClient(path: daemon.socketPath)
        XCTAssertEqual(try third.readUntilClosed(), [#"{"event":"bye","reason":"too-many-clients"}"#])
        XCTAssertEqual(try ws.request(["op": "ping", "id": 1])["ok"] as? Bool, true)
        XCTAssertEqual(try unix.request(["op": "ping"])["ok"] as? Bool, true)
        XCTAssertEqual(try daemon.stop(), .exited(0))
    }

    /// By default an anonymous WebSocket only reads (`--web-anonymous reader`), whatever
    /// `--writers` says (it is about Unix peers); `status` keeps its details from it.
    func testByDefaultAnAnonymousWebSocketOnlyReads() throws {
        let port = try freeTCPPort()
        let daemon = try SwipedDaemon(arguments: ["--web", "127.0.0.1:\(port)"], prefix: "swiped-wl")
        let tcp = try TCPClient(port: port)
        try tcp.send(Array(WebSocketClient.handshake(port: port).utf8))
        XCTAssertEqual(try tcp.readHead().status, 101)
        let ws = WebSocketClient(tcp)
        let hello = try ws.readJSON(timeout: .seconds(5))
        XCTAssertEqual(hello["writer"] as? Bool, false)
        XCTAssertEqual(hello["role"] as? String, "reader")
        XCTAssertTrue(hello["user"] is NSNull, "\(hello)")
        let refused = try ws.request(["op": "toggle-watched", "movie": "matrix", "id": 1])
        XCTAssertEqual((refused["error"] as? [String: Any])?["code"] as? String, "forbidden")
        let status = try XCTUnwrap(ws.request(["op": "status", "id": 2])["status"] as? [String: Any])
        XCTAssertNil((status["server"] as? [String: Any])?["pid"], "a WebSocket saw the pid")
        XCTAssertEqual(try daemon.stop(), .exited(0))
    }
}

// The web listener's WebSockets as protocol connections (issue 43): each is a client of its
// own (hello, client number, Session, subscriptions), one text message one line both ways,
// `--max-line` as over the Unix socket, the hard cap (twice --max-line) closing with 1009.

import Foundation
import Glibc
import XCTest

final class WebSocketProtocolTests: XCTestCase {
    func startDaemon(_ arguments: [String] = []) throws -> (SwipedDaemon, UInt16) {
        let port = try freeTCPPort()
        let daemon = try SwipedDaemon(
            arguments: ["--web", "127.0.0.1:\(port)", "--web-anonymous", "writer"] + arguments,
            prefix: "swiped-ws")
        return (daemon, port)
    }

    func testAWebSocketIsAClientOfItsOwnAndHearsTheOthers() throws {
        let (daemon, port) = try startDaemon()
        let tcp = try TCPClient(port: port)
        try tcp.send(Array(WebSocketClient.handshake(port: port).utf8))
        let (status, head) = try tcp.readHead()
        XCTAssertEqual(status, 101)
        XCTAssertTrue(head.contains("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"), head)
        XCTAssertFalse(head.lowercased().contains("sec-websocket-extensions"), head)
        let ws = WebSocketClient(tcp)
        let hello = try ws.readJSON(timeout: .seconds(5))
        XCTAssertEqual(hello["event"] as? String, "hello")
        XCTAssertEqual(hello["writer"] as? Bool, true, "a writer: --web-anonymous writer")
        let unix = try daemon.connectWithHello()
        XCTAssertNotEqual(hello["client"] as? Int, unix.hello["client"] as? Int)

        XCTAssertEqual(try ws.request(["op": "ping", "id": 1])["ok"] as? Bool, true)
        XCTAssertEqual(try ws.request(["op": "subscribe", "id": 2])["ok"] as? Bool, true)
        let changed = try unix.client.request(["op": "toggle-watched", "movie": "matrix"])
        XCTAssertEqual(changed["ok"] as? Bool, true)
        let event = try ws.readEvent()
        XCTAssertEqual(event["event"] as? String, "movie")
        XCTAssertEqual(event["seq"] as? Int, changed["seq"] as? Int)
        // And the other way: a change over the WebSocket reaches the Unix client's subscription.
        XCTAssertEqual(try unix.client.request(["op": "subscribe"])["ok"] as? Bool, true)
        let mine = try ws.request(["op": "toggle-watched", "movie": "seven", "id": 3])
        XCTAssertEqual(mine["id"] as? Int, 3)
        XCTAssertEqual(try unix.client.readEvent()["seq"] as? Int, mine["seq"] as? Int)
        XCTAssertEqual(try daemon.stop(), .exited(0))
    }

    /// A message is one line without its `\n`: a raw `\n` in one ends a line there (two
    /// replies), an empty message is a blank line (no reply).
    func testARawNewlineSplitsAMessageIntoLines() throws {
        let (daemon, port) = try startDaemon()
        guard let ws = try WebSocketClient.open(port: port).client else { return XCTFail("not upgraded") }
        try ws.send(text: "")
        try ws.send(text: #"{"op":"ping","id":1}"# + "\n" + #"{"op":"ping","id":2}"#)
        XCTAssertEqual(try ws.readReply()["id"] as? Int, 1)
        XCTAssertEqual(try ws.readReply()["id"] as? Int, 2)
        XCTAssertEqual(try ws.request(["op": "ping", "id": 3])["id"] as? Int, 3)
        XCTAssertEqual(try daemon.stop(), .exited(0))
    }

    /// Past --max-line: `too-large`, and the WebSocket goes on; past twice --max-line: 1009.
    func testTooLargeThenTheHardCap() throws {
        let (daemon, port) = try startDaemon(["--max-line", "256"])
        guard let ws = try WebSocketClient.open(port: port).client else { return XCTFail("not upgraded") }
        try ws.send(text: #"{"op":"ping","pad":""# + String(repeating: "x", count: 300) + #""}"#)
        let error = try ws.readReply()
        XCTAssertEqual((error["error"] as? [String: Any])?["code"] as? String, "too-large")
        XCTAssertEqual(try ws.request(["op": "ping", "id": 1])["ok"] as? Bool, true)
        try ws.send(text: String(repeating: "x", count: 513))
        let close = try XCTUnwrap(try ws.readClose())
        XCTAssertEqual(close.code, 1009)
        XCTAssertEqual(try ws.readFrame(timeout: .seconds(3))?.opcode, nil, "closed after its close frame")
        XCTAssertEqual(try daemon.stop(), .exited(0))
        XCTAssertTrue(daemon.process.standardError.contains("close_code=1009"), daemon.process.standardError)
    }

    /// A reply the Session words a part at a time (a `list` of more than 256 movies) is one
    /// message, in several frames.
    func testALongListIsOneMessage() throws {
        let (daemon, port) = try startDaemon(["--durability", "normal"])
        let unix = try daemon.connect()
        for i in 0..<400 { try unix.send(json: ["op": "add", "title": "Movie \(i)", "id": i]) }
        for _ in 0..<400 { XCTAssertEqual(try unix.readReply()["ok"] as? Bool, true) }
        guard let ws = try WebSocketClient.open(port: port).client else { return XCTFail("not upgraded") }
        try ws.send(json: ["op": "list", "id": 1])
        var frames: [WebSocketClient.Frame] = []
        while let f = try ws.readFrame() {
            frames.append(f)
            if f.fin { break }
        }
        XCTAssertGreaterThan(frames.count, 1)
        let text = String(decoding: frames.flatMap(\.payload), as: UTF8.self)
        let reply = try LineClient.parse(text)
        XCTAssertEqual((reply["movies"] as? [Any])?.count, 410)
        XCTAssertEqual(try ws.request(["op": "ping", "id": 2])["id"] as? Int, 2)
        XCTAssertEqual(try daemon.stop(), .exited(0))
    }

    /// Stopping: every WebSocket is told `bye` (shutdown), then closed with 1001.
    func testStoppingSaysByeThenClosesGoingAway() throws {
        let (daemon, port) = try startDaemon()
        guard let ws = try WebSocketClient.open(port: port).client else { return XCTFail("not upgraded") }
        kill(daemon.pid, SIGTERM)
        let bye = try ws.readEvent()
        XCTAssertEqual(bye["reason"] as? String, "shutdown")
        let close = try XCTUnwrap(try ws.readClose())
        XCTAssertEqual(close.code, 1001)
        XCTAssertEqual(close.reason, "shutdown")
        try ws.sendFrame(.close, [0x03, 0xE9])
        XCTAssertEqual(try daemon.process.wait(), .exited(0))
    }
}

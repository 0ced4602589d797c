// Several clients on one state: a change by one is pushed at once to subscribers; subscribe
// {from} sends the catch-up then the live events with no gap and no duplicate while another
// client writes; unsubscribe stops them; history pages through the log.

import Foundation
import Glibc
import XCTest

final class DaemonSharingTests: XCTestCase {
    private var daemon: SwipedDaemon!

    override func setUpWithError() throws { daemon = try SwipedDaemon(prefix: "swiped-share") }

    override func tearDownWithError() throws {
        if let daemon { XCTAssertEqual(try daemon.stop(), .exited(0), daemon.process.standardError) }
        daemon = nil
    }

    private static let rfc3339Micros = try! NSRegularExpression(
        pattern: #"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$"#)

    private func assertEvent(
        _ event: [String: Any], seq: Int, kind: String, movie: String?,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertEqual(event["event"] as? String, "movie", "\(event)", file: file, line: line)
        XCTAssertNil(event["ok"], "events never carry ok", file: file, line: line)
        XCTAssertEqual(int(event["seq"]), seq, "\(event)", file: file, line: line)
        XCTAssertEqual(event["kind"] as? String, kind, "\(event)", file: file, line: line)
        let id = (event["movie"] as? [String: Any])?["id"] as? String
        XCTAssertNotNil(id, "\(event)", file: file, line: line)
        if let movie { XCTAssertEqual(id, movie, "\(event)", file: file, line: line) }
        let at = event["at"] as? String ?? ""
        XCTAssertEqual(
            Self.rfc3339Micros.numberOfMatches(in: at, range: NSRange(at.startIndex..., in: at)), 1,
            "at: \(at)", file: file, line: line)
    }

    func testAChangeByOneClientIsPushedToAnotherAtOnce() throws {
        let a = try daemon.connect()
        let b = try daemon.connect()
        XCTAssertEqual(try b.ok(["op": "subscribe", "id": "s"])["seq"] as? Int, 10)
        let start = ContinuousClock.now
        let reply = try a.ok(["op": "toggle-watched", "movie": "matrix"])
        let event = try b.readEvent(timeout: .seconds(2))
        XCTAssertLessThan(ContinuousClock.now - start, .milliseconds(500))
        assertEvent(event, seq: 11, kind: "watched-toggled", movie: "matrix")
        XCTAssertEqual((event["movie"] as? [String: Any])?["watched"] as? Bool, true)
        XCTAssertEqual(int((reply["movie"] as? [String: Any])?["version"]), 11)

        try a.ok(["op": "toggle-watched-with-friends", "movie": "seven"])
        assertEvent(try b.readEvent(), seq: 12, kind: "watched-with-friends-toggled", movie: "seven")
        try a.ok(["op": "add", "title": "Heat"])
        assertEvent(try b.readEvent(), seq: 13, kind: "added", movie: "heat")
        try a.ok(["op": "remove", "movie": "heat"])
        let removed = try b.readEvent()
        assertEvent(removed, seq: 14, kind: "removed", movie: "heat")
        XCTAssertEqual((removed["movie"] as? [String: Any])?["title"] as? String, "Heat", "its last state")
        // The writer is not subscribed: it got replies only.
        XCTAssertTrue(a.events.isEmpty)
        try a.expectSilence(for: .milliseconds(100))

        // Subscribing again restarts from the new `from`.
        XCTAssertEqual(int(try b.ok(["op": "subscribe", "from": 12])["seq"]), 14)
        assertEvent(try b.readEvent(), seq: 13, kind: "added", movie: "heat")
        assertEvent(try b.readEvent(), seq: 14, kind: "removed", movie: "heat")

        // Unsubscribed: no more events.
        try b.ok(["op": "unsubscribe"])
        try a.ok(["op": "toggle-watched", "movie": "matrix"])
        try b.ok(["op": "ping"])
        XCTAssertTrue(b.events.isEmpty, "\(b.events)")
        try b.expectSilence(for: .milliseconds(200))
    }

    func testCatchUpThenLiveHasNoGapAndNoDuplicateWhileAnotherClientWrites() throws {
        let writer = try daemon.connect()
        // 300 toggles in flight while the subscriber joins from seq 5.
        var batch = ""
        for n in 0..<300 { batch += #"{"op":"toggle-watched","movie":"matrix","id":\#(n)}"# + "\n" }
        try writer.sendRaw(Array(batch.utf8))
        _ = try writer.readReply()  // some are durable already

        let subscriber = try daemon.connect()
        let subscribed = try subscriber.ok(["op": "subscribe", "from": 5])
        XCTAssertGreaterThanOrEqual(int(subscribed["seq"]) ?? 0, 11)
        for _ in 1..<300 { _ = try writer.readReply(timeout: .seconds(20)) }

        var seqs: [Int] = []
        while seqs.last != 310 {
            let event = try subscriber.readEvent(timeout: .seconds(5))
            seqs.append(int(event["seq"]) ?? -1)
        }
        XCTAssertEqual(seqs, Array(6...310))
        try subscriber.expectSilence(for: .milliseconds(100))
    }

    func testSubscribeRepliesBeforeItsFirstEvent() throws {
        let client = try daemon.connect()
        try client.send(#"{"op":"subscribe","from":0,"id":1}"#)
        let first = try LineClient.parse(try XCTUnwrap(try client.readLine()))
        XCTAssertEqual(int(first["id"]), 1, "the reply comes first: \(first)")
        for seq in 1...10 { assertEvent(try client.readEvent(), seq: seq, kind: "added", movie: nil) }
    }

    func testHistoryPages() throws {
        let client = try daemon.connect()
        try client.ok(["op": "toggle-watched", "movie": "seven"])
        let all = try client.ok(["op": "history"])
        XCTAssertEqual(int(all["seq"]), 11)
        let events = try XCTUnwrap(all["events"] as? [[String: Any]])
        XCTAssertEqual(events.compactMap { int($0["seq"]) }, Array(1...11))
        XCTAssertEqual(events.last?["kind"] as? String, "watched-toggled")
        XCTAssertNil(events.last?["event"], "history entries are events, not messages")
        XCTAssertEqual(events.first?["kind"] as? String, "added")

        let page = try client.ok(["op": "history", "from": 3, "limit": 2])["events"] as? [[String: Any]]
        XCTAssertEqual(page?.compactMap { int($0["seq"]) }, [4, 5])
        let one = try client.ok(["op": "history", "limit": 1])["events"] as? [[String: Any]]
        XCTAssertEqual(one?.compactMap { int($0["seq"]) }, [1])
        let tail = try client.ok(["op": "history", "from": 10, "limit": 1000])["events"] as? [[String: Any]]
        XCTAssertEqual(tail?.compactMap { int($0["seq"]) }, [11])
        let beyond = try client.ok(["op": "history", "from": 500])["events"] as? [[String: Any]]
        XCTAssertEqual(beyond?.count, 0)
    }
}

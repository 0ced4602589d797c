// Shared rows through the daemon (issue 18, section 2): private by default, `peers` listing the
// sharers' open rows for a late watcher, `peer-row` events coalesced to one per row every 16 ms
// with the latest state last, closed rows when a sharer stops sharing or goes, and a watcher
// that does not read told bye as a slow consumer.
import Foundation
import Glibc
import XCTest

final class PeerRowsTests: DaemonClientTestCase {
    override class var prefix: String { "swiped-peers" }

    /// Every event `watcher` gets within `window`.
    private func events(_ watcher: LineClient, within window: Duration) throws -> [[String: Any]] {
        var got: [[String: Any]] = []
        let deadline = ContinuousClock.now + window
        while ContinuousClock.now < deadline {
            guard let event = try? watcher.readEvent(timeout: deadline - ContinuousClock.now) else { break }
            got.append(event)
        }
        return got
    }

    private func peerRows(_ events: [[String: Any]]) -> [[String: Any]] {
        events.filter { $0["event"] as? String == "peer-row" }
    }

    func testRowsArePrivateUntilShared() throws {
        let watcher = try daemon.connect()
        XCTAssertEqual((try watcher.ok(["op": "peers", "watch": true])["peers"] as? [Any])?.count, 0)
        _ = try client.ok(["op": "drag", "movie": "seven", "dx": -60])
        _ = try client.ok(["op": "release", "movie": "seven"])
        XCTAssertEqual(peerRows(try events(watcher, within: .milliseconds(150))).count, 0)
        XCTAssertEqual(try client.ok(["op": "share", "on": true])["share"] as? [String: Bool], ["on": true])
        let got = peerRows(try events(watcher, within: .milliseconds(150)))
        XCTAssertEqual(got.count, 1, "its open row, once it shares")
        XCTAssertEqual(got.first?["client"] as? Int, 1)
        XCTAssertEqual((got.first?["row"] as? [String: Any])?["phase"] as? String, "open")
        XCTAssertEqual(got.first?["viewport"] as? NSDictionary, ["width": 390, "direction": "ltr"])
    }

    func testALateWatcherStartsFromTheSharersOpenRows() throws {
        _ = try client.ok(["op": "share", "on": true])
        _ = try client.ok(["op": "viewport", "direction": "rtl"])
        _ = try client.ok(["op": "open", "movie": "seven", "edge": "trailing"])
        let other = try daemon.connect()
        _ = try other.ok(["op": "share", "on": true])
        let watcher = try daemon.connect()
        let reply = try watcher.ok(["op": "peers", "watch": true])
        XCTAssertEqual(reply["watch"] as? Bool, true)
        let peers = try XCTUnwrap(reply["peers"] as? [[String: Any]])
        XCTAssertEqual(peers.map { $0["client"] as? Int }, [1, 2])
        XCTAssertEqual(peers[0]["viewport"] as? NSDictionary, ["width": 390, "direction": "rtl"])
        let rows = try XCTUnwrap(peers[0]["rows"] as? [[String: Any]])
        XCTAssertEqual(rows.map { $0["movie"] as? String }, ["seven"])
        XCTAssertEqual(rows.first?["offset"] as? Double, 70)
        XCTAssertEqual((peers[1]["rows"] as? [Any])?.count, 0)
    }

    func testABurstOfDragsIsCoalescedAndTheLatestStateComesLast() throws {
        let watcher = try daemon.connect()
        _ = try watcher.ok(["op": "peers", "watch": true])
        _ = try client.ok(["op": "share", "on": true])
        // 300 drags over ~1 s, 3 ms apart: at most one event per 16 ms for the row.
        let start = ContinuousClock.now
        for i in 1...300 {
            try client.send(json: ["op": "drag", "movie": "seven", "dx": -Double(i) / 2, "id": i])
            _ = try client.readReply()
            usleep(3_000)
        }
        try client.send(json: ["op": "release", "movie": "seven", "id": 0])
        let last = try client.readReply()
        let elapsed = ContinuousClock.now - start
        var got = peerRows(try events(watcher, within: .milliseconds(200)))
        let frames = Int(elapsed / .milliseconds(16)) + 2
        XCTAssertLessThanOrEqual(got.count, frames, "more than one event per row every 16 ms")
        XCTAssertGreaterThan(got.count, 10, "the watcher saw the drag move")
        // In order: the offsets only move on, and the last event is the row as it ended.
        let offsets = got.compactMap { ($0["row"] as? [String: Any])?["offset"] as? Double }
        XCTAssertEqual(offsets.dropLast(), offsets.dropLast().sorted(by: >)[...])
        let final = try XCTUnwrap(got.popLast()?["row"] as? [String: Any])
        XCTAssertEqual(final as NSDictionary, (last["row"] as? [String: Any] ?? [:]) as NSDictionary)
        XCTAssertEqual(final["phase"] as? String, "open")
    }

    func testEveryChangedRowIsSentTheClosedOneToo() throws {
        let watcher = try daemon.connect()
        _ = try watcher.ok(["op": "peers", "watch": true])
        _ = try client.ok(["op": "share", "on": true])
        _ = try client.ok(["op": "open", "movie": "seven", "edge": "trailing"])
        XCTAssertEqual(peerRows(try events(watcher, within: .milliseconds(100))).count, 1)
        // Opening matrix closes seven (rule 8): both rows change in one flush.
        _ = try client.ok(["op": "open", "movie": "matrix", "edge": "leading"])
        let got = peerRows(try events(watcher, within: .milliseconds(100)))
        let rows = got.compactMap { $0["row"] as? [String: Any] }
        XCTAssertEqual(rows.map { $0["movie"] as? String }, ["matrix", "seven"])
        XCTAssertEqual(rows.map { $0["phase"] as? String }, ["open", "closed"])
    }

    func testASharerThatGoesOrStopsSharingLeavesItsRowsClosed() throws {
        let watcher = try daemon.connect()
        _ = try watcher.ok(["op": "peers", "watch": true])
        let sharer = try daemon.connect()
        _ = try sharer.ok(["op": "share", "on": true])
        _ = try sharer.ok(["op": "open", "movie": "seven", "edge": "trailing"])
        _ = try client.ok(["op": "share", "on": true])
        _ = try client.ok(["op": "open", "movie": "matrix", "edge": "leading"])
        XCTAssertEqual(peerRows(try events(watcher, within: .milliseconds(100))).count, 2)

        sharer.close()
        var got = peerRows(try events(watcher, within: .milliseconds(200)))
        XCTAssertEqual(got.count, 1)
        XCTAssertEqual(got.first?["client"] as? Int, 3)
        XCTAssertEqual((got.first?["row"] as? [String: Any])?["movie"] as? String, "seven")
        XCTAssertEqual((got.first?["row"] as? [String: Any])?["phase"] as? String, "closed")
        XCTAssertEqual(
            ((try watcher.ok(["op": "peers", "watch": true]))["peers"] as? [[String: Any]])?.count, 1)

        XCTAssertEqual(
            try client.ok(["op": "share", "on": false])["share"] as? [String: Bool], ["on": false])
        got = peerRows(try events(watcher, within: .milliseconds(200)))
        XCTAssertEqual(got.count, 1)
        XCTAssertEqual(got.first?["client"] as? Int, 1)
        XCTAssertEqual((got.first?["row"] as? [String: Any])?["movie"] as? String, "matrix")
        XCTAssertEqual((got.first?["row"] as? [String: Any])?["phase"] as? String, "closed")
        XCTAssertEqual(
            ((try watcher.ok(["op": "peers", "watch": true]))["peers"] as? [[String: Any]])?.count, 0)
        // Still open on its own screen, private now.
        XCTAssertEqual((try client.ok(["op": "rows"])["rows"] as? [Any])?.count, 1)
        _ = try client.ok(["op": "close"])
        XCTAssertEqual(peerRows(try events(watcher, within: .milliseconds(100))).count, 0)
    }

    func testAWatcherThatDoesNotReadIsToldByeAndTheOthersGoOn() throws {
        XCTAssertEqual(try daemon.stop(), .exited(0))
        daemon = try SwipedDaemon(arguments: ["--max-queue", "8192"], prefix: Self.prefix)
        client = try daemon.connect()
        let lazy = try daemon.connect()
        _ = try lazy.ok(["op": "peers", "watch": true])
        let good = try daemon.connect()
        _ = try good.ok(["op": "peers", "watch": true])
        // Ten sharers moving two rows each, until the lazy watcher is told.
        var sharers: [LineClient] = []
        for _ in 0..<10 {
            let s = try daemon.connect()
            _ = try s.ok(["op": "share", "on": true])
            sharers.append(s)
        }
        let deadline = ContinuousClock.now + .seconds(30)
        var goodLines = 0
        var round = 0
        func told() -> Bool { daemon.process.standardError.contains("peer watcher too slow") }
        while !told() && ContinuousClock.now < deadline {
            round += 1
            for s in sharers {
                let movie = round % 2 == 0 ? "seven" : "matrix"
                try s.send(json: ["op": "drag", "movie": movie, "dx": -Double(round % 200) - 1])
            }
            for s in sharers { _ = try s.readReply() }
            // The good watcher reads as it goes.
            while (try? good.readLine(timeout: .milliseconds(1))) != nil { goodLines += 1 }
            usleep(2_000)
        }
        XCTAssertTrue(told(), "a watcher that does not read was never told")
        let lines = try lazy.readUntilClosed(timeout: .seconds(10))
        XCTAssertEqual(lines.last, #"{"event":"bye","reason":"slow-consumer"}"#)
        XCTAssertGreaterThan(lines.filter { $0.contains(#""event":"peer-row""#) }.count, 10)
        XCTAssertGreaterThan(goodLines, 10, "the good watcher got no events")
        let told = daemon.process.standardError.components(separatedBy: "peer watcher too slow").count - 1
        XCTAssertEqual(told, 1, "only the watcher that does not read is told")
        XCTAssertEqual(try good.ok(["op": "ping"])["ok"] as? Bool, true)
        // Counted with the dropped subscribers (status and /metrics share the counter).
        let status = try XCTUnwrap(try good.ok(["op": "status"])["status"] as? [String: Any])
        let clients = try XCTUnwrap(status["clients"] as? [String: Any])
        XCTAssertEqual(clients["dropped"] as? Int, 1, "a dropped watcher is not counted")
    }
}

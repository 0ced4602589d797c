// Issue 14, sections 3 and 4 through the real daemon: `open`, `perform` with and without
// confirmation, a confirmation confirmed by a tap, timed out after 3 s (a `row` event saying
// `"cancelled":"timeout"`), and cancelled by a drag; and SwipedClient's `open`, `perform`,
// `pending` and `cancelled`.

import Foundation
import Glibc
import SwipeEngine
import SwipedClient
import XCTest

final class DaemonSwipeCommandsTests: DaemonClientTestCase {
    override class var prefix: String { "swiped-cmds" }

    /// `delete` asks to confirm, labelled "Delete?"; `watched` does not.
    static var configure: [String: Any] {
        [
            "op": "configure",
            "leading": [["action": "watched", "label": "Watched"]],
            "trailing": [
                [
                    "action": "delete", "label": "Delete", "role": "destructive", "confirm": true,
                    "confirmLabel": "Delete?",
                ]
            ],
        ]
    }

    /// No event arrives for `seconds`: a ping sent after them is answered first.
    private func noEvent(for seconds: Double) throws {
        Thread.sleep(forTimeInterval: seconds)
        try client.send(#"{"op":"ping"}"#)
        XCTAssertEqual(try client.readLine(), #"{"ok":true}"#)
    }

    func testOpenOpensTheRowAndClosesTheOtherOne() throws {
        let open = row(try client.ok(["op": "open", "movie": "seven", "edge": "trailing"]))
        XCTAssertEqual(open["phase"] as? String, "open")
        XCTAssertEqual(double(open["offset"]), -70)
        XCTAssertEqual(buttons(open).map { $0["action"] as? String }, ["delete"])
        let other = row(try client.ok(["op": "open", "movie": "matrix", "edge": "leading"]))
        XCTAssertEqual(double(other["offset"]), 140)
        let closed = try client.readEvent()
        XCTAssertEqual(row(closed)["movie"] as? String, "seven")
        XCTAssertEqual(row(closed)["phase"] as? String, "closed")
        try client.ok(["op": "configure", "trailing": [["action": "delete"]]])
        XCTAssertEqual(
            code(try client.request(["op": "open", "movie": "seven", "edge": "leading"])), "bad-request")
        XCTAssertEqual(
            code(try client.request(["op": "open", "movie": "seven", "edge": "up"])), "bad-request")
    }

    func testPerformWithoutConfirmationFiresAtOnce() throws {
        let reply = try client.ok(["op": "perform", "movie": "matrix", "action": "watched-with-friends"])
        XCTAssertEqual(row(reply)["phase"] as? String, "closed")
        XCTAssertEqual((reply["fired"] as? [String: Any])?["action"] as? String, "watched-with-friends")
        XCTAssertEqual(int((reply["fired"] as? [String: Any])?["seq"]), 11)
        let movies = try client.ok(["op": "list"])["movies"] as? [[String: Any]]
        XCTAssertEqual(
            movies?.first { $0["id"] as? String == "matrix" }?["watchedWithFriends"] as? Bool, true)
        XCTAssertEqual(
            code(try client.request(["op": "perform", "movie": "matrix", "action": "frob"])), "bad-request")
    }

    func testPerformWithConfirmationWaitsAndATapFiresIt() throws {
        let layout = try client.ok(Self.configure)["layout"] as? [String: Any]
        XCTAssertEqual((layout?["trailing"] as? [[String: Any]])?.first?["confirm"] as? Bool, true)
        let pending = try client.ok(["op": "perform", "movie": "seven", "action": "delete"])
        XCTAssertEqual(pending["pending"] as? [String: String], ["action": "delete"])
        XCTAssertNil(pending["fired"])
        XCTAssertEqual(row(pending)["phase"] as? String, "confirming")
        XCTAssertEqual(double(row(pending)["offset"]), -70)
        XCTAssertEqual(buttons(row(pending)).map { $0["label"] as? String }, ["Delete?"])
        XCTAssertEqual(try client.ok(["op": "list"])["seq"] as? Int, 10, "nothing written yet")
        let tap = try client.ok(["op": "tap", "movie": "seven", "action": "delete"])
        XCTAssertEqual(row(tap)["phase"] as? String, "closed")
        XCTAssertEqual(int((tap["fired"] as? [String: Any])?["seq"]), 11)
        let movies = try client.ok(["op": "list"])["movies"] as? [[String: Any]]
        XCTAssertFalse(movies?.contains { $0["id"] as? String == "seven" } ?? true)
        try noEvent(for: 3.3)  // the timer was cancelled
    }

    func testAFullSwipeConfirmationTimesOutAfter3Seconds() throws {
        try client.ok(Self.configure)
        let release = try client.ok(["op": "release", "movie": "seven", "dx": -300])
        let started = ContinuousClock.now
        XCTAssertEqual(release["pending"] as? [String: String], ["action": "delete"])
        XCTAssertEqual(row(release)["phase"] as? String, "confirming")
        let event = try client.readEvent(timeout: .seconds(6))
        let elapsed = ContinuousClock.now - started
        XCTAssertEqual(event["event"] as? String, "row")
        XCTAssertEqual(event["cancelled"] as? String, "timeout")
        XCTAssertEqual(row(event)["movie"] as? String, "seven")
        XCTAssertEqual(row(event)["phase"] as? String, "closed")
        XCTAssertGreaterThan(elapsed, .milliseconds(2900))
        XCTAssertLessThan(elapsed, .milliseconds(4500))
        XCTAssertEqual(
            code(try client.request(["op": "tap", "movie": "seven", "action": "delete"])), "not-revealed")
        XCTAssertEqual((try client.ok(["op": "history", "from": 10])["events"] as? [Any])?.count, 0)
    }

    func testADragCancelsTheConfirmation() throws {
        try client.ok(Self.configure)
        _ = try client.ok(["op": "perform", "movie": "seven", "action": "delete"])
        // Another row's drag (rule 8) closes the confirming row with a row event.
        let drag = row(try client.ok(["op": "drag", "movie": "matrix", "dx": -20]))
        XCTAssertEqual(drag["phase"] as? String, "dragging")
        let closed = try client.readEvent()
        XCTAssertEqual(row(closed)["movie"] as? String, "seven")
        XCTAssertEqual(row(closed)["phase"] as? String, "closed")
        XCTAssertNil(closed["cancelled"])
        // A drag of the confirming row itself: the reply is the closed row.
        _ = try client.ok(["op": "perform", "movie": "seven", "action": "delete"])
        _ = try client.readEvent()  // matrix, closed by the confirmation (rule 8)
        let own = row(try client.ok(["op": "drag", "movie": "seven", "dx": -30]))
        XCTAssertEqual(own["phase"] as? String, "closed")
        try noEvent(for: 3.3)  // no timeout: the timers were cancelled
        XCTAssertEqual(try client.ok(["op": "list"])["seq"] as? Int, 10, "nothing fired")
    }

    func testSwipedClientOpensPerformsAndHearsTheTimeout() throws {
        let c = try SwipedClient(socketPath: daemon.socketPath, timeout: 10)
        XCTAssertEqual(try c.open("seven", edge: .trailing).phase, .open)
        let configured = try c.callRaw(#"{"op":"configure","trailing":[{"action":"delete","confirm":true}]}"#)
        XCTAssertTrue(configured.contains(#""confirm":true"#), configured)
        let (row, fired, pending) = try c.perform("seven", action: "delete")
        XCTAssertEqual(row.phase, .confirming)
        XCTAssertEqual(row.buttons.map(\.label), ["Confirm"])
        XCTAssertNil(fired)
        XCTAssertEqual(pending, "delete")
        let event = try c.nextEvent(timeout: 6)
        guard case .row(let closed, false, "timeout")? = event else {
            return XCTFail("\(String(describing: event))")
        }
        XCTAssertEqual(closed.phase, .closed)
    }
}

// The ops on a client's own swipe engine over the wire, with the examples of the issue: the
// geometry of revealed buttons, rtl, a full swipe firing `watched` and the `row` event that
// closes it 0.5 s later, rule 8, rows dropped or re-rendered by other clients' changes, custom
// actions, configure and viewport, and compact rows (options).

import Foundation
import Glibc
import XCTest

final class DaemonSwipeTests: DaemonClientTestCase {
    override class var prefix: String { "swiped-swipe" }

    /// (action, x, width) of each visible button, left to right.
    private func geometry(_ row: [String: Any]) -> [String] {
        buttons(row).map {
            "\($0["action"] as? String ?? "?")@\(double($0["x"]) ?? -1)+\(double($0["width"]) ?? -1)"
        }
    }

    func testDragAndReleaseRevealDeleteAndSnapOpen() throws {
        let drag = row(try client.ok(["op": "drag", "movie": "seven", "dx": -60]))
        XCTAssertEqual(drag["movie"] as? String, "seven")
        XCTAssertEqual(double(drag["offset"]), -60)
        XCTAssertEqual(drag["phase"] as? String, "dragging")
        XCTAssertEqual(drag["edge"] as? String, "trailing")
        XCTAssertEqual(drag["fullSwipe"] as? Bool, false)
        XCTAssertEqual(geometry(drag), ["delete@330.0+60.0"])
        XCTAssertNotNil(drag["spring"] as? [String: Any])
        XCTAssertEqual((drag["accessibilityActions"] as? [[String: Any]])?.count, 3)

        let open = row(try client.ok(["op": "release", "movie": "seven"]))
        XCTAssertEqual(double(open["offset"]), -70)
        XCTAssertEqual(open["phase"] as? String, "open")
        XCTAssertEqual(geometry(open), ["delete@320.0+70.0"])
        let delete = try XCTUnwrap(buttons(open).first)
        XCTAssertEqual(delete["label"] as? String, "Delete")
        XCTAssertEqual(delete["icon"] as? String, "trash")
        XCTAssertEqual(delete["tint"] as? String, "red")
        XCTAssertEqual(delete["role"] as? String, "destructive")
        XCTAssertEqual((try client.ok(["op": "rows"])["rows"] as? [[String: Any]])?.count, 1)

        // Tap delete: fired with the seq of the remove, the row closes, the movie is gone.
        let tap = try client.ok(["op": "tap", "movie": "seven", "action": "delete"])
        XCTAssertEqual(row(tap)["phase"] as? String, "closed")
        let fired = try XCTUnwrap(tap["fired"] as? [String: Any])
        XCTAssertEqual(fired["action"] as? String, "delete")
        XCTAssertEqual(int(fired["seq"]), 11)
        let list = try client.ok(["op": "list"])["movies"] as? [[String: Any]]
        XCTAssertFalse(list?.contains { $0["id"] as? String == "seven" } ?? true)
        XCTAssertEqual((try client.ok(["op": "rows"])["rows"] as? [[String: Any]])?.count, 0)
    }

    func testLeadingDragShowsTwoButtonsWatchedLeftmost() throws {
        let drag = row(try client.ok(["op": "drag", "movie": "matrix", "dx": 100]))
        XCTAssertEqual(drag["edge"] as? String, "leading")
        XCTAssertEqual(geometry(drag), ["watched@0.0+50.0", "watched-with-friends@50.0+50.0"])
        XCTAssertEqual(buttons(drag).first?["icon"] as? String, "eye")
        XCTAssertEqual(buttons(drag).first?["tint"] as? String, "green")
        XCTAssertNil(buttons(drag).first?["role"], "role is left out when there is none")
        let open = row(try client.ok(["op": "release", "movie": "matrix"]))
        XCTAssertEqual(double(open["offset"]), 140)
        XCTAssertEqual(geometry(open), ["watched@0.0+70.0", "watched-with-friends@70.0+70.0"])
    }

    func testRightToLeftPutsLeadingOnTheRight() throws {
        let viewport = try client.ok(["op": "viewport", "direction": "rtl"])
        XCTAssertEqual((viewport["viewport"] as? [String: Any])?["direction"] as? String, "rtl")
        XCTAssertEqual(double((viewport["viewport"] as? [String: Any])?["width"]), 390)
        let drag = row(try client.ok(["op": "drag", "movie": "matrix", "dx": -100]))
        XCTAssertEqual(drag["edge"] as? String, "leading", "in rtl a negative offset reveals leading")
        XCTAssertEqual(geometry(drag), ["watched-with-friends@290.0+50.0", "watched@340.0+50.0"])
        let trailing = row(try client.ok(["op": "drag", "movie": "seven", "dx": 60]))
        XCTAssertEqual(trailing["edge"] as? String, "trailing")
        XCTAssertEqual(geometry(trailing), ["delete@0.0+60.0"])
    }

    func testFullSwipeFiresWatchedAndTheRowClosesHalfASecondLater() throws {
        let watcher = try daemon.connect()
        try watcher.ok(["op": "subscribe"])
        let drag = row(try client.ok(["op": "drag", "movie": "matrix", "dx": 300]))
        XCTAssertEqual(drag["fullSwipe"] as? Bool, true)
        XCTAssertEqual(geometry(drag), ["watched@0.0+300.0"], "only the outermost button")
        let release = try client.ok(["op": "release", "movie": "matrix"])
        let fired = ContinuousClock.now
        XCTAssertEqual(row(release)["phase"] as? String, "fired")
        XCTAssertEqual((release["fired"] as? [String: Any])?["action"] as? String, "watched")
        XCTAssertEqual(int((release["fired"] as? [String: Any])?["seq"]), 11)
        // The change is durable and shared.
        let event = try watcher.readEvent()
        XCTAssertEqual(int(event["seq"]), 11)
        XCTAssertEqual((event["movie"] as? [String: Any])?["watched"] as? Bool, true)

        // Input on a fired row is ignored until it closes.
        XCTAssertEqual(
            row(try client.ok(["op": "drag", "movie": "matrix", "dx": -50]))["phase"] as? String, "fired")

        // The commit re-renders the row where it is (rule 9: its movie changed), then the timer
        // closes it.
        var close = try client.readEvent(timeout: .seconds(3))
        while row(close)["phase"] as? String == "fired" {
            XCTAssertEqual(row(close)["movie"] as? String, "matrix")
            close = try client.readEvent(timeout: .seconds(3))
        }
        let elapsed = ContinuousClock.now - fired
        XCTAssertEqual(close["event"] as? String, "row")
        XCTAssertNil(close["removed"])
        XCTAssertEqual(row(close)["movie"] as? String, "matrix")
        XCTAssertEqual(row(close)["phase"] as? String, "closed")
        XCTAssertEqual(double(row(close)["offset"]), 0)
        XCTAssertGreaterThan(elapsed, .milliseconds(400))
        XCTAssertLessThan(elapsed, .milliseconds(1500))
        // Rendered with the new flags: the watched action now offers eye.slash.
        let actions = try client.ok(["op": "drag", "movie": "matrix", "dx": 100])
        XCTAssertEqual(buttons(row(actions)).first?["icon"] as? String, "eye.slash")
    }

    /// `options` is this connection's: its rows come compact, byte for byte, in replies (the
    /// drag path's template, the general path, a fired reply) and in row events; another
    /// connection's stay full.
    func testCompactRowsAreThisConnectionsOnly() throws {
        let other = try daemon.connect()
        func exchange(_ client: LineClient, _ line: String) throws -> String {
            try client.send(line)
            return try XCTUnwrap(try client.readLine())
        }
        XCTAssertEqual(
            try exchange(client, #"{"op":"options","rows":"compact","id":1}"#),
            #"{"id":1,"ok":true,"options":{"rows":"compact"}}"#)
        let seven =
            #"{"movie":"seven","offset":-60,"phase":"dragging","edge":"trailing","fullSwipe":false,"buttons":[{"action":"delete","label":"Delete","icon":"trash","tint":"red","role":"destructive","x":330,"width":60}]}"#
        for _ in 0..<3 {
            XCTAssertEqual(
                try exchange(client, #"{"op":"drag","movie":"seven","dx":-60}"#),
                #"{"ok":true,"row":"# + seven + "}")
        }
        let fullDrag = try exchange(other, #"{"op":"drag","movie":"seven","dx":-60}"#)
        XCTAssertTrue(
            fullDrag.hasPrefix(#"{"ok":true,"row":"# + seven.dropLast() + #","spring":{"#), fullDrag)
        XCTAssertTrue(fullDrag.contains(#""accessibilityActions":["#), fullDrag)
        XCTAssertEqual(
            try exchange(client, #"{"op":"release","movie":"seven"}"#),
            #"{"ok":true,"row":{"movie":"seven","offset":-70,"phase":"open","edge":"trailing","fullSwipe":false,"buttons":[{"action":"delete","label":"Delete","icon":"trash","tint":"red","role":"destructive","x":320,"width":70}]}}"#
        )
        XCTAssertEqual(
            try exchange(client, #"{"op":"tap","movie":"seven","action":"delete"}"#),
            #"{"ok":true,"row":{"movie":"seven","offset":0,"phase":"closed","edge":null,"fullSwipe":false,"buttons":[]},"fired":{"action":"delete","seq":11}}"#
        )
        // The other client's row of the removed movie is dropped, in its (full) form.
        let dropped = try XCTUnwrap(try other.readLine())
        XCTAssertTrue(dropped.hasPrefix(#"{"event":"row","row":{"movie":"seven","#), dropped)
        XCTAssertTrue(dropped.hasSuffix(#"]},"removed":true}"#), dropped)
        XCTAssertTrue(dropped.contains(#""spring":"#), dropped)
        // A row event to this client: its row re-rendered by the other client's change.
        XCTAssertEqual(
            try exchange(client, #"{"op":"drag","movie":"matrix","dx":30}"#),
            #"{"ok":true,"row":{"movie":"matrix","offset":30,"phase":"dragging","edge":"leading","fullSwipe":false,"buttons":[{"action":"watched","label":"Watched","icon":"eye","tint":"green","x":0,"width":15},{"action":"watched-with-friends","label":"With Friends","icon":"person.3","tint":"indigo","x":15,"width":15}]}}"#
        )
        try other.ok(["op": "toggle-watched", "movie": "matrix"])
        XCTAssertEqual(
            try client.readLine(),
            #"{"event":"row","row":{"movie":"matrix","offset":30,"phase":"dragging","edge":"leading","fullSwipe":false,"buttons":[{"action":"watched","label":"Watched","icon":"eye.slash","tint":"green","x":0,"width":15},{"action":"watched-with-friends","label":"With Friends","icon":"person.3","tint":"indigo","x":15,"width":15}]}}"#
        )
        // Back to full.
        XCTAssertEqual(
            try exchange(client, #"{"op":"options","rows":"full"}"#),
            #"{"ok":true,"options":{"rows":"full"}}"#)
        XCTAssertTrue(
            try exchange(client, #"{"op":"drag","movie":"matrix","dx":30}"#).contains(#""spring":"#))
    }

    func testDraggingAnotherRowClosesTheOpenOneWithARowEvent() throws {
        try client.ok(["op": "drag", "movie": "seven", "dx": -80])
        try client.ok(["op": "release", "movie": "seven"])
        let other = try client.ok(["op": "drag", "movie": "matrix", "dx": -30])
        XCTAssertEqual(row(other)["movie"] as? String, "matrix")
        let event = try client.readEvent()
        XCTAssertEqual(event["event"] as? String, "row")
        XCTAssertEqual(row(event)["movie"] as? String, "seven")
        XCTAssertEqual(row(event)["phase"] as? String, "closed")
        let rows = try client.ok(["op": "rows"])["rows"] as? [[String: Any]]
        XCTAssertEqual(rows?.compactMap { $0["movie"] as? String }, ["matrix"])
    }

    func testAnotherClientsChangesDropOrReRenderRows() throws {
        let other = try daemon.connect()
        try client.ok(["op": "drag", "movie": "seven", "dx": -80])
        try client.ok(["op": "release", "movie": "seven"])
        try other.ok(["op": "remove", "movie": "seven"])
        let dropped = try client.readEvent()
        XCTAssertEqual(dropped["event"] as? String, "row")
        XCTAssertEqual(dropped["removed"] as? Bool, true)
        XCTAssertEqual(row(dropped)["movie"] as? String, "seven")
        XCTAssertEqual(row(dropped)["phase"] as? String, "closed")
        XCTAssertEqual(
            LineClient.errorCode(of: try client.request(["op": "drag", "movie": "seven", "dx": -20])),
            "not-found")

        try client.ok(["op": "drag", "movie": "matrix", "dx": 100])
        try other.ok(["op": "toggle-watched", "movie": "matrix"])
        let watched = try client.readEvent()
        XCTAssertNil(watched["removed"])
        XCTAssertEqual(row(watched)["phase"] as? String, "dragging", "re-rendered where it is")
        XCTAssertEqual(buttons(row(watched)).first?["icon"] as? String, "eye.slash")
        try other.ok(["op": "toggle-watched", "movie": "matrix"])
        XCTAssertEqual(buttons(row(try client.readEvent())).first?["icon"] as? String, "eye")
        // A change to a movie whose row is closed sends nothing.
        try other.ok(["op": "toggle-watched", "movie": "inception"])
        try client.ok(["op": "ping"])
        XCTAssertTrue(client.events.isEmpty, "\(client.events)")
        // The other client's own rows were never touched.
        XCTAssertTrue(other.events.isEmpty, "\(other.events)")
    }

    func testCustomActionsFireForThisClientOnlyAndChangeNoState() throws {
        let watcher = try daemon.connect()
        try watcher.ok(["op": "subscribe"])
        let configured = try client.ok([
            "op": "configure",
            "leading": [["action": "flag", "label": "Flag", "icon": "flag", "tint": "orange"]],
            "trailing": [
                ["action": "archive", "label": "Archive"], ["action": "delete", "role": "destructive"],
            ],
            "buttonWidth": 80, "allowsFullSwipeTrailing": false,
        ])
        let layout = try XCTUnwrap(configured["layout"] as? [String: Any])
        XCTAssertEqual(double(layout["buttonWidth"]), 80)
        XCTAssertEqual(layout["allowsFullSwipeLeading"] as? Bool, true, "left out: the default")
        XCTAssertEqual(layout["allowsFullSwipeTrailing"] as? Bool, false)

        try client.ok(["op": "drag", "movie": "seven", "dx": 90])
        let open = row(try client.ok(["op": "release", "movie": "seven"]))
        XCTAssertEqual(geometry(open), ["flag@0.0+80.0"])
        let tap = try client.ok(["op": "tap", "movie": "seven", "action": "flag"])
        let fired = try XCTUnwrap(tap["fired"] as? [String: Any])
        XCTAssertEqual(
            fired as NSDictionary, ["action": "flag"] as NSDictionary, "no seq: nothing was written")
        // Full swipe of a custom action, too.
        try client.ok(["op": "drag", "movie": "matrix", "dx": 300])
        let full = try client.ok(["op": "release", "movie": "matrix"])
        XCTAssertEqual((full["fired"] as? [String: Any])?["action"] as? String, "flag")
        // No full swipe on trailing: the offset stops at the buttons.
        let trailing = row(try client.ok(["op": "drag", "movie": "inception", "dx": -390]))
        XCTAssertEqual(double(trailing["offset"]), -160)
        // Outermost first: archive sits at the trailing (right) edge.
        XCTAssertEqual(geometry(trailing), ["delete@230.0+80.0", "archive@310.0+80.0"])
        XCTAssertEqual(buttons(trailing).first?["tint"] as? String, "red", "destructive defaults to red")
        XCTAssertEqual(buttons(trailing).last?["tint"] as? String, "gray")

        XCTAssertEqual(int(try client.ok(["op": "list"])["seq"]), 10, "custom actions change no state")
        try watcher.ok(["op": "ping"])
        XCTAssertTrue(watcher.events.isEmpty, "reported to this client only: \(watcher.events)")

        // configure with no arguments: the movie layout again (closing the open rows).
        let restored = try client.ok(["op": "configure"])
        XCTAssertEqual(
            ((restored["layout"] as? [String: Any])?["leading"] as? [[String: Any]])?.first?["action"]
                as? String,
            "watched")
        // inception was open, matrix still fired (its close timer not yet run).
        XCTAssertEqual(Set(restored["closed"] as? [String] ?? []), ["inception", "matrix"])
        let drag = row(try client.ok(["op": "drag", "movie": "seven", "dx": -60]))
        XCTAssertEqual(geometry(drag), ["delete@330.0+60.0"])
    }

    func testViewportAndCloseCloseRows() throws {
        try client.ok(["op": "drag", "movie": "seven", "dx": -80])
        try client.ok(["op": "release", "movie": "seven"])
        let same = try client.ok(["op": "viewport", "width": 390])
        XCTAssertEqual(same["closed"] as? [String], [], "nothing changed, nothing closed")
        let wider = try client.ok(["op": "viewport", "width": 800])
        XCTAssertEqual(wider["closed"] as? [String], ["seven"])
        let drag = row(try client.ok(["op": "drag", "movie": "seven", "dx": -60]))
        XCTAssertEqual(geometry(drag), ["delete@740.0+60.0"])
        let closed = try client.ok(["op": "close", "movie": "seven"])
        XCTAssertEqual(row(closed)["phase"] as? String, "closed")
        try client.ok(["op": "drag", "movie": "matrix", "dx": 80])
        try client.ok(["op": "release", "movie": "matrix"])
        XCTAssertEqual(try client.ok(["op": "close"])["closed"] as? [String], ["matrix"])
        XCTAssertEqual(try client.ok(["op": "close"])["closed"] as? [String], [])
        // A drag of less than 10 points does not start the gesture.
        XCTAssertEqual(
            row(try client.ok(["op": "drag", "movie": "matrix", "dx": 9]))["phase"] as? String, "closed")
    }
}

import Foundation
import Movies
import People
import Session
import SwipeEngine
import XCTest

/// Issue 14, sections 3 and 4 on one connection: `open`, `perform`, and confirmation (the
/// engine's rules 10 and 11) with its timer, `pending` replies and `cancelled` row events.
final class SessionSwipeCommandsTests: XCTestCase {
    /// `delete` (trailing) and `flag` (custom, leading, inner) ask to confirm; `watched` does not.
    static let configure =
        #"{"op":"configure","leading":[{"action":"watched","label":"Watched"},{"action":"flag","label":"Flag","icon":"flag","confirm":true}],"trailing":[{"action":"delete","label":"Delete","role":"destructive","confirm":true,"confirmLabel":"Delete?"}]}"#

    private func harness(mayWrite: Bool = true, confirming: Bool = true) -> SessionHarness {
        let h = SessionHarness(
            SessionConfig(
                client: 7, identity: .tester(mayWrite ? .writer : .reader), writersGroup: "swiped-writers"))
        XCTAssertEqual(h.read().count, 1)  // hello
        XCTAssertEqual(h.exchange(#"{"op":"options","rows":"compact"}"#).count, 1)
        if confirming {
            let layout = h.json(h.exchange(Self.configure)[0])["layout"] as? [String: Any]
            let trailing = layout?["trailing"] as? [[String: Any]]
            XCTAssertEqual(trailing?.first?["confirm"] as? Bool, true)
            XCTAssertEqual(trailing?.first?["confirmLabel"] as? String, "Delete?")
        }
        XCTAssertEqual(h.takeActions(), [])
        return h
    }

    private func row(_ line: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["row"] as? [String: Any]
            ?? [:]
    }

    private func code(_ h: SessionHarness, _ line: String) -> String? {
        (h.json(line)["error"] as? [String: Any])?["code"] as? String
    }

    // MARK: open

    func testOpenOpensTheRowAndClosesTheOtherOneWithARowEvent() {
        let h = harness(confirming: false)
        h.send(#"{"op":"open","movie":"seven","edge":"trailing"}"#)
        XCTAssertEqual(h.takeActions(), [])
        XCTAssertEqual(
            h.read(),
            [
                #"{"ok":true,"row":{"movie":"seven","offset":-70,"phase":"open","edge":"trailing","fullSwipe":false,"buttons":[{"action":"delete","label":"Delete","icon":"trash","tint":"red","role":"destructive","x":320,"width":70}]}}"#
            ])
        let lines = h.exchange(#"{"op":"open","movie":"matrix","edge":"leading"}"#)
        XCTAssertEqual(lines.count, 2, "\(lines)")
        XCTAssertEqual(h.json(lines[0])["event"] as? String, "row")
        XCTAssertEqual(row(lines[0])["movie"] as? String, "seven")
        XCTAssertEqual(row(lines[0])["phase"] as? String, "closed")
        XCTAssertEqual(row(lines[1])["offset"] as? Double, 140)
        XCTAssertEqual(row(lines[1])["phase"] as? String, "open")
    }

    func testOpenOnAnEdgeWithoutButtonsIsABadRequestAndAnUnknownEdgeToo() {
        let h = harness(confirming: false)
        _ = h.exchange(#"{"op":"configure","trailing":[{"action":"delete"}]}"#)
        let lines = h.exchange(#"{"op":"open","movie":"seven","edge":"leading"}"#)
        XCTAssertEqual(code(h, lines[0]), "bad-request")
        XCTAssertEqual(
            (h.json(lines[0])["error"] as? [String: Any])?["message"] as? String,
            "this client's layout has no leading actions; that edge cannot open")
        XCTAssertEqual(code(h, h.exchange(#"{"op":"open","movie":"seven","edge":"top"}"#)[0]), "bad-request")
        XCTAssertEqual(
            code(h, h.exchange(#"{"op":"open","movie":"alien","edge":"trailing"}"#)[0]), "not-found")
    }

    // MARK: perform

    func testPerformFiresABoundActionAsATapWould() {
        let h = harness(confirming: false)
        h.send(#"{"op":"perform","movie":"matrix","action":"watched"}"#)
        XCTAssertEqual(
            h.takeActions(),
            [.submit(ticket: 1, op: "perform", MovieCommand(.toggleWatched(movie: "matrix"), by: "tester"))])
        h.settle()
        let lines = h.read()
        XCTAssertEqual((h.json(lines[0])["fired"] as? [String: Any])?["seq"] as? Int, 11)
        XCTAssertEqual(row(lines[0])["phase"] as? String, "closed")
        XCTAssertEqual(
            code(h, h.exchange(#"{"op":"perform","movie":"matrix","action":"play"}"#)[0]), "bad-request")
    }

    func testPerformOfAConfirmedActionWaitsThenATapFiresIt() {
        let h = harness()
        h.send(#"{"op":"perform","movie":"seven","action":"delete"}"#)
        XCTAssertEqual(h.takeActions(), [.arm(.confirmRow("seven"), microseconds: 3_000_000)])
        XCTAssertEqual(
            h.read(),
            [
                #"{"ok":true,"row":{"movie":"seven","offset":-70,"phase":"confirming","edge":"trailing","fullSwipe":false,"buttons":[{"action":"delete","label":"Delete?","tint":"red","role":"destructive","x":320,"width":70}]},"pending":{"action":"delete"}}"#
            ])
        h.send(#"{"op":"tap","movie":"seven","action":"delete"}"#)
        XCTAssertEqual(
            h.takeActions(),
            [
                .cancel(.confirmRow("seven")),
                .submit(ticket: 1, op: "tap", MovieCommand(.remove(movie: "seven"), by: "tester")),
            ])
        h.settle()
        let lines = h.read()
        XCTAssertEqual((h.json(lines[0])["fired"] as? [String: Any])?["action"] as? String, "delete")
        XCTAssertEqual(row(lines[0])["phase"] as? String, "closed")
        XCTAssertTrue(h.timers.isEmpty)
    }

    func testAFullSwipeOfAConfirmedActionWaitsAndPerformConfirmsIt() {
        let h = harness()
        h.send(#"{"op":"release","movie":"seven","dx":-300}"#)
        XCTAssertEqual(h.takeActions(), [.arm(.confirmRow("seven"), microseconds: 3_000_000)])
        let lines = h.read()
        XCTAssertEqual(h.json(lines[0])["pending"] as? [String: String], ["action": "delete"])
        XCTAssertNil(h.json(lines[0])["fired"])
        XCTAssertEqual(row(lines[0])["phase"] as? String, "confirming")
        h.send(#"{"op":"perform","movie":"seven","action":"delete"}"#)
        XCTAssertEqual(
            h.takeActions(),
            [
                .cancel(.confirmRow("seven")),
                .submit(ticket: 1, op: "perform", MovieCommand(.remove(movie: "seven"), by: "tester")),
            ])
    }

    func testAConfirmationTimesOutWithARowEventSayingSo() {
        let h = harness()
        _ = h.exchange(#"{"op":"perform","movie":"seven","action":"delete"}"#)
        h.advance(microseconds: 2_999_999)
        XCTAssertEqual(h.read(), [])
        h.advance(microseconds: 1)
        XCTAssertEqual(
            h.read(),
            [
                #"{"event":"row","row":{"movie":"seven","offset":0,"phase":"closed","edge":null,"fullSwipe":false,"buttons":[]},"cancelled":"timeout"}"#
            ])
        XCTAssertTrue(h.timers.isEmpty)
        XCTAssertEqual(h.store.latestSeq, 10, "nothing fired")
        // The tap that comes too late finds a closed row.
        XCTAssertEqual(
            code(h, h.exchange(#"{"op":"tap","movie":"seven","action":"delete"}"#)[0]), "not-revealed")
    }

    func testADragOfTheRowOrOfAnotherCancelsTheConfirmation() {
        let h = harness()
        _ = h.exchange(#"{"op":"perform","movie":"seven","action":"delete"}"#)
        h.send(#"{"op":"drag","movie":"seven","dx":-20}"#)
        XCTAssertEqual(h.takeActions(), [.cancel(.confirmRow("seven"))])
        let lines = h.read()
        XCTAssertEqual(lines.count, 1)
        XCTAssertEqual(row(lines[0])["phase"] as? String, "closed")
        // Another row's drag (rule 8): the confirming row closes with a row event.
        _ = h.exchange(#"{"op":"perform","movie":"seven","action":"delete"}"#)
        h.send(#"{"op":"drag","movie":"matrix","dx":-20}"#)
        XCTAssertEqual(h.takeActions(), [.cancel(.confirmRow("seven"))])
        let two = h.read()
        XCTAssertEqual(two.count, 2)
        XCTAssertEqual(h.json(two[0])["event"] as? String, "row")
        XCTAssertEqual(row(two[0])["movie"] as? String, "seven")
        XCTAssertEqual(row(two[0])["phase"] as? String, "closed")
        XCTAssertNil(h.json(two[0])["cancelled"])
        XCTAssertEqual(row(two[1])["phase"] as? String, "dragging")
        h.settle()
        XCTAssertTrue(h.timers.isEmpty)
        XCTAssertEqual(h.store.latestSeq, 10, "nothing fired")
    }

    func testATapElsewhereACloseOrAnOpenCancelsToo() {
        let h = harness()
        for line in [
            #"{"op":"tap","movie":"seven","action":"watched"}"#, #"{"op":"close","movie":"seven"}"#,
            #"{"op":"close"}"#, #"{"op":"open","movie":"seven","edge":"leading"}"#,
        ] {
            _ = h.exchange(#"{"op":"perform","movie":"seven","action":"delete"}"#)
            h.send(line)
            XCTAssertEqual(h.takeActions(), [.cancel(.confirmRow("seven"))], line)
            h.settle()
            XCTAssertNil(h.json(h.read()[0])["fired"], line)
        }
        XCTAssertEqual(h.store.latestSeq, 10, "nothing fired")
    }

    // MARK: who may write

    func testANonWriterIsForbiddenWhereABoundConfirmationWouldStart() {
        let h = harness(mayWrite: false)
        for line in [
            #"{"op":"perform","movie":"seven","action":"delete"}"#,
            #"{"op":"release","movie":"seven","dx":-300}"#,
            #"{"op":"perform","movie":"seven","action":"watched"}"#,
        ] {
            XCTAssertEqual(code(h, h.exchange(line)[0]), "forbidden", line)
        }
        XCTAssertEqual(h.json(h.exchange(#"{"op":"rows"}"#)[0])["rows"] as? [String], [], "nothing changed")
        XCTAssertTrue(h.timers.isEmpty)
        // A custom action may wait for its confirmation, and fire.
        let pending = h.exchange(#"{"op":"perform","movie":"seven","action":"flag"}"#)
        XCTAssertEqual(h.json(pending[0])["pending"] as? [String: String], ["action": "flag"])
        let buttons = row(pending[0])["buttons"] as? [[String: Any]]
        XCTAssertEqual(buttons?.count, 1)
        XCTAssertEqual(buttons?.first?["label"] as? String, "Confirm")
        XCTAssertEqual(buttons?.first?["width"] as? Double, 140)
        let fired = h.exchange(#"{"op":"tap","movie":"seven","action":"flag"}"#)
        XCTAssertEqual(h.json(fired[0])["fired"] as? [String: String], ["action": "flag"])
        XCTAssertTrue(h.timers.isEmpty)
    }
}

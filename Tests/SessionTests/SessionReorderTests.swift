// `move` through a connection (issue 48): the exact replies, the movie events other connections
// receive, `undo` of a move (back after its `from`), `undo SEQ` of another connection's move, and
// the refusals, each with nothing written.
import Movies
import People
import XCTest

@testable import Session

final class SessionReorderTests: XCTestCase {
    private func harness() -> SessionHarness {
        let h = SessionHarness()
        _ = h.read()  // hello
        return h
    }

    private func ids(_ h: SessionHarness) -> [String] { h.store.withState { $0.movies.map(\.id) } }

    func testAMoveIsAnsweredWithWhereTheMovieWentAndWhereItWas() {
        let h = harness()
        XCTAssertEqual(
            h.exchange(#"{"op":"move","movie":"seven","after":null,"id":1}"#),
            [
                #"{"id":1,"ok":true,"seq":11,"movie":{"id":"seven","title":"Se7en","image":"seven","watched":false,"watchedWithFriends":false,"version":11},"after":null,"from":"matrix","by":"tester"}"#
            ])
        XCTAssertEqual(ids(h).first, "seven")
        XCTAssertEqual(
            h.exchange(#"{"op":"move","movie":"seven","after":"the_green_mile","expect":11}"#),
            [
                #"{"ok":true,"seq":12,"movie":{"id":"seven","title":"Se7en","image":"seven","watched":false,"watchedWithFriends":false,"version":12},"after":"the_green_mile","from":null,"by":"tester"}"#
            ])
        XCTAssertEqual(ids(h).last, "seven")
    }

    func testRefusalsWriteNothing() {
        let h = harness()
        func code(_ line: String) -> String? {
            (h.json(h.exchange(line)[0])["error"] as? [String: Any])?["code"] as? String
        }
        XCTAssertEqual(code(#"{"op":"move","movie":"seven"}"#), "bad-request")
        XCTAssertEqual(code(#"{"op":"move","movie":"seven","after":3}"#), "bad-request")
        XCTAssertEqual(code(#"{"op":"move","movie":"seven","after":"seven"}"#), "bad-request")
        XCTAssertEqual(code(#"{"op":"move","movie":"seven","after":"alien"}"#), "not-found")
        XCTAssertEqual(code(#"{"op":"move","movie":"alien","after":null}"#), "not-found")
        XCTAssertEqual(code(#"{"op":"move","movie":"seven","after":null,"expect":3}"#), "conflict")
        XCTAssertEqual(
            h.exchange(#"{"op":"move","movie":"seven"}"#),
            [
                #"{"ok":false,"error":{"code":"bad-request","message":"op \"move\" needs \"after\" (string or null)"}}"#
            ])
        XCTAssertEqual(h.store.latestSeq, 10)
        XCTAssertEqual(ids(h), MovieState.seedCatalogue.map(\.movieID))
    }

    func testUndoTakesAMoveBackAfterItsFrom() {
        let h = harness()
        _ = h.exchange(#"{"op":"move","movie":"godfather","after":"seven"}"#)
        _ = h.exchange(#"{"op":"move","movie":"matrix","after":null}"#)
        let undo = h.json(h.exchange(#"{"op":"undo"}"#)[0])
        XCTAssertEqual(undo["undoes"] as? Int, 12)
        XCTAssertEqual(undo["after"] as? String, "inception")
        XCTAssertTrue(undo["from"] is NSNull)
        let second = h.json(h.exchange(#"{"op":"undo"}"#)[0])
        XCTAssertEqual(second["undoes"] as? Int, 11)
        XCTAssertTrue(second["after"] is NSNull, "godfather was first")
        XCTAssertEqual(ids(h), MovieState.seedCatalogue.map(\.movieID))
    }

    func testUndoSeqOfAnotherConnectionsMoveAndChangedSince() {
        let a = harness()
        _ = a.exchange(#"{"op":"move","movie":"seven","after":null}"#)  // 11
        // Another connection on the same store undoes 11 by its seq.
        let other = SessionHarness(store: a.store)
        _ = other.read()
        let undone = other.json(other.exchange(#"{"op":"undo","seq":11}"#)[0])
        XCTAssertEqual(undone["undoes"] as? Int, 11)
        XCTAssertEqual(undone["after"] as? String, "matrix")
        // Moved again since: a's own undo of 11 is changed-since.
        let conflict = a.json(a.exchange(#"{"op":"undo"}"#)[0])
        XCTAssertEqual((conflict["error"] as? [String: Any])?["reason"] as? String, "changed-since")
    }
}

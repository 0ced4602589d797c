import Foundation
import Glibc
import XCTest

/// The order of the list in the terminal front end (issue 48), in tmux 80×24: Shift+↓ (and J,
/// Shift+↑, K) move the selected row, a drag on a row's grip moves it where it is let go, and a
/// move by another person shows at once while another row stays open; the daemon's order checked
/// over the socket.
final class TuiOrderTests: TuiTestCase {
    override class var prefix: String { "swiped-tuio" }

    /// The seed's ten movies, in the order they were added.
    private static let seed = [
        "godfather", "dark_knight", "pulp_fiction", "forrest_gump", "inception", "matrix", "seven",
        "silence_of_lambs", "saving_private_ryan", "the_green_mile",
    ]

    /// The daemon's order, by id.
    private func order() throws -> [String] {
        (try client.ok(["op": "list"])["movies"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
    }

    func testShiftDownMovesTheSelectedRowAndTheSelectionFollowsIt() throws {
        try startTui()
        // The Godfather is selected; its grip shows at the end of its lines.
        let start = try tmux.capture()
        XCTAssertTrue(Tmux.line(start, 2).hasPrefix(" ▶ G  The Godfather"), start)
        XCTAssertTrue(Tmux.line(start, 2).hasSuffix("⠿") && Tmux.line(start, 3).hasSuffix("⠿"), start)
        XCTAssertTrue(Tmux.line(start, 23).contains("⇧ move"), start)
        try tmux.send(keys: "S-Down")
        try waitFor("The Godfather second") { try Array(order().prefix(2)) == ["dark_knight", "godfather"] }
        try tmux.waitForScreen("the row moved, still selected") {
            Tmux.line($0, 2).hasPrefix("   D  The Dark Knight")
                && Tmux.line($0, 5).hasPrefix(" ▶ G  The Godfather")
        }
        try tmux.send(keys: "J")
        try waitFor("The Godfather third") { try order()[2] == "godfather" }
        try tmux.waitForScreen("the row moved again") { Tmux.line($0, 8).hasPrefix(" ▶ G  The Godfather") }
        // Two at once: the second waits for the first and goes from where it landed.
        try tmux.send(keys: "S-Up", "K")
        try waitFor("The Godfather first again") { try order() == Self.seed }
        let screen = try tmux.waitForScreen("the row back on top") {
            Tmux.line($0, 2).hasPrefix(" ▶ G  The Godfather")
                && Tmux.line($0, 5).hasPrefix("   D  The Dark Knight")
        }
        XCTAssertEqual(Tmux.line(screen, 22).trimmingCharacters(in: .whitespaces), "", "no error:\n\(screen)")
        // Four moves, each with the version its row showed (none refused), signed by root.
        let events = try client.ok(["op": "history", "from": 10])["events"] as? [[String: Any]] ?? []
        XCTAssertEqual(events.map { $0["kind"] as? String }, Array(repeating: "moved", count: 4))
        XCTAssertEqual(Set(events.map { $0["by"] as? String }), ["root"])
        // At the top, Shift+↑ says so and sends nothing.
        try tmux.send(keys: "S-Up")
        try tmux.waitForScreen("already first") { $0.contains(" “The Godfather” is already first\n") }
        XCTAssertEqual(
            (try client.ok(["op": "history", "from": 14])["events"] as? [[String: Any]])?.count, 0)
    }

    func testADragOnTheGripMovesTheRowWhereItIsLetGo() throws {
        try startTui()
        // The Godfather's grip: the last column (80 for the mouse, which counts from 1) of its
        // title line (line 2, 3 for the mouse); Forrest Gump is on lines 11 to 13.
        try tmux.mouse(press: 80, 3)
        try tmux.mouse(drag: 80, 7)
        try tmux.mouse(drag: 80, 12)
        let held = try tmux.waitForScreen("the mark under Forrest Gump") {
            Tmux.line($0, 13) == String(repeating: "━", count: 80)
        }
        XCTAssertTrue(Tmux.line(held, 11).hasPrefix("   F  Forrest Gump"), held)
        XCTAssertEqual(try order(), Self.seed, "nothing moves before it is let go")
        try tmux.mouse(release: 80, 12)
        try waitFor("The Godfather after Forrest Gump") {
            try Array(order().prefix(4)) == ["dark_knight", "pulp_fiction", "forrest_gump", "godfather"]
        }
        try tmux.waitForScreen("the row where it was let go, selected, and no mark") {
            Tmux.line($0, 11).hasPrefix(" ▶ G  The Godfather") && !$0.contains("━")
        }
        // Up, past the top of the list: first.
        try tmux.mouse(press: 80, 12)
        try tmux.mouse(drag: 80, 5)
        try tmux.mouse(drag: 80, 1)
        try tmux.waitForScreen("the mark on the header's rule") {
            Tmux.line($0, 1) == String(repeating: "━", count: 80)
        }
        try tmux.mouse(release: 80, 1)
        try waitFor("The Godfather first again") { try order() == Self.seed }
        // A drag on the row's body still swipes: Delete shows, nothing moves.
        try tmux.mouse(press: 60, 6)
        for column in stride(from: 58, through: 40, by: -4) { try tmux.mouse(drag: column, 6) }
        try tmux.mouse(drag: 40, 6)
        try tmux.waitForScreen("the swipe") { [self] in column(of: "Delete", in: $0, line: 6) == 67 }
        try tmux.mouse(release: 40, 6)
        try tmux.waitForScreen("the row open") { [self] in column(of: "Delete", in: $0, line: 6) == 70 }
        XCTAssertEqual(try order(), Self.seed)
    }

    func testAMoveByAnotherPersonShowsAtOnceWhileAnotherRowStaysOpen() throws {
        let token =
            try client.ok(["op": "token-create", "name": "alice", "role": "writer"])["token"] as? String
        let alice = try daemon.connect()
        XCTAssertEqual(try alice.ok(["op": "auth", "token": token ?? ""])["user"] as? String, "alice")
        try startTui()
        // The Dark Knight open on its trailing edge (↓ selects it, ← opens the right side).
        try tmux.send(keys: "Down", "Left")
        // (Settled: its button 14 columns wide, ✖ in the middle.)
        try tmux.waitForScreen("The Dark Knight open") { [self] in
            column(of: "Delete", in: $0, line: 6) == 70 && column(of: "✖", in: $0, line: 5) == 72
        }
        _ = try alice.ok(["op": "move", "movie": "seven", "after": NSNull()])
        let screen = try tmux.waitForScreen("Se7en on top, and said") {
            Tmux.line($0, 2).hasPrefix("   S  Se7en") && $0.contains(" alice moved “Se7en” to the top\n")
        }
        // The Dark Knight one row down, still selected, still open.
        XCTAssertTrue(Tmux.line(screen, 8).hasPrefix(" ▶ D  The Dark Knight"), screen)
        XCTAssertEqual(column(of: "Delete", in: screen, line: 9), 70, screen)
        XCTAssertEqual(column(of: "✖", in: screen, line: 8), 72, screen)
        // The open row itself moved by alice: it goes, open, and the view follows it.
        _ = try alice.ok(["op": "move", "movie": "dark_knight", "after": "matrix"])
        let moved = try tmux.waitForScreen("The Dark Knight after The Matrix, said") {
            $0.contains(" alice moved “The Dark Knight” after “The Matrix”\n")
                && Tmux.line($0, 17).hasPrefix(" ▶ D  The Dark Knight")
        }
        XCTAssertTrue(Tmux.line(moved, 14).hasPrefix("   M  The Matrix"), moved)
        XCTAssertEqual(column(of: "Delete", in: moved, line: 18), 70, moved)
        XCTAssertEqual(
            try order(),
            [
                "seven", "godfather", "pulp_fiction", "forrest_gump", "inception", "matrix", "dark_knight",
                "silence_of_lambs", "saving_private_ryan", "the_green_mile",
            ])
    }
}

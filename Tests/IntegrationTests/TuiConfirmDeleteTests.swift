import Foundation
import Glibc
import XCTest

/// "Ask before deleting" in `swipectl tui` (issue 29), end to end in tmux: `--confirm-delete`
/// and the `c` key send `configure` with the default layout, its delete asking; the confirming
/// row shows its "Delete?" button; a new connection asks again.
final class TuiConfirmDeleteTests: TuiTestCase {
    func testDeleteAsksFirstWithTheOptionTheKeyTurnsItOffAndAReconnectAsksAgain() throws {
        try startTui(["--confirm-delete"])
        try tmux.waitForScreen("the header") { Tmux.line($0, 0).contains("confirm delete") }
        try tmux.send(keys: "j", "d")
        let screen = try tmux.waitForScreen("the confirmation") {
            $0.contains("Confirm delete: click “Delete?” or press Enter within 3 s")
        }
        XCTAssertFalse(Tmux.line(screen, 5).contains("✖"), "a confirmation shows no icon:\n\(screen)")
        let count = try movies().count
        XCTAssertNotNil(try movies()["dark_knight"], "nothing is deleted before the confirmation")
        try tmux.waitForScreen("the row to open") { [self] in column(of: "Delete?", in: $0, line: 6) == 69 }
        try tmux.send(keys: "Enter")
        try waitFor("dark_knight to be removed") { try movies()["dark_knight"] == nil }
        try tmux.waitForScreen("the undo hint") { $0.contains("press u to undo") }
        try tmux.send(keys: "u")
        try waitFor("dark_knight to be back") { try movies()["dark_knight"] != nil }

        try tmux.send(keys: "c")
        try tmux.waitForScreen("off") {
            $0.contains("Ask before deleting: off") && !Tmux.line($0, 0).contains("confirm delete")
        }
        let before = try movies()
        try tmux.send(keys: "d")
        try waitFor("a movie removed at once") { try movies().count == count - 1 }
        // Its row collapses; the selection moves to the next one.
        let gone = Set(before.keys).subtracting(try movies().keys).first!
        let title = before[gone]?["title"] as? String ?? "?"
        try tmux.waitForScreen("the row to go") { !$0.contains(title) && Tmux.line($0, 5).hasPrefix(" ▶ ") }

        try tmux.send(keys: "c")
        try tmux.waitForScreen("on") { $0.contains("Ask before deleting: on") }
        client = nil
        XCTAssertEqual(try daemon.stop(), .exited(0))
        try tmux.waitForScreen("the lost connection") { $0.contains("reconnecting…") }
        daemon = try SwipedDaemon(
            directory: daemon.directory, socketPath: daemon.socketPath, stateDirectory: daemon.stateDirectory)
        client = try daemon.connect()
        try tmux.waitForScreen(timeout: .seconds(20), "the reconnect") {
            $0.contains("● connected") && $0.contains("Reconnected")
                && Tmux.line($0, 0).contains("confirm delete")
        }
        try tmux.send(keys: "d")
        try tmux.waitForScreen("the confirmation again") { $0.contains("Confirm delete") }
        XCTAssertEqual(try movies().count, count - 1, "nothing is deleted before the confirmation")
    }
}

import Foundation
import Glibc
import XCTest

/// Issue 47 in `swipectl tui`, in tmux: the first row peeks once at start (and `--no-peek` turns
/// it off), a crossing is said on the status line, and the full-swipe style is an option and a key.
final class TuiHintTests: TuiTestCase {
    /// How many requests of `op` the daemon has answered (its `status`).
    func answered(_ op: String) throws -> Int {
        let status = try client.ok(["op": "status"])["status"] as? [String: Any]
        return (status?["requests"] as? [String: Any])?[op] as? Int ?? -1
    }

    func testTheFirstRowPeeksOnceAtStartThenTheFrontEndIsIdle() throws {
        try startTui(peek: true)
        // The Godfather (lines 2 and 3) shows half its trailing button, 35 points: 7 columns.
        try tmux.waitForScreen(timeout: .seconds(3), "the peek") { [self] in
            (column(of: "Delete", in: $0, line: 3) ?? 0) > 70
        }
        try tmux.waitForScreen(timeout: .seconds(3), "the row back") {
            Tmux.line($0, 2).hasPrefix(" ▶ G  The Godfather") && !Tmux.line($0, 3).contains("Delete")
        }
        XCTAssertEqual(try answered("peek"), 1)
        // Done: nothing wakes it any more (as TuiTerminalTests' idle front end).
        let shell = try tmux.format("pane_pid")
        let pid = try Subprocess.check("pgrep", ["-P", shell]).trimmingCharacters(in: .whitespacesAndNewlines)
        func switches() throws -> String {
            try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
                .split(separator: "\n").filter { $0.contains("ctxt_switches") }.joined(separator: " ")
        }
        usleep(700_000)  // the spring's last frames
        let before = try switches()
        usleep(1_000_000)
        XCTAssertEqual(try switches(), before)
        XCTAssertEqual(try answered("peek"), 1, "once a run")
    }

    func testNoPeekTurnsTheHintOff() throws {
        try startTui(["--no-peek"], peek: true)
        usleep(1_000_000)
        XCTAssertEqual(try answered("peek"), 0)
        XCTAssertFalse(Tmux.line(try tmux.capture(), 3).contains("Delete"))
    }

    func testACrossingIsSaidOnTheStatusLine() throws {
        try startTui()
        // The Dark Knight (line 6 for the mouse), 20 columns left: −100 points, past 0.8·70.
        try tmux.mouse(press: 60, 6)
        for column in stride(from: 56, through: 40, by: -4) { try tmux.mouse(drag: column, 6) }
        try tmux.waitForScreen("the open cue") { $0.contains("Let go: the row opens") }
        // Past half the row (200 points, 40 columns): the outer button would fire.
        for column in stride(from: 36, through: 12, by: -4) { try tmux.mouse(drag: column, 6) }
        try tmux.waitForScreen("the full cue") { $0.contains("Let go: Delete fires") }
        // Back: it would open again; let go, and it does (nothing deleted).
        try tmux.mouse(drag: 40, 6)
        try tmux.waitForScreen("the open cue again") { $0.contains("Let go: the row opens") }
        try tmux.mouse(release: 40, 6)
        try tmux.waitForScreen("the row to open") { [self] in column(of: "Delete", in: $0, line: 6) == 70 }
        XCTAssertNotNil(try movies()["dark_knight"])
    }

    func testTheFullSwipeStyleIsAnOptionAndAKey() throws {
        try startTui(["--full-swipe", "close"])
        try tmux.waitForScreen("the header") { Tmux.line($0, 0).contains("full swipe close") }
        // close: a leading full swipe on The Godfather fires watched and the row closes at once.
        try tmux.mouse(press: 5, 3)
        for column in stride(from: 10, through: 70, by: 10) { try tmux.mouse(drag: column, 3) }
        try tmux.mouse(release: 70, 3)
        try waitFor("godfather to be watched") { try movies()["godfather"]?["watched"] as? Bool == true }
        try tmux.waitForScreen("the row closed") {
            Tmux.line($0, 2).hasPrefix(" ▶ G  The Godfather") && Tmux.line($0, 3).hasPrefix("      ◉ Watched")
        }
        // F: the next style, said and shown.
        try tmux.send(keys: "F")
        try tmux.waitForScreen("dismiss") {
            $0.contains("Full swipe: dismiss") && Tmux.line($0, 0).contains("full swipe dismiss")
        }
        let bad = try Subprocess.run(try Binaries.swipectl, ["tui", "--full-swipe", "fade"])
        XCTAssertEqual(bad.status, .exited(2))
        XCTAssertTrue(
            bad.standardError.hasPrefix("swipectl: --full-swipe must be fill, close, dismiss, not 'fade'\n"),
            bad.standardError)
    }
}

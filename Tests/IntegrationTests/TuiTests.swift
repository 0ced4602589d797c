import Foundation
import Glibc
import XCTest

/// `swipectl tui` end to end in a real terminal emulator: tmux 3.3a, 80×24, with the mouse
/// reports and keys a terminal sends, the screen read back with `capture-pane`, and the shared
/// state checked over the socket. Every wait polls the screen with a timeout.
class TuiTestCase: DaemonClientTestCase {
    override class var prefix: String { "swiped-tui" }
    var tmux: Tmux!
    var files: TemporaryDirectory!

    override func setUpWithError() throws {
        try super.setUpWithError()
        files = try TemporaryDirectory("swiped-tui-files")
        tmux = try Tmux(directory: files)
    }

    override func tearDownWithError() throws {
        try tmux?.stop()
        tmux = nil
        try super.tearDownWithError()
    }

    /// Starts the front end in the pane; the shell around it records the terminal's settings
    /// before and after it and its exit status, then stays so that the screen can be read.
    /// Without the first-use peek unless `peek` (issue 47: it moves the first row for a second
    /// at start, which TuiHintTests is about and the other tests are not).
    func startTui(_ options: [String] = [], width: Int = 80, height: Int = 24, peek: Bool = false) throws {
        let command =
            "stty -g > '\(files.file("before"))'; '\(try Binaries.swipectl)' --socket '\(daemon.socketPath)' tui "
            + (options + (peek ? [] : ["--no-peek"])).joined(separator: " ")
            + "; echo $? > '\(files.file("status"))'; stty -g > '\(files.file("after"))'; exec sleep 600"
        try tmux.start(["sh", "-c", command], width: width, height: height)
        try tmux.waitForScreen("the list") { $0.contains("connected") && $0.contains("The Godfather") }
    }

    /// The movies over the socket, by id.
    func movies() throws -> [String: [String: Any]] {
        let list = try client.ok(["op": "list"])["movies"] as? [[String: Any]] ?? []
        return Dictionary(uniqueKeysWithValues: list.map { ($0["id"] as? String ?? "", $0) })
    }

    func waitFor(_ what: String, timeout: Duration = .seconds(10), _ done: () throws -> Bool) throws {
        let deadline = Deadline(timeout)
        while try !done() {
            if deadline.hasPassed { throw TimeoutError("waited \(timeout) for \(what)") }
            usleep(20_000)
        }
    }

    /// Where `text` starts on a screen line, in characters; nil when it is not there.
    func column(of text: String, in screen: String, line: Int) -> Int? {
        let l = Tmux.line(screen, line)
        guard let range = l.range(of: text) else { return nil }
        return l.distance(from: l.startIndex, to: range.lowerBound)
    }
}

final class TuiMouseTests: TuiTestCase {
    /// The Dark Knight is the second row: its title on line 5, its indicators on line 6 (from
    /// 0), which are lines 6 and 7 for the mouse (from 1).
    func dragDarkKnight(to x: Int) throws {
        try tmux.mouse(press: 60, 6)
        for column in stride(from: 58, through: x, by: -4) { try tmux.mouse(drag: column, 6) }
        try tmux.mouse(drag: x, 6)
    }

    func testADragRevealsTheRedDeleteButtonWhereTheEngineSaysAndAReleasePastTheThresholdLeavesItOpen() throws
    {
        try startTui()
        // 20 columns left: dx −100 points at 5 points a column; the one button tiles the strip.
        try dragDarkKnight(to: 40)
        let screen = try tmux.waitForScreen("the drag to settle") { [self] in
            column(of: "Delete", in: $0, line: 6) == 67 && column(of: "✖", in: $0, line: 5) == 69
        }
        // The content's background slides; its text keeps to what the content still covers,
        // so the row being moved stays recognizable: the marker, the tile, the title.
        XCTAssertTrue(
            Tmux.line(screen, 5).hasPrefix(" ▶ D  The Dark Knight"), "the title stays in view:\n\(screen)")
        // In red: SwiftUI's red (255, 59, 48) is 203 of the 256 colours; white text on it.
        let colored = Tmux.line(try tmux.capture(colors: true), 5)
        XCTAssertTrue(colored.contains("48;5;203m"), colored)
        XCTAssertTrue(
            colored.hasSuffix("✖" + String(repeating: " ", count: 10)) || colored.contains("✖"), colored)
        // Let go where it is, having rested (no fling): past 0.8·70 points it snaps open at −70,
        // 14 columns, and stays.
        try tmux.mouse(release: 40, 6)
        let open = try tmux.waitForScreen("the row to open") { [self] in
            column(of: "Delete", in: $0, line: 6) == 70 && Tmux.line($0, 5).hasPrefix(" ▶ D  The Dark Knight")
        }
        usleep(300_000)
        XCTAssertEqual(try tmux.capture(), open, "an open row stays open")
        XCTAssertNotNil(try movies()["dark_knight"], "nothing was deleted")
    }

    func testATapOnTheRevealedDeleteRemovesTheMovieAndURestoresIt() throws {
        try startTui()
        try dragDarkKnight(to: 40)
        try tmux.waitForScreen("the drag") { [self] in column(of: "Delete", in: $0, line: 6) == 67 }
        try tmux.mouse(release: 40, 6)
        try tmux.waitForScreen("the row to open") { [self] in column(of: "Delete", in: $0, line: 6) == 70 }
        try tmux.mouse(press: 75, 6)
        try tmux.mouse(release: 75, 6)
        try waitFor("dark_knight to be removed") { try movies()["dark_knight"] == nil }
        let screen = try tmux.waitForScreen("the row to collapse and the undo hint") {
            Tmux.line($0, 5).contains("Pulp Fiction")
                && $0.contains("Deleted “The Dark Knight” — press u to undo")
        }
        XCTAssertEqual(screen.components(separatedBy: "Dark Knight").count, 2, "only in the hint:\n\(screen)")
        try tmux.send(keys: "u")
        try waitFor("dark_knight to be back") { try movies()["dark_knight"] != nil }
        try tmux.waitForScreen("the row back in its place") { Tmux.line($0, 5).contains("The Dark Knight") }
    }

    func testALeadingFullSwipeTogglesWatchedAndTheRowClosesHalfASecondLater() throws {
        try startTui()
        XCTAssertEqual(try movies()["godfather"]?["watched"] as? Bool, false)
        // The Godfather, line 3 for the mouse: 65 columns right, 325 points, past half the row.
        try tmux.mouse(press: 5, 3)
        for column in stride(from: 10, through: 70, by: 10) { try tmux.mouse(drag: column, 3) }
        try tmux.waitForScreen("the full swipe") { [self] in
            (column(of: "Watched", in: $0, line: 3) ?? 0) > 20 && !$0.contains("With Friends")
        }
        try tmux.mouse(release: 70, 3)
        let released = Date()
        try waitFor("godfather to be watched") { try movies()["godfather"]?["watched"] as? Bool == true }
        // Fired: the green button across the row, the title off to the right.
        try tmux.waitForScreen("the fired row") { !Tmux.line($0, 2).contains("The Godfather") }
        try tmux.waitForScreen("the row to close") {
            Tmux.line($0, 2).hasPrefix(" ▶ G  The Godfather") && Tmux.line($0, 3).hasPrefix("      ◉ Watched")
        }
        let closedAfter = Date().timeIntervalSince(released)
        XCTAssertGreaterThanOrEqual(closedAfter, 0.5, "the row closes 0.5 s after firing, then slides back")
        XCTAssertLessThan(closedAfter, 5)
    }

    func testClickingElsewhereClosesAndTheWheelScrolls() throws {
        try startTui()
        try dragDarkKnight(to: 40)
        try tmux.mouse(release: 40, 6)
        try tmux.waitForScreen("the row to open") { [self] in column(of: "Delete", in: $0, line: 6) == 70 }
        try tmux.mouse(press: 10, 9)
        try tmux.mouse(release: 10, 9)
        try tmux.waitForScreen("the row to close") { Tmux.line($0, 5).hasPrefix("   D  The Dark Knight") }
        try tmux.send(bytes: "\u{1B}[<65;10;9M")
        try tmux.waitForScreen("a scroll by one row") { Tmux.line($0, 2).contains("The Dark Knight") }
    }
}

final class TuiLiveTests: TuiTestCase {
    func testAChangeMadeByAnotherClientAppearsAtOnce() throws {
        try startTui()
        try client.ok(["op": "toggle-watched-with-friends", "movie": "pulp_fiction"])
        try tmux.waitForScreen("pulp fiction's indicator") {
            Tmux.line($0, 9).contains("With friends") && $0.contains("seq 11")
        }
        // The selection stays on its movie when a row above it goes.
        try tmux.send(keys: "j")
        try tmux.waitForScreen("the selection") { Tmux.line($0, 5).hasPrefix(" ▶ D  The Dark Knight") }
        try client.ok(["op": "remove", "movie": "godfather"])
        try tmux.waitForScreen("the godfather to go") {
            !$0.contains("The Godfather") && Tmux.line($0, 2).hasPrefix(" ▶ D  The Dark Knight")
        }
    }

    func testTheKeyboardReachesEveryAction() throws {
        try startTui()
        try tmux.send(keys: "j")  // the second row
        try tmux.send(keys: "w")
        try waitFor("the dark knight to be watched") {
            try movies()["dark_knight"]?["watched"] as? Bool == true
        }
        try tmux.send(keys: "f")
        try waitFor("… with friends") {
            try movies()["dark_knight"]?["watchedWithFriends"] as? Bool == true
        }
        // ← opens the trailing edge (Delete on the right); Enter fires its outer button.
        try tmux.send(keys: "Left")
        try tmux.waitForScreen("the row to open") { [self] in column(of: "Delete", in: $0, line: 6) == 70 }
        try tmux.send(keys: "Enter")
        try waitFor("the dark knight to be removed") { try movies()["dark_knight"] == nil }
        try tmux.waitForScreen("the undo hint") { $0.contains("press u to undo") }
        try tmux.send(keys: "u")
        try waitFor("the dark knight to be back") { try movies()["dark_knight"] != nil }
        // a: the prompt; the title goes to the daemon as typed.
        try tmux.send(keys: "a")
        try tmux.waitForScreen("the prompt") { $0.contains("Add a movie:") }
        try tmux.send(keys: "Alien 東京")
        try tmux.send(keys: "Enter")
        try waitFor("alien to be added") { try movies()["alien_東京"] != nil }
        try tmux.waitForScreen("the notice") { $0.contains("Added “Alien 東京”") }
        // ? shows the help; any key closes it.
        try tmux.send(keys: "?")
        try tmux.waitForScreen("the help") { $0.contains("Help — any key closes") }
        try tmux.send(keys: "Space")
        try tmux.waitForScreen("the help to close") { !$0.contains("Help — any key closes") }
        // d deletes the selected row through perform.
        try tmux.send(keys: "d")
        try waitFor("the dark knight to be removed") { try movies()["dark_knight"] == nil }
    }

    /// --rtl: titles on the right, and ← (content to the left) reveals the right-hand buttons,
    /// which in rtl are the leading ones; --ascii: no symbols.
    func testRightToLeftAndAscii() throws {
        let command =
            "'\(try Binaries.swipectl)' --socket '\(daemon.socketPath)' tui --rtl --ascii; exec sleep 600"
        try tmux.start(["sh", "-c", command])
        let screen = try tmux.waitForScreen("the list") { $0.contains("* connected") }
        XCTAssertTrue(Tmux.line(screen, 2).hasSuffix("The Godfather G  <"), screen)
        XCTAssertTrue(Tmux.line(screen, 1).allSatisfy { $0 == "-" }, screen)
        try tmux.send(keys: "Left")
        try tmux.waitForScreen("the leading buttons on the right") { [self] in
            (column(of: "Watched", in: $0, line: 3) ?? 0) > 50 && Tmux.line($0, 2).contains("o")
        }
        XCTAssertFalse(try tmux.capture().contains("◉"))
    }

    func testResizingThePaneReLaysTheListAndSendsTheNewViewport() throws {
        try startTui()
        try tmux.resize(width: 50, height: 16)
        let screen = try tmux.waitForScreen("the new size") {
            Tmux.line($0, 1).count == 50 && Tmux.line($0, 15).contains("select")
        }
        XCTAssertTrue(Tmux.line(screen, 1).allSatisfy { $0 == "─" }, screen)
        // The row is now 250 points: open on the trailing edge puts Delete at 36 to 49.
        try tmux.send(keys: "Left")
        try tmux.waitForScreen("delete at the new right edge") { [self] in
            column(of: "Delete", in: $0, line: 3) == 40 && Tmux.line($0, 3).count <= 50
        }
    }

    /// The daemon stops: "reconnecting…". It comes back and, before the front end's next
    /// attempt (its backoff is past a second by then), another client changes a visible movie
    /// and adds one: the front end catches up from the last seq it saw, each change once.
    func testItReconnectsAfterTheDaemonRestartsAndCatchesUp() throws {
        try startTui(height: 40)
        client = nil
        XCTAssertEqual(try daemon.stop(), .exited(0))
        try tmux.waitForScreen("the lost connection") { $0.contains("reconnecting…") }
        usleep(1_000_000)  // let the backoff grow past the changes below
        daemon = try SwipedDaemon(
            directory: daemon.directory, socketPath: daemon.socketPath, stateDirectory: daemon.stateDirectory)
        client = try daemon.connect()
        try client.ok(["op": "toggle-watched", "movie": "pulp_fiction"])
        try client.ok(["op": "add", "title": "Alien"])
        let screen = try tmux.waitForScreen("the catch-up") {
            $0.contains("● connected") && $0.contains("seq 12") && $0.contains("Alien")
                && Tmux.line($0, 9).contains("Watched")
        }
        XCTAssertTrue(screen.contains("Reconnected; caught up from seq 10"), screen)
        XCTAssertEqual(screen.components(separatedBy: "Alien").count, 2, "Alien once:\n\(screen)")
        // And it is live again.
        try client.ok(["op": "remove", "movie": "alien"])
        try tmux.waitForScreen("the removal") { !$0.contains("Alien") && $0.contains("seq 13") }
    }
}

final class TuiTerminalTests: TuiTestCase {
    /// q, Ctrl-C, SIGTERM and the signals that dump core (SIGSEGV, SIGQUIT) each leave the
    /// terminal as they found it: main screen, no mouse reporting, cursor shown, the same
    /// termios settings; exit status 0 (the core-dumping ones: death by that signal, 128 + N in
    /// the shell).
    func testEveryWayOutRestoresTheTerminal() throws {
        for way in ["q", "C-c", "SIGTERM", "SIGSEGV", "SIGQUIT"] {
            for name in ["before", "after", "status"] { unlink(files.file(name)) }
            try startTui()
            XCTAssertEqual(try tmux.format("alternate_on"), "1")
            XCTAssertEqual(try tmux.format("mouse_sgr_flag"), "1")
            XCTAssertEqual(try tmux.format("mouse_button_flag"), "1")
            XCTAssertEqual(try tmux.format("cursor_flag"), "0")
            if way.hasPrefix("SIG") {
                let shell = try tmux.format("pane_pid")
                let pid = try Subprocess.check("pgrep", ["-P", shell]).trimmingCharacters(
                    in: .whitespacesAndNewlines)
                if way == "SIGSEGV" {
                    // What reaches standard error meanwhile (a runtime's "Fatal error: …") is
                    // shown once the terminal is back, not lost with the alternate screen.
                    try "Fatal error: as a runtime would say\n".write(
                        toFile: "/proc/\(pid)/fd/2", atomically: false, encoding: .utf8)
                }
                XCTAssertEqual(
                    kill(pid_t(pid)!, way == "SIGTERM" ? SIGTERM : way == "SIGQUIT" ? SIGQUIT : SIGSEGV), 0)
            } else {
                try tmux.send(keys: way)
            }
            try waitFor("the front end to exit (\(way))") { access(files.file("after"), F_OK) == 0 }
            try waitFor("the shell's stty") { (try? files.read("after"))?.isEmpty == false }
            XCTAssertEqual(
                try files.read("status"), ["SIGSEGV": "139\n", "SIGQUIT": "131\n"][way] ?? "0\n", way)
            XCTAssertEqual(try files.read("after"), try files.read("before"), "termios after \(way)")
            XCTAssertEqual(try tmux.format("alternate_on"), "0", way)
            XCTAssertEqual(try tmux.format("mouse_sgr_flag"), "0", way)
            XCTAssertEqual(try tmux.format("mouse_button_flag"), "0", way)
            XCTAssertEqual(try tmux.format("cursor_flag"), "1", way)
            if way == "SIGSEGV" {
                try tmux.waitForScreen("the message on the main screen") {
                    $0.contains("Fatal error: as a runtime would say")
                }
            }
            try tmux.run(["kill-session", "-t", tmux.session])
        }
    }

    /// An idle front end sleeps in poll(2) without a timeout: in a second with nothing to do it
    /// is not woken once (its context switches, from /proc, do not change).
    func testAnIdleFrontEndMakesNoWakeUps() throws {
        try startTui()
        let shell = try tmux.format("pane_pid")
        let pid = try Subprocess.check("pgrep", ["-P", shell]).trimmingCharacters(in: .whitespacesAndNewlines)
        func switches() throws -> String {
            try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
                .split(separator: "\n").filter { $0.contains("ctxt_switches") }.joined(separator: " ")
        }
        usleep(300_000)  // the first frames are drawn
        let before = try switches()
        usleep(1_000_000)
        XCTAssertEqual(try switches(), before)
        // And it still answers at once.
        try tmux.send(keys: "j")
        try tmux.waitForScreen("the selection to move") {
            Tmux.line($0, 5).hasPrefix(" ▶ D  The Dark Knight")
        }
    }
}

final class TuiCommandLineTests: DaemonClientTestCase {
    override class var prefix: String { "swiped-tui-cl" }

    /// Without a terminal: status 2 and why; without a daemon: status 3, as every command.
    func testItNeedsATerminalAndADaemon() throws {
        let noTerminal = try Subprocess.run(try Binaries.swipectl, ["--socket", daemon.socketPath, "tui"])
        XCTAssertEqual(noTerminal.status, .exited(2))
        XCTAssertEqual(noTerminal.standardOutput, "")
        XCTAssertEqual(
            noTerminal.standardError, "swipectl: tui needs a terminal on standard input and output\n")
        let noDaemon = try Subprocess.run(try Binaries.swipectl, ["--socket", "/nonexistent/s.sock", "tui"])
        XCTAssertEqual(noDaemon.status, .exited(3))
        XCTAssertTrue(noDaemon.standardError.contains("Is swiped running?"), noDaemon.standardError)
        let bad = try Subprocess.run(try Binaries.swipectl, ["tui", "--dx", "3"])
        XCTAssertEqual(bad.status, .exited(2))
        XCTAssertTrue(bad.standardError.contains("--dx does not apply to 'tui'"), bad.standardError)
    }
}

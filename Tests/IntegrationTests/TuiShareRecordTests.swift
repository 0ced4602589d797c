import Foundation
import Glibc
import XCTest

/// Issue 18 in `swipectl tui`, end to end in tmux: other people's rows drawn as faint ghosts
/// where their fingers are (scaled from their viewport to this terminal's), the `s` key that
/// shares this one's, and the `r` key whose saved recording replays to the very rows the
/// front end received.
final class TuiGhostTests: TuiTestCase {
    /// The cells of line `y` of a `capture-pane -e` screen with the SGR parameters in force
    /// at each, as tmux writes them: it sets attributes one sequence at a time, carries them
    /// from one line to the next, and leaves out the blank cells at the end of a line.
    func styledCells(_ screen: String, line y: Int) -> [(text: Character, sgr: Set<String>)] {
        var lines: [[(Character, Set<String>)]] = [[]]
        var attributes: Set<String> = []
        var rest = Substring(screen)
        while let c = rest.first {
            if c == "\n" {
                lines.append([])
                rest = rest.dropFirst()
                continue
            }
            if c == "\u{1B}", rest.dropFirst().first == "[", let end = rest.firstIndex(of: "m") {
                let parameters = rest[rest.index(rest.startIndex, offsetBy: 2)..<end]
                rest = rest[rest.index(after: end)...]
                var codes = parameters.split(separator: ";", omittingEmptySubsequences: false).map(
                    String.init)
                while !codes.isEmpty {
                    let code = codes.removeFirst()
                    switch code {
                    case "0", "": attributes = []
                    case "22": attributes.subtract(["1", "2"])
                    case "39", "49":
                        attributes = attributes.filter { !$0.hasPrefix(code == "39" ? "38;" : "48;") }
                    case "38",
                        "48" where codes.first == "5" && codes.count >= 2:
                        attributes = attributes.filter { !$0.hasPrefix(code + ";") }
                        attributes.insert("\(code);5;\(codes[1])")
                        codes.removeFirst(2)
                    default: attributes.insert(code)
                    }
                }
                continue
            }
            lines[lines.count - 1].append((c, attributes))
            rest = rest.dropFirst()
        }
        return y < lines.count ? lines[y] : []
    }

    /// Whether the cells of `columns` on line `y` that tmux wrote are faint and in `colour`
    /// (of the 256), and the ghost's `glyphs` (its edge, icon or label) are among them there.
    func isGhost(
        _ screen: String, line y: Int, _ columns: Range<Int>, colour: Int, showing glyphs: String
    ) -> Bool {
        let cells = styledCells(screen, line: y)
        let shown = columns.clamped(to: 0..<cells.count)
        guard !shown.isEmpty else { return false }
        let text = String(shown.map { cells[$0].text })
        return text.contains(glyphs)
            && shown.allSatisfy { cells[$0].sgr.contains("2") && cells[$0].sgr.contains("38;5;\(colour)") }
    }

    /// Another client (800 points wide, twice this terminal's 400) shares its rows: `g` shows
    /// the row it had open before (from the `peers` reply), then its drag of The Dark Knight
    /// as a faint red Delete strip at half the points (which closes its other row, whose ghost
    /// goes), its release, its close (the ghost goes), and a second drag that goes when the
    /// client disconnects.
    func testAnotherClientsFingersShowAsFaintGhostsAtTheirColumnsAndGoWhenTheRowsClose() throws {
        let sharer = try daemon.connect()
        try sharer.ok(["op": "viewport", "width": 800])
        try sharer.ok(["op": "share", "on": true])
        try sharer.ok(["op": "open", "movie": "godfather", "edge": "leading"])
        try startTui()
        try tmux.send(keys: "g")
        // Open on its leading edge at 140 of 800 points: 70 of this row's 400, 14 columns;
        // Watched green (77, of the 256) on 0 to 6, With Friends indigo (62) on 7 to 13, their
        // labels on the blank line under the title, the title's letters in their tints.
        var screen = try tmux.waitForScreen(colors: true, "the godfather's ghost from the peers reply") {
            [self] in
            isGhost($0, line: 3, 0..<7, colour: 77, showing: "Watched")
                && isGhost($0, line: 3, 7..<14, colour: 62, showing: "With F…")
                && isGhost($0, line: 2, 5..<7, colour: 77, showing: "T")
                && isGhost($0, line: 2, 7..<14, colour: 62, showing: "he Godf")
        }
        try tmux.waitForScreen("one ghost in the header") { $0.contains("ghosts 1") }
        XCTAssertEqual(styledCells(screen, line: 3)[14].text, "┆", "the edge of their content")
        // The poster tile keeps its own colours under a ghost: white on its green (29).
        XCTAssertEqual(styledCells(screen, line: 2)[3].text, "G")
        XCTAssertEqual(styledCells(screen, line: 2)[3].sgr, ["1", "38;5;231", "48;5;29"])
        XCTAssertTrue(Tmux.line(try tmux.capture(), 2).hasPrefix(" ▶ G  The Godfather"), "the title stays")

        // A drag of 200 of 800 points: 100 points here, 20 columns from the right; Delete in
        // faint red (203) on 60 to 79, its label where the row is blank, the edge at 59.
        try sharer.ok(["op": "drag", "movie": "dark_knight", "dx": -200])
        screen = try tmux.waitForScreen(colors: true, "the dark knight's ghost") { [self] in
            isGhost($0, line: 5, 59..<80, colour: 203, showing: "┆         ✖")
                && isGhost($0, line: 6, 59..<80, colour: 203, showing: "┆       Delete")
        }
        let text = try tmux.capture()
        XCTAssertEqual(column(of: "┆", in: text, line: 5), 59, text)
        XCTAssertEqual(column(of: "Delete", in: text, line: 6), 67, text)
        XCTAssertTrue(
            Tmux.line(text, 5).hasPrefix("   D  The Dark Knight"), "this row did not move:\n\(text)")
        // Rule 8: the sharer's drag closed its open godfather, so that ghost went.
        XCTAssertTrue(text.contains("ghosts 1"), text)
        XCTAssertNil(column(of: "┆", in: text, line: 3), text)
        XCTAssertFalse(
            styledCells(screen, line: 5)[18..<59].contains { $0.sgr.contains("38;5;203") },
            "nothing red left of the strip:\n\(screen)")

        // Released where it rests: open at 70 of 800, 7 columns here.
        try sharer.ok(["op": "release", "movie": "dark_knight"])
        try tmux.waitForScreen(colors: true, "the open ghost") { [self] in
            isGhost($0, line: 5, 72..<80, colour: 203, showing: "┆   ✖")
        }
        XCTAssertEqual(column(of: "┆", in: try tmux.capture(), line: 5), 72)

        // Closed: the ghost goes.
        try sharer.ok(["op": "close", "movie": "dark_knight"])
        try tmux.waitForScreen("the ghost to go") { [self] in
            column(of: "┆", in: $0, line: 5) == nil && $0.contains("ghosts 0")
        }

        // Dragged again, then the sharer goes: every ghost of it goes.
        try sharer.ok(["op": "drag", "movie": "dark_knight", "dx": -200])
        try tmux.waitForScreen("the second drag") { [self] in
            column(of: "┆", in: $0, line: 5) == 59 && $0.contains("ghosts 1")
        }
        sharer.close()
        screen = try tmux.waitForScreen(colors: true, "the ghosts of a client that went") {
            !$0.contains("┆") && !$0.contains("38;5;203")
        }
        try tmux.waitForScreen("no ghost in the header") { $0.contains("ghosts 0") }

        // g again hides them: the header says nothing of ghosts.
        try tmux.send(keys: "g")
        try tmux.waitForScreen("ghosts off") {
            !Tmux.line($0, 0).contains("ghosts") && $0.contains("Other people's rows hidden")
        }
    }

    /// A sharer in rtl opens The Godfather's leading edge, on its right: in this ltr list the
    /// ghost is mirrored to reveal the same edge, on the left, its Watched button first.
    func testAGhostFromAnRtlSharerIsMirroredToRevealTheSameEdge() throws {
        let sharer = try daemon.connect()
        try sharer.ok(["op": "viewport", "width": 400, "direction": "rtl"])
        try sharer.ok(["op": "share", "on": true])
        try startTui()
        try tmux.send(keys: "g")
        try tmux.waitForScreen("ghosts on") { Tmux.line($0, 0).contains("ghosts 0") }
        let open = try sharer.ok(["op": "open", "movie": "godfather", "edge": "leading"])
        XCTAssertEqual((open["row"] as? [String: Any])?["offset"] as? Double, -140)
        try tmux.waitForScreen(colors: true, "the mirrored ghost") { [self] in
            isGhost($0, line: 3, 0..<14, colour: 77, showing: "Watched")
                && isGhost($0, line: 3, 14..<28, colour: 62, showing: "With Friends")
        }
        XCTAssertEqual(column(of: "┆", in: try tmux.capture(), line: 3), 28)
    }

    /// `s` shares this front end's rows: a watcher sees its keyboard open as `peer-row`s in
    /// its viewport (80 columns: 400 points).
    func testSSharesThisFrontEndsRows() throws {
        let watcher = try daemon.connect()
        XCTAssertEqual((try watcher.ok(["op": "peers", "watch": true])["peers"] as? [Any])?.count, 0)
        try startTui()
        try tmux.send(keys: "s")
        try tmux.waitForScreen("sharing") { $0.contains("sharing") }
        try tmux.send(keys: "Left")  // the selected row, The Godfather: its trailing buttons
        let (event, _) = try watcher.waitForEvent("peer-row")
        XCTAssertEqual(event["viewport"] as? NSDictionary, ["width": 400, "direction": "ltr"])
        let row = try XCTUnwrap(event["row"] as? [String: Any])
        XCTAssertEqual(row["movie"] as? String, "godfather")
        XCTAssertEqual(row["offset"] as? Double, -70)
        // s again: private; the watcher is told the row closed.
        try tmux.send(keys: "s")
        try tmux.waitForScreen("private") { $0.contains("Your rows are private") && !$0.contains("sharing") }
        let (closed, _) = try watcher.waitForEvent("peer-row")
        XCTAssertEqual((closed["row"] as? [String: Any])?["phase"] as? String, "closed")
    }
}

final class TuiRecordTests: TuiTestCase {
    /// The recordings saved in `directory`, by name.
    func recordings(in directory: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).filter {
            $0.hasPrefix("swiped-recording-") && $0.hasSuffix(".json")
        }.sorted()
    }

    /// r, then a mouse drag that opens a row, a leading full swipe (its action and the close
    /// half a second later), a keyboard perform, and another client's change; r again saves
    /// the recording and the rows the front end got; `swipectl replay FILE --expect
    /// FILE.rows` gives those very rows.
    func testTheRecordKeySavesAFileThatReplaysToTheRowsTheFrontEndGot() throws {
        let directory = files.file("recordings")
        XCTAssertEqual(mkdir(directory, 0o755), 0)
        try startTui(["--record-dir", directory])
        try tmux.send(keys: "r")
        try tmux.waitForScreen("recording") { $0.contains("● recording…") }
        // Drag The Dark Knight 20 columns left and let go where it rests: open.
        try tmux.mouse(press: 60, 6)
        for column in stride(from: 56, through: 40, by: -4) { try tmux.mouse(drag: column, 6) }
        try tmux.waitForScreen("the drag") { [self] in column(of: "Delete", in: $0, line: 6) == 67 }
        try tmux.mouse(release: 40, 6)
        try tmux.waitForScreen("the row to open") { [self] in column(of: "Delete", in: $0, line: 6) == 70 }
        // A leading full swipe of The Godfather: watched fires, the row closes 0.5 s later.
        try tmux.mouse(press: 5, 3)
        for column in stride(from: 10, through: 70, by: 10) { try tmux.mouse(drag: column, 3) }
        try tmux.mouse(release: 70, 3)
        try waitFor("godfather to be watched") { try movies()["godfather"]?["watched"] as? Bool == true }
        try tmux.waitForScreen("the row to close") { Tmux.line($0, 2).hasPrefix(" ▶ G  The Godfather") }
        // f on the selected row (perform), and another client's change of a shown movie.
        try tmux.send(keys: "f")
        try waitFor("with friends") { try movies()["godfather"]?["watchedWithFriends"] as? Bool == true }
        try client.ok(["op": "toggle-watched", "movie": "dark_knight"])
        try tmux.waitForScreen("the dark knight watched") { Tmux.line($0, 6).contains("Watched") }
        XCTAssertEqual(try recordings(in: directory), [], "nothing saved while recording")

        try tmux.send(keys: "r")
        let screen = try tmux.waitForScreen("saved") { $0.contains("Saved ") && !$0.contains("recording…") }
        let names = try recordings(in: directory)
        XCTAssertEqual(names.count, 1, "\(names)")
        let name = try XCTUnwrap(names.first)
        XCTAssertNotNil(
            name.range(of: #"^swiped-recording-\d{8}-\d{6}\.json$"#, options: .regularExpression), name)
        XCTAssertTrue(screen.contains("Saved \(name) and .rows ("), screen)
        let file = directory + "/" + name

        let recording = try XCTUnwrap(
            JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file))) as? [String: Any]
        )
        XCTAssertEqual(recording["recording"] as? Int, 2)
        XCTAssertEqual(recording["viewport"] as? NSDictionary, ["width": 400, "direction": "ltr"])
        let kinds = Set((recording["entries"] as? [[String: Any]] ?? []).compactMap { $0["kind"] as? String })
        for kind in ["drag", "release", "perform", "close-timer", "flags", "movie-changed"] {
            XCTAssertTrue(kinds.contains(kind), "\(kind) in \(kinds.sorted())")
        }
        let rows = try String(contentsOfFile: file + ".rows", encoding: .utf8)
        let rowCount = rows.split(separator: "\n").count
        XCTAssertGreaterThan(rowCount, 8, rows)
        XCTAssertFalse(rows.contains("peer-row"))

        let replay = try Subprocess.run(try Binaries.swipectl, ["replay", file, "--expect", file + ".rows"])
        XCTAssertEqual(replay.status, .exited(0), replay.standardError)
        XCTAssertEqual(replay.standardError, "swipectl: all \(rowCount) rows match \(file).rows\n")

        // A second recording in the same second gets a name of its own.
        try tmux.send(keys: "r")
        try tmux.waitForScreen("recording again") { $0.contains("● recording…") }
        try tmux.send(keys: "r")
        try tmux.waitForScreen("saved again") { _ in try self.recordings(in: directory).count == 2 }
    }

    /// The daemon keeps a recording per connection: when the connection goes, so does the
    /// recording, and the front end says so, in the header until r starts a new one. Sharing
    /// and ghosts are asked for again on the new connection, without a word over that.
    func testARecordingLostWithTheConnectionIsSaidOnScreen() throws {
        try startTui()
        try tmux.send(keys: "s")
        try tmux.waitForScreen("sharing") { Tmux.line($0, 0).contains("sharing") }
        try tmux.send(keys: "g")
        try tmux.waitForScreen("ghosts") { Tmux.line($0, 0).contains("ghosts 0") }
        try tmux.send(keys: "r")
        try tmux.waitForScreen("recording") { $0.contains("● recording…") }
        client = nil
        XCTAssertEqual(try daemon.stop(), .exited(0))
        try tmux.waitForScreen("the loss") {
            $0.contains("recording lost") && $0.contains("Lost the daemon and the recording with it")
        }
        daemon = try SwipedDaemon(
            directory: daemon.directory, socketPath: daemon.socketPath, stateDirectory: daemon.stateDirectory)
        client = try daemon.connect()
        try tmux.waitForScreen(timeout: .seconds(15), "the reconnect") {
            $0.contains("● connected") && $0.contains("The recording was lost")
                && $0.contains("recording lost  sharing  ghosts 0")
        }
        // The new connection shares: a watcher that comes now sees it among the peers.
        let watcher = try daemon.connect()
        try waitFor("the front end among the sharers") {
            (try watcher.ok(["op": "peers", "watch": false])["peers"] as? [Any])?.count == 1
        }
        usleep(200_000)
        XCTAssertTrue(try tmux.capture().contains("The recording was lost"), "said, not overwritten")
        try tmux.send(keys: "r")
        try tmux.waitForScreen("a new recording") {
            $0.contains("● recording…") && !$0.contains("recording lost")
        }
    }

    /// --record-dir must be a directory this user can write to: said before the screen is taken.
    func testARecordDirectoryThatCannotBeWrittenIsRefusedAtOnce() throws {
        let result = try Subprocess.run(
            try Binaries.swipectl, ["--socket", daemon.socketPath, "tui", "--record-dir", "/nonexistent/dir"])
        XCTAssertEqual(result.status, .exited(2))
        XCTAssertTrue(
            result.standardError.hasPrefix(
                "swipectl: --record-dir /nonexistent/dir: No such file or directory"),
            result.standardError)
    }
}

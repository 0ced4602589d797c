// What swipectl prints: --json shows the daemon's replies without swipectl's own request ids;
// titles are escaped and fitted to the terminal (issue 13).

import Foundation
import Glibc
import XCTest

final class SwipectlOutputTests: DaemonTestCase {
    func testJSONRepliesCarryNoRequestIDs() throws {
        var outputs = [
            try daemon.ok("--json", "list"), try daemon.ok("--json", "toggle-watched", "The Mat"),
            try daemon.ok("--json", "add", "Heat"), try daemon.ok("--json", "history", "--from", "10"),
            try daemon.ok("--json", "remove", "heat"),
        ]
        let refused = try daemon.swipectl(["--json", "remove", "heat"])
        XCTAssertEqual(refused.status, .exited(1))
        outputs.append(refused.standardOutput)
        for output in outputs {
            XCTAssertTrue(output.hasPrefix(#"{"ok":"#), output)
            for reply in try jsonLines(output) { XCTAssertNil(reply["id"], "\(reply)") }
        }
        XCTAssertTrue(outputs[1].hasPrefix(#"{"ok":true,"seq":11,"movie":{"id":"matrix""#), outputs[1])
    }

    func testAddMakesIdsFromTitlesInAnyScript() throws {
        XCTAssertEqual(
            try daemon.ok("add", "Amélie — 東京物語 🎬"), "Added amelie_東京物語 \"Amélie — 東京物語 🎬\" (seq 11).\n")
        XCTAssertEqual(try daemon.ok("add", "日本"), "Added 日本 \"日本\" (seq 12).\n")
        XCTAssertEqual(try daemon.ok("add", "ééé…"), "Added eee \"ééé…\" (seq 13).\n")
        XCTAssertEqual(try daemon.ok("add", "日本!"), "Added 日本_2 \"日本!\" (seq 14).\n")
        XCTAssertEqual(try daemon.ok("add", "🎬"), "Added movie \"🎬\" (seq 15).\n")
        // The ids work everywhere an id does: a toggle, a drag on the daemon's engine, a restart.
        XCTAssertEqual(try daemon.ok("toggle-watched", "日本"), "日本 \"日本\": watched 👁 (seq 16).\n")
        let drag = try jsonLines(try daemon.ok("call", #"{"op":"drag","movie":"amelie_東京物語","dx":-60}"#))
        XCTAssertEqual((drag.first?["row"] as? [String: Any])?["movie"] as? String, "amelie_東京物語")
        XCTAssertEqual(try daemon.stop(), .exited(0))
        daemon = try TestDaemon(restarting: daemon)
        XCTAssertEqual(Array(try daemon.ids().suffix(5)), ["amelie_東京物語", "日本", "eee", "日本_2", "movie"])
    }

    func testAddRefusesTitlesThatBreakTerminalsAndTrimsTheRest() throws {
        let rlo = try daemon.swipectl(["add", "Evil\u{202E}txt.exe"])
        XCTAssertEqual(rlo.status, .exited(1))
        XCTAssertEqual(
            rlo.standardError,
            "swipectl: bad-request: title contains U+202E RIGHT-TO-LEFT OVERRIDE, which no title needs\n")
        let raw = try daemon.swipectl(["call", #"{"op":"add","title":"one\u2028two"}"#])
        XCTAssertEqual(
            raw.standardOutput,
            #"{"ok":false,"error":{"code":"bad-request","message":"title contains U+2028 LINE SEPARATOR, which no title needs"}}"#
                + "\n")
        XCTAssertEqual(try daemon.swipectl(["add", "a\u{200B}b"]).status, .exited(1))
        XCTAssertEqual(try daemon.movies().count, 10, "nothing was added")

        XCTAssertEqual(
            try daemon.ok("add", "  Heat  "),
            "Added heat \"Heat\" (seq 11).\n")
        let stored = try jsonLines(try daemon.ok("call", #"{"op":"add","title":"\u00a0Ame\u0301lie  "}"#))
        let movie = try XCTUnwrap(stored.first?["movie"] as? [String: Any])
        XCTAssertEqual(movie["title"] as? String, "Am\u{E9}lie")
        XCTAssertEqual((movie["title"] as? String)?.unicodeScalars.count, 6, "stored in NFC")
    }

    func testListFitsATerminalAndCutsNothingInAPipe() throws {
        try XCTSkipUnless(Binaries.hasSystem("script"), "needs script(1) (bsdutils) for a pty")
        let long = "東京物語 — " + String(repeating: "a very long title ", count: 10)
        try daemon.ok("add", long)
        // Not a terminal: the whole title, on one line.
        XCTAssertTrue(try daemon.ok("list").contains(long.trimmingCharacters(in: .whitespaces) + "\n"))
        // A 60-column terminal: every line fits, the long title is cut with "…".
        let command = "stty cols 60 rows 30; exec '\(try Binaries.swipectl)' --socket '\(daemon.socket)' list"
        let result = try Subprocess.run(
            "script", ["-qec", command, "/dev/null"], environment: ["SWIPED_SOCKET": nil])
        XCTAssertEqual(result.status, .exited(0), result.standardOutput)
        let lines = result.standardOutput.replacingOccurrences(of: "\r\n", with: "\n").split(separator: "\n")
        XCTAssertEqual(lines.count, 13, result.standardOutput)  // the header, 11 movies, the legend
        let cut = try XCTUnwrap(lines.first { $0.hasPrefix("東京物語") || $0.contains(" 東京物語 — ") })
        XCTAssertTrue(cut.hasSuffix("…"), String(cut))
        for line in lines { XCTAssertLessThanOrEqual(TerminalWidth.cells(String(line)), 60, String(line)) }
        XCTAssertTrue(lines.last?.hasPrefix("11 movies") == true, result.standardOutput)
        // No match on a terminal: a sentence, not a header over no rows and "0 movies" (issue
        // 49); in a pipe, the header alone, for scripts.
        let none = "exec '\(try Binaries.swipectl)' --socket '\(daemon.socket)' list --match zzz"
        let empty = try Subprocess.run(
            "script", ["-qec", none, "/dev/null"], environment: ["SWIPED_SOCKET": nil])
        XCTAssertEqual(empty.status, .exited(0), empty.standardOutput)
        XCTAssertEqual(
            empty.standardOutput.replacingOccurrences(of: "\r\n", with: "\n"),
            "No movie's title contains “zzz”.\n")
        XCTAssertEqual(try daemon.ok("list", "--match", "zzz"), "ID  TITLE  WATCHED\n")
    }
}

/// Cells a line takes in a terminal: two for CJK and emoji, as swipectl counts.
enum TerminalWidth {
    static func cells(_ text: String) -> Int {
        text.unicodeScalars.reduce(0) { total, scalar in
            let v = scalar.value
            if scalar.properties.generalCategory == .nonspacingMark { return total }
            let wide =
                scalar.properties.isEmojiPresentation || (0x2E80...0xA4CF).contains(v)
                || (0xAC00...0xD7A3).contains(v) || (0xFF00...0xFF60).contains(v)
            return total + (wide ? 2 : 1)
        }
    }
}

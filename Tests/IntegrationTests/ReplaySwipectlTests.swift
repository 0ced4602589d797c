// `swipectl swipe … --record FILE` and `swipectl replay FILE [--expect ROWS]` as a person runs
// them: the recording and its rows written, the replay printing one line per step and matching
// the rows, a changed row caught, and files that are not recordings refused.

import Foundation
import XCTest

final class ReplaySwipectlTests: DaemonTestCase {
    private func lines(_ text: String) -> [String] { text.split(separator: "\n").map(String.init) }

    func testARecordedSwipeReplaysToTheRowsItGot() throws {
        let files = try TemporaryDirectory("swiped-replay-cli")
        let file = files.file("seven.json")
        let output = try daemon.ok("swipe", "seven", "--dx", "-250", "--vx", "-900", "--record", file)
        XCTAssertEqual(
            lines(output),
            [
                "release      fired     offset -390  trailing  delete (full swipe)  vx -900",
                "fired delete (seq 11)",
                "recorded 15 rows into \(file) (rows: \(file).rows)",
            ])
        let recording = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file)))
                as? [String: Any])
        XCTAssertEqual(recording["recording"] as? Int, 2)
        XCTAssertEqual(recording["inputs"] as? Int, 15)  // 13 drags, the release, the removal
        XCTAssertEqual((recording["movies"] as? [Any])?.count, 0, "no copy of the list (issue 33)")
        let rows = lines(try String(contentsOfFile: file + ".rows", encoding: .utf8))
        XCTAssertEqual(rows.count, 15)
        XCTAssertTrue(
            rows.last?.hasPrefix(#"{"event":"row","row":{"movie":"seven","offset":0,"phase":"closed""#)
                ?? false)
        XCTAssertTrue(rows.last?.hasSuffix(#","removed":true}"#) ?? false)
        // The rows are not a recording, and replay says so in those words.
        let wrong = try Subprocess.run(
            try Binaries.swipectl, ["replay", file + ".rows"], environment: ["SWIPED_SOCKET": "/nonexistent"])
        XCTAssertEqual(wrong.status, .exited(1))
        XCTAssertEqual(
            wrong.standardError,
            "swipectl: \(file).rows is not a recording: it holds the rows a connection got, one line each (a .rows file); replay the recording they came with, and give this file to --expect\n"
        )

        // The replay needs no daemon: one line per step, the last the removal's row event.
        let replay = try Subprocess.run(
            try Binaries.swipectl, ["replay", file], environment: ["SWIPED_SOCKET": "/nonexistent"])
        XCTAssertEqual(replay.status, .exited(0), replay.standardError)
        let steps = try jsonLines(replay.standardOutput)
        XCTAssertEqual(steps.count, 15)
        XCTAssertEqual(steps[13]["kind"] as? String, "release")
        XCTAssertEqual(steps[13]["fired"] as? NSDictionary, ["action": "delete", "bound": true])
        XCTAssertEqual(steps[14]["kind"] as? String, "movie-removed")
        XCTAssertEqual(steps[14]["event"] as? String, "row")
        XCTAssertEqual(steps[14]["removed"] as? Bool, true)

        let check = try Subprocess.run(try Binaries.swipectl, ["replay", file, "--expect", file + ".rows"])
        XCTAssertEqual(check.status, .exited(0), check.standardError)
        XCTAssertEqual(check.standardError, "swipectl: all 15 rows match \(file).rows\n")

        // A row changed in the expectation is caught, and said where.
        let changed = rows.enumerated().map {
            $0.offset == 3
                ? $0.element.replacingOccurrences(of: #""phase":"dragging""#, with: #""phase":"open""#)
                : $0.element
        }
        XCTAssertNotEqual(changed, rows)
        try Data((changed.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: file + ".bad"))
        let bad = try Subprocess.run(try Binaries.swipectl, ["replay", file, "--expect", file + ".bad"])
        XCTAssertEqual(bad.status, .exited(1))
        XCTAssertTrue(
            bad.standardError.hasPrefix(
                "swipectl: row 4 differs from \(file).bad:\n  replay:   {\"movie\":\"seven\",\"offset\":"),
            bad.standardError)
        // One row fewer: the counts differ.
        try Data((rows.dropLast().joined(separator: "\n") + "\n").utf8).write(
            to: URL(fileURLWithPath: file + ".short"))
        let short = try Subprocess.run(try Binaries.swipectl, ["replay", file, "--expect", file + ".short"])
        XCTAssertEqual(short.status, .exited(1))
        XCTAssertEqual(short.standardError, "swipectl: the replay gave 15 rows, \(file).short has 14\n")
    }

    func testFilesThatAreNotRecordingsAreRefused() throws {
        let files = try TemporaryDirectory("swiped-replay-cli")
        let missing = try Subprocess.run(try Binaries.swipectl, ["replay", files.file("none.json")])
        XCTAssertEqual(missing.status, .exited(1))
        XCTAssertEqual(
            missing.standardError,
            "swipectl: cannot read \(files.file("none.json")): No such file or directory\n")
        try Data(#"{"recording":3}"#.utf8).write(to: URL(fileURLWithPath: files.file("two.json")))
        let two = try Subprocess.run(try Binaries.swipectl, ["replay", files.file("two.json")])
        XCTAssertEqual(two.status, .exited(1))
        XCTAssertEqual(
            two.standardError,
            "swipectl: \(files.file("two.json")) is not a recording: not a recording of format 1 or 2 (its \"recording\" is 3)\n"
        )
        try Data("hello".utf8).write(to: URL(fileURLWithPath: files.file("text")))
        let text = try Subprocess.run(try Binaries.swipectl, ["replay", files.file("text")])
        XCTAssertEqual(text.status, .exited(1))
        XCTAssertTrue(
            text.standardError.hasPrefix("swipectl: \(files.file("text")) is not JSON: "), text.standardError)
        let usage = try Subprocess.run(try Binaries.swipectl, ["replay"])
        XCTAssertEqual(usage.status, .exited(2))
        XCTAssertEqual(
            try Subprocess.run(try Binaries.swipectl, ["replay", "x", "--dx", "3"]).standardError,
            "swipectl: --dx does not apply to 'replay'\nTry 'swipectl --help'.\n")
    }
}

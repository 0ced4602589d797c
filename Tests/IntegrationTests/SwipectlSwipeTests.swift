// `swipectl swipe`: gestures on one connection, checked against the shared state with `list`.

import Foundation
import Glibc
import XCTest

final class SwipectlSwipeTests: DaemonTestCase {
    private func lines(_ text: String) -> [String] { text.split(separator: "\n").map(String.init) }

    func testAFullSwipeLeftDeletes() throws {
        XCTAssertEqual(
            try daemon.ok("swipe", "Se7", "--dx", "-300"),
            "release      fired     offset -390  trailing  delete (full swipe)\nfired delete (seq 11)\n")
        XCTAssertFalse(try daemon.ids().contains("seven"))
        XCTAssertEqual(try daemon.ids().count, 9)
    }

    func testASwipeRightPastHalfTogglesWatched() throws {
        let output = try daemon.ok("swipe", "matrix", "--dx", "250")
        XCTAssertEqual(lines(output).last, "fired watched (seq 11): watched")
        XCTAssertTrue(
            output.hasPrefix("release      fired     offset 390   leading   watched (full swipe)"), output)
        XCTAssertEqual(
            try daemon.movies().first { $0["id"] as? String == "matrix" }?["watched"] as? Bool, true)
        // Again: the same action un-watches, and says so (issue 49); a fling's vx goes last, so
        // that the columns stay in line whatever its length.
        let again = try daemon.ok("swipe", "matrix", "--dx", "250", "--vx", "1200")
        XCTAssertEqual(
            lines(again),
            [
                "release      fired     offset 390   leading   watched (full swipe)  vx 1200",
                "fired watched (seq 12): unwatched",
            ])
    }

    func testOpenTrailingThenTapDeleteDeletes() throws {
        XCTAssertEqual(
            try daemon.ok("swipe", "inception", "--open", "trailing", "--tap", "delete"),
            "tap delete   closed    offset 0     -\nfired delete (seq 11)\n")
        XCTAssertFalse(try daemon.ids().contains("inception"))
        // Without --tap the row is left open, and nothing changes.
        XCTAssertEqual(
            try daemon.ok("swipe", "matrix", "--open", "leading"),
            "open         open      offset 140   leading   watched | watched-with-friends\n")
        XCTAssertEqual(
            try daemon.ok("--json", "history", "--from", "11"), #"{"ok":true,"seq":11,"events":[]}"# + "\n")
    }

    func testPerformFiresAnActionWithoutSwiping() throws {
        XCTAssertEqual(
            try daemon.ok("swipe", "The Mat", "--perform", "watched-with-friends"),
            "perform      closed    offset 0     -\nfired watched-with-friends (seq 11): watched with friends\n"
        )
        XCTAssertEqual(
            try daemon.movies().first { $0["id"] as? String == "matrix" }?["watchedWithFriends"] as? Bool,
            true)
        let json = try jsonLines(try daemon.ok("--json", "swipe", "seven", "--perform", "delete"))
        XCTAssertEqual(json.count, 1)
        XCTAssertEqual((json[0]["fired"] as? [String: Any])?["seq"] as? Int, 12)
        let unknown = try daemon.swipectl(["swipe", "matrix", "--perform", "frob"])
        XCTAssertEqual(unknown.status, .exited(1))
        XCTAssertTrue(unknown.standardError.contains("bad-request"), unknown.standardError)
    }

    func testAShortDragClosesAndChangesNothing() throws {
        for dx in ["-30", "5", "56"] {
            XCTAssertEqual(
                try daemon.ok("swipe", "matrix", "--dx", dx),
                "release      closed    offset 0     -\nnothing fired\n", dx)
        }
        // A flick opens what a slow drag of the same length closes (rule 6).
        XCTAssertEqual(
            lines(try daemon.ok("swipe", "matrix", "--dx", "-30", "--vx", "-800")).first,
            "release      open      offset -70   trailing  delete  vx -800")
        XCTAssertEqual(try daemon.ids().count, 10)
        XCTAssertEqual(
            try daemon.ok("--json", "history", "--from", "10"), #"{"ok":true,"seq":10,"events":[]}"# + "\n")
    }

    func testVerbosePrintsEachStepOfAtMost20Points() throws {
        let output = lines(try daemon.ok("swipe", "seven", "--dx", "-100", "--verbose"))
        XCTAssertEqual(
            output,
            [
                "drag -20     dragging  offset -20   trailing  delete",
                "drag -40     dragging  offset -40   trailing  delete",
                "drag -60     dragging  offset -60   trailing  delete",
                "drag -80     dragging  offset -80   trailing  delete",
                "drag -100    dragging  offset -100  trailing  delete",
                "release      open      offset -70   trailing  delete",
                "nothing fired",
            ])
        let two = lines(try daemon.ok("swipe", "seven", "--dx", "150", "--steps", "2", "--verbose"))
        XCTAssertEqual(
            two.map { String($0.prefix(9)) }, ["drag 75  ", "drag 150 ", "release  ", "nothing f"])
        // --open is one `open` request: one step, also with --verbose; then the tap.
        let open = lines(
            try daemon.ok("swipe", "seven", "--open", "trailing", "--tap", "delete", "--verbose"))
        XCTAssertEqual(
            open.map { String($0.prefix(13)) }, ["open         ", "tap delete   ", "fired delete "])
    }

    func testJSONPrintsTheRepliesOnly() throws {
        let replies = try jsonLines(try daemon.ok("--json", "swipe", "seven", "--dx", "-60", "--verbose"))
        XCTAssertEqual(replies.count, 4)  // three drags and the release
        XCTAssertEqual(
            replies.map { ($0["row"] as? [String: Any])?["offset"] as? Int }, [-20, -40, -60, -70])
        for reply in replies { XCTAssertNil(reply["id"]) }
        let tap = try jsonLines(
            try daemon.ok("--json", "swipe", "seven", "--open", "trailing", "--tap", "delete"))
        XCTAssertEqual(tap.count, 2)  // the open and the tap
        XCTAssertEqual((tap[0]["row"] as? [String: Any])?["phase"] as? String, "open")
        XCTAssertEqual((tap[1]["fired"] as? [String: Any])?["seq"] as? Int, 11)
    }

    func testWhatCannotBeDoneIsStatus1WithAClearMessage() throws {
        let hidden = try daemon.swipectl(["swipe", "seven", "--open", "leading", "--tap", "delete"])
        XCTAssertEqual(hidden.status, .exited(1))
        XCTAssertEqual(
            hidden.standardError,
            "swipectl: the \"delete\" button is not showing (showing: watched | watched-with-friends)\n")
        let unknown = try daemon.swipectl(["swipe", "seven", "--open", "leading", "--tap", "frob"])
        XCTAssertEqual(unknown.status, .exited(1))
        XCTAssertTrue(unknown.standardError.contains("has no \"frob\" action"), unknown.standardError)
        let missing = try daemon.swipectl(["swipe", "alien", "--dx", "-300"])
        XCTAssertEqual(missing.status, .exited(1))
        XCTAssertTrue(missing.standardError.hasPrefix("swipectl: not-found: "), missing.standardError)
        XCTAssertEqual(try daemon.ids().count, 10)
    }

    func testUsageErrorsExit2() throws {
        for (arguments, message) in [
            (["swipe", "seven"], "'swipe' needs --dx POINTS, --open EDGE or --perform ACTION"),
            (
                ["swipe", "seven", "--dx", "-300", "--open", "trailing"],
                "give one of --dx, --open and --perform"
            ),
            (
                ["swipe", "seven", "--perform", "delete", "--dx", "-3"],
                "give one of --dx, --open and --perform"
            ),
            (
                ["swipe", "seven", "--perform", "delete", "--tap", "delete"],
                "--tap does not go with --perform"
            ),
            (["swipe", "seven", "--dx", "left"], "--dx must be a number of points"),
            (["swipe", "seven", "--dx", "-300", "--steps", "0"], "--steps must be 1 to 1000"),
            (["swipe", "seven", "--open", "up"], "--open must be leading or trailing"),
            (["swipe", "seven", "--dx", "-300", "--tap", "delete"], "--tap goes with --open EDGE"),
            (["swipe", "seven", "--open", "leading", "--vx", "5"], "--vx goes with --dx"),
            (["list", "--verbose"], "--verbose does not apply to 'list'"),
        ] {
            let result = try daemon.swipectl(arguments)
            XCTAssertEqual(result.status, .exited(2), "\(arguments)")
            XCTAssertTrue(result.standardError.contains(message), "\(arguments): \(result.standardError)")
        }
    }

    /// protocol.md's configure request for seed 000's demo shows Read | Trash on the trailing
    /// edge, left to right, and its full swipe fires Trash.
    func testProtocolsSeed000ConfigureShowsAndFiresAsSeed000() throws {
        let root = InstallTests.root
        let protocolText = try String(contentsOfFile: "\(root)/protocol.md", encoding: .utf8)
        let line = try XCTUnwrap(
            protocolText.split(separator: "\n").first {
                $0.hasPrefix(#"  {"op":"configure","leading":[{"action":"text""#)
            })
        let client = try LineClient(path: daemon.socket)
        _ = try client.readEvent()  // hello
        try client.send(line.trimmingCharacters(in: .whitespaces))
        XCTAssertEqual(try client.readReply()["ok"] as? Bool, true)
        try client.send(#"{"op":"drag","movie":"seven","dx":-140}"#)
        let buttons = (try client.readReply()["row"] as? [String: Any])?["buttons"] as? [[String: Any]]
        XCTAssertEqual(buttons?.map { $0["action"] as? String }, ["read", "trash"])
        try client.send(#"{"op":"release","movie":"matrix","dx":-300}"#)
        XCTAssertEqual((try client.readReply()["fired"] as? [String: Any])?["action"] as? String, "trash")
        try client.send(#"{"op":"release","movie":"godfather","dx":300}"#)
        XCTAssertEqual((try client.readReply()["fired"] as? [String: Any])?["action"] as? String, "text")
        client.close()
    }
}

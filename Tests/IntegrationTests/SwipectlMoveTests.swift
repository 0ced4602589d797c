// `swipectl move` (issue 48), the real binary against a real swiped: a movie put after another
// (named by id or by title) or first, what it prints and what `--json` prints, the list's new
// order, each refusal with its status and words, what `history`, `watch` and `undo` say of a
// move, and a reader's move refused.

import Foundation
import Glibc
import XCTest

final class SwipectlMoveTests: DaemonTestCase {
    /// The seed's ten movies, in the order they were added.
    private static let seed = [
        "godfather", "dark_knight", "pulp_fiction", "forrest_gump", "inception", "matrix", "seven",
        "silence_of_lambs", "saving_private_ryan", "the_green_mile",
    ]

    /// The seed's order with `id` taken out and put back at `index`.
    private func seed(_ id: String, at index: Int) -> [String] {
        var ids = Self.seed.filter { $0 != id }
        ids.insert(id, at: index)
        return ids
    }

    /// swipectl's status and its standard error, for a command that must fail.
    private func refused(_ arguments: String...) throws -> (Termination, String) {
        let result = try daemon.swipectl(arguments)
        XCTAssertEqual(result.standardOutput, "", "\(arguments)")
        return (result.status, result.standardError)
    }

    func testMoveAfterAMovieOrFirstByIdOrTitle() throws {
        XCTAssertEqual(
            try daemon.ok("move", "se7en", "--after", "The Green"),
            "Moved seven \"Se7en\" after the_green_mile (seq 11).\n")
        XCTAssertEqual(try daemon.ids(), seed("seven", at: 9))
        XCTAssertEqual(
            try daemon.ok("move", "matrix", "--first"), "Moved matrix \"The Matrix\" to the top (seq 12).\n")
        XCTAssertEqual(try daemon.ids().first, "matrix")
        // Ids both, the movie already in that place: a move all the same (a new seq).
        XCTAssertEqual(
            try daemon.ok("move", "--after=godfather", "dark_knight"),
            "Moved dark_knight \"The Dark Knight\" after godfather (seq 13).\n")
        let order = try daemon.ids()
        XCTAssertEqual(Array(order.prefix(3)), ["matrix", "godfather", "dark_knight"])
        // The moved movie's version is the move's seq; the others keep theirs.
        let versions = Dictionary(
            uniqueKeysWithValues: try daemon.movies().map { ($0["id"] as! String, $0["version"] as! Int) })
        XCTAssertEqual(versions["seven"], 11)
        XCTAssertEqual(versions["matrix"], 12)
        XCTAssertEqual(versions["dark_knight"], 13)
        XCTAssertEqual(versions["godfather"], 1)

        // --json prints the daemon's reply as it came.
        let reply = try jsonLines(try daemon.ok("--json", "move", "seven", "--first"))
        XCTAssertEqual(reply.count, 1)
        XCTAssertEqual(reply[0]["ok"] as? Bool, true)
        XCTAssertEqual(reply[0]["seq"] as? Int, 14)
        XCTAssertTrue(reply[0]["after"] is NSNull, "\(reply[0])")
        XCTAssertEqual(reply[0]["from"] as? String, "the_green_mile")
        XCTAssertEqual((reply[0]["movie"] as? [String: Any])?["id"] as? String, "seven")
        XCTAssertEqual(try daemon.ids().first, "seven")
    }

    func testRefusalsSayWhyWithTheStatusOfEveryCommand() throws {
        // After itself: the daemon's bad-request, status 1, nothing written.
        var (status, message) = try refused("move", "matrix", "--after", "The Matrix")
        XCTAssertEqual(status, .exited(1))
        XCTAssertEqual(message, "swipectl: bad-request: a movie cannot go after itself (\"matrix\")\n")
        // A movie, or a place, that matches nothing: not-found, which says which one.
        (status, message) = try refused("move", "alien", "--first")
        XCTAssertEqual(status, .exited(1))
        XCTAssertEqual(
            message,
            "swipectl: not-found: no movie with id \"alien\"\n"
                + "swipectl: no title starts with 'alien' either (see `swipectl list`)\n")
        (status, message) = try refused("move", "matrix", "--after", "alien")
        XCTAssertEqual(status, .exited(1))
        XCTAssertEqual(
            message,
            "swipectl: not-found: after: no movie with id \"alien\"\n"
                + "swipectl: no title starts with 'alien' either (see `swipectl list`)\n")
        // A removed movie, either one: how to bring back the one that is removed.
        _ = try daemon.ok("remove", "inception")
        (status, message) = try refused("move", "matrix", "--after", "inception")
        XCTAssertEqual(status, .exited(1))
        XCTAssertEqual(
            message,
            "swipectl: not-found: after: movie \"inception\" was removed at seq 11\n"
                + "swipectl: bring it back with `swipectl restore inception`\n")
        (status, message) = try refused("move", "inception", "--after", "matrix")
        XCTAssertEqual(status, .exited(1))
        XCTAssertEqual(
            message,
            "swipectl: not-found: movie \"inception\" was removed at seq 11\n"
                + "swipectl: bring it back with `swipectl restore inception`\n")
        // A title that fits several movies changes nothing, as for every command.
        (status, message) = try refused("move", "the", "--first")
        XCTAssertEqual(status, .exited(1))
        XCTAssertTrue(message.hasPrefix("swipectl: 'the' matches 5 titles"), message)
        // No place: a usage error, status 2, before anything is sent.
        (status, message) = try refused("move", "matrix")
        XCTAssertEqual(status, .exited(2))
        XCTAssertEqual(message, "swipectl: 'move' needs --after MOVIE or --first\nTry 'swipectl --help'.\n")
        XCTAssertEqual(try daemon.ids(), Self.seed.filter { $0 != "inception" }, "nothing moved")
    }

    func testHistoryWatchAndUndoSayWhereAMovieWent() throws {
        let watch = try Subprocess(
            try Binaries.swipectl, ["--socket", daemon.socket, "watch"], environment: ["SWIPED_SOCKET": nil])
        try watch.waitForOutput("watching \(daemon.socket) from seq 10", in: .standardError)
        _ = try daemon.ok("move", "seven", "--first")
        _ = try daemon.ok("move", "matrix", "--after", "seven")
        // The undo of a move takes the movie back where it came from (after inception).
        XCTAssertEqual(
            try daemon.ok("undo", "12"),
            "Undid seq 12 (by root): matrix \"The Matrix\" moved back after inception (seq 13).\n")
        XCTAssertEqual(try daemon.ids(), seed("seven", at: 0))
        try watch.waitForOutput("(undoes 12)")
        watch.kill(SIGINT)
        XCTAssertEqual(try watch.wait(timeout: .seconds(5)), .exited(0), watch.standardError)
        let lines = watch.standardOutput.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 3, watch.standardOutput)
        // The change's words in the CHANGE column (the columns' alignment is SwipectlTests').
        let words = lines.map { line in
            line.split(separator: " ", omittingEmptySubsequences: true).dropFirst(3).map(String.init)
        }
        XCTAssertEqual(words[0], ["moved", "to", "the", "top", "seven", "Se7en"])
        XCTAssertEqual(words[1], ["moved", "after", "seven", "matrix", "The", "Matrix"])
        XCTAssertEqual(
            words[2], ["moved", "after", "inception", "(undoes", "12)", "matrix", "The", "Matrix"])

        let history = try daemon.ok("history", "--from", "10")
        let rows = history.split(separator: "\n").map(String.init)
        XCTAssertEqual(rows.count, 4, history)
        XCTAssertTrue(rows[1].hasPrefix("11 ") && rows[1].contains("  root  moved to the top  "), rows[1])
        XCTAssertTrue(
            rows[3].contains("  root  moved after inception (undoes 12)  matrix  The Matrix"), rows[3])
        // A restore says where the movie went in its --json (the table says "restored", as ever).
        _ = try daemon.ok("remove", "matrix")
        let restored = try jsonLines(try daemon.ok("--json", "restore", "matrix"))
        XCTAssertEqual(restored.first?["after"] as? String, "inception")
        XCTAssertTrue(
            try daemon.ok("history", "--from", "14").contains("  root  restored  matrix  The Matrix"))
    }

    func testAReadersMoveIsForbidden() throws {
        let made = try daemon.swipectl(["token", "create", "carol", "--role", "reader"])
        XCTAssertEqual(made.status, .exited(0), made.standardError)
        let token = String(made.standardOutput.split(separator: "\n").last ?? "")
        let (status, message) = try refused("--token", token, "move", "seven", "--first")
        XCTAssertEqual(status, .exited(1))
        XCTAssertTrue(message.hasPrefix("swipectl: forbidden: \"move\" needs the role writer"), message)
        XCTAssertEqual(try daemon.ids(), Self.seed)
    }
}

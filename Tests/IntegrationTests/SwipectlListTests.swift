// `swipectl list` with --from, --limit and --match (issue 33), and MOVIE found by title with
// `list`'s `match` rather than the whole list.

import Foundation
import XCTest

final class SwipectlListTests: DaemonTestCase {
    private func ids(_ table: String) -> [String] {
        table.split(separator: "\n").dropFirst().map { String($0.split(separator: " ")[0]) }
    }

    func testPagesOfTheListWithFromLimitAndMatch() throws {
        XCTAssertEqual(
            try daemon.ok("list", "--match", "THE", "--limit", "2"),
            "ID           TITLE            WATCHED\ngodfather    The Godfather\ndark_knight  The Dark Knight\n"
        )
        XCTAssertEqual(
            ids(try daemon.ok("list", "--match", "the", "--from", "dark_knight", "--limit", "2")),
            ["matrix", "silence_of_lambs"])
        XCTAssertEqual(
            ids(try daemon.ok("list", "--from", "seven")),
            ["silence_of_lambs", "saving_private_ryan", "the_green_mile"])
        let page =
            try JSONSerialization.jsonObject(
                with: Data(try daemon.ok("--json", "list", "--limit", "3").utf8)) as? [String: Any]
        XCTAssertEqual(page?["next"] as? String, "pulp_fiction")
        XCTAssertEqual((page?["movies"] as? [Any])?.count, 3)
    }

    func testBadValuesExit2WithTheirRange() throws {
        let cases: [([String], String)] = [
            (["list", "--limit", "0"], "--limit must be a whole number from 1 to 1000, not '0'"),
            (["list", "--limit", "1001"], "--limit must be a whole number from 1 to 1000, not '1001'"),
            (["list", "--limit", "x"], "--limit must be a whole number from 1 to 1000, not 'x'"),
            (["list", "--match", ""], "--match must be 1 to 1024 bytes long, not 0"),
            (["list", "--from", ""], "--from must be 1 to 1024 bytes long, not 0"),
            (["list", "--match"], "--match needs a value"),
            (["add", "x", "--match", "y"], "--match does not apply to 'add'"),
        ]
        for (arguments, message) in cases {
            let result = try daemon.swipectl(arguments)
            XCTAssertEqual(result.status, .exited(2), "\(arguments)")
            XCTAssertEqual(
                result.standardError, "swipectl: \(message)\nTry 'swipectl --help'.\n", "\(arguments)")
        }
        let unknown = try daemon.swipectl(["list", "--from", "nope"])
        XCTAssertEqual(unknown.status, .exited(1))
        XCTAssertEqual(unknown.standardError, "swipectl: not-found: no movie with id \"nope\"\n")
    }

    func testAMovieNamedByTitleIsFoundWithMatch() throws {
        XCTAssertEqual(try daemon.ok("add", "Amélie"), "Added amelie \"Amélie\" (seq 11).\n")
        // An id whose title does not contain it, a title's start in any case, an exact title
        // among longer ones.
        XCTAssertEqual(try daemon.ok("toggle-watched", "amelie"), "amelie \"Amélie\": watched 👁 (seq 12).\n")
        XCTAssertEqual(try daemon.ok("toggle-watched", "AMÉ"), "amelie \"Amélie\": not watched (seq 13).\n")
        XCTAssertEqual(
            try daemon.ok("add", "Seven Samurai"), "Added seven_samurai \"Seven Samurai\" (seq 14).\n")
        XCTAssertEqual(try daemon.ok("remove", "se7en"), "Removed seven \"Se7en\" (seq 15).\n")
        let ambiguous = try daemon.swipectl(["remove", "the g"])
        XCTAssertEqual(ambiguous.status, .exited(1))
        XCTAssertTrue(
            ambiguous.standardError.hasPrefix("swipectl: 'the g' matches 2 titles"), ambiguous.standardError)
        // A title containing the text but not starting with it is not MOVIE.
        let inner = try daemon.swipectl(["remove", "father"])
        XCTAssertEqual(inner.status, .exited(1))
        XCTAssertTrue(
            inner.standardError.contains("no title starts with 'father' either"), inner.standardError)
    }
}

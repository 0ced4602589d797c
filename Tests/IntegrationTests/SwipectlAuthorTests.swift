// Who made each change (issue 46) as swipectl shows it, the real binary against a real swiped:
// two people, root over the Unix socket and alice through a token (`--token`), make changes;
// `history`'s and `watch`'s BY column, `history --by NAME` paged, `--json` as the daemon said,
// and `undo SEQ` saying whose change it undid.

import Foundation
import Glibc
import XCTest

final class SwipectlAuthorTests: DaemonTestCase {
    /// alice's token, made by root (an admin over the Unix socket).
    private func aliceToken() throws -> String {
        let made = try daemon.swipectl(["token", "create", "alice", "--role", "writer"])
        XCTAssertEqual(made.status, .exited(0), made.standardError)
        return String(made.standardOutput.split(separator: "\n").last ?? "")
    }

    /// swipectl as alice: `--token` on the command line, as the brief's person types it.
    private func asAlice(
        _ token: String, _ arguments: String..., file: StaticString = #filePath, line: UInt = #line
    )
        throws -> String
    {
        let result = try daemon.swipectl(["--token", token] + arguments)
        XCTAssertEqual(result.status, .exited(0), result.standardError, file: file, line: line)
        return result.standardOutput
    }

    /// The table's lines after the header as (seq, by, change, id), its columns found by the
    /// header's offsets (a change and a title hold spaces; the cells are padded to the header's).
    private func rows(_ table: String, file: StaticString = #filePath, line: UInt = #line) throws
        -> [[String]]
    {
        let lines = table.split(separator: "\n").map(String.init)
        let header = try XCTUnwrap(lines.first, "no header", file: file, line: line)
        XCTAssertEqual(
            header.split(separator: " ").map(String.init), ["SEQ", "TIME", "BY", "CHANGE", "ID", "TITLE"],
            file: file, line: line)
        let names = ["SEQ", "TIME", "BY", "CHANGE", "ID", "TITLE"]
        let starts = names.map { header.range(of: $0)!.lowerBound.utf16Offset(in: header) }
        return lines.dropFirst().map { row in
            let cells = Array(row.utf16)
            return [0, 2, 3, 4].map { column in
                let cell = cells[starts[column]..<min(starts[column + 1], cells.count)]
                return String(decoding: cell, as: UTF16.self).trimmingCharacters(in: .whitespaces)
            }
        }
    }

    /// root watches matrix (11), alice removes Inception (12) and marks The Godfather watched with
    /// friends (13), root undoes alice's removal (14).
    private func twoPeoplesChanges() throws -> String {
        let alice = try aliceToken()
        XCTAssertEqual(
            try daemon.ok("toggle-watched", "matrix"), "matrix \"The Matrix\": watched 👁 (seq 11).\n")
        XCTAssertEqual(
            try asAlice(alice, "remove", "inception"), "Removed inception \"Inception\" (seq 12).\n")
        _ = try asAlice(alice, "toggle-friends", "The God")
        XCTAssertEqual(
            try daemon.ok("undo", "12"),
            "Undid seq 12 (by alice): inception \"Inception\" restored (seq 14).\n")
        return alice
    }

    func testHistoryShowsWhoMadeEachChangeAndByNamePagesOnePersons() throws {
        let alice = try twoPeoplesChanges()
        XCTAssertEqual(
            try rows(try daemon.ok("history", "--from", "9")),
            [
                ["10", "-", "added", "the_green_mile"],  // the seed: nobody's
                ["11", "root", "watched", "matrix"],
                ["12", "alice", "removed", "inception"],
                ["13", "alice", "watched with friends", "godfather"],
                ["14", "root", "restored (undoes 12)", "inception"],
            ])
        // One person's changes, whoever asks, paged as history is.
        let alices = [
            ["12", "alice", "removed", "inception"], ["13", "alice", "watched with friends", "godfather"],
        ]
        XCTAssertEqual(try rows(try daemon.ok("history", "--by", "alice")), alices)
        XCTAssertEqual(try rows(try asAlice(alice, "history", "--by", "alice")), alices)
        XCTAssertEqual(try rows(try daemon.ok("history", "--by", "alice", "--limit", "1")), [alices[0]])
        XCTAssertEqual(try rows(try daemon.ok("history", "--by", "alice", "--from", "12")), [alices[1]])
        XCTAssertEqual(
            try rows(try daemon.ok("history", "--by", "root")),
            [["11", "root", "watched", "matrix"], ["14", "root", "restored (undoes 12)", "inception"]])
        // Nobody's changes: the header alone in a pipe, as an empty list is.
        XCTAssertEqual(try rows(try daemon.ok("history", "--by", "nobody")), [])

        // --json: the daemon's line as it came, `by` and all.
        let reply = try XCTUnwrap(try jsonLines(try daemon.ok("--json", "history", "--by", "alice")).first)
        let events = try XCTUnwrap(reply["events"] as? [[String: Any]])
        XCTAssertEqual(events.map { $0["seq"] as? Int }, [12, 13])
        XCTAssertEqual(events.map { $0["by"] as? String }, ["alice", "alice"])
        let undo = try XCTUnwrap(try jsonLines(try daemon.ok("--json", "history", "--from", "13")).first)
        XCTAssertEqual((undo["events"] as? [[String: Any]])?.first?["by"] as? String, "root")
        let seed = try XCTUnwrap(try jsonLines(try daemon.ok("--json", "history", "--limit", "1")).first)
        XCTAssertNil(
            (seed["events"] as? [[String: Any]])?.first?["by"], "an event without by has none, not null")
    }

    /// `undo SEQ --json`: the reply as it came, with `undoesBy`; an undo of one's own change
    /// names oneself.
    func testUndoSaysWhoseChangeItUndid() throws {
        let alice = try aliceToken()
        _ = try daemon.ok("toggle-watched", "seven")  // 11, root's
        let reply = try XCTUnwrap(try jsonLines(try asAlice(alice, "--json", "undo", "11")).first)
        XCTAssertEqual(reply["by"] as? String, "alice")
        XCTAssertEqual(reply["undoesBy"] as? String, "root")
        XCTAssertEqual(
            try asAlice(alice, "toggle-watched", "seven"), "seven \"Se7en\": watched 👁 (seq 13).\n")
        XCTAssertEqual(
            try asAlice(alice, "undo", "13"), "Undid seq 13 (by alice): seven \"Se7en\" unwatched (seq 14).\n"
        )
    }

    /// `watch --once`: the changes caught up from `--from` and the live ones, each with who made
    /// it, also a change alice makes while it watches; the watcher's own person does not matter.
    func testWatchShowsWhoMadeEachChange() throws {
        let alice = try twoPeoplesChanges()
        let watch = try Subprocess(
            try Binaries.swipectl, ["--socket", daemon.socket, "watch", "--from", "10", "--once"],
            environment: ["SWIPED_SOCKET": nil, "SWIPED_TOKEN": alice])
        try watch.waitForOutput("  inception  ")
        try watch.waitForOutput("watching \(daemon.socket) from seq 10", in: .standardError)
        _ = try asAlice(alice, "add", "Heat")  // 15, live
        try watch.waitForOutput("  heat  ")
        XCTAssertEqual(try daemon.stop(), .exited(0))
        XCTAssertEqual(try watch.wait(timeout: .seconds(5)), .exited(3), watch.standardError)
        daemon = try TestDaemon(restarting: daemon)  // for tearDown
        // No header in a pipe: the lines as the header would have aligned them.
        let table = "SEQ  TIME  BY  CHANGE  ID  TITLE\n" + watch.standardOutput
        let lines = watch.standardOutput.split(separator: "\n").map(String.init)
        XCTAssertEqual(
            lines.map { $0.split(separator: " ", omittingEmptySubsequences: true)[2] },
            ["root", "alice", "alice", "root", "alice"], table)
        // The columns line up: BY and CHANGE start at the same offset on every line.
        for word in ["root", "alice"] {
            let offsets = Set(
                lines.compactMap { line in
                    line.range(of: "Z  \(word) ").map { $0.lowerBound.utf16Offset(in: line) }
                })
            XCTAssertEqual(offsets.count, 1, watch.standardOutput)
        }
        XCTAssertTrue(lines.last?.hasSuffix("  Heat") ?? false, table)
    }
}

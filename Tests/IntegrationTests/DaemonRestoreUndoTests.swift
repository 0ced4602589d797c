// Restore and undo against the real daemon (issue 14): a removed movie restored as it was and
// where it was, after a restart; a connection's undo walking back through its own changes, its
// conflicts with their reasons, and the `undoes` link in replies, history and movie events.

import Foundation
import XCTest

final class DaemonRestoreUndoTests: DaemonClientTestCase {
    override class var prefix: String { "swiped-undo" }

    private func ids() throws -> [String] {
        (try client.ok(["op": "list"])["movies"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
    }

    func testRestoreBringsARemovedMovieBackAsItWasAfterARestart() throws {
        let seed = try ids()
        try client.ok(["op": "toggle-watched", "movie": "matrix"])  // 11
        try client.ok(["op": "remove", "movie": "matrix"])  // 12
        client = nil
        daemon = try daemon.restart()
        client = try daemon.connect()
        let watcher = try daemon.connect()
        try watcher.ok(["op": "subscribe"])

        let stale = try client.request(["op": "restore", "movie": "matrix", "expect": 11])
        XCTAssertEqual(LineClient.errorCode(of: stale), "conflict")
        XCTAssertEqual(reason(stale), "version")
        let back = try client.ok(["op": "restore", "movie": "matrix", "expect": 12, "id": 1])
        XCTAssertEqual(int(back["seq"]), 13)
        XCTAssertNil(back["undoes"])
        XCTAssertEqual(movie(back)["watched"] as? Bool, true, "its flags as when removed")
        XCTAssertEqual(int(movie(back)["version"]), 13)
        XCTAssertEqual(try ids(), seed, "at its old place")

        let event = try watcher.readEvent()
        XCTAssertEqual(event["kind"] as? String, "restored")
        XCTAssertEqual(int(event["seq"]), 13)
        let history = try client.ok(["op": "history", "from": 12])
        XCTAssertEqual((history["events"] as? [[String: Any]])?.first?["kind"] as? String, "restored")

        let live = try client.request(["op": "restore", "movie": "matrix"])
        XCTAssertEqual(LineClient.errorCode(of: live), "conflict")
        XCTAssertEqual(reason(live), "not-removed")
        XCTAssertEqual(
            LineClient.errorCode(of: try client.request(["op": "restore", "movie": "alien"])), "not-found")

        client = nil
        daemon = try daemon.restart()
        client = try daemon.connect()
        XCTAssertEqual(try ids(), seed, "the log is the truth: the restore is replayed")
    }

    func testUndoWalksBackThroughThisConnectionsChangesUntilSomeoneElsesChange() throws {
        let other = try daemon.connect()
        let watcher = try daemon.connect()
        try watcher.ok(["op": "subscribe"])
        try client.ok(["op": "toggle-watched", "movie": "seven"])  // 11
        try client.ok(["op": "add", "title": "Alien"])  // 12
        try client.ok(["op": "remove", "movie": "matrix"])  // 13
        try other.ok(["op": "toggle-watched-with-friends", "movie": "seven"])  // 14

        let first = try client.ok(["op": "undo", "id": "u1"])
        XCTAssertEqual(first["id"] as? String, "u1")
        XCTAssertEqual(int(first["seq"]), 15)
        XCTAssertEqual(int(first["undoes"]), 13)
        XCTAssertEqual(movie(first)["id"] as? String, "matrix")
        let second = try client.ok(["op": "undo"])
        XCTAssertEqual(int(second["undoes"]), 12)
        XCTAssertEqual(movie(second)["id"] as? String, "alien")
        let refused = try client.request(["op": "undo"])
        XCTAssertEqual(LineClient.errorCode(of: refused), "conflict")
        XCTAssertEqual(reason(refused), "changed-since")
        let none = try client.request(["op": "undo"])
        XCTAssertEqual(reason(none), "nothing-to-undo")
        XCTAssertEqual(int(try client.ok(["op": "list"])["seq"]), 16, "the refusals wrote nothing")

        var kinds: [String] = []
        var undoes: [Int?] = []
        for _ in 11...16 {
            let event = try watcher.readEvent()
            kinds.append(event["kind"] as? String ?? "?")
            undoes.append(int(event["undoes"]))
        }
        XCTAssertEqual(
            kinds,
            ["watched-toggled", "added", "removed", "watched-with-friends-toggled", "restored", "removed"])
        XCTAssertEqual(undoes, [nil, nil, nil, nil, 13, 12])
        let history = try client.ok(["op": "history", "from": 14])["events"] as? [[String: Any]] ?? []
        XCTAssertEqual(history.map { int($0["undoes"]) }, [13, 12])
        // The other connection's undo is its own.
        XCTAssertEqual(int(try other.ok(["op": "undo"])["undoes"]), 14)
    }

    /// An undo pipelined behind this connection's own change waits for it and undoes it.
    func testAPipelinedUndoUndoesTheChangeSentJustBeforeIt() throws {
        try client.sendRaw(
            Array(#"{"op":"toggle-watched","movie":"seven","id":1}"#.utf8) + [0x0A]
                + Array(#"{"op":"undo","id":2}"#.utf8) + [0x0A])
        let toggled = try client.readReply()
        let undone = try client.readReply()
        XCTAssertEqual(int(toggled["id"]), 1)
        XCTAssertEqual(int(toggled["seq"]), 11)
        XCTAssertEqual(int(undone["id"]), 2)
        XCTAssertEqual(int(undone["seq"]), 12)
        XCTAssertEqual(int(undone["undoes"]), 11)
        XCTAssertEqual(movie(undone)["watched"] as? Bool, false)
    }

    /// protocol.md's sample of restore and undo, line for line against a fresh daemon.
    func testProtocolMdsRestoreAndUndoSampleReplays() throws {
        let text = try String(contentsOfFile: ProtocolDocument.path, encoding: .utf8)
        let start = try XCTUnwrap(text.range(of: "- `restore` brings a removed movie back"))
        let block = try XCTUnwrap(text.range(of: "```console\n", range: start.upperBound..<text.endIndex))
        let end = try XCTUnwrap(text.range(of: "```", range: block.upperBound..<text.endIndex))
        let lines = text[block.upperBound..<end.lowerBound].split(separator: "\n")
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        XCTAssertEqual(lines.count, 10)
        for pair in stride(from: 0, to: lines.count - 1, by: 2) {
            try client.send(lines[pair])
            XCTAssertEqual(try client.readLine(), lines[pair + 1], lines[pair])
        }
    }
}

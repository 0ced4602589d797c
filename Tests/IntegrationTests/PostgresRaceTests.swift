// Decisions hold across daemons (issue 17): two daemons given competing commands at the same
// moment decide them against one state. `expect` lets exactly one of two toggles through, the
// same idempotency `key` writes once, and `add` never gives one id twice.

import Foundation
import Glibc
import XCTest

final class PostgresRaceTests: PostgresTestCase {
    /// Sends `a` to daemon 0 and `b` to daemon 1 without waiting, then reads both replies: the
    /// two commands are in flight together, and the database orders them.
    func race(_ a: [String: Any], _ b: [String: Any]) throws -> ([String: Any], [String: Any]) {
        let first = try daemons[0].connect()
        let second = try daemons[1].connect()
        try first.send(json: a)
        try second.send(json: b)
        return (try first.readReply(timeout: .seconds(30)), try second.readReply(timeout: .seconds(30)))
    }

    /// Waits until every daemon's `list` is at `seq` or later (its `movie` events arrived).
    func waitUntilEveryDaemonHas(_ seq: Int) throws {
        for daemon in daemons {
            let client = try daemon.connect()
            _ = try poll(until: .seconds(10), "\(daemon.socketPath) to reach seq \(seq)") {
                (int(try client.ok(["op": "list"])["seq"]) ?? 0) >= seq ? true : nil
            }
        }
    }

    func seq(_ reply: [String: Any]) -> Int? { reply["ok"] as? Bool == true ? int(reply["seq"]) : nil }
    func movie(_ reply: [String: Any]) -> [String: Any] { reply["movie"] as? [String: Any] ?? [:] }
    func error(_ reply: [String: Any]) -> [String: Any] { reply["error"] as? [String: Any] ?? [:] }

    func testExpectLetsExactlyOneOfTwoRacingTogglesThrough() throws {
        try startDaemons(2)
        let list = try daemons[0].connect().ok(["op": "list"])["movies"] as? [[String: Any]] ?? []
        var version = try XCTUnwrap(int(list.first { $0["id"] as? String == "matrix" }?["version"]))
        var wins = [0, 0]
        for round in 0..<30 {
            let command: [String: Any] = ["op": "toggle-watched", "movie": "matrix", "expect": version]
            let (a, b) = try race(command, command)
            let winners = [a, b].filter { $0["ok"] as? Bool == true }
            XCTAssertEqual(winners.count, 1, "round \(round): \(a) / \(b)")
            guard let winner = winners.first, let next = seq(winner) else { break }
            let loser = winner as NSDictionary == a as NSDictionary ? b : a
            wins[winner as NSDictionary == a as NSDictionary ? 0 : 1] += 1
            XCTAssertEqual(error(loser)["code"] as? String, "conflict", "round \(round): \(loser)")
            XCTAssertEqual(error(loser)["reason"] as? String, "version", "round \(round): \(loser)")
            XCTAssertEqual(int(movie(winner)["version"]), next)
            version = next
        }
        let log = try wholeHistory(sockets[1])
        XCTAssertEqual(log.count, 10 + 30, "one event per round")
        for problem in checkFold(log).problems { XCTFail(problem) }
        print("postgres expect race: daemon 0 won \(wins[0]) rounds, daemon 1 \(wins[1])")
    }

    /// A daemon never refuses against its own view, which may not have another daemon's
    /// latest change yet: right after daemon 0 answers, daemon 1 accepts an `expect` of the
    /// version daemon 0 gave, and a toggle of the movie daemon 0 just added (its refusal would
    /// say something false about the shared state: `conflict version`, `not-found`).
    func testADaemonDecidesAtCommitWhatItsOwnViewWouldRefuse() throws {
        try startDaemons(2)
        let a = try daemons[0].connect()
        let b = try daemons[1].connect()
        for round in 0..<10 {
            let toggled = try a.ok(["op": "toggle-watched", "movie": "matrix"])
            let version = try XCTUnwrap(int(movie(toggled)["version"]))
            let reply = try b.request(["op": "toggle-watched", "movie": "matrix", "expect": version])
            XCTAssertEqual(reply["ok"] as? Bool, true, "round \(round): \(reply)")
            let added = try a.ok(["op": "add", "title": "Race \(round)"])
            let id = try XCTUnwrap(movie(added)["id"] as? String)
            let toggle = try b.request(["op": "toggle-watched", "movie": id])
            XCTAssertEqual(toggle["ok"] as? Bool, true, "round \(round): \(toggle)")
        }
        // What no state makes right is still refused at once.
        XCTAssertEqual(error(try b.request(["op": "add", "title": " "]))["code"] as? String, "bad-request")
        let log = try wholeHistory(sockets[1])
        XCTAssertEqual(log.count, 10 + 40)
        for problem in checkFold(log).problems { XCTFail(problem) }
    }

    func testTheSameKeyOnTwoDaemonsWritesOnce() throws {
        try startDaemons(2)
        for round in 0..<20 {
            let command: [String: Any] = [
                "op": "toggle-watched-with-friends", "movie": "seven", "key": "k\(round)",
            ]
            let (a, b) = try race(command, command)
            XCTAssertNotNil(seq(a), "round \(round): \(a)")
            XCTAssertEqual(seq(a), seq(b), "round \(round): the same key gave two seqs: \(a) / \(b)")
            XCTAssertEqual(movie(a) as NSDictionary, movie(b) as NSDictionary, "round \(round)")
        }
        // The same key with another command: the one that comes second is a conflict.
        let (a, b) = try race(
            ["op": "toggle-watched", "movie": "seven", "key": "other"],
            ["op": "toggle-watched", "movie": "matrix", "key": "other"])
        let outcomes = [a, b].map {
            seq($0) != nil ? "ok" : "\(error($0)["code"] ?? "?") \(error($0)["reason"] ?? "?")"
        }
        XCTAssertEqual(outcomes.sorted(), ["conflict key", "ok"], "\(a) / \(b)")
        // A key replays from the other daemon, later too.
        let again = try daemons[1].connect().request([
            "op": "toggle-watched-with-friends", "movie": "seven", "key": "k3",
        ])
        XCTAssertEqual(seq(again), 10 + 4, "\(again)")

        let log = try wholeHistory(sockets[0])
        XCTAssertEqual(log.count, 10 + 20 + 1, "each key wrote once")
        for problem in checkFold(log).problems { XCTFail(problem) }
    }

    func testAddsRacingOnTwoDaemonsGetDistinctIDs() throws {
        try startDaemons(2)
        var ids: Set<String> = []
        var seqs: Set<Int> = []
        for round in 0..<20 {
            let command: [String: Any] = ["op": "add", "title": "Dune"]
            let (a, b) = try race(command, command)
            for reply in [a, b] {
                let id = try XCTUnwrap(movie(reply)["id"] as? String, "round \(round): \(reply)")
                XCTAssertTrue(ids.insert(id).inserted, "round \(round): id \(id) given twice")
                XCTAssertTrue(
                    seqs.insert(try XCTUnwrap(seq(reply))).inserted, "round \(round): seq given twice")
            }
        }
        XCTAssertEqual(ids.count, 40)
        XCTAssertTrue(ids.contains("dune") && ids.contains("dune_40"), "\(ids.sorted())")
        let log = try wholeHistory(sockets[1])
        for problem in checkFold(log).problems { XCTFail(problem) }
        XCTAssertEqual(Set(log.filter { $0.kind == .added }.map(\.movie.id)).count, 10 + 40)
    }

    /// An undo is decided against the log at commit: after another daemon changed the movie,
    /// undoing one's own earlier change is `conflict` `changed-since`, also when the undo is
    /// sent right after that change, before this daemon may have heard of it.
    func testAnUndoAfterAnotherDaemonsChangeIsRefused() throws {
        try startDaemons(2)
        for round in 0..<10 {
            let mine = try daemons[0].connect()
            let theirs = try daemons[1].connect()
            let toggled = try mine.ok(["op": "toggle-watched", "movie": "matrix"])
            try theirs.ok(["op": "toggle-watched", "movie": "matrix"])
            let undo = try mine.request(["op": "undo"])
            XCTAssertEqual(error(undo)["code"] as? String, "conflict", "round \(round): \(undo)")
            XCTAssertEqual(error(undo)["reason"] as? String, "changed-since", "round \(round): \(undo)")
            // With no one in between, the same undo goes through.
            let again = try mine.ok(["op": "toggle-watched-with-friends", "movie": "seven"])
            let undone = try mine.ok(["op": "undo"])
            XCTAssertEqual(int(undone["undoes"]), seq(again), "round \(round)")
            XCTAssertNotNil(seq(toggled))
        }
        for problem in checkFold(try wholeHistory(sockets[0])).problems { XCTFail(problem) }
    }

    /// Two daemons restoring one removed movie at once: one restores it, the other is told it
    /// is not removed.
    func testRestoresRacingOnTwoDaemonsRestoreOnce() throws {
        try startDaemons(2)
        for round in 0..<15 {
            let removed = try daemons[round % 2].connect().ok(["op": "remove", "movie": "inception"])
            let command: [String: Any] = ["op": "restore", "movie": "inception"]
            let (a, b) = try race(command, command)
            let outcomes = [a, b].map {
                seq($0) != nil ? "ok" : "\(error($0)["code"] ?? "?") \(error($0)["reason"] ?? "?")"
            }
            XCTAssertEqual(outcomes.sorted(), ["conflict not-removed", "ok"], "round \(round): \(a) / \(b)")
            XCTAssertNotNil(seq(removed))
            // The next round removes it through the other daemon, which decides the removal
            // under the lock either way; waiting until the restore has reached it starts each
            // round with one state on both, so that the round's two restores race alone.
            let restored = try XCTUnwrap(seq(a) ?? seq(b))
            try waitUntilEveryDaemonHas(restored)
        }
        let log = try wholeHistory(sockets[1])
        XCTAssertEqual(log.count, 10 + 15 * 2, "a removal and one restore per round")
        for problem in checkFold(log).problems { XCTFail(problem) }
    }
}

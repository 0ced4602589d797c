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
        XCTAssertEqual(Set(log.filter { $0.kind == "added" }.map(\.movie.id)).count, 10 + 40)
    }
}

// The ops on the shared movie state, against the real daemon: ping, help (checked against
// protocol.md), list, add, toggle-watched, toggle-watched-with-friends, remove, and the
// mutation options `expect` (conflict) and `key` (idempotent replay, also after a restart).

import Foundation
import Glibc
import XCTest

final class DaemonStateOpsTests: DaemonClientTestCase {
    override class var prefix: String { "swiped-ops" }

    private func list() throws -> (seq: Int, movies: [[String: Any]]) {
        let reply = try client.ok(["op": "list"])
        return (int(reply["seq"]) ?? -1, reply["movies"] as? [[String: Any]] ?? [])
    }

    func testPingAnswersExactlyOk() throws {
        try client.send(#"{"op":"ping"}"#)
        XCTAssertEqual(try client.readLine(), #"{"ok":true}"#)
        try client.send(#"{"op":"ping","id":7}"#)
        XCTAssertEqual(try client.readLine(), #"{"id":7,"ok":true}"#)
    }

    func testHelpListsEveryOpOfProtocolMdWithItsArguments() throws {
        let reply = try client.ok(["op": "help"])
        XCTAssertEqual(int(reply["protocol"]), 1)
        let ops = try XCTUnwrap(reply["ops"] as? [[String: Any]])
        var help: [String: [[String: Any]]] = [:]
        for op in ops {
            let name = try XCTUnwrap(op["op"] as? String)
            XCTAssertNotNil(op["scope"] as? String, name)
            XCTAssertNotNil(op["mutates"] as? Bool, name)
            XCTAssertFalse((op["summary"] as? String ?? "").isEmpty, name)
            help[name] = try XCTUnwrap(op["args"] as? [[String: Any]], name)
        }

        let documented = try ProtocolDocument.load().ops
        XCTAssertEqual(Set(help.keys), Set(documented.keys), "help and protocol.md disagree on the ops")
        XCTAssertEqual(documented.count, 35)
        for (name, row) in documented {
            guard let args = help[name] else { continue }
            for arg in args {
                let argName = try XCTUnwrap(arg["name"] as? String)
                let required = try XCTUnwrap(arg["required"] as? Bool)
                XCTAssertNotNil(arg["type"] as? String, "\(name).\(argName)")
                XCTAssertTrue(
                    row.contains("`\(argName)`"), "protocol.md does not document \(name)'s \(argName): \(row)"
                )
                XCTAssertEqual(
                    !row.contains("`\(argName)`?"), required,
                    "\(name).\(argName): required in help \(required), protocol.md row: \(row)")
            }
        }
        let expected: [String: [String]] = [
            "ping": [], "help": [], "options": ["rows", "crossings"], "list": ["after", "limit", "match"],
            "unsubscribe": [],
            "rows": [],
            "add": ["title", "image", "key"],
            "toggle-watched": ["movie", "expect", "key"],
            "toggle-watched-with-friends": ["movie", "expect", "key"],
            "remove": ["movie", "expect", "key"],
            "restore": ["movie", "expect", "key"], "undo": ["seq", "key"],
            "subscribe": ["from"], "history": ["from", "limit", "by"],
            "viewport": ["width", "direction"],
            "configure": [
                "leading", "trailing", "allowsFullSwipeLeading", "allowsFullSwipeTrailing", "buttonWidth",
                "fullSwipeStyleLeading", "fullSwipeStyleTrailing",
            ],
            "drag": ["movie", "dx", "dy"], "peek": ["movie", "edge"], "release": ["movie", "dx", "vx"],
            "tap": ["movie", "action"],
            "close": ["movie"],
            "auth": ["token"], "token-create": ["name", "role", "expiresIn"], "token-list": [],
            "token-revoke": ["name", "tokenId"], "role": ["name", "role"], "denials": [],
        ]
        for (name, args) in expected {
            XCTAssertEqual(
                Set(help[name]?.compactMap { $0["name"] as? String } ?? ["<missing>"]), Set(args), name)
        }
    }

    func testListGivesTheSeedCatalogueInOrder() throws {
        let (seq, movies) = try list()
        XCTAssertEqual(seq, 10)
        XCTAssertEqual(movies.count, 10)
        XCTAssertEqual(movies.first?["id"] as? String, "godfather")
        XCTAssertEqual(movies.last?["id"] as? String, "the_green_mile")
        for (index, movie) in movies.enumerated() {
            XCTAssertEqual(
                Set(movie.keys), ["id", "title", "image", "watched", "watchedWithFriends", "version"],
                "\(movie)")
            XCTAssertEqual(int(movie["version"]), index + 1)
            XCTAssertEqual(movie["image"] as? String, movie["id"] as? String)
            XCTAssertEqual(movie["watched"] as? Bool, false)
        }
        XCTAssertEqual(movies.first?["title"] as? String, "The Godfather")
    }

    func testAddMakesUniqueSlugIdsThatAreNeverReused() throws {
        let first = try client.ok(["op": "add", "title": "Blade Runner 2049", "id": 1])
        XCTAssertEqual(int(first["seq"]), 11)
        XCTAssertEqual(movie(first)["id"] as? String, "blade_runner_2049")
        XCTAssertEqual(movie(first)["image"] as? String, "blade_runner_2049", "image defaults to the id")
        XCTAssertEqual(int(movie(first)["version"]), 11)
        let second = try client.ok(["op": "add", "title": "Blade Runner 2049", "image": "poster"])
        XCTAssertEqual(movie(second)["id"] as? String, "blade_runner_2049_2")
        XCTAssertEqual(movie(second)["image"] as? String, "poster")

        try client.ok(["op": "remove", "movie": "blade_runner_2049"])
        let third = try client.ok(["op": "add", "title": "Blade Runner 2049"])
        XCTAssertEqual(movie(third)["id"] as? String, "blade_runner_2049_3", "a removed id is not reused")

        let unicode = try client.ok(["op": "add", "title": "Amélie — Le Fabuleux Destin!"])
        let id = try XCTUnwrap(movie(unicode)["id"] as? String)
        XCTAssertFalse(id.isEmpty)
        XCTAssertTrue(
            id.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7a) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5f }, id)
        XCTAssertEqual(movie(unicode)["title"] as? String, "Amélie — Le Fabuleux Destin!")

        let (_, movies) = try list()
        XCTAssertEqual(movies.last?["id"] as? String, id, "added at the end of the list")
        XCTAssertEqual(
            try client.ok(["op": "add", "title": String(repeating: "x", count: 200)])["ok"] as? Bool, true)
    }

    func testAddRefusesBadTitlesAndWritesNothing() throws {
        let before = try list().seq
        let bad: [Any] = ["", "   ", "\t\n", String(repeating: "x", count: 201), 42, NSNull(), ["a"]]
        for title in bad {
            let reply = try client.request(["op": "add", "title": title, "id": "t"])
            XCTAssertEqual(LineClient.errorCode(of: reply), "bad-request", "title \(title): \(reply)")
            XCTAssertEqual(reply["id"] as? String, "t")
        }
        let missing = try client.request(["op": "add"])
        XCTAssertEqual(LineClient.errorCode(of: missing), "bad-request")
        XCTAssertTrue(LineClient.errorMessage(of: missing).contains("title"), "\(missing)")
        XCTAssertEqual(try list().seq, before)
    }

    func testTogglesFlipTheFlagsAndBumpTheVersion() throws {
        let on = try client.ok(["op": "toggle-watched", "movie": "matrix"])
        XCTAssertEqual(int(on["seq"]), 11)
        XCTAssertEqual(movie(on)["watched"] as? Bool, true)
        XCTAssertEqual(int(movie(on)["version"]), 11)
        let off = try client.ok(["op": "toggle-watched", "movie": "matrix"])
        XCTAssertEqual(int(off["seq"]), 12)
        XCTAssertEqual(movie(off)["watched"] as? Bool, false)

        let friends = try client.ok(["op": "toggle-watched-with-friends", "movie": "seven"])
        XCTAssertEqual(int(friends["seq"]), 13)
        XCTAssertEqual(movie(friends)["watchedWithFriends"] as? Bool, true)
        XCTAssertEqual(movie(friends)["watched"] as? Bool, false)
        let (seq, movies) = try list()
        XCTAssertEqual(seq, 13)
        let seven = try XCTUnwrap(movies.first { $0["id"] as? String == "seven" })
        XCTAssertEqual(seven["watchedWithFriends"] as? Bool, true)
        XCTAssertEqual(int(seven["version"]), 13)
    }

    func testRemoveReturnsTheLastStateAndThenNotFound() throws {
        try client.ok(["op": "toggle-watched", "movie": "inception"])
        let removed = try client.ok(["op": "remove", "movie": "inception"])
        XCTAssertEqual(int(removed["seq"]), 12)
        XCTAssertEqual(movie(removed)["id"] as? String, "inception")
        XCTAssertEqual(movie(removed)["watched"] as? Bool, true, "the last state")
        XCTAssertFalse(try list().movies.contains { $0["id"] as? String == "inception" })

        try expectOneNotFound()
        // The seq of the removal survives the snapshot the daemon writes on shutdown.
        client = nil
        daemon = try daemon.restart()
        client = try daemon.connect()
        try expectOneNotFound()
        XCTAssertEqual(try list().seq, 12)
    }

    /// Every op on the removed "inception" (seq 12) and on "alien", which never existed, says
    /// the one not-found of its movie (issue 13).
    private func expectOneNotFound() throws {
        let ops: [[String: Any]] = [
            ["op": "remove"], ["op": "toggle-watched"], ["op": "toggle-watched-with-friends"],
            ["op": "drag", "dx": -60], ["op": "release", "dx": -300], ["op": "tap", "action": "delete"],
            ["op": "close"],
        ]
        for (movie, message) in [
            ("inception", #"movie "inception" was removed at seq 12"#),
            ("alien", #"no movie with id "alien""#),
        ] {
            for var request in ops {
                let op = request["op"] as? String ?? ""
                request["movie"] = movie
                request["id"] = op
                let reply = try client.request(request)
                XCTAssertEqual(LineClient.errorCode(of: reply), "not-found", "\(op): \(reply)")
                XCTAssertEqual(LineClient.errorMessage(of: reply), message, "\(op): \(reply)")
                XCTAssertEqual(reply["id"] as? String, op)
            }
        }
    }

    func testExpectGivesConflictOnAStaleVersion() throws {
        // matrix was added by seq 6.
        let ok = try client.ok(["op": "toggle-watched", "movie": "matrix", "expect": 6])
        XCTAssertEqual(int(ok["seq"]), 11)
        for op in ["toggle-watched", "toggle-watched-with-friends", "remove"] {
            let stale = try client.request(["op": op, "movie": "matrix", "expect": 6])
            XCTAssertEqual(LineClient.errorCode(of: stale), "conflict", "\(op): \(stale)")
        }
        XCTAssertEqual(try list().seq, 11, "a conflict writes nothing")
        let removed = try client.ok(["op": "remove", "movie": "matrix", "expect": 11])
        XCTAssertEqual(int(removed["seq"]), 12)
    }

    func testKeyReplaysTheOriginalReplyAlsoAfterARestart() throws {
        let first = try client.ok(["op": "toggle-watched", "movie": "seven", "key": "k-1"])
        XCTAssertEqual(int(first["seq"]), 11)
        try client.ok(["op": "toggle-watched", "movie": "seven"])  // seq 12: seven is unwatched again
        let again = try client.ok(["op": "toggle-watched", "movie": "seven", "key": "k-1"])
        XCTAssertEqual(int(again["seq"]), 11, "the same seq")
        XCTAssertEqual(movie(again)["watched"] as? Bool, true, "the movie as it was then")
        XCTAssertEqual(try list().seq, 12, "a replay writes nothing")

        let other = try client.request(["op": "toggle-watched", "movie": "matrix", "key": "k-1"])
        XCTAssertEqual(LineClient.errorCode(of: other), "conflict", "\(other)")
        let otherKind = try client.request(["op": "remove", "movie": "seven", "key": "k-1"])
        XCTAssertEqual(LineClient.errorCode(of: otherKind), "conflict", "\(otherKind)")
        let added = try client.ok(["op": "add", "title": "Heat", "key": "add-heat"])

        client = nil
        daemon = try daemon.restart()
        client = try daemon.connect()
        let afterRestart = try client.ok(["op": "toggle-watched", "movie": "seven", "key": "k-1"])
        XCTAssertEqual(int(afterRestart["seq"]), 11)
        let addAgain = try client.ok(["op": "add", "title": "Heat", "key": "add-heat"])
        XCTAssertEqual(int(addAgain["seq"]), int(added["seq"]))
        XCTAssertEqual(movie(addAgain)["id"] as? String, "heat")
        XCTAssertEqual(try list().seq, 13)

        for key in ["", String(repeating: "k", count: 129)] {
            let reply = try client.request(["op": "toggle-watched", "movie": "seven", "key": key])
            XCTAssertEqual(LineClient.errorCode(of: reply), "bad-request", "key of \(key.utf8.count) bytes")
        }
        XCTAssertEqual(
            int(
                try client.ok([
                    "op": "toggle-watched", "movie": "seven", "key": String(repeating: "k", count: 128),
                ])["seq"]),
            14)
    }
}

/// protocol.md, read from the package: the op tables.
struct ProtocolDocument {
    /// Each op of the two op tables and its "arguments" cell.
    let ops: [String: String]

    static var path: String {
        // Tests/IntegrationTests/<this file> → the package root.
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("protocol.md").path
    }

    static func load() throws -> ProtocolDocument {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var ops: [String: String] = [:]
        var inOpSection = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("## ") { inOpSection = line.hasPrefix("## Ops on") }
            guard inOpSection, line.hasPrefix("| `") else { continue }
            // | `op` | arguments | reply |  (escaped pipes "\|" inside cells are not separators)
            let cells = line.replacingOccurrences(of: "\\|", with: "¦").split(
                separator: "|", omittingEmptySubsequences: false)
            guard cells.count >= 4 else { continue }
            let name = cells[1].trimmingCharacters(in: .whitespaces).trimmingCharacters(
                in: CharacterSet(charactersIn: "`"))
            ops[name] = String(cells[2])
        }
        return ProtocolDocument(ops: ops)
    }
}

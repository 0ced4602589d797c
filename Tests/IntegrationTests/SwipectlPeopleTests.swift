// swipectl's people (issue 45), the real binary against a real swiped: tokens made, listed and
// revoked, roles given and taken back, the denials, whoami; the token on the command line, in
// $SWIPED_TOKEN and in a file, signing every command in; the admins' commands refused to a Unix
// user who is no admin; `watch` signing in again on each reconnect.

import Foundation
import Glibc
import XCTest

final class SwipectlPeopleTests: DaemonTestCase {
    /// Runs swipectl on this test's daemon with `environment` added.
    private func run(_ arguments: [String], environment: [String: String?] = [:], input: String? = nil) throws
        -> Subprocess.Result
    {
        try Subprocess.run(
            try Binaries.swipectl, ["--socket", daemon.socket] + arguments, input: input,
            environment: (["SWIPED_SOCKET": nil, "SWIPED_TOKEN": nil] as [String: String?]).merging(
                environment
            ) {
                $1
            }, timeout: .seconds(20))
    }

    /// `token create NAME --role ROLE`'s token, the last line of its stdout.
    private func token(_ name: String, _ role: String, _ options: String...) throws -> String {
        let made = try run(["token", "create", name, "--role", role] + options)
        XCTAssertEqual(made.status, .exited(0), made.standardError)
        return String(made.standardOutput.split(separator: "\n").last ?? "")
    }

    /// The token id of `token list`'s row for `token`'s person made `index`-th (from 0).
    private func tokenIDs() throws -> [String] {
        let list = try jsonLines(try daemon.ok("--json", "token", "list"))
        return (list.first?["tokens"] as? [[String: Any]] ?? []).compactMap { $0["tokenId"] as? String }
    }

    func testTokenCreatePrintsTheTokenAloneLastAndItSignsInEveryWay() throws {
        let made = try run(["token", "create", "alice", "--role", "writer", "--expires", "30d"])
        XCTAssertEqual(made.status, .exited(0), made.standardError)
        // The token alone on stdout (so `| tail -1` and `> FILE` take it), the rest on stderr.
        let token = made.standardOutput.trimmingCharacters(in: .newlines)
        XCTAssertEqual(made.standardOutput, token + "\n")
        XCTAssertNotNil(token.wholeMatch(of: /swp_[A-Za-z0-9_-]{32}/), token)
        let id = try XCTUnwrap(try tokenIDs().first)
        XCTAssertTrue(
            made.standardError.hasPrefix(
                "swipectl: a token for alice, role writer, tokenId \(id), expires 20"),
            made.standardError)
        XCTAssertTrue(made.standardError.contains("Z (in 30 days).\n"), made.standardError)
        XCTAssertTrue(
            made.standardError.hasSuffix(
                "swipectl: the token went to standard output, this once (the daemon keeps only its hash).\n"),
            made.standardError)

        let writer = "role  writer: may read, swipe and change the list\n"
        let byOption = try run(["--token", token, "whoami"])
        XCTAssertEqual(byOption.standardOutput, "user  alice\n" + writer + "by    a token (--token)\n")
        let byEnvironment = try run(["whoami"], environment: ["SWIPED_TOKEN": token])
        XCTAssertEqual(
            byEnvironment.standardOutput, "user  alice\n" + writer + "by    a token ($SWIPED_TOKEN)\n")
        let file = daemon.directory.file("alice.token")
        try (token + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        XCTAssertEqual(
            try run(["whoami", "--token-file", file]).standardOutput,
            "user  alice\n" + writer + "by    a token (--token-file \(file))\n")
        XCTAssertEqual(
            try run(["--token-file", "-", "whoami"], input: token + "\n").standardOutput,
            "user  alice\n" + writer + "by    a token (--token-file standard input)\n")
        // --token wins over $SWIPED_TOKEN, as --socket over $SWIPED_SOCKET.
        XCTAssertTrue(
            try run(["--token", token, "whoami"], environment: ["SWIPED_TOKEN": "swp_nope"]).standardOutput
                .hasPrefix("user  alice\n"))
        // Without a token: the Unix user of the process.
        XCTAssertEqual(
            try daemon.ok("whoami"),
            "user  root\nrole  admin: may read, swipe, change the list, and manage tokens and roles\n"
                + "by    the Unix socket \(daemon.socket), as uid 0\n")
        // --json: the line that says who, as it came (auth's reply, else the hello).
        let signedIn = try jsonLines(
            try run(["--json", "whoami"], environment: ["SWIPED_TOKEN": token]).standardOutput)
        XCTAssertEqual(signedIn.count, 1)
        XCTAssertEqual(signedIn[0]["user"] as? String, "alice")
        XCTAssertEqual(signedIn[0]["ok"] as? Bool, true)
        let hello = try jsonLines(try daemon.ok("--json", "whoami"))
        XCTAssertEqual(hello.map { $0["event"] as? String }, ["hello"])
        XCTAssertEqual(hello[0]["role"] as? String, "admin")

        // The token's person changes the list; --json of a command shows its own reply, not auth's.
        let toggled = try jsonLines(
            try run(["--json", "toggle-watched", "matrix"], environment: ["SWIPED_TOKEN": token])
                .standardOutput)
        XCTAssertEqual(toggled.count, 1)
        XCTAssertEqual(toggled[0]["seq"] as? Int, 11)
        // --json token create: the reply as it came, token and all.
        let json = try jsonLines(try daemon.ok("--json", "token", "create", "bob", "--role", "reader"))
        XCTAssertEqual(json.count, 1)
        XCTAssertTrue((json[0]["token"] as? String ?? "").hasPrefix("swp_"), "\(json)")
        XCTAssertEqual(json[0]["expires"] as? NSNull, NSNull())
    }

    func testARefusedTokenIsAClearErrorWhereverItCameFrom() throws {
        let alice = try token("alice", "writer")
        XCTAssertEqual(
            try daemon.ok("token", "revoke", "alice"),
            "Revoked 1 token of alice: connections signed in with it lose their rights within a second.\n")
        for (arguments, environment, origin) in [
            (["--token", alice, "list"], [:], "--token"),
            (["list"], ["SWIPED_TOKEN": alice], "$SWIPED_TOKEN"),
        ] as [([String], [String: String?], String)] {
            let refused = try run(arguments, environment: environment)
            XCTAssertEqual(refused.status, .exited(1), refused.standardError)
            XCTAssertEqual(refused.standardOutput, "", "nothing ran as anyone else")
            XCTAssertEqual(
                refused.standardError,
                "swipectl: sign-in refused: no such token (never made, or revoked); the token came from \(origin)\n"
            )
        }
        // An expired token, the same way.
        let brief = try token("carol", "reader", "--expires", "1")
        usleep(1_300_000)
        let expired = try run(["whoami"], environment: ["SWIPED_TOKEN": brief])
        XCTAssertEqual(expired.status, .exited(1), expired.standardError)
        XCTAssertTrue(expired.standardError.hasPrefix("swipectl: sign-in refused: "), expired.standardError)
        XCTAssertTrue(expired.standardError.contains("expired"), expired.standardError)
        // A file that holds no token: a usage error, nothing sent.
        let empty = daemon.directory.file("empty.token")
        XCTAssertTrue(FileManager.default.createFile(atPath: empty, contents: Data()))
        let none = try run(["--token-file", empty, "whoami"])
        XCTAssertEqual(none.status, .exited(2))
        XCTAssertEqual(none.standardError, "swipectl: --token-file \(empty) is empty\n")
    }

    func testAReaderTokenMayReadButAWriteIsForbidden() throws {
        let reader = try token("carol", "reader")
        let remove = try run(["--token", reader, "remove", "seven"])
        XCTAssertEqual(remove.status, .exited(1))
        XCTAssertEqual(
            remove.standardError,
            "swipectl: forbidden: \"remove\" needs the role writer; this connection is carol (reader)\n")
        XCTAssertEqual(try run(["--token", reader, "list"]).status, .exited(0))
        XCTAssertTrue(try daemon.ids().contains("seven"))
        // Nor may it act as an admin.
        let list = try run(["token", "list"], environment: ["SWIPED_TOKEN": reader])
        XCTAssertEqual(list.status, .exited(1))
        XCTAssertEqual(
            list.standardError,
            "swipectl: forbidden: \"token-list\" needs the role admin; this connection is carol (reader)\n")
    }

    func testTokensAreListedRevokedOneOrAllAndRolesGivenAndTakenBack() throws {
        _ = try token("alice", "writer", "--expires", "12h")
        let bob = try token("bob", "writer")
        _ = try token("alice", "admin")
        let ids = try tokenIDs()
        XCTAssertEqual(ids.count, 3)
        let table = try daemon.ok("token", "list")
        let lines = table.split(separator: "\n").map(String.init)
        XCTAssertEqual(
            lines.first?.split(separator: " "),
            ["NAME", "ROLE", "TOKEN-ID", "CREATED", "EXPIRES", "LAST-USED"])
        XCTAssertEqual(lines.count, 4, table)
        XCTAssertFalse(table.contains("swp_"), "never the token itself")
        XCTAssertTrue(lines[1].hasPrefix("alice  writer  \(ids[0])  20"), table)
        XCTAssertTrue(lines[1].hasSuffix("  never"), "not used yet: \(table)")
        XCTAssertTrue(lines[2].hasPrefix("bob    writer  \(ids[1])  20"), table)
        XCTAssertTrue(lines[3].contains("  never  "), "no expiry: \(table)")

        XCTAssertEqual(
            try daemon.ok("token", "revoke", "alice", "--id", ids[2]),
            "Revoked token \(ids[2]) of alice: connections signed in with it lose their rights within a second.\n"
        )
        XCTAssertEqual(try tokenIDs(), Array(ids.prefix(2)))
        XCTAssertEqual(
            try daemon.ok("token", "revoke", "alice"),
            "Revoked 1 token of alice: connections signed in with it lose their rights within a second.\n")
        let again = try run(["token", "revoke", "alice"])
        XCTAssertEqual(again.status, .exited(1))
        XCTAssertEqual(again.standardError, "swipectl: not-found: alice has no token\n")

        // A role given wins over the token's, on every door; taken back, the door decides again.
        XCTAssertEqual(
            try daemon.ok("role", "bob"),
            "bob has no role given: the door decides (the Unix groups, the token's role, the proxy's).\n")
        XCTAssertEqual(
            try daemon.ok("role", "bob", "reader"),
            "Gave bob the role reader, on every door: may read and swipe.\n")
        XCTAssertEqual(
            try daemon.ok("role", "bob"),
            "bob has the role reader, given by an admin, on every door: may read and swipe.\n")
        let refused = try run(["toggle-watched", "matrix"], environment: ["SWIPED_TOKEN": bob])
        XCTAssertEqual(refused.status, .exited(1))
        XCTAssertTrue(
            refused.standardError.contains("this connection is bob (reader)"), refused.standardError)
        XCTAssertEqual(
            try daemon.ok("role", "bob", "--clear"),
            "Took back the role given to bob: the door decides (the Unix groups, the token's role, the proxy's).\n"
        )
        XCTAssertEqual(
            try run(["toggle-watched", "matrix"], environment: ["SWIPED_TOKEN": bob]).status, .exited(0))
        // bob's alone now: the token's own role again, and its sign-ins recorded as its last use.
        let bobs = try daemon.ok("token", "list").split(separator: "\n")
        XCTAssertEqual(bobs.count, 2)
        XCTAssertNotNil(bobs[1].firstMatch(of: /^bob\s+writer\s+/), "\(bobs)")
        XCTAssertFalse(
            bobs[1].hasSuffix("  never"),
            "the sign-ins were recorded as its last use")
    }

    func testDenialsListTheRefusalsOldestFirst() throws {
        XCTAssertEqual(try daemon.ok("denials"), "AT  USER  CLIENT  TRANSPORT  ADDRESS  OP  REASON\n")
        let reader = try token("carol", "reader")
        _ = try run(["remove", "seven"], environment: ["SWIPED_TOKEN": reader])
        _ = try run(["list"], environment: ["SWIPED_TOKEN": "swp_not-a-token"])
        // Cells are two spaces or more apart (a Unix peer's address, "pid N", has one inside).
        let lines = try daemon.ok("denials").split(separator: "\n").map {
            $0.split(separator: /\s{2,}/).map(String.init)
        }
        XCTAssertEqual(lines.first, ["AT", "USER", "CLIENT", "TRANSPORT", "ADDRESS", "OP", "REASON"])
        XCTAssertEqual(lines.count, 3, "\(lines)")
        XCTAssertEqual(lines[1].count, 7, "\(lines[1])")
        XCTAssertEqual(lines[1][1], "carol")
        XCTAssertEqual(lines[1][3], "unix")
        XCTAssertTrue(lines[1][4].hasPrefix("pid "), "\(lines[1])")
        XCTAssertEqual(lines[1].suffix(2), ["remove", "forbidden"])
        XCTAssertEqual(lines[2][1], "root", "a sign-in refused is its Unix user's")
        XCTAssertEqual(lines[2].suffix(2), ["auth", "bad-token"])
        XCTAssertLessThanOrEqual(lines[1][0], lines[2][0], "oldest first")
    }

    /// A Unix user who is no admin may not use the admins' commands (each says the role it
    /// needs and who asked), and learns who it is with whoami; with an admin's token it may.
    func testTheAdminsCommandsAreForbiddenToAUnixUserWhoIsNoAdmin() throws {
        let users = try TestUsers.ensure()
        try daemon.directory.allowOthers()
        XCTAssertEqual(chmod(daemon.socket, 0o666), 0)
        let admin = try token("ops", "admin")
        func asWriter(_ arguments: [String], token: String? = nil) throws -> Subprocess.Result {
            try Subprocess.run(
                "setpriv",
                TestUsers.setpriv(users.writer) + [try Binaries.swipectl, "--socket", daemon.socket]
                    + arguments,
                environment: ["SWIPED_SOCKET": nil, "SWIPED_TOKEN": token])
        }
        let who = "this connection is \(users.writer.name) (writer)"
        for (arguments, op) in [
            (["token", "create", "x", "--role", "admin"], "token-create"), (["token", "list"], "token-list"),
            (["token", "revoke", "ops"], "token-revoke"), (["role", "ops", "none"], "role"),
            (["role", "ops"], "role"), (["denials"], "denials"),
        ] {
            let refused = try asWriter(arguments)
            XCTAssertEqual(refused.status, .exited(1), "\(arguments): \(refused.standardError)")
            XCTAssertEqual(
                refused.standardError, "swipectl: forbidden: \"\(op)\" needs the role admin; \(who)\n",
                "\(arguments)")
        }
        XCTAssertEqual(
            try asWriter(["whoami"]).standardOutput,
            "user  \(users.writer.name)\nrole  writer: may read, swipe and change the list\n"
                + "by    the Unix socket \(daemon.socket), as uid \(users.writer.uid)\n")
        let withToken = try asWriter(["token", "list"], token: admin)
        XCTAssertEqual(withToken.status, .exited(0), withToken.standardError)
        XCTAssertNotNil(withToken.standardOutput.firstMatch(of: /\nops\s+admin\s/), withToken.standardOutput)
        XCTAssertEqual(try tokenIDs().count, 1, "nothing was made or revoked by the refused commands")
    }

    /// `--token` is overwritten in swipectl's own command line once parsed: the process list
    /// shows x's, not the token (SWIPED_TOKEN and --token-file are the safer ways all the same).
    func testTheTokenGivenOnTheCommandLineLeavesTheProcessList() throws {
        let token = try token("alice", "reader")
        let watch = try Subprocess(
            try Binaries.swipectl, ["--socket", daemon.socket, "--token=\(token)", "watch"],
            environment: ["SWIPED_SOCKET": nil, "SWIPED_TOKEN": nil])
        try watch.waitForOutput("watching \(daemon.socket)", in: .standardError)
        let cmdline = try String(contentsOfFile: "/proc/\(watch.pid)/cmdline", encoding: .utf8)
        XCTAssertFalse(cmdline.contains(token), cmdline)
        XCTAssertTrue(cmdline.contains("--token=" + String(repeating: "x", count: token.utf8.count)), cmdline)
        watch.kill(SIGINT)
        XCTAssertEqual(try watch.wait(timeout: .seconds(5)), .exited(0), watch.standardError)
    }

    /// `watch` signs in on each connection: a token revoked while it watches turns it back into
    /// its Unix user (said on stderr), and after the daemon's restart its sign-in is refused,
    /// which ends the watch with status 1.
    func testWatchSignsInOnEveryConnection() throws {
        let token = try token("alice", "reader")
        let watch = try Subprocess(
            try Binaries.swipectl, ["--socket", daemon.socket, "watch"],
            environment: ["SWIPED_SOCKET": nil, "SWIPED_TOKEN": token])
        try watch.waitForOutput("watching \(daemon.socket) from seq 10", in: .standardError)
        try daemon.ok("toggle-watched", "matrix")
        try watch.waitForOutput("  matrix  ")
        XCTAssertEqual(try daemon.stop(), .exited(0))
        daemon = try TestDaemon(restarting: daemon)
        try watch.waitForOutput("reconnected to \(daemon.socket); resuming after seq 11.", in: .standardError)
        _ = try daemon.ok("token", "revoke", "alice")
        try watch.waitForOutput("swipectl: this connection is alice (none) now\n", in: .standardError)
        try watch.waitForOutput("swipectl: this connection is root (admin) now\n", in: .standardError)
        XCTAssertEqual(try daemon.stop(), .exited(0))
        daemon = try TestDaemon(restarting: daemon)
        XCTAssertEqual(try watch.wait(timeout: .seconds(10)), .exited(1), watch.standardError)
        XCTAssertTrue(
            watch.standardError.hasSuffix(
                "swipectl: sign-in refused: no such token (never made, or revoked); the token came from $SWIPED_TOKEN\n"
            ),
            watch.standardError)
    }
}

// Every change signed by its author (issue 46), against the real daemon: `by` right on every
// event made through each transport and each door (a Unix user, a token, a trusted proxy's user;
// none for an anonymous browser), in replies, live events and history; `history` by a person;
// kept through a restart and through export → import → verify, the digest as `verify` says; on
// two daemons of one PostgreSQL database.

import Foundation
import Glibc
import XCTest

final class AuthorsTests: XCTestCase {
    func swiped(_ arguments: [String]) throws -> Subprocess.Result {
        try Subprocess.run(try Binaries.swiped, arguments, timeout: .seconds(120))
    }

    func testEveryDoorSignsItsChangesAndTheyAreKept() throws {
        let users = try TestUsers.ensure()
        let port = try freeTCPPort()
        let daemon = try SwipedDaemon(
            arguments: [
                "--web", "127.0.0.1:\(port)", "--web-anonymous", "writer", "--web-trust-header",
                "Remote-User",
                "--web-proxy-role", "writer",
            ], prefix: "swiped-by")
        try daemon.directory.allowOthers()
        try retryingEINTR("chmod", daemon.socketPath) { chmod(daemon.socketPath, 0o666) }
        let root = try daemon.connect()
        XCTAssertEqual(int(try root.request(["op": "subscribe"])["seq"]), 10)
        let token = try XCTUnwrap(
            try root.request(["op": "token-create", "name": "alice", "role": "writer"])["token"] as? String)

        // root over the Unix socket.
        XCTAssertEqual(
            try root.request(["op": "toggle-watched", "movie": "matrix"])["by"] as? String, "root")
        // A Unix user of the writers (every peer writes without --writers).
        let writer = try ProcessLineSession(
            "setpriv",
            TestUsers.setpriv(users.writer) + [
                try Binaries.system("socat"), "-", "UNIX-CONNECT:\(daemon.socketPath)",
            ])
        _ = try writer.readJSON(timeout: .seconds(5))
        XCTAssertEqual(
            try writer.request(["op": "toggle-watched", "movie": "seven"])["by"] as? String,
            TestUsers.writerName)
        // A WebSocket signed in with alice's token; its full swipe's bound action is hers too.
        let (_, alice) = try WebSocketClient.open(port: port)
        let ws = try XCTUnwrap(alice)
        XCTAssertEqual(try ws.request(["op": "auth", "token": token])["user"] as? String, "alice")
        XCTAssertEqual(try ws.request(["op": "remove", "movie": "inception"])["by"] as? String, "alice")
        try ws.request(["op": "drag", "movie": "godfather", "dx": 300])
        let fired = try ws.request(["op": "release", "movie": "godfather"])
        XCTAssertNotNil((fired["fired"] as? [String: Any])?["seq"], "\(fired)")
        // A WebSocket whose trusted proxy (loopback) names carol.
        let (_, carolWS) = try WebSocketClient.open(port: port, extra: ["Remote-User: carol"])
        let carol = try XCTUnwrap(carolWS)
        XCTAssertEqual(carol.hello["user"] as? String, "carol")
        XCTAssertEqual(try carol.request(["op": "restore", "movie": "inception"])["by"] as? String, "carol")
        // An anonymous browser (here a writer) signs nothing: `by` is left out, not null.
        let (_, anonymousWS) = try WebSocketClient.open(port: port)
        let anonymous = try XCTUnwrap(anonymousWS)
        let unsigned = try anonymous.request(["op": "toggle-watched", "movie": "pulp_fiction"])
        XCTAssertEqual(unsigned["ok"] as? Bool, true)
        XCTAssertNil(unsigned["by"], "\(unsigned)")
        // An undo by root of alice's change says whose it was.
        let undo = try root.request(["op": "undo", "seq": 14])
        XCTAssertEqual(undo["by"] as? String, "root", "\(undo)")
        XCTAssertEqual(undo["undoesBy"] as? String, "alice", "\(undo)")

        let expected: [String?] = ["root", TestUsers.writerName, "alice", "alice", "carol", nil, "root"]
        var live: [String?] = []
        for _ in expected { live.append(try root.readEvent()["by"] as? String) }
        XCTAssertEqual(live, expected, "live events")
        func history(_ arguments: [String: Any] = [:]) throws -> [[String: Any]] {
            try XCTUnwrap(
                try root.request(["op": "history", "from": 10].merging(arguments) { $1 })["events"]
                    as? [[String: Any]])
        }
        XCTAssertEqual(try history().map { $0["by"] as? String }, expected, "history")
        XCTAssertEqual(try history(["by": "alice"]).map { int($0["seq"]) }, [13, 14])
        XCTAssertEqual(try history(["by": "alice", "limit": 1]).map { int($0["seq"]) }, [13], "paged")
        XCTAssertEqual(try history(["by": "alice", "from": 13]).map { int($0["seq"]) }, [14])
        XCTAssertEqual(try history(["by": "nobody"]).count, 0)
        XCTAssertEqual(try history(["by": "root"]).map { int($0["seq"]) }, [11, 17])

        // Kept through a restart.
        root.close()
        let again = try daemon.restart()
        let after = try again.connect()
        let kept = try XCTUnwrap(
            try after.request(["op": "history", "from": 10])["events"] as? [[String: Any]])
        XCTAssertEqual(kept.map { $0["by"] as? String }, expected, "after a restart")
        after.close()
        XCTAssertEqual(try again.stop(), .exited(0))

        // Kept through export → import → verify; the digest of the two is one.
        let export = again.directory.file("log.jsonl")
        XCTAssertEqual(
            try swiped(["export", "--state", again.stateDirectory, "--to", export]).status, .exited(0))
        let lines = try String(contentsOfFile: export, encoding: .utf8)
        XCTAssertTrue(lines.contains(#""by":"carol""#), "the export keeps by")
        let target = again.directory.file("imported")
        let imported = try swiped(["import", "--state", target, export])
        XCTAssertEqual(imported.status, .exited(0), imported.standardError)
        let source = try swiped(["verify", "--state", again.stateDirectory]).standardOutput
        let copy = try swiped(["verify", "--state", target]).standardOutput
        let digest = { (text: String) in
            text.range(of: "sha256:[0-9a-f]{64}", options: .regularExpression).map { String(text[$0]) }
        }
        XCTAssertNotNil(digest(source), source)
        XCTAssertEqual(digest(source), digest(copy))
        let moved = try SwipedDaemon(stateDirectory: target, prefix: "swiped-by2")
        let reader = try moved.connect()
        let movedHistory = try XCTUnwrap(
            try reader.request(["op": "history", "from": 10])["events"] as? [[String: Any]])
        XCTAssertEqual(movedHistory.map { $0["by"] as? String }, expected, "after export and import")
        reader.close()
        XCTAssertEqual(try moved.stop(), .exited(0))
    }
}

extension PostgresPeopleTests {
    /// A change made on one daemon by a person is that person's on every daemon's subscribers.
    func testAChangeOnOneDaemonIsSignedOnTheOther() throws {
        daemons = [
            try SwipedDaemon(arguments: daemonArguments, prefix: "swiped-pgby", timeout: .seconds(30)),
            try SwipedDaemon(arguments: daemonArguments, prefix: "swiped-pgby", timeout: .seconds(30)),
        ]
        let subscriber = try daemons[1].connect()
        XCTAssertEqual(int(try subscriber.request(["op": "subscribe"])["seq"]), 10)
        let root = try daemons[0].connect()
        XCTAssertEqual(
            try root.request(["op": "toggle-watched", "movie": "matrix"])["by"] as? String, "root")
        let event = try subscriber.readEvent(timeout: .seconds(5))
        XCTAssertEqual(event["by"] as? String, "root", "\(event)")
        let page = try XCTUnwrap(
            try subscriber.request(["op": "history", "by": "root"])["events"] as? [[String: Any]])
        XCTAssertEqual(page.map { int($0["seq"]) }, [11])
    }
}

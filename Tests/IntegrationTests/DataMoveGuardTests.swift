// What an operator may type that used to lose acknowledged writes, with the real binary (issue
// 40): `--force` aimed at the log of a running daemon however spelled.

import Foundation
import Glibc
import XCTest

final class DataMoveGuardTests: XCTestCase {
    func swiped(_ arguments: [String], in directory: String? = nil) throws -> Subprocess.Result {
        try Subprocess.run(try Binaries.swiped, arguments, workingDirectory: directory, timeout: .seconds(60))
    }

    func ls(_ path: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
    }

    /// Every spelling of the running daemon's log, its -wal and -shm, and of a new name in its
    /// state directory is refused by backup and export with --force, saying why; the daemon
    /// goes on acknowledging writes, and every one of them is in the log after it stops.
    func testForceNeverWritesOverTheLogOfARunningDaemon() throws {
        let work = try TemporaryDirectory("swiped-guard")
        let daemon = try SwipedDaemon(arguments: ["--durability", "normal"], directory: work)
        let client = try daemon.connect()
        var acked = 0
        func write() throws {
            let reply = try client.request(["op": "toggle-watched", "movie": "matrix", "key": "w-\(acked)"])
            XCTAssertEqual(reply["ok"] as? Bool, true, "\(reply)")
            acked += 1
        }
        try write()
        let state = "state"
        XCTAssertEqual(daemon.stateDirectory, work.file(state))
        XCTAssertEqual(symlink(state + "/events.sqlite3", work.file("to-log")), 0)
        XCTAssertEqual(symlink(state, work.file("to-state")), 0)
        XCTAssertEqual(link(work.file(state + "/events.sqlite3"), work.file("hard-log")), 0)
        let up = "../" + URL(fileURLWithPath: work.path).lastPathComponent + "/"
        let targets = [
            state + "/events.sqlite3", state + "/events.sqlite3-wal", state + "/events.sqlite3-shm",
            up + state + "/events.sqlite3", "to-log", "hard-log", "to-state/events.sqlite3-wal",
            state + "/backup.sqlite3", "to-state/new.jsonl",
        ]
        for target in targets {
            for arguments in [
                ["backup", "--state", state, target, "--force"],
                ["export", "--state", state, "--to", target, "--force"],
            ] {
                let result = try swiped(arguments, in: work.path)
                XCTAssertEqual(result.status, .exited(1), "\(arguments): \(result.standardOutput)")
                XCTAssertTrue(
                    result.standardError.contains(
                        "never writes into the store it reads, with or without --force"),
                    "\(arguments): \(result.standardError)")
                try write()
            }
        }
        let appended = try Subprocess.run(
            "/bin/sh", ["-c", "\"$0\" export --state state >> state/events.sqlite3", try Binaries.swiped],
            workingDirectory: work.path)
        XCTAssertEqual(appended.status, .exited(1))
        XCTAssertTrue(
            appended.standardError.contains("standard output is the store's events.sqlite3"),
            appended.standardError)
        try write()
        XCTAssertEqual(ls(work.file(state)).filter { !$0.hasPrefix("events.sqlite3") }, ["lock"])
        client.close()
        XCTAssertEqual(try daemon.stop(), .exited(0), daemon.process.standardError)

        let verified = try swiped(["verify", "--state", work.file(state)])
        XCTAssertEqual(verified.status, .exited(0), verified.standardError)
        XCTAssertTrue(
            verified.standardOutput.contains("seq \(10 + acked),"),
            "\(acked) acked: \(verified.standardOutput)")
        // And a backup beside the state directory is still made.
        let backup = try swiped(["backup", "--state", state, "b.sqlite3"], in: work.path)
        XCTAssertEqual(backup.status, .exited(0), backup.standardError)
    }
}

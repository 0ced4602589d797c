// `swipectl watch` across a restart of the daemon: it connects again and resumes from the last
// seq it printed, with no gap and no duplicate; or starts over when the daemon is back with
// another log (restored from a backup meanwhile).

import Foundation
import Glibc
import XCTest

final class SwipectlWatchTests: XCTestCase {
    func testWatchResumesAfterTheDaemonRestarts() throws {
        var daemon = try TestDaemon()
        let watch = try Subprocess(
            try Binaries.swipectl, ["--socket", daemon.socket, "watch"], environment: ["SWIPED_SOCKET": nil])
        try watch.waitForOutput("watching \(daemon.socket) from seq 10", in: .standardError)
        try daemon.ok("toggle-watched", "matrix")
        try watch.waitForOutput("  matrix  ")

        XCTAssertEqual(try daemon.stop(), .exited(0))
        try watch.waitForOutput("ended the session: shutdown; connecting again", in: .standardError)
        // Each attempt that fails says why and when the next comes.
        try watch.waitForOutput(
            "swipectl: cannot connect to \(daemon.socket): No such file or directory; trying again in 0.2 s (Ctrl-C stops).\n",
            in: .standardError)
        daemon = try TestDaemon(restarting: daemon)
        // Changes right after the restart, whether the watch is back yet or not.
        try daemon.ok("toggle-watched", "seven")
        try daemon.ok("remove", "inception")
        try watch.waitForOutput("  inception  ")
        // Waited for, not read once: the line on stderr may be collected just after the events
        // on stdout.
        try watch.waitForOutput("reconnected to \(daemon.socket); resuming after seq 11.", in: .standardError)

        watch.kill(SIGINT)
        XCTAssertEqual(try watch.wait(timeout: .seconds(5)), .exited(0), watch.standardError)
        let seqs = watch.standardOutput.split(separator: "\n").map { $0.prefix { $0 != " " } }
        XCTAssertEqual(seqs, ["11", "12", "13"], watch.standardOutput)
        XCTAssertEqual(try daemon.stop(), .exited(0))
    }

    /// The daemon comes back on a log restored from a backup taken at seq 10, after the watch
    /// printed up to 13: its hello names another log, so the watch starts over from the new
    /// log's seq instead of resubscribing from 13 (seqs that mean nothing there). A restart on
    /// the same log keeps its id.
    func testWatchStartsOverWhenTheDaemonServesAnotherLog() throws {
        var daemon = try TestDaemon()
        let state = daemon.directory.file("state")
        let backup = daemon.directory.file("backup.sqlite3")
        func logID() throws -> String? {
            let client = try LineClient(path: daemon.socket)
            defer { client.close() }
            return try client.readJSON()["log"] as? String
        }
        let first = try XCTUnwrap(try logID())
        let saved = try Subprocess.run(try Binaries.swiped, ["backup", "--state", state, backup])
        XCTAssertEqual(saved.status, .exited(0), saved.standardError)
        let watch = try Subprocess(
            try Binaries.swipectl, ["--socket", daemon.socket, "watch"], environment: ["SWIPED_SOCKET": nil])
        try watch.waitForOutput("watching \(daemon.socket) from seq 10", in: .standardError)
        try daemon.ok("toggle-watched", "matrix")
        try daemon.ok("toggle-watched", "seven")
        try daemon.ok("add", "Heat")
        try watch.waitForOutput("  heat  ")

        XCTAssertEqual(try daemon.stop(), .exited(0))
        daemon = try TestDaemon(restarting: daemon)
        XCTAssertEqual(try logID(), first, "a restart keeps the log")
        XCTAssertEqual(try daemon.stop(), .exited(0))
        // The restore, as docs/running.md says: the log aside, the backup imported.
        try FileManager.default.moveItem(atPath: state, toPath: state + ".damaged")
        let restored = try Subprocess.run(
            try Binaries.swiped, ["import", "--state", state, "--from-sqlite", backup])
        XCTAssertEqual(restored.status, .exited(0), restored.standardError)
        daemon = try TestDaemon(restarting: daemon)
        let second = try XCTUnwrap(try logID())
        XCTAssertNotEqual(second, first, "an import makes another log")
        try watch.waitForOutput(
            "reconnected to \(daemon.socket), which serves another log now (imported or restored); starting over after its seq 10.",
            in: .standardError)
        try daemon.ok("toggle-watched", "inception")
        try watch.waitForOutput("  inception  ")

        watch.kill(SIGINT)
        XCTAssertEqual(try watch.wait(timeout: .seconds(5)), .exited(0), watch.standardError)
        let seqs = watch.standardOutput.split(separator: "\n").map { $0.prefix { $0 != " " } }
        XCTAssertEqual(seqs, ["11", "12", "13", "11"], watch.standardOutput)
        XCTAssertFalse(watch.standardError.contains("resuming after seq 13"), watch.standardError)
        XCTAssertEqual(try daemon.stop(), .exited(0))
    }

    func testWatchJSONResumesToo() throws {
        var daemon = try TestDaemon()
        let watch = try Subprocess(
            try Binaries.swipectl, ["--socket", daemon.socket, "--json", "watch", "--from", "9"],
            environment: ["SWIPED_SOCKET": nil])
        try watch.waitForOutput("\"seq\":10")
        XCTAssertEqual(try daemon.stop(), .exited(0))
        daemon = try TestDaemon(restarting: daemon)
        try daemon.ok("add", "Heat")
        try watch.waitForOutput("\"seq\":11")
        watch.kill(SIGTERM)
        XCTAssertEqual(try watch.wait(timeout: .seconds(5)), .exited(0), watch.standardError)
        let events = try jsonLines(watch.standardOutput)
        // The daemon's own lines, as they came: its bye too, between the two sessions.
        XCTAssertEqual(events.map { $0["event"] as? String }, ["movie", "bye", "movie"])
        XCTAssertEqual(events.compactMap { $0["seq"] as? Int }, [10, 11])
        XCTAssertEqual(try daemon.stop(), .exited(0))
    }
}

// `swipectl watch` across a restart of the daemon: it connects again and resumes from the last
// seq it printed, with no gap and no duplicate.

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

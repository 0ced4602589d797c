// docs/running.md's "Moving from SQLite to PostgreSQL", run as written by root (issue 49: the
// steps failed with peer authentication): a cluster whose local connections are `peer`, as
// Debian's are, its socket standing for /run/postgresql; `systemctl` is the test stopping the
// daemon. The tables the import made must be the role `swiped`'s, which the service connects as.

import Foundation
import Glibc
import TestSupport
import XCTest

final class DataMoveGuidePostgresTests: XCTestCase {
    func testTheGuidesMoveToPostgreSQLWorksAsWrittenByRoot() throws {
        guard geteuid() == 0 else { throw XCTSkip("the guide's steps are root's") }
        let cluster = try PostgresCluster(database: nil, prefix: "swiped-guide-pg")
        defer { cluster.destroy() }
        // Debian's pg_hba.conf for the socket: every role by peer.
        try "local all all peer\n".write(
            toFile: cluster.dataDirectory + "/pg_hba.conf", atomically: false, encoding: .utf8)
        XCTAssertEqual(try cluster.psql("SELECT pg_reload_conf()"), "t")
        let dir = try TemporaryDirectory("swiped-guide")
        let state = dir.file("state")
        // A SQLite log with changes of its own to move.
        let daemon = try SwipedDaemon(stateDirectory: state, prefix: "swiped-guide")
        let client = try daemon.connect()
        _ = try client.ok(["op": "toggle-watched", "movie": "matrix"])
        _ = try client.ok(["op": "remove", "movie": "seven"])
        XCTAssertEqual(try daemon.stop(), .exited(0))
        let before = try Subprocess.run(try Binaries.swiped, ["verify", "--state", state])
        XCTAssertEqual(before.status, .exited(0), before.standardError)

        let steps = try DataMoveRestoreTests.guideBlock(after: "Stop the SQLite daemon, export its log")
        XCTAssertTrue(steps.contains { $0.hasPrefix("runuser -u postgres -- swiped import") }, "\(steps)")
        let bin = URL(fileURLWithPath: try Binaries.swiped).deletingLastPathComponent().path
        var printed = ""
        for line in steps where !line.hasPrefix("systemctl ") && !line.hasPrefix("#") {
            var command = line
            for (from, to) in [
                ("/run/postgresql", cluster.socketDirectory), ("/var/lib/private/swiped", state),
                ("/root/", dir.file("root") + "/"),
            ] {
                command = command.replacingOccurrences(of: from, with: to)
            }
            // createuser and createdb find the server by PGHOST, as on Debian by their default.
            let result = try Subprocess.run(
                "/bin/sh", ["-ec", "mkdir -p '\(dir.file("root"))'; " + command],
                environment: [
                    "PATH": "\(bin):\(cluster.binDirectory):"
                        + (ProcessInfo.processInfo.environment["PATH"] ?? ""),
                    "PGHOST": cluster.socketDirectory,
                ])
            XCTAssertEqual(result.status, .exited(0), "\(command): \(result.standardError)")
            printed += result.standardOutput
        }
        // What verify printed on the way is what the SQLite log had: the same seq and digest.
        let digest = try XCTUnwrap(before.standardOutput.components(separatedBy: "digest ").last)
        XCTAssertTrue(
            printed.contains("digest " + digest.trimmingCharacters(in: .whitespacesAndNewlines)), printed)
        XCTAssertEqual(
            try cluster.psql(
                "SELECT tableowner FROM pg_tables WHERE tablename = 'swiped_events'", database: "swiped"),
            "swiped", "the daemon's role must own what the import made")
    }
}

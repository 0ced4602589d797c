// "Several hosts" of docs/running.md (the README's until issue 41), checked: a daemon gets its
// database password from PGPASSFILE (as the unit's LoadCredential= hands it over) and never
// shows it, and the drop-in the guide shows is a valid addition to the installed unit.

import Foundation
import Glibc
import TestSupport
import XCTest

final class PostgresSeveralHostsTests: XCTestCase {
    static let password = "pw-7Hq2-secret"

    func testThePasswordComesFromPGPASSFILEAndIsNeverShown() throws {
        let cluster = try PostgresCluster(database: nil, prefix: "swiped-pg")
        let conninfo = try cluster.addPasswordRole("swiped", password: Self.password, database: "shared")
        let dir = try TemporaryDirectory("swiped-pgpass")
        // No password anywhere: refused, once the server has read its new pg_hba.conf.
        let noPassword: [String: String?] = [
            "PGPASSFILE": dir.file("none"), "HOME": dir.path, "PGPASSWORD": nil,
        ]
        _ = try poll(until: .seconds(10), "the password rule to apply") {
            let r = try Subprocess.run(
                "/usr/lib/postgresql/15/bin/psql", ["-X", "-c", "SELECT 1", conninfo], environment: noPassword
            )
            return r.status.isSuccess ? nil : r.standardError
        }
        XCTAssertThrowsError(
            try SwipedDaemon(
                arguments: ["--postgres", conninfo], environment: noPassword, prefix: "swiped-pgd")
        ) { error in
            XCTAssertTrue("\(error)".contains("password"), "the start fails, saying why: \(error)")
        }

        // The password in a pgpass file (what LoadCredential= puts in the credentials directory).
        try dir.write("pgpass", "*:*:shared:swiped:\(Self.password)\n", mode: 0o600)
        let daemon = try SwipedDaemon(
            arguments: ["--postgres", conninfo],
            environment: ["PGPASSFILE": dir.file("pgpass"), "HOME": dir.path, "PGPASSWORD": nil],
            prefix: "swiped-pgd")
        let client = try daemon.connect()
        try client.ok(["op": "toggle-watched", "movie": "matrix"])
        XCTAssertEqual(
            try cluster.psql(
                "SELECT count(*) FROM swiped_events WHERE kind = 'watched-toggled'", database: "shared"),
            "1", "the daemon wrote to the password-protected database")
        XCTAssertEqual(try daemon.stop(), .exited(0), daemon.process.standardError)
        let shown =
            daemon.process.standardError + daemon.process.standardOutput
            + daemon.notify.assignments.joined(separator: "\n")
        XCTAssertFalse(shown.contains(Self.password), "the password was shown:\n\(shown)")
        XCTAssertTrue(shown.contains("shared"), "the daemon names its database:\n\(shown)")
    }

    func testTheReadmeDropInIsAValidAdditionToTheUnit() throws {
        guard let analyze = try? Binaries.system("systemd-analyze") else {
            throw XCTSkip("systemd-analyze is not installed (Debian package systemd)")
        }
        let root = InstallTests.root
        let guide = try String(contentsOfFile: "\(root)/docs/running.md", encoding: .utf8)
        let section = try XCTUnwrap(guide.components(separatedBy: "## Several hosts\n").dropFirst().first)
        let lines = section.components(separatedBy: "\n")
        let start = try XCTUnwrap(
            lines.firstIndex(of: "    [Service]"), "the drop-in in docs/running.md's Several hosts")
        let dropIn = lines[start...].prefix { $0.hasPrefix("    ") }.map { String($0.dropFirst(4)) }
        XCTAssertTrue(dropIn.contains { $0.hasPrefix("LoadCredential=") }, "\(dropIn)")
        XCTAssertTrue(dropIn.contains { $0.hasPrefix("Environment=\"SWIPED_POSTGRES=") }, "\(dropIn)")

        let dir = try TemporaryDirectory("swiped-units")
        let bindir = URL(fileURLWithPath: try Binaries.swiped).deletingLastPathComponent().path
        let service = try String(contentsOfFile: "\(root)/systemd/swiped.service", encoding: .utf8)
            .replacingOccurrences(of: "@BINDIR@", with: bindir)
            .replacingOccurrences(of: "@DOCDIR@", with: "/usr/share/doc/swiped")
        // A drop-in's lines apply after the unit's: the same as a [Service] section appended.
        try dir.write("swiped.service", service + "\n" + dropIn.joined(separator: "\n") + "\n")
        try dir.write(
            "swiped.socket",
            try String(contentsOfFile: "\(root)/systemd/swiped.socket", encoding: .utf8)
                .replacingOccurrences(of: "@DOCDIR@", with: "/usr/share/doc/swiped"))
        let result = try Subprocess.run(
            analyze,
            [
                "verify", "--man=no", "--generators=no", "--recursive-errors=no", dir.file("swiped.socket"),
                dir.file("swiped.service"),
            ],
            environment: ["SYSTEMD_LOG_LEVEL": "notice", "SYSTEMD_LOG_COLOR": "0"], workingDirectory: dir.path
        )
        XCTAssertEqual(result.status, .exited(0), result.standardError)
        XCTAssertEqual(result.standardOutput + result.standardError, "", "systemd-analyze verify complained")
    }
}

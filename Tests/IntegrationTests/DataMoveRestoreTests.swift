// The backup and restore steps of docs/running.md, "Backups" (issue 32; they were the README's),
// run as written on a state directory laid out as the unit's: owned by the user the daemon runs
// as, mode 0700, the daemon started as that user (a test user through setpriv stands for the
// unit's dynamic user; `systemctl stop` and `start` are the test stopping and starting it). After
// the restore the daemon must open, serve and write the restored log: the guide's `chown` is what
// lets it.

import Foundation
import Glibc
import XCTest

final class DataMoveRestoreTests: XCTestCase {
    /// The operators' guide's code block that follows the line starting with `after`.
    static func guideBlock(after: String) throws -> [String] {
        let guide = try String(contentsOfFile: "\(InstallTests.root)/docs/running.md", encoding: .utf8)
        var lines = guide.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let start = lines.firstIndex(where: { $0.hasPrefix(after) }) else {
            throw LineClientError("docs/running.md has no line starting with \(after)")
        }
        lines = Array(lines[start...].drop { !$0.hasPrefix("    ") })
        return lines.prefix { $0.hasPrefix("    ") }.map { String($0.dropFirst(4)) }
    }

    func testTheReadmesRestoreLeavesALogTheDaemonsUserServesAndWrites() throws {
        guard geteuid() == 0 else { throw XCTSkip("needs root for chown and setpriv") }
        let user = try TestUsers.ensure().reader
        let dir = try TemporaryDirectory("swiped-restore")
        try dir.allowOthers()
        // /var/lib/private is root's, 0700, under systemd (the service reaches its directory
        // through its own mounts); here the user must pass through it.
        let root = dir.file("lib")
        let state = root + "/private/swiped"
        let run = dir.file("run")
        for (path, mode) in [(root, 0o755), (root + "/private", 0o755), (state, 0o700), (run, 0o755)] {
            XCTAssertEqual(mkdir(path, mode_t(mode)), 0, path)
        }
        // What StateDirectory= with DynamicUser= makes: the directory, the user's, 0700.
        for path in [state, run] { XCTAssertEqual(chown(path, user.uid, user.gid), 0, path) }
        let socket = run + "/swiped.sock"
        let backups = dir.file("backups")
        XCTAssertEqual(mkdir(backups, 0o700), 0)
        let bin = URL(fileURLWithPath: try Binaries.swiped).deletingLastPathComponent().path

        func start() throws -> (Subprocess, String) {
            let daemon = try Subprocess(
                "setpriv",
                TestUsers.setpriv(user) + [
                    try Binaries.swiped, "--socket", socket, "--state", state, "--durability", "normal",
                ])
            let client = try LineClient(path: socket, timeout: .seconds(15))
            defer { client.close() }
            let hello = try client.readJSON()
            return (daemon, try XCTUnwrap(hello["log"] as? String, "\(hello)"))
        }
        func stop(_ daemon: Subprocess) throws {
            daemon.kill(SIGTERM)
            XCTAssertEqual(try daemon.wait(timeout: .seconds(10)), .exited(0), daemon.standardError)
        }
        func swipectl(_ arguments: String...) throws -> String {
            let result = try Subprocess.run(try Binaries.swipectl, ["--socket", socket] + arguments)
            XCTAssertEqual(result.status, .exited(0), "\(arguments): \(result.standardError)")
            return result.standardOutput
        }
        /// Runs the guide's lines with `swiped` from this build, its paths mapped to the test's.
        func sh(_ lines: [String]) throws {
            for line in lines {
                var command = line
                for (from, to) in [
                    ("/var/lib/private/swiped", state), ("/root/damaged", dir.file("damaged")),
                    ("/srv/backups/swiped-$(date +%F).sqlite3", backups + "/swiped.sqlite3"),
                    ("/srv/backups/swiped-2026-12-03.sqlite3", backups + "/swiped.sqlite3"),
                ] {
                    command = command.replacingOccurrences(of: from, with: to)
                }
                XCTAssertFalse(command.contains("/var/") || command.contains("/srv/"), command)
                let result = try Subprocess.run(
                    "/bin/sh", ["-ec", command],
                    environment: ["PATH": bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "")])
                XCTAssertEqual(result.status, .exited(0), "\(command): \(result.standardError)")
            }
        }

        let (daemon, before) = try start()
        _ = try swipectl("toggle-watched", "matrix")
        // The guide's backup, while the daemon serves.
        let backup = try Self.guideBlock(after: "## Backups")
        XCTAssertEqual(backup.count, 2, "\(backup)")
        try sh(backup)
        let listed = try swipectl("list")
        // A change after the backup, which the restore goes back past.
        _ = try swipectl("add", "Heat")
        try stop(daemon)

        let steps = try Self.guideBlock(after: "To restore, stop the daemon")
        XCTAssertEqual(steps.first, "systemctl stop swiped.socket swiped.service")
        XCTAssertEqual(steps.last, "systemctl start swiped.socket")
        try sh(Array(steps.dropFirst().dropLast()))

        var st = stat()
        for name in ["", "/events.sqlite3", "/lock"] {
            XCTAssertEqual(stat(state + name, &st), 0, name)
            XCTAssertEqual(st.st_uid, user.uid, "\(state + name) is the daemon user's")
        }
        XCTAssertEqual(stat(state, &st), 0)
        XCTAssertEqual(st.st_mode & 0o777, 0o700)
        XCTAssertEqual(stat(state + "/events.sqlite3", &st), 0)
        XCTAssertEqual(st.st_mode & 0o777, 0o600)

        let (restored, after) = try start()
        XCTAssertNotEqual(after, before, "the restored log is another log to clients")
        XCTAssertEqual(try swipectl("list"), listed, "the list as backed up")
        _ = try swipectl("toggle-watched", "seven")  // the daemon writes it
        try stop(restored)
        let verified = try Subprocess.run(try Binaries.swiped, ["verify", "--state", state])
        XCTAssertEqual(verified.status, .exited(0), verified.standardError)
        XCTAssertTrue(verified.standardOutput.contains("seq 12,"), verified.standardOutput)
    }
}

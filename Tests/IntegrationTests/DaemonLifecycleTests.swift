// What the daemon does around its life rather than its requests: SIGHUP looks the `--writers`
// group up again (RELOADING=1, then READY=1), and a damaged or foreign state file stops the start
// with a message naming the file, exit status 1, and the file left as it was.

import Foundation
import Glibc
import XCTest

final class DaemonLifecycleTests: XCTestCase {
    static let group = "swiped-it-hup"
    static let userName = "swiped-it-hupper"

    private func groupadd(gid: Int) throws {
        _ = try? Subprocess.run("groupdel", [Self.group])
        try Subprocess.check("groupadd", ["-g", "\(gid)", Self.group])
        try Subprocess.check("usermod", ["-a", "-G", Self.group, Self.userName])
    }

    private func writerFlag(as user: TestUsers.User, _ daemon: SwipedDaemon) throws -> Bool? {
        let session = try ProcessLineSession(
            "setpriv",
            TestUsers.setpriv(user) + [
                try Binaries.system("socat"), "-", "UNIX-CONNECT:\(daemon.socketPath)",
            ])
        return try session.readJSON()["writer"] as? Bool
    }

    /// The group is deleted and made again with another gid while the daemon runs: until SIGHUP
    /// it still looks for the old gid (the member is not a writer); after it, the new one.
    func testSIGHUPLooksTheWritersGroupUpAgain() throws {
        guard geteuid() == 0 else { throw XCTSkip("needs root for groupadd and setpriv") }
        _ = try TestUsers.ensure()
        _ = try TestUsers.ensureGroup(Self.group)
        let user = try TestUsers.ensureUser(Self.userName, groups: [Self.group])
        try groupadd(gid: 64_101)
        defer { _ = try? Subprocess.run("groupdel", [Self.group]) }

        let daemon = try SwipedDaemon(arguments: ["--writers", Self.group], prefix: "swiped-hup")
        try daemon.directory.allowOthers()
        try retryingEINTR("chmod", daemon.socketPath) { chmod(daemon.socketPath, 0o666) }
        XCTAssertEqual(try writerFlag(as: user, daemon), true)

        try groupadd(gid: 64_102)
        XCTAssertEqual(try writerFlag(as: user, daemon), false, "still the old gid before SIGHUP")

        daemon.process.kill(SIGHUP)
        try daemon.notify.waitFor("RELOADING=1")
        try daemon.notify.waitFor("READY=1")
        XCTAssertEqual(try writerFlag(as: user, daemon), true, "the new gid after SIGHUP")
        XCTAssertEqual(try daemon.stop(), .exited(0))
    }

    private func startFails(on contents: [UInt8]) throws -> (Subprocess.Result, String) {
        let dir = try TemporaryDirectory("swiped-bad")
        try FileManager.default.createDirectory(atPath: dir.file("state"), withIntermediateDirectories: true)
        let path = dir.file("state/events.sqlite3")
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(contents)))
        let result = try SwipedDaemon.run(["--socket", dir.file("s.sock"), "--state", dir.file("state")])
        XCTAssertEqual(
            try Data(contentsOf: URL(fileURLWithPath: path)), Data(contents), "the file is untouched")
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.file("s.sock")), "nothing listens")
        return (result, path)
    }

    /// The log's writer thread runs in SCHED_BATCH (its wake-ups do not preempt the event loop);
    /// the event loop keeps the default policy.
    func testTheLogWriterRunsInSchedBatchAndTheEventLoopDoesNot() throws {
        let daemon = try SwipedDaemon(arguments: [], prefix: "swiped-sched")
        var policies: [String: Int] = [:]
        let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(daemon.pid)/task")
        for tid in tasks {
            let stat = try String(contentsOfFile: "/proc/\(daemon.pid)/task/\(tid)/stat", encoding: .utf8)
            guard let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")") else { continue }
            let name = String(stat[stat.index(after: open)..<close])
            // Fields after the name start at field 3; the policy is field 41.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            policies[tid == "\(daemon.pid)" ? "main" : name] = Int(fields[41 - 3])
        }
        XCTAssertEqual(policies["main"], 0, "SCHED_OTHER for the event loop: \(policies)")
        XCTAssertEqual(policies["swiped-log-wr"], 3, "SCHED_BATCH for the writer: \(policies)")
    }

    func testADamagedStateFileStopsTheStartAndIsLeftAlone() throws {
        var bytes = Array("SQLite format 3\u{0}".utf8)
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<8192 { bytes.append(UInt8.random(in: 0...255, using: &rng)) }
        let (result, path) = try startFails(on: bytes)
        XCTAssertEqual(result.status, .exited(1), result.standardError)
        XCTAssertTrue(result.standardError.contains(path), result.standardError)
    }

    func testAForeignFileStopsTheStart() throws {
        let (result, path) = try startFails(on: Array("these are not the events you are looking for\n".utf8))
        XCTAssertEqual(result.status, .exited(1), result.standardError)
        XCTAssertTrue(result.standardError.contains(path), result.standardError)
    }
}

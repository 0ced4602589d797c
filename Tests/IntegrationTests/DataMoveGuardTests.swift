// What an operator may type that used to lose acknowledged writes, with the real binary (issue
// 40): `--force` aimed at the log of a running daemon however spelled, an import over the WAL a
// crash left, an export with a line that never ends, a state directory anyone may write.

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

    /// "seq N, E events, … digest D" of a line `import`, `backup` or `verify` printed.
    func figures(_ line: String) -> String? {
        guard let seq = line.range(of: #"seq [0-9]+, [0-9]+ events"#, options: .regularExpression),
            let digest = line.range(of: "digest sha256:[0-9a-f]{64}", options: .regularExpression)
        else { return nil }
        return "\(line[seq]), \(line[digest])"
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

    /// A crash leaves the -wal of the log; the log is moved away, the -wal is not. import
    /// refuses it (SQLite would replay it over the restore), naming it and saying what to do;
    /// once it is moved aside, what import prints is what verify and the daemon find.
    func testImportRefusesTheWALACrashLeftAndPrintsWhatVerifyFinds() throws {
        let work = try TemporaryDirectory("swiped-guard-wal")
        let daemon = try SwipedDaemon(arguments: ["--durability", "normal"], directory: work)
        let client = try daemon.connect()
        for i in 0..<20 { try client.ok(["op": "toggle-watched", "movie": "seven", "key": "a-\(i)"]) }
        let backup = work.file("backup.sqlite3")
        let backedUp = try swiped(["backup", "--state", daemon.stateDirectory, backup])
        XCTAssertEqual(backedUp.status, .exited(0), backedUp.standardError)
        let printedByBackup = try XCTUnwrap(figures(backedUp.standardOutput), backedUp.standardOutput)
        for i in 0..<30 { try client.ok(["op": "toggle-watched", "movie": "godfather", "key": "b-\(i)"]) }
        client.close()
        daemon.process.kill(SIGKILL)
        XCTAssertEqual(try daemon.process.wait(), .signaled(SIGKILL))
        let state = daemon.stateDirectory
        XCTAssertTrue(ls(state).contains("events.sqlite3-wal"), "\(ls(state))")
        let damaged = work.file("damaged")
        XCTAssertEqual(mkdir(damaged, 0o700), 0)
        XCTAssertEqual(rename(state + "/events.sqlite3", damaged + "/events.sqlite3"), 0)
        let left = ls(state)

        let refused = try swiped(["import", "--state", state, "--from-sqlite", backup])
        XCTAssertEqual(refused.status, .exited(1), refused.standardOutput)
        XCTAssertTrue(refused.standardError.contains("events.sqlite3-wal"), refused.standardError)
        XCTAssertTrue(
            refused.standardError.contains("Move these files out of the state directory"),
            refused.standardError)
        XCTAssertEqual(ls(state), left, "nothing written, nothing moved")

        for name in left where name.hasPrefix("events.sqlite3") {
            XCTAssertEqual(rename(state + "/" + name, damaged + "/" + name), 0)
        }
        let imported = try swiped(["import", "--state", state, "--from-sqlite", backup])
        XCTAssertEqual(imported.status, .exited(0), imported.standardError)
        let verified = try swiped(["verify", "--state", state])
        XCTAssertEqual(verified.status, .exited(0), verified.standardError)
        XCTAssertEqual(figures(imported.standardOutput), printedByBackup, imported.standardOutput)
        XCTAssertEqual(figures(verified.standardOutput), printedByBackup, verified.standardOutput)
        let restored = try SwipedDaemon(directory: work)
        let list = try restored.connect().request(["op": "list"])
        XCTAssertEqual(list["seq"] as? Int, 30, "the backup's seq: 10 seeded, 20 toggles")
        XCTAssertEqual(try restored.stop(), .exited(0))
    }

    /// A line that never ends on standard input: refused at line 1 after about 64 KiB, read
    /// no further, in a process allowed 64 MiB of data (the import used to hold the whole line:
    /// 280 MB RSS for 256 MiB); nothing is left.
    func testALineThatNeverEndsIsRefusedEarlyHoldingLittle() throws {
        let work = try TemporaryDirectory("swiped-guard-line")
        let target = work.file("state")
        // RLIMIT_DATA bounds the heap and every private writable mapping: past it an allocation
        // fails and the process dies instead of exiting 1. (wait4's ru_maxrss cannot say it: a
        // child exec'd from posix_spawn inherits the test runner's peak.)
        let process = try Subprocess(
            "prlimit", ["--data=\(64 << 20)", try Binaries.swiped, "import", "--state", target, "-"],
            input: .pipe)
        let written = Locked(0)
        // The writer thread alone writes and closes standard input; this one only waits.
        let input = UncheckedBox(process)
        let writer = Thread {
            let chunk = String(repeating: "x", count: 1 << 20)
            // Until the import stops reading (EPIPE: Subprocess ignores SIGPIPE), or 300 MiB.
            while written.with({ $0 }) < 300 {
                guard (try? input.value.write(chunk)) != nil else { break }
                written.with { $0 += 1 }
            }
            input.value.closeStandardInput()
        }
        writer.start()
        let status = try process.wait(timeout: .seconds(60))
        while !writer.isFinished { usleep(10_000) }
        XCTAssertEqual(status, .exited(1), process.standardError)
        XCTAssertTrue(
            process.standardError.contains("standard input: line 1 is longer than 65536 bytes"),
            process.standardError)
        XCTAssertLessThan(written.with { $0 }, 16, "MiB written before the import stopped reading")
        XCTAssertFalse(FileManager.default.fileExists(atPath: target), "\(ls(work.path))")
    }

    /// A state directory others may write: the daemon does not start on it and import does not
    /// write into it, both saying why and what to do, leaving it empty. One others may only
    /// reach: served and read with a warning that says so and what goes on.
    func testAStateDirectoryOthersMayWriteIsRefusedOneTheyMayReadWarnedOf() throws {
        let work = try TemporaryDirectory("swiped-guard-mode")
        let state = work.file("state")
        XCTAssertEqual(mkdir(state, 0o700), 0)
        XCTAssertEqual(chmod(state, 0o777), 0)
        let socket = work.file("swiped.sock")
        let refused = try SwipedDaemon.run(["--socket", socket, "--state", state])
        XCTAssertEqual(refused.status, .exited(1), refused.standardError)
        for text in ["cannot start", "the state directory is writable by others, mode 0777", "chmod 0700"] {
            XCTAssertTrue(refused.standardError.contains(text), "\(text): \(refused.standardError)")
        }
        let export = work.file("e.jsonl")
        let source = try SwipedDaemon(prefix: "swiped-guard-src")
        XCTAssertEqual(try source.stop(), .exited(0))
        XCTAssertEqual(
            try swiped(["export", "--state", source.stateDirectory, "--to", export]).status, .exited(0))
        let imported = try swiped(["import", "--state", state, export])
        XCTAssertEqual(imported.status, .exited(1), imported.standardOutput)
        XCTAssertTrue(
            imported.standardError.contains("the state directory is writable by others"),
            imported.standardError)
        XCTAssertEqual(ls(state), [], "nothing made in it")

        XCTAssertEqual(chmod(state, 0o750), 0)
        let served = try SwipedDaemon(directory: work)
        try served.process.waitForOutput(
            "the state directory is open to others, serving from it as it is", in: .standardError)
        XCTAssertTrue(served.process.standardError.contains("mode 0750 (group r-x, others ---)"))
        XCTAssertEqual(try served.stop(), .exited(0))
        let read = try swiped(["backup", "--state", state, work.file("b.sqlite3")])
        XCTAssertEqual(read.status, .exited(0), read.standardError)
        XCTAssertTrue(read.standardError.contains("swiped backup: warning: "), read.standardError)
        XCTAssertTrue(read.standardError.contains("; reading it as it is"), read.standardError)
        XCTAssertEqual(chmod(state, 0o777), 0)
        let verified = try swiped(["verify", "--state", state])
        XCTAssertEqual(verified.status, .exited(0), verified.standardError)
        XCTAssertTrue(verified.standardError.contains("writable by others"), verified.standardError)
        XCTAssertEqual(chmod(state, 0o700), 0)
        let quiet = try swiped(["verify", "--state", state])
        XCTAssertEqual(quiet.standardError, "")
    }
}

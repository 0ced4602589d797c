// Tests of the integration-test harness (Support/), against real system programs.

import Foundation
import Glibc
import XCTest

final class HarnessTests: XCTestCase {
    /// True when no process with this pid exists, not even a zombie.
    private func isGone(_ pid: pid_t) -> Bool { kill(pid, 0) == -1 && errno == ESRCH }

    // MARK: Subprocess

    func testSubprocessReportsOutputAndExitStatus() throws {
        let result = try Subprocess.run("sh", ["-c", "echo out; echo err >&2; exit 3"])
        XCTAssertEqual(result.status, .exited(3))
        XCTAssertEqual(result.standardOutput, "out\n")
        XCTAssertEqual(result.standardError, "err\n")
    }

    func testSubprocessPassesInputEnvironmentAndDirectory() throws {
        let dir = try TemporaryDirectory()
        let result = try Subprocess.run(
            "sh", ["-c", #"cat; printf '%s|%s|%s\n' "$HARNESS_FOO" "${HARNESS_GONE-unset}" "$(pwd)""#],
            input: "line 1\nline 2\n", environment: ["HARNESS_FOO": "bar", "HARNESS_GONE": nil],
            workingDirectory: dir.path)
        XCTAssertEqual(result.status, .exited(0), result.standardError)
        XCTAssertEqual(result.standardOutput, "line 1\nline 2\nbar|unset|\(dir.path)\n")
    }

    func testSubprocessSignalsAndWaitsForALongRunningChild() throws {
        let process = try Subprocess("sleep", ["100"])
        XCTAssertTrue(process.isRunning)
        process.kill(SIGTERM)
        XCTAssertEqual(try process.wait(timeout: .seconds(5)), .signaled(SIGTERM))
        XCTAssertFalse(process.isRunning)
        XCTAssertTrue(isGone(process.pid))
    }

    func testSubprocessWaitsForOutput() throws {
        let process = try Subprocess(
            "sh", ["-c", "echo starting; sleep 0.2; echo listening on x >&2; sleep 100"])
        let text = try process.waitForOutput("listening on", in: .standardError, timeout: .seconds(5))
        XCTAssertEqual(text, "listening on x\n")
        XCTAssertEqual(process.standardOutput, "starting\n")
        XCTAssertThrowsError(try process.waitForOutput("never", timeout: .milliseconds(100)))
        XCTAssertEqual(try process.terminate(), .signaled(SIGTERM))
    }

    func testSubprocessTimeoutKillsAndReapsTheWholeGroup() throws {
        let process = try Subprocess("sh", ["-c", "sleep 100 & echo $!; sleep 100"])
        let grandchild = try XCTUnwrap(
            pid_t(try process.waitForOutput("\n").trimmingCharacters(in: .whitespacesAndNewlines)))
        XCTAssertThrowsError(try process.wait(timeout: .milliseconds(200))) { error in
            XCTAssertTrue(error is TimeoutError, "\(error)")
        }
        XCTAssertTrue(isGone(process.pid))
        XCTAssertTrue(isGone(grandchild), "the background sleep was left behind")
    }

    func testSubprocessReapsOrphansLeftByAChildThatExited() throws {
        let process = try Subprocess("sh", ["-c", "sleep 100 & echo $!"])
        XCTAssertEqual(try process.wait(), .exited(0))
        let orphan = try XCTUnwrap(
            pid_t(process.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)))
        XCTAssertTrue(isGone(orphan), "the orphaned sleep was left behind (or left a zombie)")
    }

    func testDroppingASubprocessKillsAndReapsIt() throws {
        var pids: [pid_t] = []
        do {
            let process = try Subprocess("sh", ["-c", "sleep 100 & echo $!; sleep 100"])
            pids = [
                process.pid,
                pid_t(try process.waitForOutput("\n").trimmingCharacters(in: .whitespacesAndNewlines))!,
            ]
        }
        for pid in pids { XCTAssertTrue(isGone(pid), "pid \(pid) survived its Subprocess") }
    }

    func testSubprocessNamesAMissingProgram() {
        XCTAssertThrowsError(try Subprocess("swiped-no-such-program")) { error in
            XCTAssertTrue("\(error)".contains("swiped-no-such-program"), "\(error)")
        }
        XCTAssertThrowsError(try Subprocess.check("sh", ["-c", "echo oops >&2; exit 2"])) { error in
            XCTAssertTrue(
                "\(error)".contains("exited with status 2") && "\(error)".contains("oops"), "\(error)")
        }
    }

    // MARK: Binaries

    func testBinariesFindsTheBuiltProducts() throws {
        for path in [try Binaries.swiped, try Binaries.swipectl, try Binaries.logTorture] {
            XCTAssertEqual(access(path, X_OK), 0, path)
        }
        XCTAssertThrowsError(try Binaries.product("no-such-product")) { error in
            XCTAssertTrue("\(error)".contains("swift build"), "\(error)")
        }
        XCTAssertThrowsError(try Binaries.system("no-such-tool")) { error in
            XCTAssertTrue("\(error)".contains("no-such-tool"), "\(error)")
        }
        XCTAssertEqual(try Binaries.system("systemd-journald"), "/usr/lib/systemd/systemd-journald")
    }

    // MARK: NotifySocket

    func testNotifySocketReceivesSystemdNotify() throws {
        let notify = try NotifySocket()
        let result = try Subprocess.run(
            "systemd-notify", ["--ready", "--status=Up and running."], environment: notify.environment)
        XCTAssertEqual(result.status, .exited(0), result.standardError)
        XCTAssertEqual(try notify.waitFor("READY=1", timeout: .seconds(5)), "READY=1")
        XCTAssertEqual(try notify.waitFor("STATUS=", timeout: .seconds(5)), "STATUS=Up and running.")
        // Several assignments in one datagram are split; waitFor moves past what it returned.
        try Subprocess.check(
            "systemd-notify", ["--no-block", "STATUS=Idle.", "WATCHDOG=1"], environment: notify.environment)
        XCTAssertEqual(try notify.waitFor("STATUS="), "STATUS=Idle.")
        try notify.waitFor("WATCHDOG=1")
        XCTAssertEqual(notify.count("READY=1"), 1)
        XCTAssertThrowsError(try notify.waitFor("STOPPING=1", timeout: .milliseconds(100))) { error in
            XCTAssertTrue("\(error)".contains("READY=1"), "the error lists what came: \(error)")
        }
        XCTAssertEqual(notify.collect(for: .milliseconds(50)), [])
    }

    // MARK: LineClient

    func testLineClientTalksToSocat() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("echo.sock")
        let echo = try Subprocess("socat", ["UNIX-LISTEN:\(path),fork", "EXEC:cat"])
        defer { echo.kill(SIGTERM, group: true) }
        let client = try LineClient(path: path)  // retries until socat listens
        try client.send(json: ["op": "ping", "id": 1])
        let reply = try client.readJSON()
        XCTAssertEqual(reply["op"] as? String, "ping")
        XCTAssertEqual(reply["id"] as? Int, 1)
        // Events are set aside by readReply and handed out by readEvent.
        try client.send(#"{"event":"hello","seq":0}"#)
        try client.send(#"{"id":2,"ok":true}"#)
        XCTAssertEqual(try client.readReply()["id"] as? Int, 2)
        XCTAssertEqual(try client.readEvent()["event"] as? String, "hello")
        // Bytes split anywhere come back as one line; \r is kept.
        try client.sendRaw(Array("par".utf8))
        try client.sendRaw(Array("tial\r\n".utf8))
        XCTAssertEqual(try client.readLine(), "partial\r")
        XCTAssertThrowsError(try client.readLine(timeout: .milliseconds(100)))
        try client.send("not json")
        XCTAssertThrowsError(try client.readJSON())
        // Half-close: cat sees end-of-file and exits, socat closes, we read end-of-file.
        try client.send("last")
        try client.shutdownWrite()
        XCTAssertEqual(try client.readUntilClosed(), ["last"])
    }

    func testNetcatTalksToSocat() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("echo.sock")
        let echo = try Subprocess("socat", ["UNIX-LISTEN:\(path),fork", "EXEC:cat"])
        defer { echo.kill(SIGTERM, group: true) }
        _ = try LineClient(path: path)  // waits until it listens
        let result = try Subprocess.run(
            "nc", ["-U", "-N", path], input: "{\"op\":\"ping\"}\n", timeout: .seconds(5))
        XCTAssertEqual(result.status, .exited(0), result.standardError)
        XCTAssertEqual(result.standardOutput, "{\"op\":\"ping\"}\n")
    }

    // MARK: SocketActivation

    func testSocketActivationPassesTheListeningSocketAndNotifySocket() throws {
        // The activated program records what it got, says READY=1, then (as the same pid, so that
        // LISTEN_PID matches) becomes an inetd-style echo server accepting on the passed fd 3.
        let script = #"""
            echo "$LISTEN_FDS $LISTEN_PID $$ $LISTEN_FDNAMES" >"$OUT"
            systemd-notify --ready --status="Echoing."
            exec systemd-socket-activate --accept --inetd cat
            """#
        let out = try TemporaryDirectory()
        let activation = try SocketActivation(
            "sh", ["-c", script], environment: ["OUT": out.file("env")], socketMode: 0o660, fdName: "varlink")
        var info = stat()
        XCTAssertEqual(stat(activation.socketPath, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o660)
        XCTAssertThrowsError(try out.read("env"), "started before the first connection")

        let client = try activation.start()
        XCTAssertEqual(try activation.notify.waitFor("STATUS="), "STATUS=Echoing.")
        XCTAssertEqual(try out.read("env"), "1 \(activation.process.pid) \(activation.process.pid) varlink\n")
        try client.send("hello")
        XCTAssertEqual(try client.readLine(), "hello")
        let second = try activation.connect()
        try second.send("again")
        XCTAssertEqual(try second.readLine(), "again")

        // The inner systemd-socket-activate dies of SIGTERM; swiped must exit 0 instead.
        XCTAssertEqual(try activation.stop(), .signaled(SIGTERM))
    }

    // MARK: PrivateJournal

    func testPrivateJournalCollectsEntriesFromARealJournald() throws {
        let run = try PrivateJournal.run(
            script: #"""
                systemd-cat -t swiped-test -p notice echo hello
                printf 'MESSAGE=structured\nCLIENT=7\nPRIORITY=3\nSYSLOG_IDENTIFIER=swiped-test\n' | logger --journald
                echo "in $TEST_DIR"
                exit 7
                """#)
        XCTAssertEqual(run.status, .exited(7))
        XCTAssertEqual(run.output, "in \(run.directory.path)\n")
        let entries = run.entries(identifier: "swiped-test")
        XCTAssertEqual(entries.map { $0["MESSAGE"] }, ["hello", "structured"], "\(run.entries)")
        let hello = try XCTUnwrap(entries.first)
        XCTAssertEqual(hello["PRIORITY"], "5")
        XCTAssertEqual(hello["_TRANSPORT"], "stdout")
        let structured = try XCTUnwrap(run.entries(matching: ["CLIENT": "7"]).first)
        XCTAssertEqual(structured["PRIORITY"], "3")
        XCTAssertEqual(structured["SYSLOG_IDENTIFIER"], "swiped-test")
        XCTAssertEqual(structured["_TRANSPORT"], "journal")
    }

    func testPrivateJournalSessionReadsEntriesWhileTheScriptRuns() throws {
        // A stand-in for a daemon: logs, runs until SIGTERM, logs again and exits 0.
        let journal = try PrivateJournal(
            script: #"""
                trap 'systemd-cat -t swiped-test echo bye; exit 0' TERM
                systemd-cat -t swiped-test echo started
                echo started >"$TEST_DIR/started"
                while :; do sleep 0.02; done
                """#)
        _ = try poll(until: .seconds(5), "the script to start") { try? journal.directory.read("started") }
        let early = try journal.entries()
        XCTAssertEqual(
            early.filter { $0["SYSLOG_IDENTIFIER"] == "swiped-test" }.map { $0["MESSAGE"] }, ["started"])
        let run = try journal.stop()
        XCTAssertEqual(run.status, .exited(0), run.output)
        XCTAssertEqual(run.entries(identifier: "swiped-test").map { $0["MESSAGE"] }, ["started", "bye"])
    }

    func testPrivateJournalDecodesBinaryAndRepeatedFields() throws {
        let entry = try PrivateJournal.parseEntry(#"{"MESSAGE":[104,105],"TAG":["a","b"],"PRIORITY":"6"}"#)
        XCTAssertEqual(entry, ["MESSAGE": "hi", "TAG": "a\nb", "PRIORITY": "6"])
    }

    // MARK: TestUsers

    func testTestUsersRunCommandsAsTwoRealUsers() throws {
        let users = try TestUsers.ensure()
        XCTAssertEqual(try TestUsers.ensure().writer, users.writer, "not idempotent")
        XCTAssertNotEqual(users.writer.uid, users.reader.uid)
        XCTAssertNotEqual(users.writer.uid, 0)

        func ids(_ user: TestUsers.User) throws -> (uid: String, groups: Set<String>) {
            let uid = try Subprocess.check("setpriv", TestUsers.setpriv(user) + ["id", "-u"])
            let groups = try Subprocess.check("setpriv", TestUsers.setpriv(user) + ["id", "-G"])
            return (
                uid.trimmingCharacters(in: .whitespacesAndNewlines),
                Set(groups.split(whereSeparator: \.isWhitespace).map(String.init))
            )
        }
        let writer = try ids(users.writer)
        XCTAssertEqual(writer.uid, "\(users.writer.uid)")
        XCTAssertTrue(writer.groups.contains("\(users.writersGID)"), "\(writer.groups)")
        let reader = try ids(users.reader)
        XCTAssertEqual(reader.uid, "\(users.reader.uid)")
        XCTAssertFalse(reader.groups.contains("\(users.writersGID)"), "\(reader.groups)")
    }
}

// swiped under a service manager: socket activation (systemd-socket-activate), sd_notify
// (READY=1, STATUS=, STOPPING=1, WATCHDOG=1) and a graceful SIGTERM.

import Foundation
import Glibc
import XCTest

final class DaemonActivationTests: XCTestCase {
    func testServesThePassedSocketAndNotifiesReadyAndStatus() throws {
        let state = try TemporaryDirectory("swiped-act")
        // Were swiped to bind a socket of its own, it would be $XDG_RUNTIME_DIR/swiped.sock.
        let activation = try SocketActivation(
            try Binaries.swiped, ["--state", state.file("state")],
            environment: ["XDG_RUNTIME_DIR": state.path])
        let client = try activation.start()  // the first connection starts swiped
        let status = try activation.notify.waitFor("STATUS=")
        XCTAssertTrue(
            status.hasPrefix("STATUS=Serving 0 clients; 10 movies; store ok (sqlite, seq 10)"), status)

        let hello = try client.readJSON()
        XCTAssertEqual(hello["event"] as? String, "hello")
        XCTAssertEqual(int(hello["protocol"]), 1)
        XCTAssertEqual(int(hello["seq"]), 10, "the seed catalogue is 10 events")
        XCTAssertEqual(try client.ok(["op": "ping", "id": 1])["id"] as? Int, 1)
        let second = try activation.connect()
        XCTAssertEqual(try second.readJSON()["event"] as? String, "hello")

        XCTAssertEqual(access(state.file("swiped.sock"), F_OK), -1, "swiped bound a socket of its own")
        XCTAssertEqual(activation.notify.count("READY=1"), 1)
        XCTAssertEqual(try activation.stop(), .exited(0), activation.process.standardError)
        var info = stat()
        XCTAssertEqual(
            stat(activation.socketPath, &info), 0, "swiped removed a socket it did not bind (systemd owns it)"
        )
    }

    func testSIGTERMSaysStoppingAndByeAndExitsZeroWithinASecond() throws {
        let state = try TemporaryDirectory("swiped-act")
        let activation = try SocketActivation(try Binaries.swiped, ["--state", state.file("state")])
        let client = try activation.start()
        _ = try client.readJSON()  // hello
        // Mutations in flight when the signal comes are finished and answered before the bye.
        var pipelined = ""
        for n in 0..<20 { pipelined += #"{"op":"toggle-watched","movie":"matrix","id":\#(n)}"# + "\n" }
        try client.sendRaw(Array(pipelined.utf8))
        let first = try client.readReply()
        XCTAssertEqual(int(first["id"]), 0)

        let start = ContinuousClock.now
        activation.process.kill(SIGTERM)
        try activation.notify.waitFor("STOPPING=1", timeout: .seconds(2))
        let lines = try client.readUntilClosed(timeout: .seconds(2))
        let status = try activation.process.wait(timeout: .seconds(2))
        let elapsed = ContinuousClock.now - start
        XCTAssertEqual(status, .exited(0), activation.process.standardError)
        XCTAssertLessThan(elapsed, .seconds(1))

        let objects = try lines.map(LineClient.parse)
        XCTAssertEqual(objects.last?["event"] as? String, "bye", "\(lines)")
        XCTAssertEqual(objects.last?["reason"] as? String, "shutdown")
        let replies = objects.dropLast()
        XCTAssertTrue(replies.allSatisfy { $0["ok"] as? Bool == true && $0["event"] == nil }, "\(lines)")
        XCTAssertEqual(
            replies.compactMap { int($0["id"]) }, Array(1..<(1 + replies.count)), "in order, no gap")
    }

    func testSIGINTStopsGracefullyToo() throws {
        let daemon = try SwipedDaemon(prefix: "swiped-act")
        let client = try daemon.connect()
        daemon.process.kill(SIGINT)
        try daemon.notify.waitFor("STOPPING=1", timeout: .seconds(2))
        let lines = try client.readUntilClosed(timeout: .seconds(2))
        XCTAssertEqual(lines, [#"{"event":"bye","reason":"shutdown"}"#])
        XCTAssertEqual(try daemon.process.wait(timeout: .seconds(2)), .exited(0))
    }

    func testStatusLineFollowsTheNumberOfClients() throws {
        let daemon = try SwipedDaemon(prefix: "swiped-act")
        let ready = try daemon.notify.waitFor("STATUS=")
        XCTAssertTrue(ready.contains("0 clients"), ready)
        let a = try daemon.connect()
        let b = try daemon.connect()
        _ = (a, b)
        // STATUS= is rate-limited to once a second: the first may have gone between the two.
        _ = try poll(until: .seconds(3), "STATUS= saying 2 clients") {
            daemon.notify.assignments.contains { $0.hasPrefix("STATUS=Serving 2 clients;") } ? true : nil
        }
    }

    // MARK: Watchdog

    /// Starts swiped through `sh` so that WATCHDOG_PID can name the daemon's own pid ($$ is kept
    /// by exec), as systemd sets it.
    private func startWithWatchdog(pid: String) throws -> (Subprocess, NotifySocket, TemporaryDirectory) {
        let dir = try TemporaryDirectory("swiped-wd")
        let notify = try NotifySocket()
        let process = try Subprocess(
            "sh",
            [
                "-c", #"WATCHDOG_PID=\#(pid) WATCHDOG_USEC=200000 exec "$0" "$@""#, try Binaries.swiped,
                "--socket", dir.file("s.sock"), "--state", dir.file("state"),
            ], environment: notify.environment)
        try notify.waitFor("READY=1")
        return (process, notify, dir)
    }

    func testWatchdogPingsWhenWatchdogUsecIsSet() throws {
        let (process, notify, _) = try startWithWatchdog(pid: "$$")
        let received = notify.collect(for: .milliseconds(700))
        // sd-event pings at least every WATCHDOG_USEC/2 = 100 ms.
        XCTAssertGreaterThanOrEqual(received.filter { $0 == "WATCHDOG=1" }.count, 3, "\(received)")
        XCTAssertEqual(try process.terminate(), .exited(0), process.standardError)
    }

    func testNoWatchdogPingsForAnotherPid() throws {
        let (process, notify, _) = try startWithWatchdog(pid: "1")
        let received = notify.collect(for: .milliseconds(400))
        XCTAssertFalse(received.contains("WATCHDOG=1"), "\(received)")
        XCTAssertEqual(try process.terminate(), .exited(0), process.standardError)
    }
}

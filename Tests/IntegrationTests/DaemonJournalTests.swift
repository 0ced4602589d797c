// The journal entries of swiped, read back from a real journald in a private mount namespace:
// start, connects, disconnects, state changes and errors carry SYSLOG_IDENTIFIER=swiped,
// PRIORITY and the fields CLIENT, PEER_UID, PEER_PID, OP, MOVIE, SEQ, ERROR; drags log nothing.
// Each request's outcome (a change, a refusal) is a debug entry, sent only with
// --log-level debug. With stderr connected to journald, as systemd does, nothing is logged twice.

import Foundation
import Glibc
import XCTest

final class DaemonJournalTests: XCTestCase {
    func testConnectsChangesErrorsAndDisconnectsAreLoggedButDragsAreNot() throws {
        let journal = try PrivateJournal(
            script:
                #"exec "$SWIPED" --socket "$TEST_DIR/s.sock" --state "$TEST_DIR/state" --log-level debug"#,
            environment: ["SWIPED": try Binaries.swiped])
        let (client, hello) = try {
            let client = try LineClient(path: journal.directory.file("s.sock"), timeout: .seconds(10))
            return (client, try client.readJSON())
        }()
        let id = try XCTUnwrap(int(hello["client"]))
        try client.ok(["op": "toggle-watched", "movie": "matrix"])
        for dx in stride(from: -10, through: -200, by: -10) {
            try client.ok(["op": "drag", "movie": "seven", "dx": dx])
        }
        try client.ok(["op": "release", "movie": "seven", "dx": 0])
        XCTAssertEqual(LineClient.errorCode(of: try client.request(["op": "fly"])), "unknown-op")
        XCTAssertEqual(
            LineClient.errorCode(of: try client.request(["op": "remove", "movie": "alien"])), "not-found")
        client.close()
        // Wait for the disconnect to be logged, then stop.
        _ = try poll(until: .seconds(5), "the disconnect entry") {
            try journal.entries().contains { $0["MESSAGE"] == "client disconnected" } ? true : nil
        }
        let run = try journal.stop()
        XCTAssertEqual(run.status, .exited(0), run.output)

        let entries = run.entries(identifier: "swiped")
        XCTAssertTrue(
            entries.allSatisfy { ($0["PRIORITY"].flatMap(Int.init) ?? -1) >= 0 }, "every entry has a PRIORITY"
        )
        let started = try XCTUnwrap(entries.first { $0["MESSAGE"] == "swiped started" }, "\(entries)")
        XCTAssertEqual(started["SOCKET"], journal.directory.file("s.sock"))
        XCTAssertEqual(started["SEQ"], "10")

        let mine = entries.filter { $0["CLIENT"] == "\(id)" }
        let connected = try XCTUnwrap(mine.first { $0["MESSAGE"] == "client connected" }, "\(mine)")
        XCTAssertEqual(connected["PEER_UID"], "\(geteuid())")
        XCTAssertEqual(connected["PEER_PID"], "\(getpid())")
        XCTAssertEqual(connected["PRIORITY"], "6")

        let changed = try XCTUnwrap(mine.first { $0["OP"] == "toggle-watched" }, "\(mine)")
        XCTAssertEqual(changed["MOVIE"], "matrix")
        XCTAssertEqual(changed["SEQ"], "11")
        XCTAssertEqual(changed["PRIORITY"], "7")

        let unknown = try XCTUnwrap(mine.first { $0["ERROR"] == "unknown-op" }, "\(mine)")
        XCTAssertEqual(unknown["OP"], "fly")
        XCTAssertEqual(unknown["PRIORITY"], "7")
        let notFound = try XCTUnwrap(mine.first { $0["ERROR"] == "not-found" }, "\(mine)")
        XCTAssertEqual(notFound["OP"], "remove")
        XCTAssertEqual(notFound["MOVIE"], "alien")

        let disconnected = try XCTUnwrap(mine.first { $0["MESSAGE"] == "client disconnected" }, "\(mine)")
        XCTAssertEqual(disconnected["PEER_UID"], "\(geteuid())")
        XCTAssertEqual(disconnected["PEER_PID"], "\(getpid())")

        // 20 drags and a release: not one entry. Only the five above.
        XCTAssertEqual(mine.count, 5, mine.map { $0["MESSAGE"] ?? "?" }.joined(separator: ", "))
        XCTAssertFalse(entries.contains { $0["OP"] == "drag" || $0["OP"] == "release" })
        XCTAssertTrue(entries.contains { $0["MESSAGE"] == "stopping" && $0["SIGNAL"] == "SIGTERM" })
    }

    /// At the default level (info) the journal has the daemon's and the connections' lives, not
    /// one entry per request: a change and two refusals add nothing between the connect and the
    /// disconnect. At `--log-level notice` the connects go too; the start stays (notice).
    func testRequestOutcomesAreDebugEntriesOffByDefault() throws {
        for (level, expected) in [(nil, ["client connected", "client disconnected"]), ("notice", [])] {
            let option = level.map { " --log-level \($0)" } ?? ""
            let journal = try PrivateJournal(
                script: #"exec "$SWIPED" --socket "$TEST_DIR/s.sock" --state "$TEST_DIR/state""# + option,
                environment: ["SWIPED": try Binaries.swiped])
            let client = try LineClient(path: journal.directory.file("s.sock"), timeout: .seconds(10))
            let id = try XCTUnwrap(int(try client.readJSON()["client"]))
            XCTAssertEqual(int(try client.ok(["op": "toggle-watched", "movie": "matrix"])["seq"]), 11)
            XCTAssertEqual(LineClient.errorCode(of: try client.request(["op": "fly"])), "unknown-op")
            XCTAssertEqual(
                LineClient.errorCode(of: try client.request(["op": "remove", "movie": "alien"])), "not-found")
            client.close()
            if level == nil {
                _ = try poll(until: .seconds(5), "the disconnect entry") {
                    try journal.entries().contains { $0["MESSAGE"] == "client disconnected" } ? true : nil
                }
            }
            let run = try journal.stop()
            XCTAssertEqual(run.status, .exited(0), run.output)
            let entries = run.entries(identifier: "swiped")
            XCTAssertTrue(entries.contains { $0["MESSAGE"] == "swiped started" }, "\(level ?? "info")")
            let mine = entries.filter { $0["CLIENT"] == "\(id)" }
            XCTAssertEqual(mine.map { $0["MESSAGE"] ?? "?" }, expected, "\(level ?? "info")")
            XCTAssertFalse(entries.contains { $0["PRIORITY"] == "7" }, "\(level ?? "info")")
        }
    }

    /// A client that went before the daemon wrote to it: the failed write is a debug entry
    /// with its errno, and the disconnect says "peer gone"; no warning (a peer going is how
    /// connections end). The daemon is stopped (SIGSTOP) while the client connects, asks and
    /// closes, so that its first write, the hello, meets the closed socket.
    func testAWriteToAClientThatWentIsADebugEntryNotAWarning() throws {
        let journal = try PrivateJournal(
            script:
                #"exec "$SWIPED" --socket "$TEST_DIR/s.sock" --state "$TEST_DIR/state" --log-level debug"#,
            environment: ["SWIPED": try Binaries.swiped])
        let first = try LineClient(path: journal.directory.file("s.sock"), timeout: .seconds(10))
        let id = try XCTUnwrap(int(try first.readJSON()["client"])) + 1
        // The daemon's pid, as journald recorded it (the namespace is the mounts' only).
        let started = try journal.entries().first { $0["MESSAGE"] == "swiped started" }
        let daemon = try XCTUnwrap(started?["_PID"].flatMap { pid_t($0) }, "\(String(describing: started))")
        XCTAssertEqual(kill(daemon, SIGSTOP), 0)
        do {
            defer { kill(daemon, SIGCONT) }
            let gone = try LineClient(path: journal.directory.file("s.sock"))
            try gone.send(#"{"op":"ping"}"#)
            gone.close()
        }
        _ = try poll(until: .seconds(5), "the disconnect entry") {
            let entries = try journal.entries()
            return entries.contains { $0["MESSAGE"] == "client disconnected" && $0["CLIENT"] == "\(id)" }
                ? true : nil
        }
        let run = try journal.stop()
        XCTAssertEqual(run.status, .exited(0), run.output)
        let mine = run.entries(identifier: "swiped").filter { $0["CLIENT"] == "\(id)" }
        let failed = try XCTUnwrap(mine.first { $0["MESSAGE"] == "client gone while written to" }, "\(mine)")
        XCTAssertEqual(failed["PRIORITY"], "7")
        XCTAssertEqual(failed["ERROR"], "send: Broken pipe")
        let disconnected = try XCTUnwrap(mine.first { $0["MESSAGE"] == "client disconnected" }, "\(mine)")
        XCTAssertEqual(disconnected["REASON"], "peer gone")
        XCTAssertFalse(mine.contains { ($0["PRIORITY"].flatMap(Int.init) ?? 0) <= 4 }, "\(mine)")
    }

    /// A service manager that cannot be told (here $NOTIFY_SOCKET names nothing): one warning,
    /// for the first message (READY=1); the daemon serves on, and its later messages (STATUS=,
    /// STOPPING=1) fail without another entry.
    func testAServiceManagerThatCannotBeToldIsOneWarning() throws {
        let journal = try PrivateJournal(
            script:
                #"NOTIFY_SOCKET="$TEST_DIR/nobody" exec "$SWIPED" --socket "$TEST_DIR/s.sock" --state "$TEST_DIR/state""#,
            environment: ["SWIPED": try Binaries.swiped])
        let client = try LineClient(path: journal.directory.file("s.sock"), timeout: .seconds(10))
        _ = try client.readJSON()
        XCTAssertNotNil(try client.ok(["op": "ping"]))
        // The connect made the status line stale: it is sent (and fails) within a second.
        Thread.sleep(forTimeInterval: 1.2)
        client.close()
        let run = try journal.stop()
        XCTAssertEqual(run.status, .exited(0), run.output)
        let warnings = run.entries(identifier: "swiped").filter {
            $0["MESSAGE"] == "cannot notify the service manager, serving on (later failures are not logged)"
        }
        XCTAssertEqual(warnings.count, 1, "\(warnings)")
        XCTAssertEqual(warnings.first?["PRIORITY"], "4")
        XCTAssertEqual(warnings.first?["ERROR"], "sd_notify: No such file or directory")
        XCTAssertEqual(warnings.first?["NOTIFY"]?.hasPrefix("READY=1 STATUS=Serving 0 clients"), true)
    }

    /// As under systemd with `StandardError=journal`: stderr is a stream into journald (here made
    /// by systemd-cat, as `swiped-stderr`) and $JOURNAL_STREAM names it, as systemd sets it. Each
    /// entry is in the journal once, as swiped's own, and not one line comes through the stream.
    /// Without $JOURNAL_STREAM every entry would be there twice: the second run shows it.
    func testUnderSystemdStderrIsTheJournalAndNothingIsLoggedTwice() throws {
        for named in [true, false] {
            let setting =
                named
                ? #"export JOURNAL_STREAM=$(stat -L -c %d:%i /proc/self/fd/2); "# : "unset JOURNAL_STREAM; "
            let journal = try PrivateJournal(
                script: #"exec systemd-cat -t swiped-stderr sh -c '"# + setting
                    + #"exec "$SWIPED" --socket "$TEST_DIR/s.sock" --state "$TEST_DIR/state"'"#,
                environment: ["SWIPED": try Binaries.swiped])
            let client = try LineClient(path: journal.directory.file("s.sock"), timeout: .seconds(10))
            let id = try XCTUnwrap(int(try client.readJSON()["client"]))
            client.close()
            _ = try poll(until: .seconds(5), "the disconnect entry") {
                try journal.entries().contains { $0["MESSAGE"] == "client disconnected" } ? true : nil
            }
            let run = try journal.stop()
            XCTAssertEqual(run.status, .exited(0), run.output)
            let native = run.entries(identifier: "swiped").filter { $0["CLIENT"] == "\(id)" }
            XCTAssertEqual(native.map { $0["MESSAGE"] ?? "?" }, ["client connected", "client disconnected"])
            let streamed = run.entries(identifier: "swiped-stderr").compactMap { $0["MESSAGE"] }
            if named {
                XCTAssertEqual(streamed, [], "logged twice")
            } else {
                XCTAssertTrue(
                    streamed.contains { $0.contains(" info client connected client=\(id) ") }, "\(streamed)")
            }
        }
    }

    /// stderr a pipe whose reader went (`swiped 2>&1 | grep …` after grep quit): the daemon is not
    /// killed by SIGPIPE, the journal says once that stderr gets no more lines, and it serves on.
    func testAStderrWhoseReaderWentIsOneJournalEntryAndTheDaemonServesOn() throws {
        let journal = try PrivateJournal(
            script: #"""
                mkfifo "$TEST_DIR/err"
                (exec 3<"$TEST_DIR/err"; sleep 0.3) &
                exec "$SWIPED" --socket "$TEST_DIR/s.sock" --state "$TEST_DIR/state" 2>"$TEST_DIR/err"
                """#,
            environment: ["SWIPED": try Binaries.swiped])
        _ = try LineClient(path: journal.directory.file("s.sock"), timeout: .seconds(10))
        usleep(600_000)  // the reader is gone
        for _ in 0..<3 {
            let client = try LineClient(path: journal.directory.file("s.sock"), timeout: .seconds(10))
            _ = try client.readJSON()
            XCTAssertNotNil(try client.ok(["op": "ping"]))
            client.close()
        }
        let message = "cannot write to stderr, its lines stop (the journal still has every entry)"
        // The writer thread meets the broken pipe; the entry after that says so. The clients
        // above may all have been logged before the thread's write failed (one batch), so
        // each look makes another entry (a client that connects) until it is there.
        var clients = 3
        _ = try poll(until: .seconds(5), "the entry about stderr") {
            if try journal.entries().contains(where: { $0["MESSAGE"] == message }) { return true }
            let client = try LineClient(path: journal.directory.file("s.sock"), timeout: .seconds(10))
            _ = try client.readJSON()
            client.close()
            clients += 1
            return nil
        }
        let run = try journal.stop()
        XCTAssertEqual(run.status, .exited(0), run.output)
        let entries = run.entries(identifier: "swiped")
        let told = entries.filter { $0["MESSAGE"] == message }
        XCTAssertEqual(told.count, 1, "\(told)")
        XCTAssertEqual(told.first?["ERROR"], "write: Broken pipe")
        XCTAssertEqual(told.first?["PRIORITY"], "4")
        XCTAssertEqual(entries.filter { $0["MESSAGE"] == "client connected" }.count, 1 + clients)
    }
}

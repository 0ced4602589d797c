// What a person sees of swiped outside systemd: every journal entry at or above --log-level as a
// line on stderr, whether stderr is a terminal, a pipe or a file; nothing there when stderr is the
// journal ($JOURNAL_STREAM names it); a pipe nobody reads never holds the daemon up, and the lines
// it could not take are counted.

import Foundation
import Glibc
import XCTest

final class DaemonStderrTests: XCTestCase {
    /// `2026-12-03T11:40:02.123Z info …`: the time to the millisecond, then the level.
    private static let linePattern = try! NSRegularExpression(
        pattern:
            #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (emerg|alert|crit|error|warning|notice|info|debug) \S"#)

    private func assertEveryLineIsAnEntry(_ text: String, file: StaticString = #filePath, line: UInt = #line)
    {
        for entry in text.split(separator: "\n") {
            let range = NSRange(entry.startIndex..., in: entry)
            XCTAssertNotNil(
                Self.linePattern.firstMatch(in: String(entry), range: range), "\(entry)", file: file,
                line: line)
        }
    }

    /// Connects, changes matrix, asks for a movie that is not there, and goes; returns its number
    /// once the daemon logged the disconnect (or, when nothing is logged, after a moment).
    private func visit(_ daemon: SwipedDaemon, expectLines: Bool) throws -> Int {
        let (client, hello) = try daemon.connectWithHello()
        let id = try XCTUnwrap(int(hello["client"]))
        XCTAssertEqual(int(try client.ok(["op": "toggle-watched", "movie": "matrix"])["seq"]), 11)
        XCTAssertEqual(
            LineClient.errorCode(of: try client.request(["op": "remove", "movie": "alien"])), "not-found")
        client.close()
        if expectLines {
            try daemon.process.waitForOutput(
                "info client disconnected client=\(id) ", in: .standardError, timeout: .seconds(5))
        } else {
            usleep(300_000)
        }
        return id
    }

    func testAPipeGetsConnectsAndAtDebugTheChanges() throws {
        for debug in [false, true] {
            let daemon = try SwipedDaemon(
                arguments: debug ? ["--log-level", "debug"] : [], environment: ["JOURNAL_STREAM": nil])
            let id = try visit(daemon, expectLines: true)
            XCTAssertEqual(try daemon.stop(), .exited(0))
            let text = daemon.process.standardError
            assertEveryLineIsAnEntry(text)
            let lines = text.split(separator: "\n").map { $0.split(separator: " ", maxSplits: 1)[1] }
            XCTAssertTrue(
                lines.contains { $0.hasPrefix("notice swiped started socket=\(daemon.socketPath) ") }, text)
            XCTAssertTrue(
                lines.contains {
                    $0.hasPrefix(
                        "info client connected client=\(id) peer_pid=\(getpid()) peer_uid=\(geteuid()) ")
                }, text)
            XCTAssertTrue(lines.contains { $0.hasPrefix("info client disconnected client=\(id) ") }, text)
            XCTAssertTrue(lines.contains { $0.hasPrefix("notice stopping signal=SIGTERM ") }, text)
            let changed = "debug movie changed op=toggle-watched client=\(id) movie=matrix seq=11"
            let refused = "debug command refused op=remove client=\(id) movie=alien error=not-found"
            XCTAssertEqual(lines.contains { $0.hasPrefix(changed) }, debug, text)
            XCTAssertEqual(lines.contains { $0.hasPrefix(refused) }, debug, text)
            XCTAssertEqual(lines.contains { $0.hasPrefix("debug") }, debug, text)
        }
    }

    /// A file gets the same lines as a pipe (a shell's `2>>swiped.log`).
    func testAFileGetsTheSameLines() throws {
        let logs = try TemporaryDirectory("swiped-err")
        let path = logs.file("swiped.log")
        let daemon = try SwipedDaemon(
            environment: ["JOURNAL_STREAM": nil, "SWIPED_LOG": path],
            launcher: ["sh", "-c", #"exec "$0" "$@" 2>>"$SWIPED_LOG""#])
        let id = try visit(daemon, expectLines: false)
        XCTAssertEqual(try daemon.stop(), .exited(0))
        let text = try String(contentsOfFile: path, encoding: .utf8)
        assertEveryLineIsAnEntry(text)
        XCTAssertTrue(text.contains(" info client connected client=\(id) "), text)
        XCTAssertTrue(text.contains(" notice stopping signal=SIGTERM "), text)
    }

    /// As systemd runs it with StandardError=journal: $JOURNAL_STREAM is stderr's own
    /// device:inode, and not one line is written there (the journal has them all). Naming another
    /// inode is not enough.
    func testNothingGoesToAStderrThatJournalStreamNames() throws {
        for matching in [true, false] {
            // `stat` inherits the pipe as its fd 2: its device and inode are the daemon's stderr's.
            let journalStream =
                matching
                ? #"$(stat -L -c %d:%i /proc/self/fd/2)"# : #"$(stat -L -c %d /proc/self/fd/2):1"#
            let daemon = try SwipedDaemon(
                arguments: ["--log-level", "debug"],
                launcher: ["sh", "-c", #"export JOURNAL_STREAM="# + journalStream + #"; exec "$0" "$@""#])
            _ = try visit(daemon, expectLines: !matching)
            XCTAssertEqual(try daemon.stop(), .exited(0))
            let text = daemon.process.standardError
            if matching {
                XCTAssertEqual(text, "")
            } else {
                XCTAssertTrue(text.contains(" info client connected "), text)
            }
        }
    }

    /// stderr a FIFO that nobody reads (a terminal stopped with Ctrl-S is the same): the daemon
    /// answers at once all the same; once it is read, the lines come in order, and where some
    /// could not be kept a line says how many.
    func testAPipeNobodyReadsHoldsNothingUpAndTheLostLinesAreCounted() throws {
        let directory = try TemporaryDirectory("swiped-fifo")
        let fifo = directory.file("stderr")
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let reader = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        XCTAssertGreaterThanOrEqual(reader, 0)
        defer { close(reader) }
        // F_SETPIPE_SZ (Linux; Glibc declares it only with _GNU_SOURCE): one page.
        XCTAssertEqual(fcntl(reader, 1031, 4096), 4096)
        let daemon = try SwipedDaemon(
            arguments: ["--log-level", "debug"], environment: ["JOURNAL_STREAM": nil, "SWIPED_FIFO": fifo],
            launcher: ["sh", "-c", #"exec "$0" "$@" 2>"$SWIPED_FIFO""#])
        let client = try daemon.connect()
        // 3,000 refusals, a debug line of ≈ 180 bytes each: far more than the pipe and the
        // daemon's 64 KiB hold.
        let requests = 3000
        var batch = ""
        for n in 0..<requests { batch += #"{"op":"remove","movie":"nosuch","id":\#(n)}"# + "\n" }
        try client.sendRaw(Array(batch.utf8))
        for n in 0..<requests {
            XCTAssertEqual(int(try client.readReply(timeout: .seconds(10))["id"]), n)
        }
        let start = ContinuousClock.now
        XCTAssertNotNil(try client.ok(["op": "ping"]))
        XCTAssertLessThan(ContinuousClock.now - start, .milliseconds(500), "a ping waited for stderr")

        // Each refusal's line, in order, or counted where it went missing: read until all
        // 3,000 are accounted for.
        var text = ""
        var buffer = [UInt8](repeating: 0, count: 65536)
        var counts: [Int] = []
        _ = try poll(until: .seconds(10), "every refusal's line, or its count\n\(text.suffix(2000))") {
            () -> Bool? in
            while true {
                let n = read(reader, &buffer, buffer.count)
                guard n > 0 else { break }
                text += String(decoding: buffer[0..<n], as: UTF8.self)
            }
            var accounted = 0
            counts = []
            // Whole lines only: a read may end inside one.
            for line in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
                let words = line.split(separator: " ")
                if words.count > 4, words[1] == "warning", words[4] == "dropped:" {
                    XCTAssertEqual(
                        words[3...].joined(separator: " "), "lines dropped: stderr was not read fast enough")
                    counts.append(Int(words[2]) ?? 0)
                    accounted += Int(words[2]) ?? 0
                } else if words.count > 1, words[1] == "debug" {
                    XCTAssertTrue(
                        line.contains(" op=remove ") && line.hasSuffix(#"with id \"nosuch\"""#), "\(line)")
                    accounted += 1
                }
            }
            XCTAssertLessThanOrEqual(accounted, requests)
            return accounted == requests ? true : nil
        }
        XCTAssertFalse(counts.isEmpty, "no line was dropped: the pipe was read after all?")
        XCTAssertEqual(try daemon.stop(), .exited(0))
        assertEveryLineIsAnEntry(text)
    }
}

/// A flood of one warning is folded (issue 40): the first at once, then one entry with the
/// count when its interval (5 s) ends, so that journald's rate limit never drops the others.
final class DaemonLogFoldingTests: XCTestCase {
    func testAFloodOfRefusedConnectionsIsOneLineAndACount() throws {
        let daemon = try SwipedDaemon(arguments: ["--max-clients", "1"], prefix: "swiped-fold")
        let kept = try daemon.connect()
        for _ in 0..<100 {
            let refused = try LineClient(path: daemon.socketPath)
            XCTAssertEqual(try refused.readJSON()["reason"] as? String, "too-many-clients")
        }
        try daemon.process.waitForOutput(
            "warning connection refused (repeated) ", in: .standardError, timeout: .seconds(10))
        let lines = daemon.process.standardError.split(separator: "\n")
        let refused = lines.filter { $0.contains(" warning connection refused client=") }
        let summaries = lines.filter { $0.contains(" warning connection refused (repeated) ") }
        XCTAssertEqual(refused.count, 1, "refusals logged one by one: \(refused.count)")
        XCTAssertEqual(summaries.count, 1, "\(summaries)")
        XCTAssertTrue(summaries.first?.contains(" repeated=99 ") ?? false, "\(summaries)")
        XCTAssertTrue(summaries.first?.contains(" reason=too-many-clients") ?? false, "\(summaries)")
        // The next refusal, an interval later, is logged at once.
        let late = try LineClient(path: daemon.socketPath)
        XCTAssertEqual(try late.readJSON()["reason"] as? String, "too-many-clients")
        _ = try poll(until: .seconds(5), "the next refusal to be logged") { () -> Bool? in
            daemon.process.standardError.components(separatedBy: " warning connection refused client=").count
                == 3 ? true : nil
        }
        withExtendedLifetime(kept) {}
        XCTAssertEqual(try daemon.stop(), .exited(0))
    }
}

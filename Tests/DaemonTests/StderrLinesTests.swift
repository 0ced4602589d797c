import XCTest

@testable import Daemon

#if canImport(Glibc)
    import Glibc
#endif

/// The journal's lines on stderr: their form, and the thread that writes them, which never lets
/// a full pipe hold up the caller and says how many lines it dropped.
final class StderrLinesTests: XCTestCase {
    // 2026-12-03T11:40:02.123456Z
    private let time: Int64 = 1_796_298_002_123_456

    private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    func testALineHasTheTimeTheLevelTheMessageAndTheFieldsInLowerCase() {
        let line = StderrLines.format(
            microseconds: time, .info, "client connected",
            [("CLIENT", "7"), ("PEER_UID", "1000"), ("WRITER", "yes")])
        XCTAssertEqual(
            text(line), "2026-12-03T11:40:02.123Z info client connected client=7 peer_uid=1000 writer=yes\n")
        XCTAssertEqual(
            text(StderrLines.format(microseconds: time, .err, "cannot start", [])),
            "2026-12-03T11:40:02.123Z error cannot start\n")
    }

    /// A value that would not split back on spaces is quoted; control characters (a movie id a
    /// client chose) are escapes, so one entry is one line and nothing reaches the terminal raw.
    func testValuesAreQuotedWhenTheyMustBeAndControlCharactersEscaped() {
        let line = StderrLines.format(
            microseconds: time, .debug, "command refused",
            [
                ("ERROR", "send: Broken pipe"), ("MOVIE", "a\"b"), ("EMPTY", ""), ("KEY", "x=y"),
                ("PATH", #"C:\dir"#), ("ID", "\u{1b}[2Jbad\nline\t!"),
            ])
        XCTAssertEqual(
            text(line),
            #"2026-12-03T11:40:02.123Z debug command refused error="send: Broken pipe" movie="a\"b" "#
                + #"empty="" key="x=y" path="C:\\dir" id=\x1b[2Jbad\nline\t!"# + "\n")
        XCTAssertEqual(text(line).filter { $0 == "\n" }.count, 1)
    }

    func testJournalStreamMustNameStderrsOwnDeviceAndInode() {
        var st = stat()
        st.st_dev = 13
        st.st_ino = 4242
        XCTAssertTrue(Journal.isJournal(st, journalStream: "13:4242"))
        XCTAssertFalse(Journal.isJournal(st, journalStream: "13:4243"))
        XCTAssertFalse(Journal.isJournal(st, journalStream: "14:4242"))
        XCTAssertFalse(Journal.isJournal(st, journalStream: nil))
        XCTAssertFalse(Journal.isJournal(st, journalStream: "13"))
        XCTAssertFalse(Journal.isJournal(st, journalStream: "x:4242"))
    }

    // MARK: The writer

    private func pipe(size: Int32? = nil) throws -> (read: Int32, write: Int32) {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(Glibc.pipe(&fds), 0)
        // F_SETPIPE_SZ (Linux; Glibc declares it only with _GNU_SOURCE).
        if let size { XCTAssertGreaterThanOrEqual(fcntl(fds[1], 1031, size), size) }
        return (fds[0], fds[1])
    }

    /// Everything in the pipe now (its read end made non-blocking).
    private func readAll(_ fd: Int32) -> String {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = read(fd, &buffer, buffer.count)
            guard n > 0 else { break }
            bytes += buffer[0..<n]
        }
        return text(bytes)
    }

    private func line(_ n: Int) -> [UInt8] {
        StderrLines.format(microseconds: time, .info, "line", [("N", "\(n)")])
    }

    func testLinesReachTheFileDescriptorInOrder() throws {
        let (r, w) = try pipe()
        defer { close(r) }
        let lines = StderrLines(fd: w)
        for n in 0..<100 { XCTAssertNil(lines.append(line(n))) }
        lines.drain(milliseconds: 5000)
        let got = readAll(r).split(separator: "\n")
        XCTAssertEqual(got.count, 100)
        XCTAssertEqual(
            got.map { $0.split(separator: " ").last.map(String.init) }, (0..<100).map { "n=\($0)" })
    }

    /// A pipe nobody reads: appending never waits; past the buffer, lines are dropped, and once
    /// the pipe is read again the thread writes the backlog and then how many it dropped.
    func testAFullPipeNeverBlocksAndTheDroppedLinesAreCounted() throws {
        let (r, w) = try pipe(size: 4096)
        defer { close(r) }
        let lines = StderrLines(fd: w, capacity: 8192)
        let start = ContinuousClock.now
        for n in 0..<1000 { XCTAssertNil(lines.append(line(n))) }
        XCTAssertLessThan(ContinuousClock.now - start, .seconds(1), "appending waited for the pipe")

        // Every line is there in order, or counted where it went missing: each count stands
        // where its lines would have been, and the counts and the lines add up to the 1000.
        // Read until they do (there may be several rounds of lines and a count).
        var got = ""
        var next = 0
        var counts: [Int] = []
        let deadline = ContinuousClock.now + .seconds(10)
        while next < 1000 && ContinuousClock.now < deadline {
            got += readAll(r)
            next = 0
            counts = []
            for received in got.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
                let words = received.split(separator: " ")
                if words.count > 2, words[1] == "warning" {
                    XCTAssertEqual(
                        words[4...].joined(separator: " "), "dropped: stderr was not read fast enough",
                        "\(received)")
                    let count = Int(words[2]) ?? 0
                    XCTAssertGreaterThan(count, 0, "\(received)")
                    counts.append(count)
                    next += count
                } else {
                    XCTAssertEqual(words.last.map(String.init), "n=\(next)", "\(received)")
                    next += 1
                }
            }
            usleep(10_000)
        }
        XCTAssertEqual(next, 1000, "the lines and the counts add up")
        XCTAssertFalse(counts.isEmpty, "a line was dropped")
        // Then lines flow again.
        XCTAssertNil(lines.append(line(5000)))
        lines.drain(milliseconds: 5000)
        XCTAssertTrue(readAll(r).hasSuffix("n=5000\n"))
    }

    /// Once a line is dropped, so is every later one until the count is written, even one that
    /// would fit: the count must stand where the lines went missing, not after later lines.
    func testAfterADropNoLaterLineJumpsAheadOfTheCount() throws {
        let (r, w) = try pipe(size: 4096)
        defer { close(r) }
        // The pipe full before the writer starts: its first write waits (EAGAIN, then poll).
        _ = fcntl(w, F_SETFL, fcntl(w, F_GETFL) | O_NONBLOCK)
        let filler = [UInt8](repeating: UInt8(ascii: "."), count: 4095) + [UInt8(ascii: "\n")]
        while write(w, filler, filler.count) > 0 {}
        let lines = StderrLines(fd: w, capacity: 4096)
        XCTAssertNil(lines.append(line(0)))
        usleep(50_000)  // the writer takes line 0 and waits for room
        var n = 1
        while line(n).count * (n + 2) < 4096 - 300 {
            XCTAssertNil(lines.append(line(n)))
            n += 1
        }
        let long = StderrLines.format(
            microseconds: time, .info, "line", [("PAD", String(repeating: "x", count: 1000))])
        XCTAssertNil(lines.append(long))  // does not fit: dropped
        XCTAssertNil(lines.append(line(n)))  // would fit: dropped all the same

        var got = ""
        let deadline = ContinuousClock.now + .seconds(10)
        while !got.contains("dropped") && ContinuousClock.now < deadline {
            got += readAll(r)
            usleep(10_000)
        }
        let mine = got.split(separator: "\n").filter { !$0.hasPrefix(".") }
        XCTAssertEqual(mine.count, n + 1, "\(mine)")
        XCTAssertEqual(
            mine.dropLast().map { $0.split(separator: " ").last.map(String.init) }, (0..<n).map { "n=\($0)" })
        XCTAssertTrue(
            mine.last?.hasSuffix("warning 2 lines dropped: stderr was not read fast enough") ?? false,
            "\(mine)")
    }

    /// A pipe whose reader went: the write fails with EPIPE, the failure is told once, and later
    /// lines are discarded without waiting. (That SIGPIPE does not end the daemon is
    /// DaemonJournalTests': the test runner ignores SIGPIPE.)
    func testAPipeWithoutAReaderIsToldOnce() throws {
        let (r, w) = try pipe()
        close(r)
        let lines = StderrLines(fd: w)
        XCTAssertNil(lines.append(line(0)))
        lines.drain(milliseconds: 5000)
        XCTAssertEqual(lines.append(line(1)), "write: Broken pipe")
        XCTAssertNil(lines.append(line(2)))
        lines.drain(milliseconds: 5000)
    }
}

import EventLog
import Foundation
import Glibc
import XCTest

/// Crash test with a real process: log-torture appends under load and prints each event after
/// its commit returned; we SIGKILL it at random moments, many times, and check that every
/// printed event is in the log, in order, exactly once, with gapless seqs.
final class CrashTests: XCTestCase {
    static func tortureBinary() -> String? {
        var candidates: [String] = []
        if let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            var dir = (exe as NSString).deletingLastPathComponent
            // The test binary may sit inside a bundle directory (…/debug/X.xctest/…).
            for _ in 0..<4 {
                candidates.append(dir + "/log-torture")
                dir = (dir as NSString).deletingLastPathComponent
            }
        }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
        candidates.append(root + "/.build/debug/log-torture")
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    func testAcknowledgedEventsSurviveSIGKILL() throws {
        guard let binary = CrashTests.tortureBinary() else {
            return XCTFail(
                "log-torture not found next to the test binary: run `swift build --build-tests` first")
        }
        let path = makeTempDir(self) + "/events.sqlite3"
        var rng = SystemRandomNumberGenerator()
        var acked: [(seq: UInt64, key: String)] = []
        var killedWithAcks = 0
        for cycle in 0..<24 {
            // Even cycles: killed at a random moment after the start (maybe while opening or
            // creating the log); odd cycles: at a random moment after the first ack.
            let lines = try runAndKill(
                binary, [path, "c\(cycle)", "8"],
                afterMs: Int.random(in: cycle % 2 == 0 ? 5...260 : 0...150, using: &rng),
                afterFirstLine: cycle % 2 == 1)
            var last: UInt64 = acked.last?.seq ?? 0
            for line in lines {
                let parts = line.split(separator: " ")
                guard parts.count == 2, let seq = UInt64(parts[0]) else { return XCTFail("bad line \(line)") }
                XCTAssertGreaterThan(seq, last, "acks out of order in cycle \(cycle)")
                last = seq
                acked.append((seq, String(parts[1])))
            }
            if !lines.isEmpty { killedWithAcks += 1 }
            // The log opens cleanly after every crash and holds every ack so far.
            let log = try EventLog(path: path)
            for a in acked.suffix(lines.count) {
                let e = try log.event(forKey: a.key)
                XCTAssertEqual(e?.seq, a.seq, "acknowledged \(a.key) at \(a.seq) is missing or moved")
            }
            log.close()
        }
        XCTAssertGreaterThanOrEqual(killedWithAcks, 12, "too few cycles produced acks")
        // Whole log: gapless from 1, keys unique, every ack present exactly once.
        let log = try EventLog(path: path)
        var expect: UInt64 = 1
        var keys: [String: UInt64] = [:]
        var dupes = 0
        try log.forEachEvent(after: 0) { e in
            if e.seq != expect { return false }
            expect += 1
            if let k = e.key { if keys.updateValue(e.seq, forKey: k) != nil { dupes += 1 } }
            return true
        }
        XCTAssertEqual(expect - 1, try log.latestSeq(), "gap in seqs at \(expect)")
        XCTAssertEqual(dupes, 0)
        for a in acked { XCTAssertEqual(keys[a.key], a.seq, "ack \(a.key)@\(a.seq)") }
        print("crash test: \(acked.count) acknowledged events over 24 SIGKILLs, log holds \(expect - 1)")
    }

    /// Spawns the binary with stdout on a pipe, kills it with SIGKILL after `afterMs`, reaps it
    /// and returns the complete lines it printed.
    private func runAndKill(_ binary: String, _ args: [String], afterMs: Int, afterFirstLine: Bool) throws
        -> [String]
    {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_addclose(&actions, fds[0])
        posix_spawn_file_actions_addclose(&actions, fds[1])
        let argv: [UnsafeMutablePointer<CChar>?] = ([binary] + args).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, binary, &actions, nil, argv, environ)
        close(fds[1])
        guard rc == 0 else {
            close(fds[0])
            throw XCTSkip("posix_spawn failed: \(rc)")
        }
        var out: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 65536)
        var deadline =
            DispatchTime.now().uptimeNanoseconds + UInt64(afterFirstLine ? 5000 : afterMs) * 1_000_000
        var waitingForFirst = afterFirstLine
        var p = pollfd(fd: fds[0], events: Int16(POLLIN), revents: 0)
        while true {
            let now = DispatchTime.now().uptimeNanoseconds
            if waitingForFirst && out.contains(UInt8(ascii: "\n")) {
                waitingForFirst = false
                deadline = now + UInt64(afterMs) * 1_000_000
            }
            if now >= deadline { break }
            let r = poll(&p, 1, Int32((deadline - now) / 1_000_000) + 1)
            if r > 0 {
                let n = buf.withUnsafeMutableBytes { read(fds[0], $0.baseAddress, $0.count) }
                if n <= 0 { break }
                out += buf[..<n]
            }
        }
        kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        while true {
            let n = buf.withUnsafeMutableBytes { read(fds[0], $0.baseAddress, $0.count) }
            if n <= 0 { break }
            out += buf[..<n]
        }
        close(fds[0])
        // The child only dies by our SIGKILL: anything else (a failed commit) is a failure.
        let signaled = (status & 0x7f) != 0 && (status & 0x7f) != 0x7f
        XCTAssertTrue(
            signaled && (status & 0x7f) == SIGKILL, "log-torture exited on its own (status \(status))")
        // Only complete lines count: a torn last line was never fully reported.
        let text = String(decoding: out, as: UTF8.self)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        lines.removeLast()
        return lines
    }
}

// Subscribers that catch up from the log and never read (issue 40, point 4): each holds at most
// its catch-up window (64 KB) in the daemon, the daemon gives the memory back when they go, and
// a subscriber that reads gets every event once, in order, live ones included.
import Foundation
import Glibc
import XCTest

final class DaemonCatchUpTests: XCTestCase {
    static let events = 20_000
    static let hogs = 200

    /// What each subscriber that never reads may cost the daemon: its window (64 KB) and the
    /// allocator's rounding. Before the bound, each held what `--max-queue` / 2 let it (the
    /// default 1 MiB: about 700 kB each in VmRSS, 140 MB for the 200).
    static let perHogKB = 72
    /// The rest of the growth allowed: the pages read for them, which the allocator keeps for
    /// the next ones (54 to 90 kB a subscriber in all measured, 11 to 18 MB for the 200).
    static let slackKB = 10 * 1024

    /// A daemon on a log of `events` events (`loadgen --fill`: the seed, then toggles).
    private func daemon(_ dir: TemporaryDirectory) throws -> AbuseDaemon {
        let fill = try Subprocess(
            try Binaries.product("loadgen"), ["--fill", dir.file("state"), "--events", "\(Self.events)"])
        XCTAssertEqual(try fill.wait(timeout: .seconds(60)), .exited(0), fill.standardError)
        return try AbuseDaemon(state: dir.file("state"), socket: dir.file("s.sock"))
    }

    /// The daemon's CPU time so far, all its threads, in clock ticks (/proc/PID/stat).
    private func cpuTicks(_ daemon: AbuseDaemon) throws -> Int {
        let stat = try String(contentsOfFile: "/proc/\(daemon.pid)/stat", encoding: .utf8)
        // After the command's closing parenthesis: state is field 3, utime and stime 14 and 15.
        let fields = stat[stat.range(of: ")", options: .backwards)!.upperBound...].split(separator: " ")
        return (Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0)
    }

    /// The daemon's VmRSS once it is done: it used no CPU for 600 ms (at most a tick: the pings)
    /// and its VmRSS moved by less than 256 kB meanwhile, while `other` is answered at once.
    private func settledRSS(_ daemon: AbuseDaemon, _ other: LineClient) throws -> Int {
        var last = (rss: try daemon.rssKB(), cpu: try cpuTicks(daemon))
        var quiet = 0
        let deadline = Deadline(.seconds(30))
        while !deadline.hasPassed {
            usleep(300_000)
            XCTAssertNotNil(try other.ok(["op": "ping"], timeout: .seconds(5)))
            let now = (rss: try daemon.rssKB(), cpu: try cpuTicks(daemon))
            quiet = abs(now.rss - last.rss) < 256 && now.cpu - last.cpu <= 1 ? quiet + 1 : 0
            if quiet == 2 { return now.rss }
            last = now
        }
        XCTFail("the daemon still busy after 30 s (VmRSS \(last.rss) kB)")
        return last.rss
    }

    /// The bytes waiting in `client`'s socket, not read yet.
    private static func unread(_ client: LineClient) -> Int {
        var n: Int32 = 0
        return ioctl(client.fileDescriptor, UInt(FIONREAD), &n) == 0 ? Int(n) : 0
    }

    /// The seq of each `movie` event line, read until `last` (a raw scan: 20,000 lines parsed
    /// as JSON would take most of the test's time).
    private func readSeqs(_ client: LineClient, through last: Int) throws -> [Int] {
        var seqs: [Int] = []
        while seqs.last ?? 0 < last {
            guard let line = try client.readLine(timeout: .seconds(10)) else {
                throw LineClientError("end of file after \(seqs.count) events")
            }
            guard line.hasPrefix(#"{"event":"movie","seq":"#) else { continue }
            let digits = line.dropFirst(#"{"event":"movie","seq":"#.count).prefix { $0.isNumber }
            seqs.append(Int(digits) ?? -1)
        }
        return seqs
    }

    func testSubscribersThatNeverReadHoldTheirWindowAndGiveItBackAndOneThatReadsGetsEverything() throws {
        let dir = try TemporaryDirectory()
        let daemon = try daemon(dir)
        let other = try daemon.connect()
        let before = try settledRSS(daemon, other)
        var hogs: [LineClient] = []
        for _ in 0..<Self.hogs {
            let hog = try LineClient(path: daemon.socket)
            try hog.send(#"{"op":"subscribe","from":0}"#)
            hogs.append(hog)
        }
        // Each socket's buffer full (about 208 kB on Linux, the kernel's), then the daemon's.
        _ = try poll(until: .seconds(20), "every subscriber's socket buffer full") { () -> Bool? in
            hogs.allSatisfy { Self.unread($0) > 150_000 } ? true : nil
        }
        let held = try settledRSS(daemon, other)
        let bound = Self.hogs * Self.perHogKB + Self.slackKB
        XCTAssertLessThan(
            held - before, bound, "VmRSS in kB: \(before) before the subscribers, \(held) with them")
        print(
            "VmRSS: \(before) kB, \(held) kB with \(Self.hogs) subscribers from 0 that do not read",
            "(\((held - before) / Self.hogs) kB each)")
        // A client is still served, at once.
        let start = ContinuousClock.now
        XCTAssertEqual(
            int(try other.ok(["op": "toggle-watched", "movie": "matrix"])["seq"]), Self.events + 1)
        XCTAssertLessThan(ContinuousClock.now - start, .seconds(1))

        // A subscriber that reads, among them, gets every event once, in order, the changes
        // committed while it is far behind too (they come from the log, after the others).
        let reader = try daemon.connect()
        XCTAssertEqual(int(try reader.ok(["op": "subscribe", "from": 0])["seq"]), Self.events + 1)
        var seqs = try readSeqs(reader, through: 1_000)
        for n in 2...51 {
            XCTAssertEqual(
                int(try other.ok(["op": "toggle-watched", "movie": "seven"])["seq"]), Self.events + n)
        }
        seqs += try readSeqs(reader, through: Self.events + 51)
        XCTAssertEqual(seqs, Array(1...(Self.events + 51)), "every event once, in order")
        // Caught up: the next change comes live.
        XCTAssertEqual(
            int(try other.ok(["op": "toggle-watched", "movie": "seven"])["seq"]), Self.events + 52)
        XCTAssertEqual(try readSeqs(reader, through: Self.events + 52), [Self.events + 52])
        reader.close()

        // They go: the memory comes back (the daemon trims a second after they went).
        hogs.removeAll()
        usleep(1_500_000)
        let after = try settledRSS(daemon, other)
        print("VmRSS: \(after) kB once they went")
        XCTAssertLessThan(after - before, max((held - before) / 4, 4 * 1024), "VmRSS in kB once they went")
    }
}

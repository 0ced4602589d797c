// Reliability: clients that misbehave. A subscriber that never reads, a client that sends
// without reading, a connection flood past --max-clients, half-closed sockets, clients that
// vanish mid-line. Throughout, another client's ping latency stays low, the daemon's memory
// stays bounded (VmRSS) and it keeps running.

import Foundation
import Glibc
import TestSupport
import XCTest

final class ReliabilityAbuseTests: XCTestCase {
    /// Pings on its own connection until stopped; the round-trip times in seconds.
    final class Pinger: @unchecked Sendable {
        private let stopFlag = Locked(false)
        private let samples = Locked<[Double]>([])
        private let failure = Locked<String?>(nil)
        private let done = DispatchSemaphore(value: 0)

        init(socket: String) {
            let thread = Thread { [self] in
                defer { done.signal() }
                do {
                    let client = try LineClient(path: socket)
                    _ = try client.readJSON()
                    var n = 0
                    while !stopFlag.get {
                        n += 1
                        let t0 = monotonicSeconds()
                        let reply = try client.request(["op": "ping", "id": n], timeout: .seconds(5))
                        let dt = monotonicSeconds() - t0
                        guard reply["id"] as? Int == n, reply["ok"] as? Bool == true else {
                            throw LineClientError("bad ping reply \(reply)")
                        }
                        samples.with { $0.append(dt) }
                        usleep(2_000)
                    }
                } catch {
                    failure.with { $0 = "\(error)" }
                }
            }
            thread.start()
        }

        /// How many pings have been answered so far.
        var count: Int { samples.get.count }

        /// Stops and returns the latencies (throws if pinging failed).
        func stop() throws -> [Double] {
            stopFlag.with { $0 = true }
            done.wait()
            if let failure = failure.get { throw LineClientError("pinger failed: \(failure)") }
            return samples.get
        }
    }

    func assertLatency(
        _ samples: [Double], _ what: String, file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertGreaterThan(samples.count, 10, "too few pings during \(what)", file: file, line: line)
        let p50 = percentile(samples, 0.5) * 1000
        let p99 = percentile(samples, 0.99) * 1000
        let max = (samples.max() ?? 0) * 1000
        print(
            String(
                format: "abuse: ping during %@: %d pings, p50 %.2f ms, p99 %.2f ms, max %.2f ms",
                what, samples.count, p50, p99, max))
        XCTAssertLessThan(p99, pingP99BoundMilliseconds, "ping p99 during \(what)", file: file, line: line)
    }

    func makeDaemon(_ arguments: [String] = []) throws -> (TemporaryDirectory, AbuseDaemon) {
        let dir = try TemporaryDirectory("swiped-abuse")
        let daemon = try AbuseDaemon(
            state: dir.file("state"), socket: dir.file("s.sock"), arguments: arguments)
        return (dir, daemon)
    }

    func setNonBlocking(_ fd: Int32) {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }

    // MARK: - A subscriber that never reads

    func testSubscriberThatNeverReadsGetsSlowConsumerAndOthersKeepTheirLatency() throws {
        let (dir, daemon) = try makeDaemon(["--max-queue", "32768"])
        defer { withExtendedLifetime(dir) {} }
        // Two subscribers that do not read: one reads late (it must find its bye), the other
        // never (it must be closed anyway: its descriptor and queue are not kept).
        let late = try daemon.connect()
        let never = try daemon.connect()
        for lazy in [late, never] {
            XCTAssertEqual(try lazy.request(["op": "subscribe"])["ok"] as? Bool, true)
        }
        let good = try daemon.connect()
        XCTAssertEqual(try good.request(["op": "subscribe"])["ok"] as? Bool, true)
        let rssBefore = try daemon.rssKB()

        let pinger = Pinger(socket: daemon.socket)
        // A writer toggles until both are told they are too slow, and for at least 20 pings (on
        // a fast machine the subscribers are told within a few ms, too few pings to judge by).
        let writer = try daemon.connect()
        var sent = 0
        var goodSeqs: [Int] = []
        let deadline = Deadline(.seconds(30))
        // Counted by the daemon (`status`): its journal folds the second warning into a count
        // logged seconds later (a flood of one warning is one line and a count).
        func told() throws -> Int {
            let status = try XCTUnwrap(try writer.request(["op": "status"])["status"] as? [String: Any])
            return (status["clients"] as? [String: Any])?["dropped"] as? Int ?? -1
        }
        while try !deadline.hasPassed && (told() < 2 || pinger.count < 20) {
            for i in 0..<32 {
                try writer.send(json: ["op": "toggle-watched", "movie": "matrix", "id": sent + i])
            }
            for _ in 0..<32 { XCTAssertEqual(try writer.readReply()["ok"] as? Bool, true) }
            sent += 32
            // The good subscriber reads as it goes.
            while goodSeqs.count < sent, let event = try? good.readEvent(timeout: .milliseconds(100)) {
                if let seq = event["seq"] as? Int { goodSeqs.append(seq) }
            }
        }
        let latencies = try pinger.stop()
        XCTAssertEqual(try told(), 2, "the subscribers that do not read were not told after \(sent) events")

        // The late reader: events, then exactly one bye slow-consumer as the last line, then EOF.
        let lines = try late.readUntilClosed(timeout: .seconds(10))
        let byes = lines.filter { $0.contains(#""event":"bye""#) }
        XCTAssertEqual(byes, [#"{"event":"bye","reason":"slow-consumer"}"#])
        XCTAssertEqual(lines.last, byes.first, "the bye is not the last line")
        let movieEvents = lines.filter { $0.contains(#""event":"movie""#) }.count
        XCTAssertLessThan(movieEvents, sent, "the late subscriber got every event: the cap did not apply")

        // The one that never reads is closed within the grace period, unread.
        var pfd = pollfd(fd: never.fileDescriptor, events: Int16(0x2000 /* POLLRDHUP */), revents: 0)
        XCTAssertEqual(poll(&pfd, 1, 3_000), 1, "a subscriber that never reads is never closed")
        XCTAssertNotEqual(Int32(pfd.revents) & (0x2000 | Int32(POLLHUP)), 0)

        // The good subscriber got every event, in order, without a gap.
        while goodSeqs.count < sent {
            let event = try good.readEvent(timeout: .seconds(10))
            if let seq = event["seq"] as? Int { goodSeqs.append(seq) }
        }
        XCTAssertEqual(goodSeqs, Array((goodSeqs.first ?? 0)..<((goodSeqs.first ?? 0) + sent)))
        assertLatency(latencies, "slow subscribers and \(sent) toggles")
        let rssAfter = try daemon.rssKB()
        print(
            "abuse: slow subscribers told bye within \(sent) events (the late one had \(movieEvents)); "
                + "RSS \(rssBefore) → \(rssAfter) kB")
        XCTAssertLessThan(rssAfter - rssBefore, rssGrowthBoundKB)
        XCTAssertEqual(try writer.request(["op": "ping"])["ok"] as? Bool, true)
    }

    // MARK: - A client that sends without reading

    func testClientThatSendsWithoutReadingStopsBeingReadAndMemoryStaysBounded() throws {
        let (dir, daemon) = try makeDaemon()
        defer { withExtendedLifetime(dir) {} }
        let flood = try daemon.connect()
        let rssBefore = try daemon.rssKB()
        let pinger = Pinger(socket: daemon.socket)
        setNonBlocking(flood.fileDescriptor)
        // Requests with large replies (`list`, about 1.5 KB each), sent until the socket refuses
        // more for a while: the daemon has stopped reading.
        let line = Array(#"{"op":"list"}"#.utf8) + [0x0A]
        let chunk = Array(repeating: line, count: 1000).flatMap { $0 }
        var sentLines = 0
        var blockedSince: Double?
        var peakRSS = rssBefore
        let start = monotonicSeconds()
        while monotonicSeconds() - start < (soak ? 30 : 4) {
            let n = chunk.withUnsafeBytes {
                send(flood.fileDescriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if n > 0 {
                // Whole lines only: finish a partial one.
                var rest = n % line.count == 0 ? 0 : line.count - n % line.count
                while rest > 0 {
                    let m = chunk.withUnsafeBytes {
                        send(
                            flood.fileDescriptor, $0.baseAddress! + (line.count - rest), rest,
                            Int32(MSG_NOSIGNAL))
                    }
                    if m > 0 { rest -= m } else { usleep(1_000) }
                }
                sentLines += (n + line.count - 1) / line.count
                blockedSince = nil
            } else {
                XCTAssertEqual(errno, EAGAIN)
                if blockedSince == nil { blockedSince = monotonicSeconds() }
                if monotonicSeconds() - blockedSince! > 1.0 { break }
                usleep(10_000)
            }
            peakRSS = max(peakRSS, try daemon.rssKB())
        }
        XCTAssertNotNil(blockedSince, "the daemon read \(sentLines) requests without its replies being read")
        usleep(200_000)
        peakRSS = max(peakRSS, try daemon.rssKB())
        let latencies = try pinger.stop()
        print("abuse: flood of \(sentLines) unread list requests; RSS \(rssBefore) kB → peak \(peakRSS) kB")
        XCTAssertLessThan(peakRSS - rssBefore, rssGrowthBoundKB, "RSS grew by \(peakRSS - rssBefore) kB")
        assertLatency(latencies, "a client that sends without reading")

        // Every request is still answered once the client reads, in order, and nothing else.
        try flood.shutdownWrite()
        var replies = 0
        while let text = try flood.readLine(timeout: .seconds(30)) {
            if text.hasPrefix(#"{"ok":true,"seq":"#) {
                replies += 1
            } else {
                XCTFail("unexpected: \(text.prefix(200))"); break
            }
        }
        XCTAssertEqual(replies, sentLines)
        XCTAssertTrue(daemon.isRunning)
    }

    // MARK: - Connection flood

    func testConnectionFloodPastMaxClientsIsRefusedWithByeAndTheDaemonCarriesOn() throws {
        let (dir, daemon) = try makeDaemon(["--max-clients", "16"])
        defer { withExtendedLifetime(dir) {} }
        let rssBefore = try daemon.rssKB()
        let descriptorsBefore = settledDescriptors(daemon.pid)
        var served: [LineClient] = []
        var refused = 0
        for round in 0..<(soak ? 20 : 3) {
            for _ in 0..<64 {
                let client = try LineClient(path: daemon.socket)
                let first = try client.readJSON()
                switch first["event"] as? String {
                case "hello": served.append(client)
                case "bye":
                    XCTAssertEqual(first["reason"] as? String, "too-many-clients")
                    XCTAssertNil(try client.readLine(), "a refused connection was not closed")
                    refused += 1
                default: XCTFail("unexpected first line \(first)")
                }
            }
            XCTAssertEqual(served.count, 16, "round \(round)")
            for client in served { XCTAssertEqual(try client.request(["op": "ping"])["ok"] as? Bool, true) }
            for client in served { client.close() }
            served.removeAll()
            usleep(50_000)
        }
        XCTAssertEqual(refused, (soak ? 20 : 3) * 48)
        let after = try daemon.connect()
        XCTAssertEqual(try after.request(["op": "ping"])["ok"] as? Bool, true)
        let rssAfter = try daemon.rssKB()
        print("abuse: connection flood: \(refused) refused with bye; RSS \(rssBefore) → \(rssAfter) kB")
        XCTAssertLessThan(rssAfter - rssBefore, rssGrowthBoundKB)
        after.close()
        var descriptorsAfter = openDescriptors(daemon.pid)
        for _ in 0..<50 where descriptorsAfter != descriptorsBefore {
            usleep(100_000)
            descriptorsAfter = openDescriptors(daemon.pid)
        }
        XCTAssertEqual(descriptorsAfter, descriptorsBefore, "descriptors leaked")
    }

    /// The daemon's open descriptors once connections that just closed (the launcher's probe)
    /// are gone.
    private func settledDescriptors(_ pid: pid_t) -> Int {
        usleep(300_000)
        return openDescriptors(pid)
    }

    /// The daemon's open descriptors now.
    private func openDescriptors(_ pid: pid_t) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? -1
    }

    // MARK: - Half-closed sockets

    func testHalfClosedSocketsGetEveryReplyThenEndOfFile() throws {
        let (dir, daemon) = try makeDaemon()
        defer { withExtendedLifetime(dir) {} }
        let failures = Locked<[String]>([])
        let socket = daemon.socket
        runThreads(soak ? 32 : 8) { t in
            do {
                let client = try LineClient(path: socket)
                _ = try client.readJSON()
                var lines: [String] = []
                for i in 0..<50 {
                    switch i % 5 {
                    case 0: lines.append(#"{"op":"ping","id":\#(i)}"#)
                    case 1:
                        lines.append(
                            #"{"op":"toggle-watched","movie":"seven","key":"h\#(t)-\#(i)","id":\#(i)}"#)
                    case 2: lines.append(#"{"op":"list","id":\#(i)}"#)
                    case 3: lines.append(#"{"op":"nope","id":\#(i)}"#)
                    default: lines.append(#"{"op":"drag","movie":"seven","dx":-30,"id":\#(i)}"#)
                    }
                }
                // The last line has no newline: it is still a request.
                try client.sendRaw(Array((lines.joined(separator: "\n")).utf8))
                try client.shutdownWrite()
                let got = try client.readUntilClosed(timeout: .seconds(20))
                let ids = try got.map { try LineClient.parse($0) }.filter { $0["event"] == nil }.map {
                    $0["id"] as? Int ?? -1
                }
                if ids != Array(0..<50) { failures.with { $0.append("client \(t): replies \(ids)") } }
            } catch {
                failures.with { $0.append("client \(t): \(error)") }
            }
        }
        for failure in failures.get { XCTFail(failure) }
        let observer = try daemon.connect()
        let history = try observer.wholeHistory()
        XCTAssertEqual(try observer.listMovies().movies, foldHistory(history))
        XCTAssertEqual(history.count, 10 + (soak ? 32 : 8) * 10)
    }

    // MARK: - Clients that vanish

    func testClientsVanishingMidLineOrMidCommitLeaveTheDaemonFine() throws {
        let (dir, daemon) = try makeDaemon(["--max-line", "4096"])
        defer { withExtendedLifetime(dir) {} }
        let observer = try daemon.connect()
        let descriptorsBefore = settledDescriptors(daemon.pid)
        let rssBefore = try daemon.rssKB()
        let pinger = Pinger(socket: daemon.socket)
        let socket = daemon.socket
        let seconds = soak ? 30.0 : 2.0
        let count = Locked(0)
        // Two threads of vanishing clients (the machine has two cores; the pinger needs one too).
        runThreads(2) { t in
            var rng = SplitMix64(seed: UInt64(t + 1))
            let start = monotonicSeconds()
            var i = 0
            while monotonicSeconds() - start < seconds {
                i += 1
                count.with { $0 += 1 }
                usleep(500)
                guard let client = try? LineClient(path: socket) else { continue }
                let key = "v\(t)-\(i)"
                let full = #"{"op":"toggle-watched-with-friends","movie":"inception","key":"\#(key)"}"#
                var bytes: [UInt8]
                // How the client goes away: mid-line, right after a mutation (before its reply),
                // mid long line, mid too-large line, with replies unread, or while a subscriber
                // is catching up.
                switch rng.next() % 6 {
                case 0: bytes = Array(full.utf8.prefix(Int(rng.next() % UInt64(full.utf8.count))))
                case 1: bytes = Array((full + "\n").utf8)
                case 2: bytes = Array((full + "\n" + String(repeating: "x", count: 3000)).utf8)
                case 3: bytes = Array(String(repeating: "y", count: 10_000).utf8)
                case 4: bytes = Array((String(repeating: #"{"op":"list"}"# + "\n", count: 200)).utf8)
                default: bytes = Array(#"{"op":"subscribe","from":0}"#.utf8) + [0x0A]
                }
                try? client.sendRaw(bytes)
                if rng.next() % 2 == 0 {
                    // Reset rather than close: SO_LINGER 0.
                    var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
                    setsockopt(
                        client.fileDescriptor, SOL_SOCKET, SO_LINGER, &linger,
                        socklen_t(MemoryLayout<Glibc.linger>.size))
                }
                client.close()
            }
        }
        let latencies = try pinger.stop()
        usleep(300_000)
        XCTAssertTrue(daemon.isRunning)
        XCTAssertEqual(try observer.request(["op": "ping"])["ok"] as? Bool, true)
        let history = try observer.wholeHistory()
        XCTAssertEqual(try observer.listMovies().movies, foldHistory(history))
        // Every connection was closed by the daemon too: no descriptor kept.
        var descriptorsAfter = openDescriptors(daemon.pid)
        for _ in 0..<50 where descriptorsAfter != descriptorsBefore {
            usleep(100_000)
            descriptorsAfter = openDescriptors(daemon.pid)
        }
        if descriptorsAfter != descriptorsBefore {
            let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(daemon.pid)/fd")) ?? []
            let targets = fds.map {
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(daemon.pid)/fd/\($0)"))
                    ?? "?"
            }
            let log = daemon.standardError
            XCTFail(
                "the daemon kept descriptors of vanished clients: \(descriptorsBefore) → \(descriptorsAfter): \(targets); "
                    + "connected \(log.components(separatedBy: "client connected").count - 1), "
                    + "disconnected \(log.components(separatedBy: "client disconnected").count - 1)")
        }
        let rssAfter = try daemon.rssKB()
        print(
            "abuse: \(count.get) vanishing clients; RSS \(rssBefore) → \(rssAfter) kB; fds \(descriptorsBefore) → \(descriptorsAfter)"
        )
        XCTAssertLessThan(rssAfter - rssBefore, rssGrowthBoundKB)
        assertLatency(latencies, "vanishing clients")
    }
}

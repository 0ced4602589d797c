// How the daemon is doing (issue 31), on the real binaries: the `status` op's figures after
// known traffic, `swipectl status` and its exit statuses, and the metrics listener of
// `--metrics` (its `/metrics` renders the same figures; bad requests and floods of scrapers
// are bounded and never slow the protocol's clients).

import Foundation
import Glibc
import XCTest

final class DaemonStatusTests: XCTestCase {
    /// `status`'s object, asked on `client`.
    func status(_ client: LineClient) throws -> [String: Any] {
        let reply = try client.ok(["op": "status"])
        return try XCTUnwrap(reply["status"] as? [String: Any])
    }

    func object(_ o: [String: Any], _ key: String) throws -> [String: Any] {
        try XCTUnwrap(o[key] as? [String: Any], key)
    }

    /// 5 clients, 20 toggles, a subscriber that does not read dropped, a 6th client refused:
    /// `status` and `/metrics` count exactly that.
    func testStatusCountsKnownTraffic() throws {
        let port = try freeTCPPort()
        let daemon = try SwipedDaemon(
            arguments: ["--max-clients", "5", "--max-queue", "4096", "--metrics", "127.0.0.1:\(port)"],
            prefix: "swiped-st")
        let writer = try daemon.connect()
        let reader = try daemon.connect()
        let lazy = try daemon.connect()
        let idle = try (0..<2).map { _ in try daemon.connect() }
        XCTAssertEqual(try reader.request(["op": "subscribe"])["ok"] as? Bool, true)
        XCTAssertEqual(try lazy.request(["op": "subscribe"])["ok"] as? Bool, true)
        // A 6th: refused with too-many-clients.
        let refused = try LineClient(path: daemon.socketPath)
        XCTAssertEqual(try refused.readJSON()["reason"] as? String, "too-many-clients")

        for i in 0..<20 {
            XCTAssertEqual(
                try writer.request(["op": "toggle-watched", "movie": "matrix", "id": i])["ok"] as? Bool, true)
        }
        XCTAssertEqual(try writer.errorCode(#"{"op":"nope"}"#), "unknown-op")
        var s = try status(writer)
        var clients = try object(s, "clients")
        XCTAssertEqual(int(clients["connected"]), 5)
        XCTAssertEqual(int(clients["peak"]), 5)
        XCTAssertEqual(int(clients["subscribers"]), 2)
        XCTAssertEqual(int(clients["writers"]), 5)
        XCTAssertEqual(int(clients["refused"]), 1)
        XCTAssertEqual(int(clients["dropped"]), 0)
        let requests = try object(s, "requests")
        XCTAssertEqual(int(requests["toggle-watched"]), 20)
        XCTAssertEqual(int(requests["subscribe"]), 2)
        XCTAssertEqual(int(requests["status"]), 1, "counted as it is handled: itself included")
        XCTAssertEqual(int(try object(s, "errors")["unknown-op"]), 1)
        let latency = try object(s, "latency")
        XCTAssertEqual(int(try object(latency, "mutation")["count"]), 20)
        let commits = try object(s, "commits")
        XCTAssertEqual(int(commits["events"]), 20)
        XCTAssertEqual(int(try object(commits, "duration")["count"]), int(commits["transactions"]))
        XCTAssertGreaterThan(int(commits["transactions"]) ?? 0, 0)
        XCTAssertGreaterThan(int(try object(latency, "fanout")["count"]) ?? 0, 0)
        let store = try object(s, "store")
        XCTAssertEqual(store["kind"] as? String, "sqlite")
        XCTAssertEqual(store["state"] as? String, "ok")
        XCTAssertEqual(int(store["seq"]), 30)
        XCTAssertEqual(store["path"] as? String, daemon.stateDirectory + "/events.sqlite3")
        XCTAssertEqual(int(try object(s, "server")["pid"]), Int(daemon.pid))
        XCTAssertEqual(int(try object(s, "process")["maxClients"]), 5)

        // The same figures over HTTP.
        let (code, text) = try HTTPProbe.get(port: port, "/metrics")
        XCTAssertEqual(code, 200, text)
        XCTAssertEqual(sample(text, "swiped_clients"), 5)
        XCTAssertEqual(sample(text, #"swiped_requests_total{op="toggle-watched"}"#), 20)
        XCTAssertEqual(sample(text, #"swiped_errors_total{code="unknown-op"}"#), 1)
        XCTAssertEqual(sample(text, #"swiped_request_duration_seconds_count{class="mutation"}"#), 20)
        XCTAssertEqual(sample(text, "swiped_clients_refused_total"), 1)
        XCTAssertEqual(sample(text, "swiped_store_up"), 1)
        XCTAssertEqual(try HTTPProbe.get(port: port, "/health").body, "ok\n")

        // The lazy subscriber, which reads nothing, is dropped once its queue passes 4096 bytes
        // (the socket's buffer first fills).
        var more = 0
        _ = try poll(until: .seconds(60), "the lazy subscriber to be dropped") { () throws -> Bool? in
            for i in 0..<50 {
                try writer.send(json: [
                    "op": "toggle-watched-with-friends", "movie": "seven", "id": 1000 + more + i,
                ])
            }
            for _ in 0..<50 { _ = try writer.readReply() }
            more += 50
            while (try? reader.readEvent(timeout: .milliseconds(1))) != nil {}
            return int(try object(try status(writer), "clients")["dropped"]) == 1 ? true : nil
        }
        s = try status(writer)
        clients = try object(s, "clients")
        XCTAssertEqual(int(clients["subscribers"]), 1)
        XCTAssertEqual(int(try object(s, "requests")["toggle-watched-with-friends"]), more)
        withExtendedLifetime((idle, lazy, refused)) {}
        XCTAssertEqual(try daemon.stop(), .exited(0), daemon.process.standardError)
    }

    /// Four sockets that send their heads a byte at a time cannot blind monitoring (issue 40):
    /// each scrape takes the place of the stalest one, and new slow ones keep coming.
    func testSlowHeadsCannotKeepScrapesOut() throws {
        let port = try freeTCPPort()
        let daemon = try SwipedDaemon(arguments: ["--metrics", "127.0.0.1:\(port)"], prefix: "swiped-st")
        var slow: [HTTPProbe] = []
        for _ in 0..<4 {
            slow.append(try HTTPProbe(port: port))
            try slow.last!.send("G")
        }
        var codes: [Int] = []
        for _ in 0..<24 {
            // Those still open send one more byte; an evicted one's send fails, which is fine.
            for p in slow { _ = try? p.send("E") }
            slow.append(try HTTPProbe(port: port))
            try slow.last!.send("G")
            codes.append(try HTTPProbe.get(port: port, "/metrics").status)
            usleep(20_000)
        }
        XCTAssertEqual(codes, Array(repeating: 200, count: 24))
        // A request in absolute-form, as a proxy sends it.
        XCTAssertEqual(try HTTPProbe.get(port: port, "http://127.0.0.1:\(port)/health").status, 200)
        XCTAssertEqual(try daemon.stop(), .exited(0), daemon.process.standardError)
    }

    func testSwipectlStatusPrintsAScreenAndExitsByTheStoresHealth() throws {
        let daemon = try SwipedDaemon(prefix: "swiped-st")
        let result = try Subprocess.run(
            try Binaries.swipectl, ["--socket", daemon.socketPath, "status"],
            environment: ["SWIPED_SOCKET": nil])
        XCTAssertEqual(result.status, .exited(0), result.standardError)
        XCTAssertTrue(
            result.standardOutput.hasPrefix("● swiped 0.1.0 (protocol 1), pid \(daemon.pid): healthy\n"),
            result.standardOutput)
        XCTAssertTrue(
            result.standardOutput.contains("\n  Store:    sqlite, ok since "), result.standardOutput)
        let json = try Subprocess.run(
            try Binaries.swipectl, ["--socket", daemon.socketPath, "--json", "status"],
            environment: ["SWIPED_SOCKET": nil])
        XCTAssertEqual(json.status, .exited(0), json.standardError)
        let reply = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
        XCTAssertEqual(
            (reply["status"] as? [String: Any])?["store"].flatMap { ($0 as? [String: Any])?["state"] }
                as? String, "ok")
        XCTAssertEqual(try daemon.stop(), .exited(0), daemon.process.standardError)
        // Nobody there: 3.
        let gone = try Subprocess.run(
            try Binaries.swipectl, ["--socket", daemon.socketPath, "status"],
            environment: ["SWIPED_SOCKET": nil])
        XCTAssertEqual(gone.status, .exited(3), gone.standardError)
    }

    // MARK: - The metrics listener

    func testBadRequestsAreRefusedAndScrapersAreBounded() throws {
        let port = try freeTCPPort()
        let daemon = try SwipedDaemon(arguments: ["--metrics", "127.0.0.1:\(port)"], prefix: "swiped-st")
        let client = try daemon.connect()
        XCTAssertEqual(try HTTPProbe.get(port: port, "/nope").status, 404)
        XCTAssertEqual(try HTTPProbe.get(port: port, "/metrics", method: "POST").status, 405)
        let head = try HTTPProbe.get(port: port, "/health", method: "HEAD")
        XCTAssertEqual(head.status, 200)
        XCTAssertEqual(head.body, "")
        // A head past 8 KiB: 431.
        let big = try HTTPProbe(port: port)
        try big.send(
            "GET /metrics HTTP/1.1\r\nX-Padding: " + String(repeating: "a", count: 9000) + "\r\n\r\n")
        XCTAssertEqual(HTTPProbe.parse(try big.readAll()).status, 431)

        // 100 at once, none sending: at most 4 are held, each newcomer taking the place of the
        // stalest one still sending its head (answered 408 at once, not at its deadline); the
        // 4 newest wait for their heads. Meanwhile the protocol is answered without delay.
        var probes = try (0..<100).map { _ in try HTTPProbe(port: port) }
        var evicted = 0
        let evictStart = ContinuousClock.now
        for probe in probes[..<96] {
            let (status, _) = HTTPProbe.parse(try probe.readAll(timeout: .seconds(10)))
            if status == 408 { evicted += 1 }
        }
        XCTAssertEqual(evicted, 96, "the stalest heads were not given up for the newer ones")
        XCTAssertLessThan(
            ContinuousClock.now - evictStart, .seconds(3), "evicted at their deadline, not at once")
        probes.removeFirst(96)
        let start = ContinuousClock.now
        XCTAssertEqual(try client.ok(["op": "ping", "id": 1])["id"] as? Int, 1)
        XCTAssertLessThan(ContinuousClock.now - start, .milliseconds(500))
        // Slowloris: the ones that send nothing (or half a head) are answered 408 and closed
        // within 5 s of their accept.
        try probes[0].send("GET /metrics HTTP/1.1\r\n")
        let slowStart = ContinuousClock.now
        let slow = HTTPProbe.parse(try probes[0].readAll(timeout: .seconds(10)))
        XCTAssertEqual(slow.status, 408)
        XCTAssertLessThan(ContinuousClock.now - slowStart, .seconds(6))
        probes.removeAll()
        // Free again: a scrape is served.
        let (code, text) = try poll(until: .seconds(10), "a scrape to be served again") {
            let r = try HTTPProbe.get(port: port, "/metrics")
            return r.status == 200 ? r : nil
        }
        XCTAssertEqual(code, 200)
        XCTAssertEqual(sample(text, "swiped_clients"), 1)
        XCTAssertEqual(try daemon.stop(), .exited(0), daemon.process.standardError)
    }

    func testMetricsNeedsANumericAddressAndAFreePort() throws {
        let bad = try SwipedDaemon.run(["--metrics", "localhost:9464"])
        XCTAssertEqual(bad.status, .exited(2), bad.standardError)
        XCTAssertTrue(bad.standardError.contains("--metrics needs a numeric ADDRESS:PORT"), bad.standardError)
        // Taken: the daemon does not start, and says why.
        let port = try freeTCPPort()
        let first = try SwipedDaemon(arguments: ["--metrics", "127.0.0.1:\(port)"], prefix: "swiped-st")
        let dir = try TemporaryDirectory("swiped-st")
        let second = try SwipedDaemon.run([
            "--socket", dir.file("s.sock"), "--state", dir.file("state"), "--metrics", "127.0.0.1:\(port)",
        ])
        XCTAssertEqual(second.status, .exited(1), second.standardError)
        XCTAssertTrue(
            second.standardError.contains("--metrics 127.0.0.1:\(port): bind"), second.standardError)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.file("state")), "the store was opened")
        XCTAssertEqual(try first.stop(), .exited(0), first.process.standardError)
    }
}

// STATUS= (sd_notify), the line `systemctl status swiped` shows: the clients and the store's
// state, following them at most once a second, through a NOTIFY_SOCKET the test binds.

import Foundation
import Glibc
import XCTest

final class DaemonStatusLineTests: XCTestCase {
    /// Clients coming and going, 20 connects a second: STATUS= follows them at most once a
    /// second, not once per connect, and says the last count once they stop.
    func testStatusFollowsTheClientsAtMostOnceASecond() throws {
        let daemon = try SwipedDaemon(environment: ["JOURNAL_STREAM": nil])
        XCTAssertEqual(
            try daemon.notify.waitFor("STATUS="),
            "STATUS=Serving 0 clients; 10 movies; store ok (sqlite, seq 10)")
        let before = daemon.notify.assignments.count
        var clients: [LineClient] = []
        let start = ContinuousClock.now
        for n in 0..<60 {
            clients.append(try daemon.connect())
            if n % 3 == 2 { clients.removeFirst().close() }  // 40 stay
            usleep(50_000)
        }
        let churn = ContinuousClock.now - start
        let last = try poll(until: .seconds(3), "STATUS= saying 40 clients") { () -> String? in
            daemon.notify.assignments.last { $0.hasPrefix("STATUS=Serving 40 clients;") }
        }
        XCTAssertEqual(last, "STATUS=Serving 40 clients; 10 movies; store ok (sqlite, seq 10)")
        let statuses = daemon.notify.assignments[before...].filter { $0.hasPrefix("STATUS=") }
        // One at most per second of churn (and one for its end): never one per connect.
        XCTAssertGreaterThanOrEqual(statuses.count, 2, "\(statuses)")
        XCTAssertLessThanOrEqual(Double(statuses.count), churn / .seconds(1) + 2, "\(statuses)")
        // Quiet: nothing more.
        XCTAssertEqual(daemon.notify.collect(for: .milliseconds(1500)).filter { $0.hasPrefix("STATUS=") }, [])
        // A change after the quiet spell shows at once, not a second later.
        let quiet = daemon.notify.assignments.count
        let changed = ContinuousClock.now
        let one = try daemon.connect()
        let after = try poll(until: .seconds(3), "STATUS= after the quiet spell") { () -> String? in
            daemon.notify.assignments[quiet...].first { $0.hasPrefix("STATUS=") }
        }
        XCTAssertLessThan(ContinuousClock.now - changed, .milliseconds(900), after)
        XCTAssertEqual(after, "STATUS=Serving 41 clients; 10 movies; store ok (sqlite, seq 10)")
        one.close()
        clients.removeAll()
        _ = try poll(until: .seconds(3), "STATUS= saying 0 clients") { () -> Bool? in
            daemon.notify.assignments.last?.hasPrefix("STATUS=Serving 0 clients;") == true ? true : nil
        }
    }

    /// Once stopping, STATUS= says so to the end. A client that reads nothing holds the exit up
    /// (for at most 0.5 s, its `bye` unsent); another that goes meanwhile must not bring back a
    /// "Serving" line.
    func testStoppingIsTheLastStatus() throws {
        let daemon = try SwipedDaemon(
            arguments: ["--max-queue", "\(64 << 20)"], environment: ["JOURNAL_STREAM": nil])
        let stuck = try daemon.connect()
        // Replies it never reads: far more than the socket buffers hold.
        try stuck.sendRaw(Array(String(repeating: #"{"op":"list"}"# + "\n", count: 2000).utf8))
        let leaving = try daemon.connect()
        _ = try poll(until: .seconds(3), "STATUS= saying 2 clients") { () -> Bool? in
            daemon.notify.assignments.last?.hasPrefix("STATUS=Serving 2 clients;") == true ? true : nil
        }
        usleep(1_100_000)  // a quiet second: the next change would go at once
        daemon.process.kill(SIGTERM)
        XCTAssertEqual(
            try leaving.readUntilClosed(timeout: .seconds(2)), [#"{"event":"bye","reason":"shutdown"}"#])
        leaving.close()
        XCTAssertEqual(try daemon.process.wait(timeout: .seconds(2)), .exited(0))
        stuck.close()
        let statuses = daemon.notify.assignments.filter { $0.hasPrefix("STATUS=") }
        XCTAssertEqual(statuses.last, "STATUS=Stopping: finishing pending commits.", "\(statuses)")
    }
}

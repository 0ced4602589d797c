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
}

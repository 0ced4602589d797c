// People and their rights on several daemons of one PostgreSQL database (issue 45): a token
// made on one daemon signs in on another; its revocation on one reaches a live connection of
// the other within a second; a role given on one is the role on both.

import Foundation
import Glibc
import XCTest

final class PostgresPeopleTests: PostgresTestCase {
    func testARevocationOnOneDaemonReachesALiveConnectionOfAnotherWithinASecond() throws {
        let webPorts = [try freeTCPPort(), try freeTCPPort()]
        daemons = try webPorts.map { port in
            try SwipedDaemon(
                arguments: daemonArguments + ["--web", "127.0.0.1:\(port)"], prefix: "swiped-pgp",
                timeout: .seconds(30))
        }
        let first = try daemons[0].connectWithHello().client
        let made = try first.request(["op": "token-create", "name": "alice", "role": "writer"])
        let token = try XCTUnwrap(made["token"] as? String, "\(made)")

        // Signed in on the second daemon with the token the first made.
        let (status, opened) = try WebSocketClient.open(port: webPorts[1])
        XCTAssertEqual(status, 101)
        let ws = try XCTUnwrap(opened)
        var signedIn: [String: Any] = [:]
        for _ in 0..<20 {  // the second daemon reads the table within its poll (250 ms)
            signedIn = try ws.request(["op": "auth", "token": token])
            if signedIn["ok"] as? Bool == true { break }
            usleep(100_000)
        }
        XCTAssertEqual(signedIn["user"] as? String, "alice", "\(signedIn)")
        XCTAssertEqual(try ws.request(["op": "toggle-watched", "movie": "matrix"])["ok"] as? Bool, true)

        // A role given on the first daemon is alice's on the second, at once.
        try first.request(["op": "role", "name": "alice", "role": "reader"])
        let demoted = try ws.readEvent(timeout: .seconds(1))
        XCTAssertEqual(demoted["role"] as? String, "reader", "\(demoted)")
        XCTAssertEqual(
            LineClient.errorCode(of: try ws.request(["op": "toggle-watched", "movie": "matrix"])), "forbidden"
        )
        try first.request(["op": "role", "name": "alice", "role": NSNull()])
        XCTAssertEqual(try ws.readEvent(timeout: .seconds(1))["role"] as? String, "writer")

        // Revoked on the first daemon: the second's live connection is told within a second.
        let start = ContinuousClock.now
        XCTAssertEqual(int(try first.request(["op": "token-revoke", "name": "alice"])["revoked"]), 1)
        let lost = try ws.readEvent(timeout: .seconds(1))
        XCTAssertEqual(lost["user"] as? String, "alice")
        XCTAssertEqual(lost["role"] as? String, "none")
        XCTAssertLessThan(ContinuousClock.now - start, .seconds(1))
        XCTAssertEqual(try ws.readEvent(timeout: .seconds(1))["role"] as? String, "reader")
        XCTAssertEqual(
            LineClient.errorCode(of: try ws.request(["op": "toggle-watched", "movie": "matrix"])), "forbidden"
        )
        // Both daemons list the same tokens: none now.
        let second = try daemons[1].connectWithHello().client
        XCTAssertEqual((try second.request(["op": "token-list"])["tokens"] as? [Any])?.count, 0)
    }
}

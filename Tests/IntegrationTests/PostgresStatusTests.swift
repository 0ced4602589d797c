// The PostgreSQL store in `status`, `/health` and `swipectl status` (issue 31): where it is
// (never a password), and its state when PostgreSQL is stopped and started again.

import Foundation
import Glibc
import XCTest

final class PostgresStatusTests: PostgresTestCase {
    let port: UInt16 = (try? freeTCPPort()) ?? 0

    override var daemonArguments: [String] { super.daemonArguments + ["--metrics", "127.0.0.1:\(port)"] }

    func status(_ socket: String) throws -> [String: Any] {
        let client = try LineClient(path: socket)
        _ = try client.readJSON()
        return try XCTUnwrap(try client.ok(["op": "status"])["status"] as? [String: Any])
    }

    func store(_ socket: String) throws -> [String: Any] {
        try XCTUnwrap(try status(socket)["store"] as? [String: Any])
    }

    func swipectlStatus(_ socket: String) throws -> Subprocess.Result {
        try Subprocess.run(
            try Binaries.swipectl, ["--socket", socket, "status"], environment: ["SWIPED_SOCKET": nil])
    }

    func testTheStoreIsUnavailableWhilePostgreSQLIsStoppedAndOkAgainAfter() throws {
        try startDaemons(1)
        let socket = daemons[0].socketPath
        var s = try store(socket)
        XCTAssertEqual(s["kind"] as? String, "postgres")
        XCTAssertEqual(s["state"] as? String, "ok")
        XCTAssertEqual(s["host"] as? String, cluster.socketDirectory)
        XCTAssertEqual(int(s["port"]), 5432)
        XCTAssertEqual(s["database"] as? String, cluster.database)
        XCTAssertEqual(try swipectlStatus(socket).status, .exited(0))
        XCTAssertEqual(try HTTPProbe.get(port: port, "/health").status, 200)
        // The safety net reads the log to its head every second: the last read is recent.
        let lastRead = try poll(until: .seconds(10), "a read of the log to its head") {
            double(try store(socket)["lastRead"])
        }
        XCTAssertLessThan(lastRead, 5)

        try cluster.stopImmediate()
        // The daemon notices at its next write (or its safety-net read).
        s = try poll(until: .seconds(20), "the store to be unavailable") {
            let client = try LineClient(path: socket)
            _ = try client.readJSON()
            _ = try client.errorCode(#"{"op":"toggle-watched","movie":"matrix","expect":0}"#)
            let s = try store(socket)
            return s["state"] as? String == "unavailable" ? s : nil
        }
        XCTAssertNotNil(s["since"] as? String)
        let degraded = try swipectlStatus(socket)
        XCTAssertEqual(degraded.status, .exited(1), degraded.standardError)
        XCTAssertTrue(
            degraded.standardOutput.contains(": degraded, the store is unavailable\n"),
            degraded.standardOutput)
        let health = try HTTPProbe.get(port: port, "/health")
        XCTAssertEqual(health.status, 503)
        XCTAssertEqual(health.body, "the store is unavailable: writes fail until it is back\n")
        let metrics = try HTTPProbe.get(port: port, "/metrics").body
        XCTAssertEqual(sample(metrics, "swiped_store_up"), 0)
        XCTAssertEqual(sample(metrics, #"swiped_store_state{state="unavailable"}"#), 1)

        try cluster.start()
        _ = try poll(until: .seconds(30), "the store to be ok again") {
            try store(socket)["state"] as? String == "ok" ? true : nil
        }
        XCTAssertEqual(try HTTPProbe.get(port: port, "/health").status, 200)
        XCTAssertEqual(try swipectlStatus(socket).status, .exited(0))
    }
}

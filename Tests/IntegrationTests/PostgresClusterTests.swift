// Tests of TestSupport's PostgresCluster: the real PostgreSQL 15 server the Postgres* tests use.

import Foundation
import Glibc
import TestSupport
import XCTest

final class PostgresClusterTests: XCTestCase {
    /// True when no process with this pid exists, not even a zombie.
    private func isGone(_ pid: pid_t) -> Bool { kill(pid, 0) == -1 && errno == ESRCH }

    func testClusterServesItsConninfoAndKeepsCommitsAcrossAnImmediateStop() throws {
        let cluster = try PostgresCluster(prefix: "pgc")
        let first = try XCTUnwrap(cluster.pid)
        XCTAssertTrue(cluster.isRunning)
        XCTAssertEqual(try cluster.psql("SHOW synchronous_commit"), "on")
        XCTAssertEqual(try cluster.psql("SHOW fsync"), "on")
        XCTAssertEqual(try cluster.psql("SHOW listen_addresses"), "")
        XCTAssertEqual(try cluster.psql("SELECT current_database()"), "swiped")

        // The conninfo is what a client (libpq through psql here) connects with.
        let psql = "/usr/lib/postgresql/15/bin/psql"
        let viaConninfo = try Subprocess.check(
            psql,
            ["-X", "-A", "-t", "-c", "SELECT current_database() || ' ' || current_user", cluster.conninfo],
            environment: ["PGPASSWORD": nil, "PGSERVICE": nil])
        XCTAssertEqual(viaConninfo, "swiped \(cluster.user)\n")
        XCTAssertTrue(cluster.conninfo.hasPrefix("host=\(cluster.socketDirectory) "), cluster.conninfo)

        try cluster.psql("CREATE TABLE t (n int); INSERT INTO t VALUES (1), (2)")
        try cluster.stopImmediate()
        XCTAssertNil(cluster.pid)
        XCTAssertFalse(cluster.isRunning)
        XCTAssertTrue(isGone(first), "the postmaster is reaped, not a zombie")
        XCTAssertThrowsError(try cluster.psql("SELECT 1", timeout: 10), "nothing listens while stopped")

        try cluster.start()
        let second = try XCTUnwrap(cluster.pid)
        XCTAssertNotEqual(first, second)
        XCTAssertEqual(try cluster.psql("SELECT sum(n) FROM t"), "3", "a committed row survives a crash")
        XCTAssertTrue(
            cluster.logTail(lines: 200).contains("database system was interrupted"),
            "the restart replayed the WAL:\n\(cluster.logTail())")

        let directory = cluster.directory
        cluster.destroy()
        XCTAssertTrue(isGone(second), "destroy stops and reaps the server")
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory), "destroy removes the directory")
    }

    func testTwoClustersRunSideBySideAndAFastStopIsClean() throws {
        let a = try PostgresCluster(database: "one", prefix: "pgc")
        let b = try PostgresCluster(database: nil, prefix: "pgc")
        XCTAssertNotEqual(a.socketDirectory, b.socketDirectory)
        XCTAssertEqual(try a.psql("SELECT current_database()"), "one")
        XCTAssertEqual(try b.psql("SELECT current_database()"), "postgres")
        try b.createDatabase("two")
        XCTAssertEqual(try b.psql("SELECT current_database()", database: "two"), "two")
        XCTAssertEqual(b.conninfo(database: "two"), "host=\(b.socketDirectory) dbname=two user=\(b.user)")

        let pid = try XCTUnwrap(a.pid)
        try a.stop()
        XCTAssertTrue(isGone(pid))
        XCTAssertTrue(a.logTail().contains("database system is shut down"), a.logTail())
        try a.start()
        XCTAssertEqual(try a.psql("SELECT 1"), "1")
    }

    func testAFailingStatementThrowsWithPsqlsMessage() throws {
        let cluster = try PostgresCluster(prefix: "pgc")
        XCTAssertThrowsError(try cluster.psql("SELECT * FROM no_such_table")) { error in
            XCTAssertTrue("\(error)".contains("no_such_table"), "\(error)")
        }
    }
}

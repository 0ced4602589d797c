// The PostgreSQL store with a synchronous standby that does not confirm (docs/postgres.md,
// "Faults, checked"): on a cluster of its own whose `synchronous_standby_names` names a standby
// that never connects, set once the stores are open. A commit then is on the primary, visible
// to every session, and waits for the standby's confirmation, as during a partition between a
// primary and its synchronous standby; a failover then would lose it. Nothing of it may be shown
// or acknowledged, and its writer's client gets an answer in doubt within the bound.
import Foundation
import Glibc
import Movies
import StoreCore
import TestSupport
import XCTest

@testable import StorePostgres

final class PostgresSyncStandbyTests: XCTestCase {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var shared: PostgresCluster?
    nonisolated(unsafe) private static var databases = 0

    override class func tearDown() {
        lock.withLock {
            shared?.destroy()
            shared = nil
        }
        super.tearDown()
    }

    /// The class's cluster (started on first use) and a new, empty database on it.
    private func newDatabase() throws -> (PostgresCluster, name: String, conninfo: String) {
        let (cluster, name): (PostgresCluster, String) = try Self.lock.withLock {
            if Self.shared == nil {
                Self.shared = try PostgresCluster(database: nil, prefix: "swiped-pgsync")
            }
            Self.databases += 1
            return (Self.shared!, "sync_\(Self.databases)")
        }
        try cluster.createDatabase(name)
        return (cluster, name, cluster.conninfo(database: name))
    }

    /// Sets `synchronous_standby_names` (empty: none) and waits until the server acts on it.
    private func setSynchronousStandby(_ cluster: PostgresCluster, _ names: String) throws {
        _ = try cluster.psql("ALTER SYSTEM SET synchronous_standby_names = '\(names)'")
        _ = try cluster.psql("SELECT pg_reload_conf()")
        // The checkpointer and each session read the file when they are next woken.
        usleep(500_000)
    }

    /// Polls swiped_head until it is `seq` (or 5 s passed).
    private func waitForHead(_ cluster: PostgresCluster, _ database: String, _ seq: Int) throws {
        let deadline = Date().addingTimeInterval(5)
        var head = ""
        while head != "\(seq)" && Date() < deadline {
            head = try cluster.psql("SELECT seq FROM swiped_head", database: database)
            if head != "\(seq)" { usleep(20_000) }
        }
        XCTAssertEqual(head, "\(seq)")
    }

    /// Finding 1: store A's commit (seq 12) waits for the standby; store B's transaction reads
    /// it under the lock, on the primary's disk, and must not hand it to B's loop (its
    /// subscribers, its `list`) before the standby has it: it waits for B's own flush, which
    /// waits for the standby too. Without the fix B showed it at once.
    func testAnotherStoresEventIsNotShownBeforeTheSynchronousStandbyHasIt() throws {
        let (cluster, name, conninfo) = try newDatabase()
        let a = try PostgresStore.open(conninfo: conninfo, safetyNetMillis: 60_000)
        defer { a.close() }
        let b = try PostgresStore.open(conninfo: conninfo, safetyNetMillis: 60_000, relistenMillis: 60_000)
        defer { b.close() }
        XCTAssertEqual(b.submitOK(MovieCommand(.toggleWatched(movie: "matrix")))?.seq, 11)
        XCTAssertFalse(b.worker.isListening)
        try setSynchronousStandby(cluster, "nobody")
        defer { try? setSynchronousStandby(cluster, "") }
        a.submit(MovieCommand(.toggleWatched(movie: "seven")), token: 1)
        a.flush()
        try waitForHead(cluster, name, 12)
        b.submit(MovieCommand(.toggleWatched(movie: "matrix")), token: 1)
        b.flush()
        try waitForHead(cluster, name, 13)
        // Well within the bound (5 s) after which B's commit is cancelled.
        XCTAssertEqual(b.collect(until: { _ in false }, seconds: 1).committed.map(\.seq), [])
        XCTAssertEqual(b.stateCopy.lastSeq, 11)
        try setSynchronousStandby(cluster, "")
        let done = b.settle(results: 1)
        XCTAssertEqual(try done.commands.first?.result.get().seq, 13)
        XCTAssertEqual(done.committed.map(\.seq), [12, 13])
        XCTAssertEqual(try a.settle(results: 1).commands.first?.result.get().seq, 12)
    }
}

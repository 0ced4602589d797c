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

    /// The bound: a commit the standby does not confirm is answered after 5 s, in doubt
    /// (`storage`, "the outcome is unknown"), never `ok`, and not shown. Store B, idle and
    /// listening, gets A's notification (A's pipeline goes on once the wait is cancelled) and
    /// must not show the event either (without the barrier it did). Once the standby
    /// confirms, a retry with the key finds it committed once, and both show it.
    func testACommitTheStandbyDoesNotConfirmIsAnsweredInDoubtWithinTheBoundNeverOK() throws {
        let (cluster, name, conninfo) = try newDatabase()
        let a = try PostgresStore.open(conninfo: conninfo)
        defer { a.close() }
        let b = try PostgresStore.open(conninfo: conninfo, safetyNetMillis: 60_000)
        defer { b.close() }
        try setSynchronousStandby(cluster, "nobody")
        defer { try? setSynchronousStandby(cluster, "") }
        let began = Date()
        a.submit(MovieCommand(.toggleWatched(movie: "seven"), key: "doubt"), token: 1)
        a.flush()
        let c = a.collect(until: { !$0.commands.isEmpty }, seconds: 12)
        let waited = Date().timeIntervalSince(began)
        XCTAssertGreaterThanOrEqual(waited, 4.5, "answered before the bound")
        XCTAssertLessThan(waited, 9, "not answered within the bound")
        guard case .failure(let e) = c.commands.first?.result else { return XCTFail("\(c)") }
        XCTAssertEqual(e.code, .storage)
        XCTAssertTrue(e.message.hasPrefix("the outcome is unknown"), e.message)
        XCTAssertEqual(c.committed.map(\.seq), [])
        XCTAssertEqual(
            try cluster.psql("SELECT seq FROM swiped_head", database: name), "11", "on the primary")
        XCTAssertEqual(b.collect(until: { _ in false }, seconds: 1.5).committed.map(\.seq), [])
        try setSynchronousStandby(cluster, "")
        // Both reconnect (a cancelled round trip gives its connection up) and show it.
        XCTAssertEqual(b.collect(until: { !$0.committed.isEmpty }, seconds: 10).committed.map(\.seq), [11])
        let deadline = Date().addingTimeInterval(10)
        while a.statusNote != nil && Date() < deadline {
            _ = a.collect(until: { _ in false }, seconds: 0.1)
        }
        let again = a.outcome(MovieCommand(.toggleWatched(movie: "seven"), key: "doubt"))
        XCTAssertEqual(again?.replayed, true)
        XCTAssertEqual(try again?.result.get().seq, 11)
        XCTAssertEqual(
            try cluster.psql("SELECT count(*) FROM swiped_events WHERE key = 'doubt'", database: name), "1")
    }
}

// Who made each event (issue 46) on the PostgreSQL store, beyond the contract suite: what
// daemons on one database learn of each other's authors (after a notification, under the
// appends' lock, from a key found in the database), and a database of schema 2 migrated at the
// next start.
import Foundation
import Glibc
import Movies
import StoreCore
import StoreTestSupport
import TestSupport
import XCTest

@testable import StorePostgres

final class PostgresAuthorTests: XCTestCase {
    override class func tearDown() {
        SharedCluster.destroy()
        super.tearDown()
    }

    /// The events `store` folds within `seconds`, until there are `count`.
    private func committed(by store: PostgresStore, count: Int, seconds: Double = 5) -> [CommittedEvent] {
        store.collect(until: { $0.committed.count >= count }, seconds: seconds).committed
    }

    func testEachDaemonSeesTheOthersAuthors() throws {
        let db = try SharedCluster.newNamedDatabase()
        let a = try PostgresStore.open(conninfo: db.conninfo)
        defer { a.close() }
        let b = try PostgresStore.open(conninfo: db.conninfo)
        defer { b.close() }
        // B's events reach A by notification (or its safety net), each with its author.
        var written = [
            b.submitOK(MovieCommand(.toggleWatched(movie: "seven"), key: "kb", by: "bob")),
            b.submitOK(MovieCommand(.toggleWatched(movie: "matrix"))),
            b.submitOK(MovieCommand(.add(title: "Alien", image: nil), by: "zoë@example.org")),
        ].compactMap { $0 }
        XCTAssertEqual(committed(by: a, count: 3), written)
        XCTAssertEqual(written.map(\.by), ["bob", nil, "zoë@example.org"])
        // A reads them back from the database, and one person's alone.
        XCTAssertEqual(try a.events(after: 10, limit: 10), written)
        XCTAssertEqual(try a.events(by: "bob", after: 0, limit: 10), [written[0]])
        XCTAssertEqual(try a.events(by: "zoë@example.org", after: 0, limit: 10), [written[2]])
        // B's key on A, by someone else: B's event, B's author.
        let replay = a.outcome(MovieCommand(.toggleWatched(movie: "seven"), key: "kb", by: "alice"))
        XCTAssertEqual(replay?.replayed, true)
        XCTAssertEqual(try replay?.result.get(), written[0])
        // A's own commit, and B's made while A commits, read under the appends' lock: A learns
        // B's with its author in its own transaction, B learns A's.
        for i in 0..<10 {
            a.submit(MovieCommand(.toggleWatched(movie: "inception"), by: "alice"), token: UInt64(i))
            b.submit(MovieCommand(.toggleWatched(movie: "godfather"), by: "bob"), token: UInt64(i))
            a.flush()
            b.flush()
        }
        let seenByA = a.collect(until: { $0.committed.count >= 20 }).committed
        let seenByB = b.collect(until: { $0.committed.count >= 20 }).committed
        XCTAssertEqual(seenByA.count, 20)
        XCTAssertEqual(seenByB, seenByA)
        XCTAssertEqual(
            seenByA.map { "\($0.movie.id) \($0.by ?? "-")" }.sorted(),
            Array(repeating: "godfather bob", count: 10) + Array(repeating: "inception alice", count: 10))
        written += seenByA
        XCTAssertEqual(try b.events(after: 10, limit: 100), written)
        XCTAssertEqual(
            try b.events(by: "alice", after: 0, limit: 100), written.filter { $0.by == "alice" })
        // A third daemon, started later, knows no key from memory: it finds B's in the database,
        // under the lock, with its author.
        let c = try PostgresStore.open(conninfo: db.conninfo)
        defer { c.close() }
        let found = c.outcome(MovieCommand(.toggleWatched(movie: "seven"), key: "kb"))
        XCTAssertEqual(found?.replayed, true)
        XCTAssertEqual(try found?.result.get(), written[0])
        XCTAssertEqual(try c.events(by: "bob", after: 0, limit: 100), written.filter { $0.by == "bob" })
    }

    /// A database of schema 2 (the release before issue 46) gets the `author` column and its
    /// index at the next start; its events are nobody's, the new ones somebody's.
    func testADatabaseOfSchemaTwoGainsAuthorsAtTheNextStart() throws {
        let db = try SharedCluster.newNamedDatabase()
        let cluster = try SharedCluster.get()
        let first = try PostgresStore.open(conninfo: db.conninfo)
        let before = [
            first.submitOK(MovieCommand(.toggleWatched(movie: "seven"), key: "k1")),
            first.submitOK(MovieCommand(.remove(movie: "matrix"))),
        ].compactMap { $0 }
        first.close()
        _ = try cluster.psql(LegacyLogs.postgresSchema2, database: db.name)
        XCTAssertEqual(try cluster.psql("SELECT version FROM swiped_schema", database: db.name), "2")

        let store = try PostgresStore.open(conninfo: db.conninfo)
        defer { store.close() }
        XCTAssertTrue(store.startupFields.contains { $0 == ("SCHEMA_VERSION", "3") })
        XCTAssertEqual(try cluster.psql("SELECT version FROM swiped_schema", database: db.name), "3")
        XCTAssertEqual(
            try cluster.psql("SELECT count(*) FROM swiped_events WHERE author IS NULL", database: db.name),
            "12")
        XCTAssertEqual(
            try cluster.psql(
                "SELECT indexdef FROM pg_indexes WHERE indexname = 'swiped_events_by_author'",
                database: db.name),
            "CREATE INDEX swiped_events_by_author ON public.swiped_events USING btree (author, seq) WHERE (author IS NOT NULL)"
        )
        XCTAssertEqual(try store.events(after: 10, limit: 10), before)
        XCTAssertEqual(try store.events(after: 0, limit: 100).compactMap(\.by), [])
        let key = store.outcome(MovieCommand(.toggleWatched(movie: "seven"), key: "k1", by: "alice"))
        XCTAssertEqual(try key?.result.get(), before[0])
        let mine = try XCTUnwrap(store.submitOK(MovieCommand(.toggleWatched(movie: "seven"), by: "alice")))
        XCTAssertEqual(mine.by, "alice")
        XCTAssertEqual(try store.events(by: "alice", after: 0, limit: 10), [mine])
        XCTAssertEqual(
            try cluster.psql(
                "SELECT seq, author FROM swiped_events WHERE author IS NOT NULL", database: db.name),
            "13|alice")
    }

    /// One person's page is read through the author index, in the generic plan the store's
    /// prepared statement gets, whether authors are many or few and most events nobody's (a log
    /// from before authors were kept).
    func testOnePersonsPageIsReadThroughTheAuthorIndex() throws {
        let db = try SharedCluster.newNamedDatabase()
        let cluster = try SharedCluster.get()
        try PostgresStore.open(conninfo: db.conninfo).close()
        for (round, author) in [
            "CASE WHEN s % 100 = 0 THEN 'alice' WHEN s % 3 = 0 THEN NULL ELSE 'bob' END",
            "CASE WHEN s < 15000 THEN NULL WHEN s % 1000 = 0 THEN 'alice' ELSE 'p' || (s % 50) END",
        ].enumerated() {
            let from = 11 + round * 20_000
            _ = try cluster.psql(
                """
                INSERT INTO swiped_events (seq, stream, kind, payload, at, author)
                    SELECT s, 'seven', 'watched-toggled', '\\x00'::bytea, 0, \(author)
                    FROM generate_series(\(from), \(from + 19_999)) s;
                ANALYZE swiped_events
                """, database: db.name)
            let plan = try cluster.psql(
                """
                SET plan_cache_mode = force_generic_plan;
                PREPARE p(text, bigint, bigint, bigint) AS \(PGStatement.eventsBy.sql);
                EXPLAIN EXECUTE p('alice', 0, \(from + 19_999), 256)
                """, database: db.name)
            XCTAssertTrue(plan.contains("Index Scan using swiped_events_by_author"), plan)
            XCTAssertFalse(plan.contains("Sort"), plan)
        }
    }
}

// What the SQL people stores do beyond the contract (PeopleStoreContractTests): on PostgreSQL,
// two daemons' stores on one database see each other's changes within a second, a database of
// schema 1 gains the tables, and while the server is down changes are refused and the tables
// stay; on SQLite, the people store shares the log's file with the event store under load, and
// a change made in the file by another connection reaches it.
import EventLog
import Foundation
import Glibc
import Movies
import People
import StoreCore
import StorePostgres
import StoreSQLite
import StoreTestSupport
import TestSupport
import XCTest

final class PeopleStoreTests: XCTestCase {
    override class func tearDown() {
        SharedCluster.destroy()
        super.tearDown()
    }

    // MARK: - PostgreSQL

    func testTwoPostgresStoresOnOneDatabaseSeeEachOthersChangesWithinASecond() throws {
        let db = try SharedCluster.newNamedDatabase()
        let a = try PostgresPeopleStore(conninfo: db.conninfo)
        defer { a.close() }
        let b = try PostgresPeopleStore(conninfo: db.conninfo)
        defer { b.close() }
        XCTAssertTrue(a.database.hasPrefix("PostgreSQL \(db.name) on "), a.database)
        let t = token("a1a1a1a1a1a1", "alice", .writer, secret: 1)
        XCTAssertEqual(try a.make(.createToken(t)).result?.get(), 1)
        let seen = b.waitForTables(seconds: 2) { $0.token(id: t.id) == t }
        XCTAssertLessThan(try XCTUnwrap(seen, "B never saw A's token"), 1)
        // And back: B takes the person's access away, A knows within a second.
        XCTAssertEqual(try b.make(.setRole(name: "alice", role: AccessRole.none)).result?.get(), 1)
        XCTAssertEqual(try b.make(.revokeTokens(name: "alice", id: nil)).result?.get(), 1)
        let revoked = a.waitForTables(seconds: 2) {
            $0.tokens.isEmpty && $0.grants["alice"] == AccessRole.none
        }
        XCTAssertLessThan(try XCTUnwrap(revoked, "A never saw B's revocation"), 1)
        XCTAssertEqual(a.tables, b.tables)
        // The same id made on both at once: one is made, the other a conflict.
        a.submit(.createToken(token("c1c1c1c1c1c1", "carol", .reader, secret: 3)), token: 1)
        b.submit(.createToken(token("c1c1c1c1c1c1", "carol", .admin, secret: 4)), token: 1)
        let ra = a.collect { all, _ in !all.results.isEmpty }.0.results.first?.result
        let rb = b.collect { all, _ in !all.results.isEmpty }.0.results.first?.result
        let made = [ra, rb].compactMap { r in r.flatMap { try? $0.get() } }
        XCTAssertEqual(made, [1], "\(String(describing: ra)), \(String(describing: rb))")
        let refused = [ra, rb].compactMap { r -> StoreError? in
            guard case .failure(let e)? = r else { return nil }
            return e
        }
        XCTAssertEqual(refused.map(\.code), [.conflict])
        XCTAssertNotNil(a.waitForTables(seconds: 2) { $0.tokens.count == 1 })
        XCTAssertNotNil(b.waitForTables(seconds: 2) { $0.tokens.count == 1 })
        XCTAssertEqual(a.tables, b.tables)
        let cluster = try SharedCluster.get()
        XCTAssertEqual(
            try cluster.psql(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'swiped-people'"), "2")
    }

    func testADatabaseOfSchemaOneGainsThePeopleTablesAtTheNextStart() throws {
        let db = try SharedCluster.newNamedDatabase()
        let cluster = try SharedCluster.get()
        // A people store may open first: it creates the whole schema, seed included.
        let first = try PostgresPeopleStore(conninfo: db.conninfo)
        first.close()
        XCTAssertEqual(try cluster.psql("SELECT version FROM swiped_schema", database: db.name), "3")
        XCTAssertEqual(try cluster.psql("SELECT count(*) FROM swiped_events", database: db.name), "10")
        // Back to schema 1, as a database an older build made.
        _ = try cluster.psql(
            "DROP TABLE swiped_tokens, swiped_roles, swiped_people_version; UPDATE swiped_schema SET version = 1",
            database: db.name)
        let store = try PostgresStore.open(conninfo: db.conninfo)
        XCTAssertEqual(store.latestSeq, 10)
        store.close()
        XCTAssertEqual(try cluster.psql("SELECT version FROM swiped_schema", database: db.name), "3")
        XCTAssertEqual(try cluster.psql("SELECT version FROM swiped_people_version", database: db.name), "0")
        let people = try PostgresPeopleStore(conninfo: db.conninfo)
        defer { people.close() }
        XCTAssertEqual(people.tables, PeopleTables())
        XCTAssertEqual(try people.make(.setRole(name: "alice", role: .admin)).result?.get(), 1)
        XCTAssertEqual(
            try cluster.psql("SELECT name, role FROM swiped_roles", database: db.name), "alice|admin")
        XCTAssertEqual(try cluster.psql("SELECT version FROM swiped_people_version", database: db.name), "1")
    }

    func testWhileTheServerIsDownChangesAreUnavailableAndTheTablesStay() throws {
        let db = try SharedCluster.newNamedDatabase()
        let store = try PostgresPeopleStore(conninfo: db.conninfo)
        defer { store.close() }
        XCTAssertEqual(try store.make(.setRole(name: "alice", role: .writer)).result?.get(), 1)
        let cluster = try SharedCluster.get()
        try cluster.stopImmediate()
        // The poll finds the connection gone: said once.
        var (c, _) = store.collect(seconds: 3) { all, _ in !all.notes.isEmpty }
        XCTAssertEqual(
            c.notes.map(\.message),
            [
                "PostgreSQL connection of the people store lost, reconnecting with backoff; token and role changes are refused meanwhile"
            ])
        XCTAssertEqual(c.notes.first?.level, .warning)
        for i in 0..<3 {
            let (result, tables) = store.make(.setRole(name: "bob", role: .admin), token: UInt64(10 + i))
            guard case .failure(let e)? = result else { return XCTFail("\(String(describing: result))") }
            XCTAssertEqual(e.code, .unavailable, e.message)
            XCTAssertNil(tables)
        }
        XCTAssertEqual(store.tables.grants, ["alice": .writer], "the last contents stay")
        XCTAssertTrue(store.collect(seconds: 0.5).0.notes.isEmpty, "the loss is said once")
        try cluster.start()
        (c, _) = store.collect(seconds: 10) { all, _ in !all.notes.isEmpty }
        XCTAssertEqual(c.notes.map(\.message), ["PostgreSQL connection of the people store restored"])
        XCTAssertEqual(c.notes.first?.level, .info)
        XCTAssertEqual(try store.make(.setRole(name: "bob", role: .admin)).result?.get(), 1)
        XCTAssertEqual(store.tables.grants, ["alice": .writer, "bob": .admin])
        // Another daemon's change is seen again after the reconnection.
        let other = try PostgresPeopleStore(conninfo: db.conninfo)
        XCTAssertEqual(try other.make(.setRole(name: "alice", role: nil)).result?.get(), 1)
        other.close()
        XCTAssertNotNil(store.waitForTables(seconds: 2) { $0.grants == ["bob": .admin] })
    }

    // MARK: - SQLite

    /// The people store's transactions and the log writer's share the file's write lock (WAL):
    /// each waits for the other within its busy timeout, and neither fails.
    func testTheSQLitePeopleStoreAndTheEventStoreShareTheFileUnderLoad() throws {
        let store = try SQLiteStore.open(directory: makeStateDirectory(self))
        defer { store.close() }
        let people = try SQLitePeopleStore(path: store.path)
        defer { people.close() }
        let outcomes = Outcomes()
        let changes = PeopleStoreTests.loadChanges
        let worker = Thread {
            for change in changes { outcomes.add(people.wait(change)) }
            outcomes.finish()
        }
        worker.start()
        var committed = 0
        var longest = 0.0
        var token: UInt64 = 0
        let movies = MovieState.seedCatalogue.map(\.movieID)
        while !outcomes.finished {
            for m in movies {
                token += 1
                store.submit(MovieCommand(.toggleWatched(movie: m)), token: token)
            }
            let began = Date()
            let c = store.settle(results: movies.count)
            longest = max(longest, Date().timeIntervalSince(began))
            for r in c.commands {
                if case .failure(let e) = r.result { XCTFail("a command failed: \(e)") }
            }
            committed += c.committed.count
        }
        // Without turns (WriteTurns.swift) the log's writer waited for the whole run (2 s: 10
        // events), and past its busy timeout would have failed "database is locked".
        XCTAssertGreaterThan(committed, 100, "events were committed all along")
        XCTAssertLessThan(longest, 1, "the longest wait for 10 toggles")
        var model = PeopleTables()
        var expected: [Result<Int, StoreError>] = []
        for change in changes {
            let (next, result) = InMemoryPeopleStore.apply(change, to: model)
            model = next
            expected.append(result)
        }
        XCTAssertEqual(outcomes.results, expected)
        XCTAssertNotNil(people.waitForTables(seconds: 2) { $0 == model })
        XCTAssertEqual(people.tables, model)
    }

    /// Tokens made, used and revoked: 350 changes, each a transaction of its own.
    static let loadChanges: [PeopleChange] = (0..<150).flatMap { i -> [PeopleChange] in
        let id = String(format: "%012x", i)
        let made: [PeopleChange] = [
            .createToken(token(id, "p\(i % 5)", .reader, secret: UInt8(i))), .touch(id: id, at: UInt64(i)),
        ]
        return made + (i % 3 == 2 ? [.revokeTokens(name: "p\(i % 5)", id: nil)] : [])
    }

    func testAChangeMadeInTheFileByAnotherConnectionReachesTheStore() throws {
        let store = try SQLiteStore.open(directory: makeStateDirectory(self))
        defer { store.close() }
        let people = try SQLitePeopleStore(path: store.path, pollMicroseconds: 100_000)
        defer { people.close() }
        let other = try EventLog(path: store.path, create: false)
        defer { other.close() }
        XCTAssertEqual(try other.apply(.setRole(name: "alice", role: .admin)), 1)
        let seen = people.waitForTables(seconds: 2) { $0.grants == ["alice": .admin] }
        XCTAssertLessThan(try XCTUnwrap(seen, "never seen"), 1)
        XCTAssertEqual(try other.readPeople().version, 1)
    }
}

extension PeopleStore {
    /// Submits `change` and waits for its outcome, on the thread that owns the store (no XCTest
    /// calls: the load test's worker thread uses it).
    func wait(_ change: PeopleChange) -> Result<Int, StoreError> {
        submit(change, token: 1)
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            var p = pollfd(fd: completionFD, events: Int16(POLLIN), revents: 0)
            _ = poll(&p, 1, 50)
            if let r = completions().results.first { return r.result }
        }
        return .failure(StoreError(.internal, "no outcome within 10 s"))
    }
}

/// What the load test's worker thread got, read by the test's thread.
private final class Outcomes: @unchecked Sendable {
    private let lock = NSLock()
    private var _results: [Result<Int, StoreError>] = []
    private var _finished = false
    var results: [Result<Int, StoreError>] { lock.withLock { _results } }
    var finished: Bool { lock.withLock { _finished } }
    func add(_ r: Result<Int, StoreError>) { lock.withLock { _results.append(r) } }
    func finish() { lock.withLock { _finished = true } }
}

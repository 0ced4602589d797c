// What every people store must do (issue 45), whatever keeps its tables: each test runs once per
// implementation, against `InMemoryPeopleStore.apply`, the rule. (Not subclasses, for the reason
// StoreContractTests gives.) A failure names the implementation it happened with.
import Foundation
import Glibc
import People
import StoreCore
import StorePostgres
import StoreSQLite
import StoreTestSupport
import XCTest

final class PeopleStoreContractTests: XCTestCase {
    /// Where a store keeps its tables (nil: nowhere, it cannot be opened again).
    typealias Place = String?

    /// Every implementation: a new place for a test, and how to open a store there. The SQLite
    /// one needs a log (made by the event store, as the daemon opens it first).
    static let implementations:
        [(
            name: String, place: @Sendable (XCTestCase) throws -> Place,
            open: @Sendable (Place) throws -> any PeopleStore
        )] = [
            ("InMemoryPeopleStore", { _ in nil }, { _ in InMemoryPeopleStore() }),
            (
                "SQLitePeopleStore",
                { test in
                    let directory = makeStateDirectory(test)
                    try SQLiteStore.open(directory: directory).close()
                    return directory + "/events.sqlite3"
                },
                { try SQLitePeopleStore(path: $0!) }
            ),
            (
                "PostgresPeopleStore", { _ in try SharedCluster.newNamedDatabase().conninfo },
                { try PostgresPeopleStore(conninfo: $0!) }
            ),
        ]

    override class func tearDown() {
        SharedCluster.destroy()
        super.tearDown()
    }

    private var implementation = ""

    /// Runs `body` with a new store of each implementation (and its place), closed afterwards.
    private func forEachStore(
        persistent: Bool = false,
        _ body: (any PeopleStore, _ reopen: () throws -> any PeopleStore) throws -> Void
    ) throws {
        for (name, makePlace, open) in PeopleStoreContractTests.implementations {
            implementation = name
            let place = try makePlace(self)
            if persistent && place == nil { continue }
            let store = try open(place)
            defer { store.close() }
            try body(store) { try open(place) }
        }
        implementation = ""
    }

    override func recordFailure(
        withDescription description: String, inFile filePath: String, atLine lineNumber: Int, expected: Bool
    ) {
        super.recordFailure(
            withDescription: "[\(implementation)] \(description)", inFile: filePath, atLine: lineNumber,
            expected: expected)
    }

    /// Every kind of change, with what it touched (a conflict, nothing matched, the same role
    /// again), made as the in-memory rule makes it.
    static let script: [PeopleChange] = [
        .createToken(token("a1a1a1a1a1a1", "alice", .writer, secret: 1)),
        .createToken(token("a2a2a2a2a2a2", "alice", .reader, secret: 2, expires: 1_800_000_000_000_000)),
        .createToken(token("b0b0b0b0b0b0", "zoë@example.org", .admin, secret: 3, lastUsed: 5)),
        // Times are kept bit for bit, also past what a signed 64-bit column holds.
        .createToken(
            token("c0c0c0c0c0c0", "carol", .reader, secret: 4, created: UInt64.max, expires: 1 << 63)),
        .createToken(token("a1a1a1a1a1a1", "mallory", .admin, secret: 9)),  // the id is taken
        .createToken(token("d0d0d0d0d0d0", "mallory", .admin, secret: 2)),  // the hash is taken
        .touch(id: "a1a1a1a1a1a1", at: 1_764_000_000_123_456),
        .touch(id: "a1a1a1a1a1a1", at: 1_764_000_000_123_456),  // the same time: a row touched all the same
        .touch(id: "ffffffffffff", at: 1),
        .setRole(name: "alice", role: .admin),
        .setRole(name: "alice", role: .admin),  // the same role: nothing changed
        .setRole(name: "alice", role: .reader),
        .setRole(name: "dave", role: AccessRole.none),
        .setRole(name: "erin", role: .writer),
        .setRole(name: "alice", role: nil),
        .setRole(name: "alice", role: nil),  // no grant left to take back
        .revokeTokens(name: "zoë@example.org", id: "a1a1a1a1a1a1"),  // not zoë's
        .revokeTokens(name: "alice", id: "a2a2a2a2a2a2"),
        .revokeTokens(name: "nobody", id: nil),
        .createToken(token("a3a3a3a3a3a3", "alice", .writer, secret: 5)),
        .revokeTokens(name: "alice", id: nil),
        .createToken(token("a2a2a2a2a2a2", "alice", .reader, secret: 2)),  // revoked: id and hash free again
    ]

    func testEveryChangeTouchesWhatTheRuleSaysAndReportsTheTablesOnceWhenTheyChanged() throws {
        try forEachStore { store, _ in
            var model = PeopleTables()
            XCTAssertEqual(store.tables, model)
            for (i, change) in PeopleStoreContractTests.script.enumerated() {
                let (next, expected) = InMemoryPeopleStore.apply(change, to: model)
                let (result, tables) = store.make(change, token: UInt64(i + 1))
                switch (result, expected) {
                case (.success(let n)?, .success(let m)):
                    XCTAssertEqual(n, m, "step \(i): \(change)")
                    // Reported when they changed: a touch at the time already recorded touches
                    // a row and changes nothing.
                    XCTAssertEqual(tables, next != model ? next : nil, "step \(i): \(change)")
                    model = next
                case (.failure(let e)?, .failure(let f)):
                    XCTAssertEqual(e.code, f.code, "step \(i): \(change)")
                    XCTAssertEqual(e.code, .conflict, "step \(i): \(change)")
                    XCTAssertNil(tables, "step \(i): \(change)")
                default:
                    XCTFail("step \(i): \(change): \(String(describing: result)), the rule says \(expected)")
                }
                XCTAssertEqual(store.tables, model, "step \(i): \(change)")
            }
            XCTAssertEqual(model.tokens.map(\.id), ["b0b0b0b0b0b0", "c0c0c0c0c0c0", "a2a2a2a2a2a2"])
            XCTAssertEqual(model.grants, ["dave": AccessRole.none, "erin": .writer])
            XCTAssertEqual(model.token(id: "c0c0c0c0c0c0")?.created, UInt64.max)
            // Nothing else arrives once the changes are made: no tables again, no outcomes.
            let (later, reports) = store.collect(seconds: 0.7)
            XCTAssertEqual(reports, 0)
            XCTAssertEqual(later, PeopleCompletions())
        }
    }

    func testAChangeThatTouchesNothingReportsNoTables() throws {
        try forEachStore { store, _ in
            XCTAssertEqual(try store.make(.revokeTokens(name: "nobody", id: nil)).result?.get(), 0)
            XCTAssertEqual(store.make(.touch(id: "000000000000", at: 3)).tables, nil)
            XCTAssertEqual(store.make(.setRole(name: "nobody", role: nil)).tables, nil)
            XCTAssertEqual(store.tables, PeopleTables())
            XCTAssertEqual(store.collect(seconds: 0.6).reports, 0)
        }
    }

    func testOutcomesComeBackUnderTheirTokensInOrder() throws {
        try forEachStore { store, _ in
            for i in 0..<20 {
                store.submit(
                    .createToken(token(String(format: "%012x", i), "p\(i % 3)", .reader, secret: UInt8(i))),
                    token: UInt64(100 + i))
            }
            store.submit(.revokeTokens(name: "p1", id: nil), token: 200)
            let (c, _) = store.collect { all, _ in all.results.count == 21 }
            XCTAssertEqual(c.results.map(\.token), Array(100..<120) + [200])
            XCTAssertEqual(c.results.map { try? $0.result.get() }, Array(repeating: 1, count: 20) + [7])
            XCTAssertEqual(c.tables?.tokens.count, 13)
            XCTAssertEqual(
                store.tables.tokens.map(\.name), (0..<20).map { "p\($0 % 3)" }.filter { $0 != "p1" })
        }
    }

    func testCloseIsIdempotent() throws {
        try forEachStore { store, _ in
            XCTAssertEqual(try store.make(.setRole(name: "alice", role: .writer)).result?.get(), 1)
            store.close()
            store.close()
            XCTAssertEqual(store.tables.grants, ["alice": .writer])
        }
    }

    func testTheTablesAreKeptAcrossAReopen() throws {
        try forEachStore(persistent: true) { store, reopen in
            let t = token("a1a1a1a1a1a1", "alice", .writer, secret: 1, expires: 7, lastUsed: 6)
            XCTAssertEqual(try store.make(.createToken(t)).result?.get(), 1)
            XCTAssertEqual(
                try store.make(.createToken(token("b1b1b1b1b1b1", "bob", .admin, secret: 2))).result?.get(), 1
            )
            XCTAssertEqual(try store.make(.setRole(name: "bob", role: .reader)).result?.get(), 1)
            let kept = store.tables
            store.close()
            // A change after the close is refused, never lost silently.
            store.submit(.setRole(name: "carol", role: .admin), token: 9)
            let refused = store.collect { all, _ in !all.results.isEmpty }.0.results
            XCTAssertEqual(refused.map(\.token), [9])
            XCTAssertEqual(refused.first.map { (try? $0.result.get()) == nil }, true)
            let again = try reopen()
            defer { again.close() }
            XCTAssertEqual(again.tables, kept)
            XCTAssertEqual(again.tables.token(hash: t.hash), t)
            XCTAssertEqual(
                again.tables.role(of: "bob", door: .token(id: "b1b1b1b1b1b1"), doorRole: .admin), .reader)
        }
    }
}

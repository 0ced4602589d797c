// The people tables in the log's file (issue 45, PeopleTables+SQLite.swift): a new log has them,
// one made before them gains them when a people store opens it, nothing that read logs before
// minds them, and write transactions of two connections to one file take turns.
import EventLog
import Foundation
import People
import StoreTestSupport
import XCTest

final class PeopleTablesTests: XCTestCase {
    private let alice = TokenRecord(
        id: "a1a1a1a1a1a1", name: "alice", role: .writer, hash: Array(repeating: 7, count: 32), created: 1,
        expires: UInt64.max, lastUsed: nil)

    func testANewLogHasThePeopleTablesEmpty() throws {
        let path = makeTempDir(self) + "/events.sqlite3"
        let log = try EventLog(path: path)
        defer { log.close() }
        XCTAssertEqual(
            try SQLiteScript.rows(
                path: path, sql: "SELECT name FROM sqlite_master WHERE name LIKE 'people_%' ORDER BY name"),
            ["people_roles", "people_tokens", "people_version"])
        let read = try log.readPeople()
        XCTAssertEqual(read.version, 0)
        XCTAssertEqual(read.tables, PeopleTables())
    }

    func testALogMadeBeforeThemGainsThemAndKeepsItsEvents() throws {
        let path = makeTempDir(self) + "/events.sqlite3"
        do {
            let log = try EventLog(path: path)
            _ = try log.append([NewEvent(stream: "s", kind: "k", payload: [1])])
            log.close()
        }
        try runSQL(path, "DROP TABLE people_tokens; DROP TABLE people_roles; DROP TABLE people_version;")
        // Read as it is, before: no people tables, and nothing refused.
        let reader = try LogFileReader(path: path)
        try reader.begin()
        XCTAssertNil(try reader.peopleTables())
        XCTAssertEqual(try reader.eventCount(), 1)
        try reader.end()
        reader.close()
        let log = try EventLog(path: path, create: false)
        defer { log.close() }
        try log.ensurePeopleTables()
        try log.ensurePeopleTables()  // once there, only looked at
        XCTAssertEqual(try log.apply(.createToken(alice)), 1)
        XCTAssertEqual(try log.readPeople().tables.tokens, [alice])
        XCTAssertEqual(try log.events(after: 0, limit: 10).map(\.payload), [[1]])
        XCTAssertEqual(try log.peopleVersion(), 1)
    }

    func testWhatEachChangeTouchesAndTheVersionMovesOnlyWhenSomethingChanged() throws {
        let path = makeTempDir(self) + "/events.sqlite3"
        let log = try EventLog(path: path)
        defer { log.close() }
        XCTAssertEqual(try log.apply(.createToken(alice)), 1)
        XCTAssertThrowsError(try log.apply(.createToken(alice))) { error in
            guard case .keyConflict = error as? LogError else { return XCTFail("\(error)") }
        }
        XCTAssertEqual(try log.apply(.setRole(name: "bob", role: .admin)), 1)
        XCTAssertEqual(try log.apply(.setRole(name: "bob", role: .admin)), 0)
        XCTAssertEqual(try log.apply(.setRole(name: "bob", role: .reader)), 1)
        XCTAssertEqual(try log.apply(.setRole(name: "carol", role: nil)), 0)
        XCTAssertEqual(try log.apply(.touch(id: "a1a1a1a1a1a1", at: 9)), 1)
        XCTAssertEqual(try log.apply(.revokeTokens(name: "bob", id: nil)), 0)
        XCTAssertEqual(try log.peopleVersion(), 4)
        var kept = alice
        kept.lastUsed = 9
        XCTAssertEqual(try log.readPeople().tables, PeopleTables(tokens: [kept], grants: ["bob": .reader]))
        XCTAssertEqual(
            try SQLiteScript.rows(path: path, sql: "SELECT expires FROM people_tokens"), ["-1"],
            "UInt64.max, as the same 64 bits signed")
    }

    func testARowThisBuildCannotReadIsDamageNamed() throws {
        let path = makeTempDir(self) + "/events.sqlite3"
        let log = try EventLog(path: path)
        defer { log.close() }
        try runSQL(path, "INSERT INTO people_roles VALUES('eve', 'superuser')")
        XCTAssertThrowsError(try log.readPeople()) { error in
            guard case .corrupt(let m) = error as? LogError else { return XCTFail("\(error)") }
            XCTAssertTrue(m.contains("\"superuser\""), m)
        }
    }

    /// A connection that writes again as soon as it committed no longer keeps another one of
    /// this process out (WriteTurns.swift): each waits for the transactions that asked before
    /// it. With every fsync 3 ms slower (a disk of the real world), the appends waited in
    /// SQLite's busy handler for the gaps between the other's transactions, missed them, and
    /// failed "database is locked" after its 5 s.
    func testTwoConnectionsToOneFileTakeTurnsToWrite() throws {
        FaultInjection.install()
        addTeardownBlock { FaultInjection.uninstall() }
        FaultInjection.syncDelayMicros = 3_000
        let path = makeTempDir(self) + "/events.sqlite3"
        let a = try EventLog(path: path, durability: .full)
        defer { a.close() }
        let b = try EventLog(path: path, durability: .full)
        defer { b.close() }
        let done = Flag()
        let other = Owned(b)
        let writer = Thread {
            var i = 0
            while !done.isSet {
                _ = try? other.log.apply(.setRole(name: "p", role: i % 2 == 0 ? .reader : .writer))
                i += 1
            }
        }
        writer.start()
        usleep(50_000)
        var longest = 0.0
        for i in 0..<20 {
            let began = Date()
            XCTAssertNoThrow(try a.append([NewEvent(stream: "s\(i)", kind: "k")]))
            longest = max(longest, Date().timeIntervalSince(began))
        }
        done.set()
        while !writer.isFinished { usleep(1_000) }
        XCTAssertLessThan(longest, 1, "the longest of 20 appends beside a busy writer")
        XCTAssertGreaterThan(try b.peopleVersion(), 20)
    }
}

/// A log handed to the writer thread, which alone uses it until the test joins it.
private final class Owned: @unchecked Sendable {
    let log: EventLog
    init(_ log: EventLog) { self.log = log }
}

private final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}

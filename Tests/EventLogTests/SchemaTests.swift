import EventLog
import Foundation
import XCTest

/// Schema 2: the key index holds only keyed events, the per-stream index is filled in arrears
/// (`EventLog.streamIndexLag`), and files of schema 1 are migrated when opened.
final class SchemaTests: XCTestCase {
    private func ev(_ stream: String, key: String? = nil) -> NewEvent {
        NewEvent(stream: stream, kind: "k", payload: Array(stream.utf8), key: key)
    }

    private func upto(_ path: String) throws -> UInt64 {
        UInt64(try SQLiteScript.rows(path: path, sql: "SELECT upto FROM stream_index").first ?? "") ?? .max
    }

    /// Every read of one stream equals the filter of the whole log, wherever `upTo` falls: in
    /// the indexed part, in the tail not yet indexed, or across the two.
    func testStreamReadsEqualTheFilterOfTheLogOnBothSidesOfTheIndexedMark() throws {
        let path = makeTempDir(self) + "/events.sqlite3"
        let log = try EventLog(path: path, durability: .normal)
        defer { log.close() }
        let streams = ["a", "b", "c", "d"]
        var all: [StoredEvent] = []
        var rng = SystemRandomNumberGenerator()
        var marks: Set<UInt64> = []
        while all.count < 3 * Int(EventLog.streamIndexLag) + 57 {
            let n = Int.random(in: 1...40, using: &rng)
            let batch = (0..<n).map { _ in ev(streams.randomElement(using: &rng)!) }
            let batches = [Array(batch.prefix(n / 2)), Array(batch.dropFirst(n / 2))].filter { !$0.isEmpty }
            for r in log.appendBatches(batches) { all += try r.get() }
            let mark = try upto(path)
            XCTAssertLessThanOrEqual(mark, UInt64(all.count))
            XCTAssertLessThan(UInt64(all.count) - mark, EventLog.streamIndexLag, "the mark lags too far")
            marks.insert(mark)
            for s in streams {
                for upTo in [
                    UInt64(all.count), mark, mark + 1, UInt64.random(in: 0...UInt64(all.count), using: &rng),
                ] {
                    XCTAssertEqual(
                        try log.events(stream: s, upTo: upTo),
                        all.filter { $0.stream == s && $0.seq <= upTo },
                        "stream \(s) up to \(upTo), indexed up to \(mark)")
                }
            }
        }
        XCTAssertGreaterThanOrEqual(marks.count, 4, "the index never caught up: \(marks.sorted())")
        let indexed = try SQLiteScript.rows(path: path, sql: "SELECT stream, seq FROM streams ORDER BY seq")
        let expected = all.prefix(Int(try upto(path))).map { "\($0.stream)|\($0.seq)" }
        XCTAssertEqual(indexed, expected, "streams holds exactly the events up to the mark")
        // Another connection reads the same.
        let other = try EventLog(path: path)
        defer { other.close() }
        for s in streams {
            XCTAssertEqual(try other.events(stream: s, upTo: .max), all.filter { $0.stream == s })
        }
    }

    /// Only keyed events are in the key index, and a lookup by key uses it.
    func testKeyIndexHoldsOnlyKeyedEventsAndServesLookups() throws {
        let path = makeTempDir(self) + "/events.sqlite3"
        do {
            let log = try EventLog(path: path)
            _ = try log.append([ev("a"), ev("a", key: "k1"), ev("b"), ev("b", key: "k2")])
            XCTAssertThrowsError(try log.append([ev("c", key: "k1")])) { e in
                guard case .keyConflict = e as? LogError else { return XCTFail("\(e)") }
            }
            XCTAssertEqual(try log.event(forKey: "k2")?.seq, 4)
            log.close()
        }
        XCTAssertEqual(
            try SQLiteScript.rows(
                path: path, sql: "SELECT count(*) FROM events INDEXED BY events_by_key WHERE key IS NOT NULL"),
            ["2"])
        let plan = try SQLiteScript.rows(
            path: path,
            sql: "EXPLAIN QUERY PLAN SELECT seq, stream, kind, payload, key, at FROM events WHERE key = 'k1'")
        XCTAssertTrue(plan.contains { $0.contains("USING INDEX events_by_key") }, "\(plan)")
        XCTAssertEqual(try SQLiteScript.rows(path: path, sql: "PRAGMA user_version"), ["2"])
    }

    /// A file of schema 1, as the previous release wrote it, is migrated on open: same events,
    /// same keys, streams indexed, the old index gone; reopening it changes nothing more.
    func testSchema1FileIsMigratedInPlace() throws {
        let path = makeTempDir(self) + "/events.sqlite3"
        try runSQL(
            path,
            """
            PRAGMA journal_mode=WAL;
            CREATE TABLE events(
                seq     INTEGER PRIMARY KEY,
                stream  TEXT    NOT NULL,
                kind    TEXT    NOT NULL,
                payload BLOB    NOT NULL,
                key     TEXT    UNIQUE,
                at      INTEGER NOT NULL);
            CREATE INDEX events_by_stream ON events(stream, seq);
            CREATE TABLE snapshots(
                seq  INTEGER PRIMARY KEY,
                at   INTEGER NOT NULL,
                data BLOB    NOT NULL);
            INSERT INTO events VALUES(1, 'a', 'k', x'01', NULL, 10);
            INSERT INTO events VALUES(2, 'b', 'k', x'02', 'key-2', 20);
            INSERT INTO events VALUES(3, 'a', 'k', x'', NULL, 30);
            INSERT INTO snapshots VALUES(2, 25, x'cafe');
            PRAGMA application_id = \(EventLog.applicationID);
            PRAGMA user_version = 1;
            """)
        for _ in 0..<2 {
            let log = try EventLog(path: path)
            XCTAssertEqual(try log.latestSeq(), 3)
            XCTAssertEqual(try log.events(stream: "a", upTo: 3).map(\.seq), [1, 3])
            XCTAssertEqual(try log.events(stream: "a", upTo: 3).map(\.payload), [[1], []])
            XCTAssertEqual(try log.event(forKey: "key-2")?.seq, 2)
            XCTAssertEqual(try log.latestSnapshot()?.data, [0xCA, 0xFE])
            XCTAssertThrowsError(try log.append([ev("c", key: "key-2")]))
            log.close()
            XCTAssertEqual(try SQLiteScript.rows(path: path, sql: "PRAGMA user_version"), ["2"])
            XCTAssertEqual(try upto(path), 3)
            XCTAssertEqual(
                try SQLiteScript.rows(path: path, sql: "SELECT stream, seq FROM streams ORDER BY seq"),
                ["a|1", "b|2", "a|3"])
            XCTAssertEqual(
                try SQLiteScript.rows(
                    path: path, sql: "SELECT name FROM sqlite_master WHERE name = 'events_by_stream'"),
                [])
        }
        // Appends after the migration are read back by stream like any other.
        let log = try EventLog(path: path)
        defer { log.close() }
        let more = try log.append([ev("a"), ev("b")])
        XCTAssertEqual(try log.events(stream: "a", upTo: .max).map(\.seq), [1, 3, more[0].seq])
    }
}

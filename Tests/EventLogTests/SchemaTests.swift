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

    /// `streams` holds exactly the events up to `upto`, and reads by stream equal the filter.
    private func assertConsistent(
        _ path: String, _ log: EventLog, file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let all = try log.events(after: 0, limit: 1_000_000)
        let mark = try upto(path)
        XCTAssertEqual(
            try SQLiteScript.rows(path: path, sql: "SELECT stream, seq FROM streams ORDER BY seq"),
            all.prefix(Int(mark)).map { "\($0.stream)|\($0.seq)" }, "streams up to \(mark)", file: file,
            line: line)
        for s in Set(all.map(\.stream)) {
            XCTAssertEqual(
                try log.events(stream: s, upTo: .max), all.filter { $0.stream == s }, file: file, line: line)
        }
    }

    /// A key conflict in the call whose commit catches the index up: the batches before it and
    /// the catch-up commit together, the rest write nothing, and the index stays exact.
    func testKeyConflictInTheCommitThatCatchesUp() throws {
        let path = makeTempDir(self) + "/events.sqlite3"
        let log = try EventLog(path: path, durability: .normal)
        defer { log.close() }
        _ = try log.append([ev("a", key: "taken")])
        _ = try log.append((0..<(Int(EventLog.streamIndexLag) - 3)).map { ev($0 % 2 == 0 ? "a" : "b") })
        XCTAssertEqual(try upto(path), 0)
        let results = log.appendBatches([[ev("c"), ev("a")], [ev("b", key: "taken")], [ev("c")]])
        XCTAssertEqual(try results[0].get().count, 2)
        guard case .failure(.keyConflict) = results[1], case .failure(.aborted) = results[2] else {
            return XCTFail("\(results)")
        }
        XCTAssertEqual(try log.latestSeq(), UInt64(EventLog.streamIndexLag))
        XCTAssertEqual(
            try upto(path), UInt64(EventLog.streamIndexLag), "caught up with the batches that committed")
        try assertConsistent(path, log)
    }

    /// A commit that fails (disk full) where it would catch up: nothing of it stays, and the next
    /// commit catches up instead.
    func testFailedCatchUpCommitIsRedoneByTheNext() throws {
        FaultInjection.install()
        defer { FaultInjection.uninstall() }
        let path = makeTempDir(self) + "/events.sqlite3"
        let log = try EventLog(path: path, durability: .normal)
        defer { log.close() }
        _ = try log.append((0..<(Int(EventLog.streamIndexLag) - 1)).map { ev($0 % 3 == 0 ? "a" : "b") })
        FaultInjection.failWrites = true
        XCTAssertThrowsError(try log.append([ev("c"), ev("a")]))
        FaultInjection.failWrites = false
        XCTAssertEqual(try upto(path), 0)
        _ = try log.append([ev("c")])
        XCTAssertEqual(try upto(path), UInt64(EventLog.streamIndexLag))
        try assertConsistent(path, log)
    }

    /// Two connections appending in turn (the daemon's start-up seeds through one, then writes
    /// through the committer's): each reads the other's mark from the file.
    func testTwoConnectionsAppendingInTurnKeepTheIndexExact() throws {
        let path = makeTempDir(self) + "/events.sqlite3"
        let a = try EventLog(path: path, durability: .normal)
        let b = try EventLog(path: path, durability: .normal)
        defer {
            a.close()
            b.close()
        }
        for round in 0..<40 {
            let log = round % 2 == 0 ? a : b
            _ = try log.append((0..<37).map { ev("s\(($0 + round) % 5)") })
        }
        try assertConsistent(path, a)
        try assertConsistent(path, b)
        XCTAssertGreaterThan(try upto(path), 0)
    }

    /// A damaged stream index is refused at open, naming the file, and left as it is.
    func testDamagedStreamIndexIsRefused() throws {
        let dir = makeTempDir(self)
        for (name, damage) in [
            ("missing", "DELETE FROM stream_index;"),
            ("ahead", "UPDATE stream_index SET upto = 1000;"),
            ("twice", "INSERT INTO stream_index VALUES(0);"),
        ] {
            let path = "\(dir)/\(name).sqlite3"
            do {
                let log = try EventLog(path: path)
                _ = try log.append([ev("a"), ev("b")])
                log.close()
            }
            try runSQL(path, damage)
            let before = fileBytes(path)
            XCTAssertThrowsError(try EventLog(path: path), name) { e in
                guard case .corrupt(let m) = e as? LogError else { return XCTFail("\(name): \(e)") }
                XCTAssertTrue(m.contains(path) && m.contains("stream_index"), m)
            }
            XCTAssertEqual(fileBytes(path), before, "\(name): the file was modified")
        }
    }
}

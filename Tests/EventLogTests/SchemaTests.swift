import EventLog
import Foundation
import XCTest

/// Schema 2: the key index holds only keyed events, the per-stream index holds the events up to
/// `stream_index.upto` (filled by the migration of schema 1 files; appends leave it alone), and
/// reads by stream are exact on both sides of that mark. Schema 3 (issue 46): each event's
/// author, NULL in the events of files migrated from 1 and 2, and an index of them.
final class SchemaTests: XCTestCase {
    private func ev(_ stream: String, key: String? = nil) -> NewEvent {
        NewEvent(stream: stream, kind: "k", payload: Array(stream.utf8), key: key)
    }

    private func upto(_ path: String) throws -> UInt64 {
        UInt64(try SQLiteScript.rows(path: path, sql: "SELECT upto FROM stream_index").first ?? "") ?? .max
    }

    /// A file of schema 1, as the previous release wrote it, holding what `rows` inserts.
    private func schema1File(_ path: String, _ rows: String) throws {
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
            \(rows)
            PRAGMA application_id = \(EventLog.applicationID);
            PRAGMA user_version = 1;
            """)
    }

    /// A file of schema 2, as the release before issue 46 wrote it (its people tables left to
    /// the people store, as a file from before issue 45 has none), holding what `rows` inserts.
    private func schema2File(_ path: String, _ rows: String) throws {
        try runSQL(
            path,
            """
            PRAGMA journal_mode=WAL;
            CREATE TABLE events(
                seq     INTEGER PRIMARY KEY,
                stream  TEXT    NOT NULL,
                kind    TEXT    NOT NULL,
                payload BLOB    NOT NULL,
                key     TEXT,
                at      INTEGER NOT NULL);
            CREATE UNIQUE INDEX events_by_key ON events(key) WHERE key IS NOT NULL;
            CREATE TABLE streams(
                stream TEXT    NOT NULL,
                seq    INTEGER NOT NULL,
                PRIMARY KEY(stream, seq)) WITHOUT ROWID;
            CREATE TABLE stream_index(upto INTEGER NOT NULL);
            CREATE TABLE snapshots(
                seq  INTEGER PRIMARY KEY,
                at   INTEGER NOT NULL,
                data BLOB    NOT NULL);
            INSERT INTO stream_index(upto) VALUES(0);
            CREATE TABLE identity(log TEXT NOT NULL); INSERT INTO identity(log) VALUES('0123456789abcdef0123456789abcdef');
            \(rows)
            PRAGMA application_id = \(EventLog.applicationID);
            PRAGMA user_version = 2;
            """)
    }

    /// Every read of one stream equals the filter of the whole log, wherever `upTo` falls: in
    /// the indexed part (a migrated file's events), after it (appends, which leave the index
    /// and its mark alone), or across the two.
    func testStreamReadsEqualTheFilterOfTheLogOnBothSidesOfTheIndexedMark() throws {
        let path = makeTempDir(self) + "/events.sqlite3"
        let streams = ["a", "b", "c", "d"]
        let rows = (1...300).map { "(\($0), '\(streams[$0 % streams.count])', 'k', x'', NULL, \($0))" }
        try schema1File(path, "INSERT INTO events VALUES \(rows.joined(separator: ", "));")
        let log = try EventLog(path: path, durability: .normal)
        defer { log.close() }
        var all = try log.events(after: 0, limit: 1_000)
        XCTAssertEqual(all.count, 300)
        XCTAssertEqual(try upto(path), 300)
        var rng = SystemRandomNumberGenerator()
        while all.count < 900 {
            let n = Int.random(in: 1...40, using: &rng)
            let batch = (0..<n).map { _ in ev(streams.randomElement(using: &rng)!) }
            let batches = [Array(batch.prefix(n / 2)), Array(batch.dropFirst(n / 2))].filter { !$0.isEmpty }
            for r in log.appendBatches(batches) { all += try r.get() }
            XCTAssertEqual(try upto(path), 300, "an append moved the mark")
            for s in streams {
                for upTo in [
                    UInt64(all.count), 299, 300, 301, UInt64.random(in: 0...UInt64(all.count), using: &rng),
                ] {
                    XCTAssertEqual(
                        try log.events(stream: s, upTo: upTo),
                        all.filter { $0.stream == s && $0.seq <= upTo },
                        "stream \(s) up to \(upTo)")
                }
            }
        }
        try assertConsistent(path, log)
        // Another connection reads the same.
        let other = try EventLog(path: path)
        defer { other.close() }
        for s in streams {
            XCTAssertEqual(try other.events(stream: s, upTo: .max), all.filter { $0.stream == s })
        }
    }

    /// A fresh log's appends write only `events` (and the key index): `streams` stays empty and
    /// its mark at 0, through every kind of commit, and reads by stream are still exact.
    func testAppendsLeaveTheStreamIndexAlone() throws {
        let path = makeTempDir(self) + "/events.sqlite3"
        let a = try EventLog(path: path, durability: .normal)
        let b = try EventLog(path: path, durability: .normal)
        defer {
            a.close()
            b.close()
        }
        _ = try a.append([ev("a", key: "taken")])
        for round in 0..<20 {
            let log = round % 2 == 0 ? a : b
            _ = try log.append((0..<37).map { ev("s\(($0 + round) % 5)") })
        }
        let results = b.appendBatches([[ev("c"), ev("a")], [ev("b", key: "taken")], [ev("c")]])
        XCTAssertEqual(try results[0].get().count, 2)
        XCTAssertEqual(try upto(path), 0)
        XCTAssertEqual(try SQLiteScript.rows(path: path, sql: "SELECT count(*) FROM streams"), ["0"])
        try assertConsistent(path, a)
        try assertConsistent(path, b)
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
        XCTAssertEqual(try SQLiteScript.rows(path: path, sql: "PRAGMA user_version"), ["3"])
    }

    /// A file of schema 1, as the previous release wrote it, is migrated on open: same events,
    /// same keys, streams indexed, the old index gone; reopening it changes nothing more.
    func testSchema1FileIsMigratedInPlace() throws {
        let path = makeTempDir(self) + "/events.sqlite3"
        try schema1File(
            path,
            """
            INSERT INTO events VALUES(1, 'a', 'k', x'01', NULL, 10);
            INSERT INTO events VALUES(2, 'b', 'k', x'02', 'key-2', 20);
            INSERT INTO events VALUES(3, 'a', 'k', x'', NULL, 30);
            INSERT INTO snapshots VALUES(2, 25, x'cafe');
            """)
        for _ in 0..<2 {
            let log = try EventLog(path: path)
            XCTAssertEqual(try log.latestSeq(), 3)
            XCTAssertEqual(try log.events(stream: "a", upTo: 3).map(\.seq), [1, 3])
            XCTAssertEqual(try log.events(stream: "a", upTo: 3).map(\.payload), [[1], []])
            XCTAssertEqual(
                try log.events(stream: "a", upTo: 3).map(\.author), [nil, nil], "straight to schema 3")
            XCTAssertEqual(try log.event(forKey: "key-2")?.seq, 2)
            XCTAssertEqual(try log.latestSnapshot()?.data, [0xCA, 0xFE])
            XCTAssertThrowsError(try log.append([ev("c", key: "key-2")]))
            log.close()
            XCTAssertEqual(try SQLiteScript.rows(path: path, sql: "PRAGMA user_version"), ["3"])
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

    /// A file of schema 2 is migrated on open: the same events, keys, snapshot and id, none of
    /// them with an author; appends keep theirs, and one person's events are read through the
    /// author index. Reopening changes nothing more; a file read without migrating
    /// (LogFileReader, as `export` and `verify` read) says no author either.
    func testSchema2FileIsMigratedInPlaceItsEventsByNobody() throws {
        let path = makeTempDir(self) + "/events.sqlite3"
        try schema2File(
            path,
            """
            INSERT INTO events VALUES(1, 'a', 'k', x'01', NULL, 10);
            INSERT INTO events VALUES(2, 'b', 'k', x'02', 'key-2', 20);
            INSERT INTO snapshots VALUES(2, 25, x'cafe');
            """)
        let reader = try LogFileReader(path: path)
        var seen: [StoredEvent] = []
        try reader.forEachEvent {
            seen.append($0)
            return true
        }
        reader.close()
        XCTAssertEqual(seen.map(\.seq), [1, 2])
        XCTAssertEqual(seen.map(\.author), [nil, nil])
        XCTAssertEqual(
            try SQLiteScript.rows(path: path, sql: "PRAGMA user_version"), ["2"], "a read migrated")
        for round in 0..<2 {
            let log = try EventLog(path: path)
            XCTAssertEqual(try SQLiteScript.rows(path: path, sql: "PRAGMA user_version"), ["3"])
            XCTAssertEqual(try log.events(after: 0, limit: 10).prefix(2).map(\.author), [nil, nil])
            XCTAssertEqual(try log.events(after: 0, limit: 10).prefix(2).map(\.payload), [[1], [2]])
            XCTAssertEqual(try log.event(forKey: "key-2")?.seq, 2)
            XCTAssertNil(try log.event(forKey: "key-2")?.author)
            XCTAssertEqual(try log.latestSnapshot()?.data, [0xCA, 0xFE])
            XCTAssertEqual(try log.logID(), "0123456789abcdef0123456789abcdef")
            if round == 0 {
                let more = try log.append([
                    NewEvent(stream: "a", kind: "k", payload: [3], author: "alice"),
                    NewEvent(stream: "b", kind: "k", payload: [4], key: "key-4"),
                    NewEvent(stream: "a", kind: "k", payload: [5], key: "key-5", author: "zoë@example.org"),
                ])
                XCTAssertEqual(more.map(\.author), ["alice", nil, "zoë@example.org"])
            }
            XCTAssertEqual(
                try log.events(after: 0, limit: 10).map(\.author),
                [nil, nil, "alice", nil, "zoë@example.org"])
            XCTAssertEqual(try log.event(forKey: "key-5")?.author, "zoë@example.org")
            XCTAssertEqual(try log.events(by: "alice", after: 0, upTo: .max, limit: 10).map(\.seq), [3])
            XCTAssertEqual(
                try log.events(by: "zoë@example.org", after: 0, upTo: 5, limit: 10).map(\.seq), [5])
            XCTAssertEqual(try log.events(by: "zoë@example.org", after: 0, upTo: 4, limit: 10), [])
            log.close()
        }
        let plan = try SQLiteScript.rows(
            path: path,
            sql:
                "EXPLAIN QUERY PLAN SELECT * FROM events WHERE author = ?1 AND seq > ?2 AND seq <= ?3 ORDER BY seq LIMIT ?4"
        )
        // A scan of the seq range (no index of authors: its upkeep cost durable toggles ≈ 8 %),
        // in seq order as it is read, never sorted again.
        XCTAssertTrue(plan.contains { $0.contains("INTEGER PRIMARY KEY (rowid>? AND rowid<?)") }, "\(plan)")
        XCTAssertFalse(plan.contains { $0.contains("TEMP B-TREE") }, "sorted again: \(plan)")
        XCTAssertEqual(
            try SQLiteScript.rows(
                path: path, sql: "SELECT count(*) FROM sqlite_master WHERE name = 'events_by_author'"),
            ["0"])
    }

    /// A file that says schema 3 but whose events have no author column is refused as damaged,
    /// and left as it is.
    func testSchema3WithoutTheAuthorColumnIsRefused() throws {
        let path = makeTempDir(self) + "/events.sqlite3"
        try schema2File(path, "INSERT INTO events VALUES(1, 'a', 'k', x'01', NULL, 10);")
        try runSQL(path, "PRAGMA user_version = 3;")
        let before = fileBytes(path)
        XCTAssertThrowsError(try EventLog(path: path)) { e in
            guard case .corrupt(let m) = e as? LogError else { return XCTFail("\(e)") }
            XCTAssertTrue(m.contains(path) && m.contains("author"), m)
        }
        XCTAssertEqual(fileBytes(path), before, "the file was modified")
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

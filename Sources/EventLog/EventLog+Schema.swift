// The log file's schema: what a new file is made with, what opening checks of an existing one
// (read-only, before anything is written to it), and the migrations of older schemas, each in
// one transaction on open. The schema itself is described above `EventLog` (EventLog.swift).
import CSQLite

extension EventLog {
    /// Read-only look at an existing file. Returns whether it is an empty SQLite database that
    /// may be initialised, and else the schema version of the swiped log it is; throws for
    /// anything else.
    static func inspect(_ path: String) throws(LogError) -> (empty: Bool, version: Int32) {
        let ro = try SQLiteConnection(path: path, flags: SQLITE_OPEN_READONLY)
        defer { ro.close() }
        let appID: Int64
        let version: Int64
        let objects: [String]
        do throws(LogError) {
            appID = try ro.queryInt("PRAGMA application_id") ?? 0
            version = try ro.queryInt("PRAGMA user_version") ?? 0
            objects = try ro.queryStrings("SELECT name FROM sqlite_master ORDER BY name")
        } catch {
            switch error {
            case .corrupt:
                throw .corrupt(
                    "\(path): not a swiped event log: the file is damaged or is not an SQLite database (\(error.message))"
                )
            default:
                throw error
            }
        }
        if Int32(truncatingIfNeeded: appID) == applicationID {
            guard version >= 1 && version <= Int64(schemaVersion) else {
                throw .foreign(
                    "\(path): swiped event log of schema version \(version); this build reads versions 1 to \(schemaVersion)"
                )
            }
            let tables =
                version == 1 ? ["events", "snapshots"] : ["events", "snapshots", "streams", "stream_index"]
            for t in tables where !objects.contains(t) {
                throw .corrupt("\(path): swiped event log without its \(t) table: the file is damaged")
            }
            if version >= 2 { try checkStreamIndex(ro, path) }
            if version >= 3, try !hasAuthorColumn(ro) {
                throw .corrupt(
                    "\(path): swiped event log of schema version \(version) without the events' author column: the file is damaged"
                )
            }
            return (false, Int32(version))
        }
        if appID == 0 && objects.isEmpty { return (true, schemaVersion) }
        let hex = String(UInt32(truncatingIfNeeded: appID), radix: 16)
        let tables = objects.prefix(5).joined(separator: ", ") + (objects.count > 5 ? ", …" : "")
        throw .foreign(
            "\(path): not a swiped event log: an SQLite database of another application (application_id 0x\(hex), tables: \(tables.isEmpty ? "none" : tables))"
        )
    }

    /// Whether `events` has the `author` column (schema 3).
    static func hasAuthorColumn(_ conn: SQLiteConnection) throws(LogError) -> Bool {
        try conn.queryInt("SELECT count(*) FROM pragma_table_info('events') WHERE name = 'author'") == 1
    }

    /// `stream_index` must hold one row whose `upto` is within the log: without it, reads by
    /// stream would miss the events after it (and an older build's next catch-up would go wrong).
    private static func checkStreamIndex(_ ro: SQLiteConnection, _ path: String) throws(LogError) {
        let rows = try ro.queryInt("SELECT count(*) FROM stream_index") ?? 0
        let upto = try ro.queryInt("SELECT upto FROM stream_index") ?? -1
        let latest = try ro.queryInt("SELECT coalesce(max(seq), 0) FROM events") ?? 0
        guard rows == 1, upto >= 0, upto <= latest else {
            throw .corrupt(
                "\(path): swiped event log whose stream_index has \(rows) rows (upto \(upto), last event \(latest)): the file is damaged"
            )
        }
    }

    func createSchema() throws(LogError) {
        try conn.exec("BEGIN IMMEDIATE")
        do throws(LogError) {
            guard try conn.queryStrings("SELECT name FROM sqlite_master").isEmpty else {
                throw LogError.foreign(
                    "\(path): another process created tables in this file; not a swiped event log")
            }
            try conn.exec(
                """
                CREATE TABLE events(
                    seq     INTEGER PRIMARY KEY,
                    stream  TEXT    NOT NULL,
                    kind    TEXT    NOT NULL,
                    payload BLOB    NOT NULL,
                    key     TEXT,
                    at      INTEGER NOT NULL,
                    author  TEXT);
                CREATE UNIQUE INDEX events_by_key ON events(key) WHERE key IS NOT NULL;
                \(EventLog.streamTables)
                CREATE TABLE snapshots(
                    seq  INTEGER PRIMARY KEY,
                    at   INTEGER NOT NULL,
                    data BLOB    NOT NULL);
                INSERT INTO stream_index(upto) VALUES(0);
                \(EventLog.identitySQL)
                \(EventLog.peopleTablesSQL)
                PRAGMA application_id = \(EventLog.applicationID);
                PRAGMA user_version = \(EventLog.schemaVersion);
                """)
            try conn.exec("COMMIT")
        } catch {
            rollback()
            throw error
        }
    }

    private static let streamTables = """
        CREATE TABLE streams(
            stream TEXT    NOT NULL,
            seq    INTEGER NOT NULL,
            PRIMARY KEY(stream, seq)) WITHOUT ROWID;
        CREATE TABLE stream_index(upto INTEGER NOT NULL);
        """

    // No index of authors: one person's events (`events(by:after:upTo:limit:)`) are read by a
    // scan of the seq range, on the reader's thread. An index of (author, seq) cost every
    // durable toggle ≈ 8 % of its throughput (16 × 1, interleaved runs, BENCHMARKS.md, "Who did
    // it"), for a query an admin asks now and then; the scan of a log of 1,000,000 events for
    // a person who made none of them is measured there too.

    /// An older schema to this build's, in one transaction (a crash leaves the version it had,
    /// migrated again next time). Schema 1 to 2: `streams` filled from `events` and the old
    /// index dropped (the UNIQUE key column stays: SQLite cannot drop it, and it works the
    /// same). Schema 2 to 3 (issue 46): the `author` column, NULL in every event before. A
    /// build that knows only 1 and 2 refuses the file from then on.
    func migrate(from version: Int32) throws(LogError) {
        let turn = turns.take()
        defer { turns.give(turn) }
        try conn.exec("BEGIN IMMEDIATE")
        do throws(LogError) {
            // Another process may have migrated it between the look and the lock.
            let found = try conn.queryInt("PRAGMA user_version") ?? 0
            guard found < Int64(EventLog.schemaVersion) else {
                try conn.exec("COMMIT")
                return
            }
            if found == 1 {
                try conn.exec(
                    """
                    \(EventLog.streamTables)
                    INSERT INTO streams(stream, seq) SELECT stream, seq FROM events;
                    INSERT INTO stream_index(upto) SELECT coalesce(max(seq), 0) FROM events;
                    DROP INDEX IF EXISTS events_by_stream;
                    """)
            }
            try conn.exec(
                """
                ALTER TABLE events ADD COLUMN author TEXT;
                PRAGMA user_version = \(EventLog.schemaVersion);
                """)
            try conn.exec("COMMIT")
        } catch {
            rollback()
            throw error
        }
    }
}

// The PostgreSQL side of `swiped export`, `verify`, `backup` and `import` (issue 32): the whole
// log read from one REPEATABLE READ snapshot while daemons go on writing, and a log written into
// a database that has no swiped tables yet, in one transaction under the migration lock.
import LogTypes
import People
import StoreCore

/// A connection for moving a log in or out of PostgreSQL. Not for the daemon: blocking, one
/// thread.
public final class PostgresLogAccess {
    let conn: PGConnection
    private var importing = false
    private var rows: [String] = []
    /// Rows to an INSERT: one round trip per this many events.
    static let rowsPerInsert = 1000

    public init(conninfo: String) throws(StoreError) {
        if let why = PGConnection.refusal(conninfo) { throw StoreError(.badRequest, "--postgres \(why)") }
        conn = try PGConnection(conninfo, durability: .full)
    }

    /// `PostgreSQL <db> on <host>`, never the connection string.
    public var description: String { conn.description }

    // MARK: - Reading

    /// What a read sees before the events: the last seq, the number of events, the snapshots.
    public struct Head {
        public var seq: UInt64
        public var events: UInt64
        public var snapshots: [(seq: UInt64, data: [UInt8])]
    }

    /// Reads the log from one snapshot of the database: `head` first, then every event in seq
    /// order (streamed by COPY: memory does not grow with the log) until `row` returns false.
    /// During an import (after `writeImport`, before `commitImport`), it reads what the import
    /// wrote, in the import's transaction.
    /// After the events, `people` gets the people tables of that snapshot (nil for a database
    /// of schema 1, which has none).
    public func read(
        _ head: (Head) throws(StoreError) -> Void, _ row: (StoredEvent) -> Bool,
        people: (PeopleTables?) throws(StoreError) -> Void = { _ in }
    ) throws(StoreError) {
        do {
            let own = !importing
            if own { _ = try conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") }
            // A read-only transaction: a ROLLBACK that fails (the connection broke) loses
            // nothing, and the server ends the transaction with the session anyway; the read's
            // own error, if any, is what the caller hears.
            defer { if own { _ = try? conn.execute("ROLLBACK") } }
            let found = try conn.execute(
                "SELECT to_regclass('swiped_events') IS NOT NULL AND to_regclass('swiped_head') IS NOT NULL")
            guard found.first?.rows.first?.first == "t" else {
                throw StoreError(.notFound, "\(description) has no swiped log (no swiped_events table)")
            }
            let counts = try conn.execute(
                "SELECT (SELECT seq FROM swiped_head WHERE id = 1), (SELECT count(*) FROM swiped_events)")
            let values = counts.first?.rows.first ?? []
            guard values.count == 2, let seq = values[0].flatMap({ UInt64($0) }),
                let events = values[1].flatMap({ UInt64($0) })
            else {
                throw StoreError(.storage, "\(description): swiped_head has no row: the schema is damaged")
            }
            let snaps = try conn.execute("SELECT seq, data FROM swiped_snapshots ORDER BY seq")
            var snapshots: [(seq: UInt64, data: [UInt8])] = []
            for r in snaps.first?.rows ?? [] {
                guard r.count == 2, let s = r[0].flatMap({ UInt64($0) }), let d = r[1].flatMap(PGBytes.decode)
                else {
                    throw StoreError(.storage, "\(description): a row of swiped_snapshots cannot be read")
                }
                snapshots.append((s, d))
            }
            try head(Head(seq: seq, events: events, snapshots: snapshots))
            // A database of schema 2 or older has no authors (a read never migrates it).
            let authors = try conn.execute(PostgresLogAccess.hasAuthors).first?.rows.first?.first == "t"
            var bad: StoreError?
            try conn.copyOut(
                "SELECT seq, stream, kind, payload, at, key, \(authors ? "author" : "NULL") FROM swiped_events ORDER BY seq"
            ) { r in
                guard let s = r.int64(0), let stream = r.text(1), let kind = r.text(2),
                    let payload = r.field(3),
                    let at = r.int64(4)
                else {
                    bad = StoreError(.storage, "\(description): a row of swiped_events cannot be read")
                    return false
                }
                return row(
                    StoredEvent(
                        seq: UInt64(bitPattern: s), stream: stream, kind: kind, payload: Array(payload),
                        key: r.text(5), at: at, author: r.text(6)))
            }
            if let bad { throw bad }
            try people(try readPeople())
        } catch let e as PGFailure {
            throw StoreError(.unavailable, "\(description): reading the log failed: \(e.message)")
        } catch let e as StoreError {
            throw e
        } catch {
            throw StoreError(.internal, "\(error)")
        }
    }

    /// Whether swiped_events has its `author` column (schema 3), as the search path finds it.
    static let hasAuthors = """
        SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'swiped_events'::regclass
            AND attname = 'author' AND NOT attisdropped)
        """

    /// The people tables, in the caller's transaction; nil when the database has none.
    private func readPeople() throws -> PeopleTables? {
        guard try conn.execute(PostgresPeople.exists).first?.rows.first?.first == "t" else { return nil }
        let rows = try conn.execute(PostgresPeople.tablesRead)
        return try PostgresPeople.decode(tokens: rows.first, roles: rows.count == 2 ? rows[1] : nil)
    }

    // MARK: - Importing

    /// Opens the import's transaction, takes the migration lock (a daemon starting meanwhile
    /// waits for the end, then finds the imported log), refuses a database that has any swiped
    /// table, and creates them. Nothing is visible to anyone before `finishImport`.
    public func beginImport() throws(StoreError) {
        do {
            _ = try conn.execute(
                "BEGIN; SET LOCAL synchronous_commit = on; SELECT pg_advisory_xact_lock(\(PostgresSchema.migrationLock))"
            )
            importing = true
            let found = try conn.execute(
                """
                SELECT string_agg(t, ', ') FROM unnest(ARRAY[\(PostgresSchema.tableNames.map { "'\($0)'" }.joined(separator: ", "))]) t
                    WHERE to_regclass(t) IS NOT NULL
                """)
            if let tables = found.first?.rows.first?.first ?? nil {
                throw StoreError(
                    .conflict,
                    "\(description) is not empty: it has \(tables); import writes only into a database without swiped tables"
                )
            }
            _ = try conn.execute(
                """
                CREATE TABLE swiped_schema (version integer NOT NULL);
                \(PostgresSchema.tables)
                """)
        } catch let e as PGFailure {
            abandon()
            throw StoreError(.unavailable, "\(description): starting the import failed: \(e.message)")
        } catch let e as StoreError {
            abandon()
            throw e
        } catch {
            abandon()
            throw StoreError(.internal, "\(error)")
        }
    }

    /// Adds one event (sent in groups of `rowsPerInsert`).
    public func insert(_ e: StoredEvent) throws(StoreError) {
        precondition(importing, "insert outside an import")
        rows.append(
            "(\(e.seq), \(conn.literal(e.stream)), \(conn.literal(e.kind)), \(PGBytes.literal(e.payload)), \(e.at), \(e.key.map(conn.literal) ?? "NULL"), NULL, \(e.author.map(conn.literal) ?? "NULL"))"
        )
        if rows.count >= PostgresLogAccess.rowsPerInsert { try flushRows() }
    }

    private func flushRows() throws(StoreError) {
        guard !rows.isEmpty else { return }
        defer { rows.removeAll(keepingCapacity: true) }
        do {
            _ = try conn.execute(
                "INSERT INTO swiped_events (\(PostgresSchema.columns)) VALUES \(rows.joined(separator: ", "))"
            )
        } catch {
            abandon()
            throw StoreError(.storage, "\(description): writing events failed: \(error.message)")
        }
    }

    /// Writes the head, the snapshot, the people tables, the schema version and a new id (an
    /// imported log is another log to a client: LogIdentity), not committed yet (`read` sees
    /// them).
    public func writeImport(seq: UInt64, snapshot: [UInt8]?, people: PeopleTables = PeopleTables())
        throws(StoreError)
    {
        try flushRows()
        do {
            let snap =
                snapshot.map { "INSERT INTO swiped_snapshots VALUES (\(seq), \(PGBytes.literal($0)));" } ?? ""
            _ = try conn.execute(
                """
                INSERT INTO swiped_head VALUES (1, \(seq));
                \(snap)
                \(PostgresPeople.insert(people, conn))
                INSERT INTO swiped_identity VALUES (1, \(conn.literal(LogIdentity.make())));
                INSERT INTO swiped_schema VALUES (\(PostgresSchema.version));
                ANALYZE swiped_events, swiped_head
                """)
        } catch {
            abandon()
            throw StoreError(.storage, "\(description): writing the import's head failed: \(error.message)")
        }
    }

    /// Commits the import: the log appears whole, and the migration lock is released.
    public func commitImport() throws(StoreError) {
        do {
            _ = try conn.execute("COMMIT")
            importing = false
        } catch {
            abandon()
            throw StoreError(.storage, "\(description): committing the import failed: \(error.message)")
        }
    }

    /// Rolls the import back: nothing of it stays.
    public func abandon() {
        guard importing else { return }
        importing = false
        rows.removeAll()
        // Called on the way out of a failed import, whose error the caller reports. A ROLLBACK
        // that fails means the connection broke: the server then rolls the transaction back
        // itself, so nothing of the import stays either way.
        _ = try? conn.execute("ROLLBACK")
    }
}

import CSQLite
import Glibc
import Plumbing

/// A durable, append-only event log in one SQLite file (WAL mode).
///
/// Schema (`PRAGMA application_id` = `EventLog.applicationID`, `user_version` = 3):
///
///     events(seq INTEGER PRIMARY KEY,      -- global, gapless, from 1
///            stream TEXT NOT NULL, kind TEXT NOT NULL, payload BLOB NOT NULL,
///            key TEXT,                     -- optional idempotency key
///            at INTEGER NOT NULL,          -- µs since the Unix epoch (UTC)
///            author TEXT)                  -- who made it (issue 46), NULL when not known
///     events_by_key(key) UNIQUE WHERE key IS NOT NULL
///     streams(stream, seq) WITHOUT ROWID   -- a per-stream index of the older events
///     stream_index(upto)                   -- streams holds every event with seq <= upto
///     snapshots(seq INTEGER PRIMARY KEY, at INTEGER NOT NULL, data BLOB NOT NULL)
///     identity(log TEXT NOT NULL)          -- one row: the log's id (LogIdentity.swift)
///     people_tokens, people_roles, people_version  -- issue 45 (PeopleTables+SQLite.swift)
///
/// Why appends leave the per-stream index alone: it only serves events whose payload does not
/// record their movie (written before events carried it), whose movie must be found by folding
/// their stream. Everything written since records its movie, so nothing folds a stream past
/// them, and keeping the index for them cost the log writer about a third of its work per
/// event (callgrind, BENCHMARKS.md). `streams` is filled when a schema 1 file is migrated, and
/// was filled in arrears by earlier builds; `upto` says how far. `events(stream:upTo:)` reads
/// the indexed part through `streams` and the rows after `upto` from `events` directly, so it
/// is exact either way, and fast for the older events it exists for. Only events that carry a
/// key are in the key index (a plain UNIQUE column would index every NULL), and only events
/// that carry an author in the author index.
///
/// Files of schema 1 and 2 are migrated to schema 3 when opened (EventLog+Schema.swift), in one
/// transaction: schema 1 gets `streams` filled from `events` and loses its old index (the
/// UNIQUE key column stays: SQLite cannot drop it, and it works the same); both get the
/// `author` column, NULL in every event they hold, and its index. A build that reads only
/// schemas 1 and 2 refuses a file of schema 3: there is no way back.
///
/// Opening checks the file first through a read-only connection: a damaged file or another
/// application's database is refused with a typed error naming it, and is never modified.
/// Not thread-safe: one instance per thread (SQLite's WAL lets several connections read while
/// one writes). `GroupCommitter` owns a second instance on its writer thread.
public final class EventLog {
    /// `PRAGMA application_id` of a swiped log: "SWPD".
    public static let applicationID: Int32 = 0x5357_5044
    /// `PRAGMA user_version` of the schema this code writes and reads (it migrates versions 1
    /// and 2; version 3, issue 46, added the events' `author`).
    public static let schemaVersion: Int32 = 3

    public let path: String
    public let durability: Durability
    let conn: SQLiteConnection
    /// Write transactions on this file, taken in turn with the process's other connections to
    /// it (WriteTurns.swift): the log's writer and the people store's.
    let turns: WriteTurns
    private var lastAt: Int64 = 0

    /// Opens (creating when `create` and the file is missing or empty) the log at `path`.
    public init(path: String, durability: Durability = .full, create: Bool = true) throws(LogError) {
        self.path = path
        self.durability = durability
        var st = stat()
        let exists = stat(path, &st) == 0
        if exists && (st.st_mode & S_IFMT) != S_IFREG {
            throw .foreign("\(path): not a regular file")
        }
        if !exists && !create { throw .other("\(path): no such file") }
        if !exists {
            // Made here, 0600 whatever the umask, rather than by SQLite (0644 less the umask):
            // the WAL and shared-memory files SQLite makes beside it take the same mode.
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw .other("\(path): cannot create: \(String(cString: strerror(errno)))") }
            let set = fchmod(fd, 0o600)
            let why = String(cString: strerror(errno))
            Glibc.close(fd)
            guard set == 0 else { throw .other("\(path): cannot set its mode: \(why)") }
        }
        turns = WriteTurns.of(path)
        var initialize = !exists || st.st_size == 0
        var version = EventLog.schemaVersion
        if exists && st.st_size > 0 {
            (initialize, version) = try EventLog.inspect(path)
        }
        let flags = SQLITE_OPEN_READWRITE | (exists ? 0 : SQLITE_OPEN_CREATE)
        conn = try SQLiteConnection(path: path, flags: flags)
        let mode = try conn.queryStrings("PRAGMA journal_mode=WAL").first ?? ""
        guard mode.lowercased() == "wal" else {
            throw .other("\(path): cannot switch to WAL mode (got \(mode))")
        }
        try conn.exec(durability == .full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL")
        if initialize {
            try createSchema()
        } else if version < EventLog.schemaVersion {
            try migrate(from: version)
        }
        lastAt = try conn.queryInt("SELECT at FROM events ORDER BY seq DESC LIMIT 1") ?? 0
    }

    public func close() {
        insertSQL = Array(repeating: nil, count: EventLog.rowsPerInsert)
        conn.close()
    }

    // MARK: - Append

    /// Appends `batch` in one transaction and returns the stored events.
    public func append(_ batch: [NewEvent]) throws(LogError) -> [StoredEvent] {
        try appendBatches([batch])[0].get()
    }

    /// Appends several batches in ONE transaction (one fsync). A batch whose key is already in
    /// the log fails alone with `.keyConflict` (a savepoint undoes it) and every later batch of
    /// the call fails with `.aborted`; the batches before it commit. Any other failure rolls the
    /// whole transaction back and fails every batch with the same error.
    public func appendBatches(_ batches: [[NewEvent]]) -> [Result<[StoredEvent], LogError>] {
        guard !batches.isEmpty else { return [] }
        let turn = turns.take()
        defer { turns.give(turn) }
        do throws(LogError) {
            try conn.execPrepared("BEGIN IMMEDIATE")
            var seq = UInt64(try conn.queryInt("SELECT max(seq) FROM events") ?? 0)
            let now = max(lastAt, SystemClock.wallMicroseconds())
            var results: [Result<[StoredEvent], LogError>] = []
            var failed: LogError?
            // Batches without a key cannot fail alone (no savepoint): their events are gathered
            // and inserted together, `rowsPerInsert` to a statement, when a keyed batch or the
            // end comes. A keyed batch's events are inserted on their own, in its savepoint.
            var gathered: [(batch: Int, event: Int)] = []
            var gatheredFrom = seq
            for (b, batch) in batches.enumerated() {
                if let failed {
                    results.append(
                        .failure(
                            .aborted("not written: an earlier batch of the group failed (\(failed.message))"))
                    )
                    continue
                }
                let guarded = batch.contains { $0.key != nil }
                if !guarded {
                    for i in batch.indices { gathered.append((b, i)) }
                    results.append(.success(EventLog.stored(batch, after: seq, at: now)))
                    seq += UInt64(batch.count)
                    continue
                }
                try insert(batches, gathered, after: gatheredFrom, at: now)
                gathered.removeAll(keepingCapacity: true)
                try conn.execPrepared("SAVEPOINT batch")
                do throws(LogError) {
                    try insert(batches, batch.indices.map { (b, $0) }, after: seq, at: now)
                    try conn.execPrepared("RELEASE batch")
                    results.append(.success(EventLog.stored(batch, after: seq, at: now)))
                    seq += UInt64(batch.count)
                    gatheredFrom = seq
                } catch {
                    guard case .keyConflict = error else { throw error }
                    try conn.exec("ROLLBACK TO batch")
                    try conn.execPrepared("RELEASE batch")
                    seq = UInt64(try conn.queryInt("SELECT max(seq) FROM events") ?? 0)
                    let keys = batch.compactMap(\.key).map { String(reflecting: $0) }.joined(separator: ", ")
                    let e = LogError.keyConflict(
                        "\(path): idempotency key already in the log (one of \(keys))")
                    results.append(.failure(e))
                    failed = e
                    gatheredFrom = seq
                }
            }
            try insert(batches, gathered, after: gatheredFrom, at: now)
            try conn.execPrepared("COMMIT")
            lastAt = now
            return results
        } catch {
            rollback()
            return Array(repeating: .failure(error), count: batches.count)
        }
    }

    /// What `appendBatches` returns for `batch`, numbered after `seq`.
    private static func stored(_ batch: [NewEvent], after seq: UInt64, at now: Int64) -> [StoredEvent] {
        var stored: [StoredEvent] = []
        stored.reserveCapacity(batch.count)
        for (i, e) in batch.enumerated() {
            stored.append(
                StoredEvent(
                    seq: seq + UInt64(i) + 1, stream: e.stream, kind: e.kind, payload: e.payload, key: e.key,
                    at: now, author: e.author))
        }
        return stored
    }

    /// Events to a multi-row INSERT. A statement per event spent about a sixth of the writer's
    /// instructions on the statement itself (its cursor opened and closed, its halt, reset and
    /// bindings cleared: callgrind, toggles at 16 x 16); sixteen rows to a statement share that.
    static let rowsPerInsert = 16

    /// The INSERTs of 1 to `rowsPerInsert` events (index: rows - 1), each prepared once:
    /// looking one up in the connection's cache would hash its SQL text every time.
    private var insertSQL: [OpaquePointer?] = Array(repeating: nil, count: EventLog.rowsPerInsert)

    /// The bytes an INSERT's texts and blobs are bound from (SQLITE_STATIC: SQLite copies
    /// nothing, where SQLITE_TRANSIENT would allocate and copy every one), kept between
    /// statements so that it stops allocating once it has grown.
    private var bound: [UInt8] = []

    private func insertStatement(rows: Int) throws(LogError) -> OpaquePointer {
        if let s = insertSQL[rows - 1] { return s }
        let values = (0..<rows).map { r in
            "(" + (1...7).map { "?\(r * 7 + $0)" }.joined(separator: ", ") + ")"
        }
        let s = try conn.statement(
            "INSERT INTO events(\(EventLog.columns)) VALUES \(values.joined(separator: ", "))")
        insertSQL[rows - 1] = s
        return s
    }

    /// Inserts the events at `places` in `batches`, numbered from `seq + 1`, `rowsPerInsert`
    /// to a statement.
    private func insert(
        _ batches: [[NewEvent]], _ places: [(batch: Int, event: Int)], after seq: UInt64, at now: Int64
    ) throws(LogError) {
        var from = 0
        while from < places.count {
            let to = min(from + EventLog.rowsPerInsert, places.count)
            let rc = try insertRows(batches, places[from..<to], after: seq + UInt64(from), at: now)
            guard rc == SQLITE_DONE else { throw conn.error(rc, "append event") }
            from = to
        }
    }

    /// One INSERT of the events at `places` (at most `rowsPerInsert`); returns SQLite's result
    /// code. The bindings are cleared before `bound` can change.
    private func insertRows(
        _ batches: [[NewEvent]], _ places: ArraySlice<(batch: Int, event: Int)>, after seq: UInt64,
        at now: Int64
    ) throws(LogError) -> Int32 {
        let s = try insertStatement(rows: places.count)
        var size = 0
        for (b, i) in places {
            size +=
                batches[b][i].stream.utf8.count + batches[b][i].kind.utf8.count + batches[b][i].payload.count
            size += (batches[b][i].key?.utf8.count ?? 0) + (batches[b][i].author?.utf8.count ?? 0)
        }
        bound.removeAll(keepingCapacity: true)
        bound.reserveCapacity(size)
        for (b, i) in places {
            bound.append(contentsOf: batches[b][i].stream.utf8)
            bound.append(contentsOf: batches[b][i].kind.utf8)
            bound.append(contentsOf: batches[b][i].payload)
            if let key = batches[b][i].key { bound.append(contentsOf: key.utf8) }
            if let author = batches[b][i].author { bound.append(contentsOf: author.utf8) }
        }
        return bound.withUnsafeBufferPointer { bytes in
            // A zero-length text or blob must not be bound as NULL: a non-null pointer, 0 bytes.
            let base = UnsafeRawPointer(bytes.baseAddress) ?? UnsafeRawPointer(bitPattern: 1)!
            var at = 0
            func next(_ count: Int) -> (UnsafeRawPointer, Int32) {
                defer { at += count }
                return (base + at, Int32(count))
            }
            for (row, (b, i)) in places.enumerated() {
                let p = Int32(row * 7)
                let stream = next(batches[b][i].stream.utf8.count)
                let kind = next(batches[b][i].kind.utf8.count)
                let payload = next(batches[b][i].payload.count)
                sqlite3_bind_int64(s, p + 1, Int64(seq) + Int64(row) + 1)
                sqlite3_bind_text(
                    s, p + 2, stream.0.assumingMemoryBound(to: CChar.self), stream.1, swiped_sqlite_static())
                sqlite3_bind_text(
                    s, p + 3, kind.0.assumingMemoryBound(to: CChar.self), kind.1, swiped_sqlite_static())
                sqlite3_bind_blob(s, p + 4, payload.0, payload.1, swiped_sqlite_static())
                if let count = batches[b][i].key?.utf8.count {
                    let key = next(count)
                    sqlite3_bind_text(
                        s, p + 5, key.0.assumingMemoryBound(to: CChar.self), key.1, swiped_sqlite_static())
                } else {
                    sqlite3_bind_null(s, p + 5)
                }
                sqlite3_bind_int64(s, p + 6, now)
                if let count = batches[b][i].author?.utf8.count {
                    let author = next(count)
                    sqlite3_bind_text(
                        s, p + 7, author.0.assumingMemoryBound(to: CChar.self), author.1,
                        swiped_sqlite_static())
                } else {
                    sqlite3_bind_null(s, p + 7)
                }
            }
            var rc = sqlite3_step(s)
            if rc == SQLITE_ROW { rc = SQLITE_DONE }  // an INSERT has no row; as `run`
            sqlite3_reset(s)
            sqlite3_clear_bindings(s)
            return rc
        }
    }

    func rollback() {
        if conn.inTransaction, let db = conn.db { sqlite3_exec(db, "ROLLBACK", nil, nil, nil) }
    }

    // MARK: - Reads

    /// The sequence number of the last event (0 when the log is empty).
    public func latestSeq() throws(LogError) -> UInt64 {
        UInt64(try conn.queryInt("SELECT max(seq) FROM events") ?? 0)
    }

    /// The columns of an event, in `row`'s order (and the INSERT's).
    static let columns = "seq, stream, kind, payload, key, at, author"

    private func row(_ s: OpaquePointer) -> StoredEvent {
        StoredEvent(
            seq: UInt64(sqlite3_column_int64(s, 0)), stream: conn.text(s, 1) ?? "",
            kind: kind(s, 2), payload: conn.blob(s, 3), key: conn.text(s, 4),
            at: sqlite3_column_int64(s, 5), author: conn.text(s, 6))
    }

    /// Kinds repeat: reuse the String instead of allocating one per row (replay speed).
    private var kinds = InternedStrings()

    private func kind(_ s: OpaquePointer, _ i: Int32) -> String {
        guard let p = sqlite3_column_text(s, i) else { return "" }
        return kinds.string(UnsafeRawBufferPointer(start: p, count: Int(sqlite3_column_bytes(s, i))))
    }

    /// Up to `limit` events with seq > `after`, in order.
    public func events(after: UInt64, limit: Int) throws(LogError) -> [StoredEvent] {
        let s = try conn.statement(
            "SELECT \(EventLog.columns) FROM events WHERE seq > ?1 ORDER BY seq LIMIT ?2")
        defer { sqlite3_reset(s) }
        conn.bind(s, 1, Int64(clamping: after))
        conn.bind(s, 2, Int64(max(0, limit)))
        var out: [StoredEvent] = []
        while try conn.step(s, "read events") { out.append(row(s)) }
        return out
    }

    /// Up to `limit` events made by `author` with `after` < seq ≤ `upTo`, in order (through
    /// the author index: a read of that person's events alone).
    public func events(by author: String, after: UInt64, upTo: UInt64, limit: Int) throws(LogError)
        -> [StoredEvent]
    {
        let s = try conn.statement(
            "SELECT \(EventLog.columns) FROM events WHERE author = ?1 AND seq > ?2 AND seq <= ?3 ORDER BY seq LIMIT ?4"
        )
        defer { sqlite3_reset(s) }
        conn.bind(s, 1, author)
        conn.bind(s, 2, Int64(clamping: after))
        conn.bind(s, 3, Int64(clamping: upTo))
        conn.bind(s, 4, Int64(max(0, limit)))
        var out: [StoredEvent] = []
        while try conn.step(s, "read events by author") { out.append(row(s)) }
        return out
    }

    /// Streams every event with seq > `after` in order, without holding them all in memory;
    /// `body` returns false to stop early.
    public func forEachEvent(after: UInt64, _ body: (StoredEvent) -> Bool) throws(LogError) {
        let s = try conn.statement("SELECT \(EventLog.columns) FROM events WHERE seq > ?1 ORDER BY seq")
        defer { sqlite3_reset(s) }
        conn.bind(s, 1, Int64(clamping: after))
        while try conn.step(s, "replay events") {
            if !body(row(s)) { break }
        }
    }

    /// The event stored with idempotency key `key`, if any.
    public func event(forKey key: String) throws(LogError) -> StoredEvent? {
        let s = try conn.statement("SELECT \(EventLog.columns) FROM events WHERE key = ?1")
        defer { sqlite3_reset(s) }
        conn.bind(s, 1, key)
        return try conn.step(s, "find key") ? row(s) : nil
    }

    /// The events of one stream with seq ≤ `upTo`, in order: those in `streams` through it, those
    /// after `stream_index.upto` from a range of `events` (one statement, so one read snapshot).
    /// Fast for the events up to `upto`, the ones it is used for (see the schema note).
    public func events(stream: String, upTo: UInt64) throws(LogError) -> [StoredEvent] {
        let s = try conn.statement(
            """
            SELECT \(EventLog.columns) FROM events
             WHERE seq IN (SELECT seq FROM streams WHERE stream = ?1 AND seq <= ?2)
            UNION ALL
            SELECT \(EventLog.columns) FROM events
             WHERE seq > (SELECT upto FROM stream_index) AND seq <= ?2 AND stream = ?1
            ORDER BY seq
            """)
        defer { sqlite3_reset(s) }
        conn.bind(s, 1, stream)
        conn.bind(s, 2, Int64(clamping: upTo))
        var out: [StoredEvent] = []
        while try conn.step(s, "read stream") { out.append(row(s)) }
        return out
    }

    // MARK: - Snapshots

    /// Stores opaque `data` describing the state after event `seq`; keeps the two newest.
    public func saveSnapshot(seq: UInt64, data: [UInt8]) throws(LogError) {
        let turn = turns.take()
        defer { turns.give(turn) }
        try conn.exec("BEGIN IMMEDIATE")
        do throws(LogError) {
            let s = try conn.statement("INSERT OR REPLACE INTO snapshots(seq, at, data) VALUES(?1, ?2, ?3)")
            conn.bind(s, 1, Int64(seq))
            conn.bind(s, 2, SystemClock.wallMicroseconds())
            conn.bind(s, 3, data)
            try conn.run(s, "save snapshot")
            let d = try conn.statement(
                "DELETE FROM snapshots WHERE seq < (SELECT seq FROM snapshots ORDER BY seq DESC LIMIT 1 OFFSET 1)"
            )
            try conn.run(d, "prune snapshots")
            try conn.exec("COMMIT")
        } catch {
            rollback()
            throw error
        }
    }

    /// The newest snapshot, if any.
    public func latestSnapshot() throws(LogError) -> (seq: UInt64, data: [UInt8])? {
        let s = try conn.statement("SELECT seq, data FROM snapshots ORDER BY seq DESC LIMIT 1")
        defer { sqlite3_reset(s) }
        guard try conn.step(s, "load snapshot") else { return nil }
        return (UInt64(sqlite3_column_int64(s, 0)), conn.blob(s, 1))
    }
}

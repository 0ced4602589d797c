import CSQLite
import Glibc

/// A durable, append-only event log in one SQLite file (WAL mode).
///
/// Schema (`PRAGMA application_id` = `EventLog.applicationID`, `user_version` = 1):
///
///     events(seq INTEGER PRIMARY KEY,      -- global, gapless, from 1
///            stream TEXT NOT NULL, kind TEXT NOT NULL, payload BLOB NOT NULL,
///            key TEXT UNIQUE,              -- optional idempotency key
///            at INTEGER NOT NULL)          -- µs since the Unix epoch (UTC)
///     events_by_stream(stream, seq)
///     snapshots(seq INTEGER PRIMARY KEY, at INTEGER NOT NULL, data BLOB NOT NULL)
///
/// Opening checks the file first through a read-only connection: a damaged file or another
/// application's database is refused with a typed error naming it, and is never modified.
/// Not thread-safe: one instance per thread (SQLite's WAL lets several connections read while
/// one writes). `GroupCommitter` owns a second instance on its writer thread.
public final class EventLog {
    /// `PRAGMA application_id` of a swiped log: "SWPD".
    public static let applicationID: Int32 = 0x5357_5044
    /// `PRAGMA user_version` of the schema this code writes and reads.
    public static let schemaVersion: Int32 = 1

    public let path: String
    public let durability: Durability
    let conn: SQLiteConnection
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
        var initialize = !exists || st.st_size == 0
        if exists && st.st_size > 0 {
            initialize = try EventLog.inspect(path)
        }
        let flags = SQLITE_OPEN_READWRITE | (exists ? 0 : SQLITE_OPEN_CREATE)
        conn = try SQLiteConnection(path: path, flags: flags)
        let mode = try conn.queryStrings("PRAGMA journal_mode=WAL").first ?? ""
        guard mode.lowercased() == "wal" else {
            throw .other("\(path): cannot switch to WAL mode (got \(mode))")
        }
        try conn.exec(durability == .full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL")
        if initialize { try createSchema() }
        lastAt = try conn.queryInt("SELECT at FROM events ORDER BY seq DESC LIMIT 1") ?? 0
    }

    /// Read-only look at an existing file. Returns true when it is an empty SQLite database that
    /// may be initialised, false when it is a swiped log; throws for anything else.
    private static func inspect(_ path: String) throws(LogError) -> Bool {
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
            guard version == Int64(schemaVersion) else {
                throw .foreign(
                    "\(path): swiped event log of schema version \(version); this build reads version \(schemaVersion)"
                )
            }
            for t in ["events", "snapshots"] where !objects.contains(t) {
                throw .corrupt("\(path): swiped event log without its \(t) table: the file is damaged")
            }
            return false
        }
        if appID == 0 && objects.isEmpty { return true }
        let hex = String(UInt32(truncatingIfNeeded: appID), radix: 16)
        let tables = objects.prefix(5).joined(separator: ", ") + (objects.count > 5 ? ", …" : "")
        throw .foreign(
            "\(path): not a swiped event log: an SQLite database of another application (application_id 0x\(hex), tables: \(tables.isEmpty ? "none" : tables))"
        )
    }

    private func createSchema() throws(LogError) {
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
                    key     TEXT    UNIQUE,
                    at      INTEGER NOT NULL);
                CREATE INDEX events_by_stream ON events(stream, seq);
                CREATE TABLE snapshots(
                    seq  INTEGER PRIMARY KEY,
                    at   INTEGER NOT NULL,
                    data BLOB    NOT NULL);
                PRAGMA application_id = \(EventLog.applicationID);
                PRAGMA user_version = \(EventLog.schemaVersion);
                """)
            try conn.exec("COMMIT")
        } catch {
            rollback()
            throw error
        }
    }

    public func close() { conn.close() }

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
        do throws(LogError) {
            try conn.exec("BEGIN IMMEDIATE")
            var seq = UInt64(try conn.queryInt("SELECT max(seq) FROM events") ?? 0)
            let now = max(lastAt, EventLog.nowMicros())
            var results: [Result<[StoredEvent], LogError>] = []
            var failed: LogError?
            for batch in batches {
                if let failed {
                    results.append(
                        .failure(
                            .aborted("not written: an earlier batch of the group failed (\(failed.message))"))
                    )
                    continue
                }
                let guarded = batch.contains { $0.key != nil }
                if guarded { try conn.exec("SAVEPOINT batch") }
                do throws(LogError) {
                    var stored: [StoredEvent] = []
                    stored.reserveCapacity(batch.count)
                    for e in batch {
                        let s = try conn.statement(
                            "INSERT INTO events(seq, stream, kind, payload, key, at) VALUES(?1, ?2, ?3, ?4, ?5, ?6)"
                        )
                        conn.bind(s, 1, Int64(seq + 1))
                        conn.bind(s, 2, e.stream)
                        conn.bind(s, 3, e.kind)
                        conn.bind(s, 4, e.payload)
                        conn.bind(s, 5, e.key)
                        conn.bind(s, 6, now)
                        try conn.run(s, "append event")
                        seq += 1
                        stored.append(
                            StoredEvent(
                                seq: seq, stream: e.stream, kind: e.kind, payload: e.payload,
                                key: e.key, at: now))
                    }
                    if guarded { try conn.exec("RELEASE batch") }
                    results.append(.success(stored))
                } catch {
                    guard case .keyConflict = error, guarded else { throw error }
                    try conn.exec("ROLLBACK TO batch")
                    try conn.exec("RELEASE batch")
                    seq = UInt64(try conn.queryInt("SELECT max(seq) FROM events") ?? 0)
                    let keys = batch.compactMap(\.key).map { String(reflecting: $0) }.joined(separator: ", ")
                    let e = LogError.keyConflict(
                        "\(path): idempotency key already in the log (one of \(keys))")
                    results.append(.failure(e))
                    failed = e
                }
            }
            try conn.exec("COMMIT")
            lastAt = now
            return results
        } catch {
            rollback()
            return Array(repeating: .failure(error), count: batches.count)
        }
    }

    private func rollback() {
        if conn.inTransaction, let db = conn.db { sqlite3_exec(db, "ROLLBACK", nil, nil, nil) }
    }

    static func nowMicros() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
    }

    // MARK: - Reads

    /// The sequence number of the last event (0 when the log is empty).
    public func latestSeq() throws(LogError) -> UInt64 {
        UInt64(try conn.queryInt("SELECT max(seq) FROM events") ?? 0)
    }

    private static let columns = "seq, stream, kind, payload, key, at"

    private func row(_ s: OpaquePointer) -> StoredEvent {
        StoredEvent(
            seq: UInt64(sqlite3_column_int64(s, 0)), stream: conn.text(s, 1) ?? "",
            kind: kind(s, 2), payload: conn.blob(s, 3), key: conn.text(s, 4),
            at: sqlite3_column_int64(s, 5))
    }

    /// Kinds repeat: reuse the String instead of allocating one per row (replay speed).
    private var kinds: [(bytes: [UInt8], string: String)] = []

    private func kind(_ s: OpaquePointer, _ i: Int32) -> String {
        guard let p = sqlite3_column_text(s, i) else { return "" }
        let raw = UnsafeBufferPointer(start: p, count: Int(sqlite3_column_bytes(s, i)))
        for k in kinds where k.bytes.elementsEqual(raw) { return k.string }
        let string = String(decoding: raw, as: UTF8.self)
        if kinds.count < 32 { kinds.append((Array(raw), string)) }
        return string
    }

    /// Up to `limit` events with seq > `after`, in order.
    public func events(after: UInt64, limit: Int) throws(LogError) -> [StoredEvent] {
        let s = try conn.statement(
            "SELECT \(EventLog.columns) FROM events WHERE seq > ?1 ORDER BY seq LIMIT ?2")
        defer { sqlite3_reset(s) }
        conn.bind(s, 1, Int64(after))
        conn.bind(s, 2, Int64(max(0, limit)))
        var out: [StoredEvent] = []
        while try conn.step(s, "read events") { out.append(row(s)) }
        return out
    }

    /// Streams every event with seq > `after` in order, without holding them all in memory;
    /// `body` returns false to stop early.
    public func forEachEvent(after: UInt64, _ body: (StoredEvent) -> Bool) throws(LogError) {
        let s = try conn.statement("SELECT \(EventLog.columns) FROM events WHERE seq > ?1 ORDER BY seq")
        defer { sqlite3_reset(s) }
        conn.bind(s, 1, Int64(after))
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

    /// The events of one stream with seq ≤ `upTo`, in order.
    public func events(stream: String, upTo: UInt64) throws(LogError) -> [StoredEvent] {
        let s = try conn.statement(
            "SELECT \(EventLog.columns) FROM events WHERE stream = ?1 AND seq <= ?2 ORDER BY seq")
        defer { sqlite3_reset(s) }
        conn.bind(s, 1, stream)
        conn.bind(s, 2, Int64(upTo))
        var out: [StoredEvent] = []
        while try conn.step(s, "read stream") { out.append(row(s)) }
        return out
    }

    // MARK: - Snapshots

    /// Stores opaque `data` describing the state after event `seq`; keeps the two newest.
    public func saveSnapshot(seq: UInt64, data: [UInt8]) throws(LogError) {
        try conn.exec("BEGIN IMMEDIATE")
        do throws(LogError) {
            let s = try conn.statement("INSERT OR REPLACE INTO snapshots(seq, at, data) VALUES(?1, ?2, ?3)")
            conn.bind(s, 1, Int64(seq))
            conn.bind(s, 2, EventLog.nowMicros())
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

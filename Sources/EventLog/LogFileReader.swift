// A swiped log file read as it is at one instant, for `swiped export`, `verify` and `backup`
// (issue 32): a read-only connection whose reads all run in ONE read transaction, so that a
// daemon writing meanwhile (WAL) changes nothing this sees, and the file is never modified.
import CSQLite
import Glibc

public final class LogFileReader {
    public let path: String
    let conn: SQLiteConnection
    private var open = false
    /// The file's schema version (`PRAGMA user_version`): a file read here is never migrated.
    public private(set) var schemaVersion = 0
    /// Whether the events have their `author` column (schema 3; read as NULL before it).
    private var hasAuthors = false

    /// Opens `path` read-only and checks that it is a swiped log this build reads (its
    /// application_id and schema version); nothing is written to it.
    public init(path: String) throws(LogError) {
        self.path = path
        var st = stat()
        guard stat(path, &st) == 0 else {
            throw .other("\(path): cannot read: \(String(cString: strerror(errno)))")
        }
        guard (st.st_mode & S_IFMT) == S_IFREG else { throw .foreign("\(path): not a regular file") }
        conn = try SQLiteConnection(path: path, flags: SQLITE_OPEN_READONLY)
        do throws(LogError) {
            let appID = try conn.queryInt("PRAGMA application_id") ?? 0
            let version = try conn.queryInt("PRAGMA user_version") ?? 0
            guard Int32(truncatingIfNeeded: appID) == EventLog.applicationID else {
                throw LogError.foreign("\(path): not a swiped event log (application_id \(appID))")
            }
            guard version >= 1 && version <= Int64(EventLog.schemaVersion) else {
                throw LogError.foreign(
                    "\(path): swiped event log of schema version \(version); this build reads versions 1 to \(EventLog.schemaVersion)"
                )
            }
            schemaVersion = Int(version)
            if version >= 3 { hasAuthors = try EventLog.hasAuthorColumn(conn) }
        } catch {
            conn.close()
            if case .other(let m) = error, m.contains("not a database") { throw .corrupt(m) }
            throw error
        }
    }

    deinit { close() }

    public func close() {
        if open, let db = conn.db { sqlite3_exec(db, "ROLLBACK", nil, nil, nil) }
        open = false
        conn.close()
    }

    /// Starts the read transaction every later read runs in (a deferred BEGIN takes its
    /// snapshot at its first read: the SELECT here).
    public func begin() throws(LogError) {
        try conn.exec("BEGIN")
        open = true
        _ = try conn.queryInt("SELECT count(*) FROM sqlite_master")
    }

    /// Ends the read transaction (it wrote nothing).
    public func end() throws(LogError) {
        guard open else { return }
        open = false
        try conn.exec("COMMIT")
    }

    /// `PRAGMA integrity_check`: empty when the file is sound, else SQLite's findings.
    public func integrityProblems() throws(LogError) -> [String] {
        let found = try conn.queryStrings("PRAGMA integrity_check")
        return found == ["ok"] ? [] : found
    }

    public func latestSeq() throws(LogError) -> UInt64 {
        UInt64(try conn.queryInt("SELECT coalesce(max(seq), 0) FROM events") ?? 0)
    }

    public func eventCount() throws(LogError) -> UInt64 {
        UInt64(try conn.queryInt("SELECT count(*) FROM events") ?? 0)
    }

    /// Every snapshot, by seq.
    public func snapshots() throws(LogError) -> [(seq: UInt64, data: [UInt8])] {
        let s = try conn.statement("SELECT seq, data FROM snapshots ORDER BY seq")
        defer { sqlite3_reset(s) }
        var out: [(UInt64, [UInt8])] = []
        while try conn.step(s, "read snapshots") {
            out.append((UInt64(sqlite3_column_int64(s, 0)), conn.blob(s, 1)))
        }
        return out
    }

    /// Streams every event in seq order; `body` returns false to stop.
    public func forEachEvent(_ body: (StoredEvent) -> Bool) throws(LogError) {
        let author = hasAuthors ? "author" : "NULL"
        let s = try conn.statement(
            "SELECT seq, stream, kind, payload, key, at, \(author) FROM events ORDER BY seq")
        defer { sqlite3_reset(s) }
        while try conn.step(s, "read events") {
            let e = StoredEvent(
                seq: UInt64(bitPattern: sqlite3_column_int64(s, 0)), stream: conn.text(s, 1) ?? "",
                kind: conn.text(s, 2) ?? "", payload: conn.blob(s, 3), key: conn.text(s, 4),
                at: sqlite3_column_int64(s, 5), author: conn.text(s, 6))
            if !body(e) { break }
        }
    }

    /// A whole, consistent copy of the file into `target`, which must not exist or be empty:
    /// `VACUUM INTO` reads the file in one read transaction (SQLite's stepwise backup would
    /// start again at every commit of a writer, and under load never finish). Not inside
    /// `begin()`: VACUUM refuses to run in a transaction.
    public func vacuum(into target: String) throws(LogError) {
        precondition(!open, "VACUUM INTO inside the read transaction of \(path)")
        let s = try conn.statement("VACUUM INTO ?1")
        conn.bind(s, 1, target)
        try conn.run(s, "VACUUM INTO \(target)")
    }
}

/// Writes the events of a log that exists elsewhere into a new, empty log file: their seqs,
/// times, keys and authors as they were (`swiped import`). The caller makes the file and renames it into
/// place when all went well; the rows go in as they come, committed every `rowsPerCommit`, since
/// nothing reads the file before the rename.
public final class LogImporter {
    public let log: EventLog
    private var pending = 0
    public static let rowsPerCommit = 20_000

    /// `path`: an empty file (made by the caller, with its mode) that becomes a log.
    public init(path: String) throws(LogError) {
        log = try EventLog(path: path, durability: .normal)
    }

    public func append(_ e: StoredEvent) throws(LogError) {
        if pending == 0 { try log.conn.execPrepared("BEGIN IMMEDIATE") }
        let s = try log.conn.statement(
            "INSERT INTO events(\(EventLog.columns)) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)")
        log.conn.bind(s, 1, Int64(bitPattern: e.seq))
        log.conn.bind(s, 2, e.stream)
        log.conn.bind(s, 3, e.kind)
        log.conn.bind(s, 4, e.payload)
        log.conn.bind(s, 5, e.key)
        log.conn.bind(s, 6, e.at)
        log.conn.bind(s, 7, e.author)
        do throws(LogError) {
            try log.conn.run(s, "import event \(e.seq)")
        } catch {
            rollback()
            throw error
        }
        pending += 1
        if pending >= LogImporter.rowsPerCommit { try commit() }
    }

    /// Commits the rows so far.
    public func commit() throws(LogError) {
        guard pending > 0 else { return }
        pending = 0
        do throws(LogError) {
            try log.conn.execPrepared("COMMIT")
        } catch {
            rollback()
            throw error
        }
    }

    /// Commits, saves a snapshot of `data` at `seq` when given, checkpoints the WAL into the
    /// file (so that the file alone is the log) and closes it.
    public func finish(snapshot: (seq: UInt64, data: [UInt8])?) throws(LogError) {
        try commit()
        if let snapshot { try log.saveSnapshot(seq: snapshot.seq, data: snapshot.data) }
        _ = try log.conn.queryStrings("PRAGMA wal_checkpoint(TRUNCATE)")
        log.close()
    }

    public func abandon() {
        rollback()
        log.close()
    }

    private func rollback() {
        pending = 0
        if log.conn.inTransaction, let db = log.conn.db { sqlite3_exec(db, "ROLLBACK", nil, nil, nil) }
    }
}

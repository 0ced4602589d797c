import CSQLite
import Glibc

/// One SQLite connection with a cache of prepared statements. Used by one thread at a time.
final class SQLiteConnection {
    let path: String
    private(set) var db: OpaquePointer?
    private var statements: [String: OpaquePointer] = [:]

    /// SQLite's memory statistics off, once, before the first connection (see the shim). The
    /// result is not checked: SQLITE_MISUSE only means that something opened SQLite before
    /// (a test's own connection), and then the statistics stay on, which costs speed only.
    private static let memoryStatisticsOff: Void = { _ = swiped_sqlite_disable_memstatus() }()

    init(path: String, flags: Int32) throws(LogError) {
        SQLiteConnection.memoryStatisticsOff
        self.path = path
        var handle: OpaquePointer?
        let rc = sqlite3_open_v2(path, &handle, flags | SQLITE_OPEN_NOMUTEX, nil)
        guard rc == SQLITE_OK, let handle else {
            let msg =
                handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
            sqlite3_close_v2(handle)
            throw SQLiteConnection.map(rc, "\(path): cannot open: \(msg)")
        }
        db = handle
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, 5000)
    }

    deinit { close() }

    func close() {
        for (_, s) in statements { sqlite3_finalize(s) }
        statements = [:]
        if let db { sqlite3_close_v2(db) }
        db = nil
    }

    /// Maps an SQLite result code to a typed error.
    static func map(_ rc: Int32, _ message: String) -> LogError {
        switch rc & 0xFF {
        case SQLITE_FULL: return .full(message)
        case SQLITE_IOERR: return .io(message)
        case SQLITE_CORRUPT, SQLITE_NOTADB: return .corrupt(message)
        case SQLITE_CONSTRAINT: return .keyConflict(message)
        default: return .other(message)
        }
    }

    func error(_ rc: Int32, _ what: String) -> LogError {
        let msg = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
        return SQLiteConnection.map(rc, "\(path): \(what): \(msg) (SQLite code \(rc))")
    }

    /// A cached prepared statement, reset and with its bindings cleared.
    func statement(_ sql: String) throws(LogError) -> OpaquePointer {
        if let s = statements[sql] {
            sqlite3_reset(s)
            sqlite3_clear_bindings(s)
            return s
        }
        guard let db else { throw .closed("\(path): the log is closed") }
        var s: OpaquePointer?
        let rc = sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &s, nil)
        guard rc == SQLITE_OK, let s else { throw error(rc, "prepare \(sql)") }
        statements[sql] = s
        return s
    }

    /// Runs one statement through the cache: for the statements of every transaction (BEGIN,
    /// COMMIT, SAVEPOINT), which `exec` would parse again each time.
    func execPrepared(_ sql: String) throws(LogError) {
        try run(try statement(sql), sql)
    }

    func exec(_ sql: String) throws(LogError) {
        guard let db else { throw .closed("\(path): the log is closed") }
        let rc = sqlite3_exec(db, sql, nil, nil, nil)
        guard rc == SQLITE_OK else { throw error(rc, sql) }
    }

    /// Runs a statement expected to produce no row (or whose rows are ignored).
    func run(_ s: OpaquePointer, _ what: String) throws(LogError) {
        while true {
            let rc = sqlite3_step(s)
            if rc == SQLITE_DONE { break }
            if rc != SQLITE_ROW {
                sqlite3_reset(s)
                throw error(rc, what)
            }
        }
        sqlite3_reset(s)
    }

    /// Steps once: true for a row, false when done.
    func step(_ s: OpaquePointer, _ what: String) throws(LogError) -> Bool {
        let rc = sqlite3_step(s)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE { return false }
        sqlite3_reset(s)
        throw error(rc, what)
    }

    func queryInt(_ sql: String) throws(LogError) -> Int64? {
        let s = try statement(sql)
        defer { sqlite3_reset(s) }
        guard try step(s, sql) else { return nil }
        return sqlite3_column_type(s, 0) == SQLITE_NULL ? nil : sqlite3_column_int64(s, 0)
    }

    func queryStrings(_ sql: String) throws(LogError) -> [String] {
        let s = try statement(sql)
        defer { sqlite3_reset(s) }
        var out: [String] = []
        while try step(s, sql) { out.append(text(s, 0) ?? "") }
        return out
    }

    var inTransaction: Bool { db.map { sqlite3_get_autocommit($0) == 0 } ?? false }

    // MARK: - Binding and columns

    func bind(_ s: OpaquePointer, _ i: Int32, _ v: String?) {
        if let v {
            sqlite3_bind_text(s, i, v, -1, swiped_sqlite_transient())
        } else {
            sqlite3_bind_null(s, i)
        }
    }

    func bind(_ s: OpaquePointer, _ i: Int32, _ v: [UInt8]) {
        v.withUnsafeBytes { b in
            // A zero-length blob must not be bound as NULL (payload is NOT NULL).
            _ = sqlite3_bind_blob(
                s, i, b.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(b.count),
                swiped_sqlite_transient())
        }
    }

    func bind(_ s: OpaquePointer, _ i: Int32, _ v: Int64) { sqlite3_bind_int64(s, i, v) }

    func text(_ s: OpaquePointer, _ i: Int32) -> String? {
        guard let p = sqlite3_column_text(s, i) else { return nil }
        let n = Int(sqlite3_column_bytes(s, i))
        return String(decoding: UnsafeBufferPointer(start: p, count: n), as: UTF8.self)
    }

    func blob(_ s: OpaquePointer, _ i: Int32) -> [UInt8] {
        let n = Int(sqlite3_column_bytes(s, i))
        guard n > 0, let p = sqlite3_column_blob(s, i) else { return [] }
        return Array(UnsafeRawBufferPointer(start: p, count: n))
    }
}

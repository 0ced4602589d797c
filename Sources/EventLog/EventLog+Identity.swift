// The SQLite log's identity (issue 32): the table that keeps the id `LogIdentity.make()` made
// (LogTypes), and its reading.
import CSQLite
import LogTypes

extension EventLog {
    /// The table that holds the id: one row. Not part of the schema version's required tables
    /// (`inspect`): a file written before it existed gets one from `logID()`, and an older build
    /// opening a file that has it ignores it.
    static let identityTable = "CREATE TABLE identity(log TEXT NOT NULL)"

    /// `identityTable`, with a new id in it (inside the caller's transaction).
    static var identitySQL: String {
        "\(identityTable); INSERT INTO identity(log) VALUES('\(LogIdentity.make())');"
    }

    /// The log's id. A file made before ids existed gets one now (in one transaction: another
    /// connection doing the same at once finds the first one's).
    public func logID() throws(LogError) -> String {
        if let id = try readLogID() { return id }
        try conn.exec("BEGIN IMMEDIATE")
        do throws(LogError) {
            if let id = try readLogID() {
                try conn.exec("COMMIT")
                return id
            }
            try conn.exec(EventLog.identitySQL)
            let id = try readLogID()
            try conn.exec("COMMIT")
            guard let id else { throw LogError.other("\(path): the log's id was written and cannot be read") }
            return id
        } catch {
            if conn.inTransaction, let db = conn.db { sqlite3_exec(db, "ROLLBACK", nil, nil, nil) }
            throw error
        }
    }

    /// The id, or nil when the file has none yet.
    private func readLogID() throws(LogError) -> String? {
        guard try conn.queryInt("SELECT count(*) FROM sqlite_master WHERE name = 'identity'") == 1 else {
            return nil
        }
        return try conn.queryStrings("SELECT log FROM identity LIMIT 1").first
    }
}

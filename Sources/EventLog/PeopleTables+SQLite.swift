// The people tables (issue 45) in the log's own file: the tokens (their hashes, never a token)
// and the roles admins gave to names, beside the events and not among them, so that `history`
// stays the list's history and a backup (`VACUUM INTO`, which copies every table) keeps them.
//
//     people_tokens(id TEXT PRIMARY KEY,       -- the token's public handle
//                   name TEXT NOT NULL, role TEXT NOT NULL,
//                   hash BLOB NOT NULL UNIQUE, -- SHA-256 of the token, 32 bytes
//                   created INTEGER NOT NULL, expires INTEGER, last_used INTEGER)  -- µs
//     people_roles(name TEXT PRIMARY KEY, role TEXT NOT NULL) WITHOUT ROWID
//     people_version(id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL)  -- one row
//
// Tokens are read in rowid order, the order they were made (`PeopleTables.tokens`): SQLite gives
// a new row a rowid above every other. Times are stored as the signed 64-bit integer of the
// same bits (`Int64(bitPattern:)`), so that every UInt64 comes back as it went in. The version
// goes up by one in each transaction that changed a row, so that a reader polling it learns
// that another connection changed the tables.
//
// Not part of the schema version's required tables, as `identity` is not: a log made before
// them gets them when a people store opens it (`ensurePeopleTables`), a new log has them from
// the start (`createSchema`), and an older build opening a file that has them ignores them.
import CSQLite
import People

extension EventLog {
    static let peopleTablesSQL = """
        CREATE TABLE IF NOT EXISTS people_tokens(
            id        TEXT    PRIMARY KEY,
            name      TEXT    NOT NULL,
            role      TEXT    NOT NULL,
            hash      BLOB    NOT NULL UNIQUE,
            created   INTEGER NOT NULL,
            expires   INTEGER,
            last_used INTEGER);
        CREATE TABLE IF NOT EXISTS people_roles(
            name TEXT PRIMARY KEY,
            role TEXT NOT NULL) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS people_version(
            id      INTEGER PRIMARY KEY CHECK (id = 1),
            version INTEGER NOT NULL);
        INSERT OR IGNORE INTO people_version(id, version) VALUES(1, 0);
        """

    /// Creates the people tables when the file lacks them (a log made before issue 45), in one
    /// transaction; a file that has them is only looked at.
    public func ensurePeopleTables() throws(LogError) {
        if try conn.hasPeopleTables() { return }
        let turn = turns.take()
        defer { turns.give(turn) }
        try conn.exec("BEGIN IMMEDIATE")
        do throws(LogError) {
            try conn.exec(EventLog.peopleTablesSQL)
            try conn.exec("COMMIT")
        } catch {
            rollback()
            throw error
        }
    }

    /// The version row: it goes up with every change (0 for tables never changed).
    public func peopleVersion() throws(LogError) -> Int64 {
        try conn.queryInt("SELECT version FROM people_version WHERE id = 1") ?? 0
    }

    /// The version and the tables, read in one read transaction.
    public func readPeople() throws(LogError) -> (version: Int64, tables: PeopleTables) {
        try conn.exec("BEGIN")
        do throws(LogError) {
            let version = try peopleVersion()
            let tables = try conn.readPeopleTables()
            try conn.exec("COMMIT")
            return (version, tables)
        } catch {
            rollback()
            throw error
        }
    }

    /// Makes `change` in one transaction (durable as the log's commits are; in turn with the
    /// log's writer, WriteTurns.swift) and returns how many rows it touched, as `InMemoryPeopleStore.apply` counts them; the version goes up when it
    /// touched any. A token whose id or hash is taken already throws `.keyConflict`, and
    /// nothing changes.
    public func apply(_ change: PeopleChange) throws(LogError) -> Int {
        let turn = turns.take()
        defer { turns.give(turn) }
        try conn.execPrepared("BEGIN IMMEDIATE")
        do throws(LogError) {
            let touched: Int
            switch change {
            case .createToken(let t):
                let taken = try conn.statement(
                    "SELECT count(*) FROM people_tokens WHERE id = ?1 OR hash = ?2")
                conn.bind(taken, 1, t.id)
                conn.bind(taken, 2, t.hash)
                let found = try conn.step(taken, "look up a token") ? sqlite3_column_int64(taken, 0) : 0
                sqlite3_reset(taken)
                if found > 0 { throw LogError.keyConflict("a token with this id or hash exists") }
                try conn.insertToken(t)
                touched = 1
            case .revokeTokens(let name, let id):
                let s = try conn.statement(
                    "DELETE FROM people_tokens WHERE name = ?1 AND (?2 IS NULL OR id = ?2)")
                conn.bind(s, 1, name)
                conn.bind(s, 2, id)
                try conn.run(s, "revoke tokens")
                touched = conn.changes
            case .setRole(let name, let role?):
                try conn.insertGrant(name: name, role: role, replacing: true)
                touched = conn.changes
            case .setRole(let name, nil):
                let s = try conn.statement("DELETE FROM people_roles WHERE name = ?1")
                conn.bind(s, 1, name)
                try conn.run(s, "take a role back")
                touched = conn.changes
            case .touch(let id, let at):
                let s = try conn.statement("UPDATE people_tokens SET last_used = ?2 WHERE id = ?1")
                conn.bind(s, 1, id)
                conn.bind(s, 2, Int64(bitPattern: at))
                try conn.run(s, "record a token's use")
                touched = conn.changes
            }
            if touched > 0 {
                try conn.execPrepared("UPDATE people_version SET version = version + 1 WHERE id = 1")
            }
            try conn.execPrepared("COMMIT")
            return touched
        } catch {
            rollback()
            throw error
        }
    }
}

extension SQLiteConnection {
    /// Rows the last INSERT, UPDATE or DELETE changed.
    var changes: Int { db.map { Int(sqlite3_changes($0)) } ?? 0 }

    func hasPeopleTables() throws(LogError) -> Bool {
        try queryInt(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('people_tokens', 'people_roles', 'people_version')"
        ) == 3
    }

    /// The tables, in the caller's transaction. A row that is not a token or a grant this build
    /// knows (a role it has no name for, a hash that is not 32 bytes) is damage: `.corrupt`.
    func readPeopleTables() throws(LogError) -> PeopleTables {
        var tokens: [TokenRecord] = []
        let s = try statement(
            "SELECT id, name, role, hash, created, expires, last_used FROM people_tokens ORDER BY rowid")
        defer { sqlite3_reset(s) }
        while try step(s, "read people_tokens") {
            let id = text(s, 0) ?? ""
            let roleName = text(s, 2) ?? ""
            let hash = blob(s, 3)
            guard let role = AccessRole(rawValue: roleName), hash.count == 32 else {
                throw .corrupt(
                    "\(path): people_tokens row \(String(reflecting: id)) has role \(String(reflecting: roleName)) and a hash of \(hash.count) bytes (a role of \(AccessRole.names) and 32 bytes expected): the file is damaged"
                )
            }
            func time(_ i: Int32) -> UInt64? {
                sqlite3_column_type(s, i) == SQLITE_NULL
                    ? nil : UInt64(bitPattern: sqlite3_column_int64(s, i))
            }
            tokens.append(
                TokenRecord(
                    id: id, name: text(s, 1) ?? "", role: role, hash: hash, created: time(4) ?? 0,
                    expires: time(5), lastUsed: time(6)))
        }
        var grants: [String: AccessRole] = [:]
        let g = try statement("SELECT name, role FROM people_roles")
        defer { sqlite3_reset(g) }
        while try step(g, "read people_roles") {
            let name = text(g, 0) ?? ""
            let roleName = text(g, 1) ?? ""
            guard let role = AccessRole(rawValue: roleName) else {
                throw .corrupt(
                    "\(path): people_roles gives \(String(reflecting: name)) the role \(String(reflecting: roleName)), not one of \(AccessRole.names): the file is damaged"
                )
            }
            grants[name] = role
        }
        return PeopleTables(tokens: tokens, grants: grants)
    }

    /// Inserts `t` (in the caller's transaction); a taken id or hash fails with `.keyConflict`.
    func insertToken(_ t: TokenRecord) throws(LogError) {
        let s = try statement(
            "INSERT INTO people_tokens(id, name, role, hash, created, expires, last_used) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)"
        )
        bind(s, 1, t.id)
        bind(s, 2, t.name)
        bind(s, 3, t.role.rawValue)
        bind(s, 4, t.hash)
        bind(s, 5, Int64(bitPattern: t.created))
        for (i, v) in [(Int32(6), t.expires), (7, t.lastUsed)] {
            if let v { bind(s, i, Int64(bitPattern: v)) } else { sqlite3_bind_null(s, i) }
        }
        try run(s, "insert a token")
    }

    /// Gives `name` the role (in the caller's transaction). `replacing`: over a grant it has
    /// (touching no row when the role is the same); else a grant it has fails `.keyConflict`.
    func insertGrant(name: String, role: AccessRole, replacing: Bool) throws(LogError) {
        let s = try statement(
            replacing
                ? "INSERT INTO people_roles(name, role) VALUES(?1, ?2) ON CONFLICT(name) DO UPDATE SET role = excluded.role WHERE role IS NOT excluded.role"
                : "INSERT INTO people_roles(name, role) VALUES(?1, ?2)")
        bind(s, 1, name)
        bind(s, 2, role.rawValue)
        try run(s, "give a role")
    }
}

extension LogFileReader {
    /// The people tables as the read transaction sees them (`begin()`), or nil when the file
    /// has none (a log made before issue 45).
    public func peopleTables() throws(LogError) -> PeopleTables? {
        let found = try conn.queryInt(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('people_tokens', 'people_roles')"
        )
        guard found == 2 else { return nil }
        return try conn.readPeopleTables()
    }
}

extension LogImporter {
    /// Writes `tables` into the new log (its schema has the people tables): tokens in their
    /// order, the grants, and the version 1 when there is anything (0 otherwise, as a log whose
    /// tables never changed). Committed with the rows before it.
    public func write(_ tables: PeopleTables) throws(LogError) {
        try commit()
        try log.conn.exec("BEGIN IMMEDIATE")
        do throws(LogError) {
            for t in tables.tokens { try log.conn.insertToken(t) }
            for (name, role) in tables.grants.sorted(by: { $0.key < $1.key }) {
                try log.conn.insertGrant(name: name, role: role, replacing: false)
            }
            if !tables.tokens.isEmpty || !tables.grants.isEmpty {
                try log.conn.exec("UPDATE people_version SET version = 1 WHERE id = 1")
            }
            try log.conn.exec("COMMIT")
        } catch {
            if log.conn.inTransaction, let db = log.conn.db { sqlite3_exec(db, "ROLLBACK", nil, nil, nil) }
            throw error
        }
    }
}

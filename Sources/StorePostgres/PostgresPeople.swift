// The people tables of schema 2 (PostgresSchema.peopleTables) in SQL: each change as one
// statement (its own transaction: the change, then the version row moved when it touched a row,
// and how many it touched), the tables read with the version in one REPEATABLE READ snapshot,
// and their rows decoded. Shared by the people store (PostgresPeopleStore.swift) and
// `swiped export`, `backup` and `import` (PostgresMoves.swift).
import People
import StoreCore

enum PostgresPeople {
    /// The version and the tables, from one snapshot, in one round trip (the caller rolls back
    /// when it fails: the transaction is then left open).
    static let read = """
        BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY;
        SELECT version FROM swiped_people_version WHERE id = 1;
        \(tablesRead)
        COMMIT
        """

    /// The two tables' rows (`decode`), in the caller's transaction.
    static let tablesRead = """
        SELECT id, name, role, hash, created, expires, last_used FROM swiped_tokens ORDER BY n;
        SELECT name, role FROM swiped_roles;
        """

    /// Whether the database has the people tables (a database of schema 1 has not).
    static let exists =
        "SELECT to_regclass('swiped_tokens') IS NOT NULL AND to_regclass('swiped_roles') IS NOT NULL"

    /// The statement that makes `change`: it answers one row, the number of rows it touched, as
    /// `InMemoryPeopleStore.apply` counts them; 0 for a token whose id or hash is taken (which
    /// the caller answers `conflict`: nothing changed).
    static func change(_ change: PeopleChange, _ conn: PGConnection) -> String {
        let touched: String
        switch change {
        case .createToken(let t):
            touched = """
                INSERT INTO swiped_tokens (id, name, role, hash, created, expires, last_used)
                    VALUES \(values(t, conn)) ON CONFLICT DO NOTHING RETURNING 1
                """
        case .revokeTokens(let name, let id):
            let one = id.map { " AND id = \(conn.literal($0))" } ?? ""
            touched = "DELETE FROM swiped_tokens WHERE name = \(conn.literal(name))\(one) RETURNING 1"
        case .setRole(let name, let role?):
            touched = """
                INSERT INTO swiped_roles AS r (name, role) VALUES (\(conn.literal(name)), \(conn.literal(role.rawValue)))
                    ON CONFLICT (name) DO UPDATE SET role = excluded.role WHERE r.role IS DISTINCT FROM excluded.role
                    RETURNING 1
                """
        case .setRole(let name, nil):
            touched = "DELETE FROM swiped_roles WHERE name = \(conn.literal(name)) RETURNING 1"
        case .touch(let id, let at):
            touched =
                "UPDATE swiped_tokens SET last_used = \(Int64(bitPattern: at)) WHERE id = \(conn.literal(id)) RETURNING 1"
        }
        // The data-modifying WITH clauses run to completion whether or not the SELECT reads
        // them; the version row's update sees what the change returned, not its rows.
        return """
            WITH touched AS (\(touched)),
                 moved AS (UPDATE swiped_people_version SET version = version + 1
                           WHERE id = 1 AND EXISTS (SELECT 1 FROM touched))
            SELECT count(*) FROM touched
            """
    }

    /// `(id, name, role, hash, created, expires, last_used)` of `t`, as SQL.
    static func values(_ t: TokenRecord, _ conn: PGConnection) -> String {
        func time(_ v: UInt64?) -> String { v.map { "\(Int64(bitPattern: $0))" } ?? "NULL" }
        return
            "(\(conn.literal(t.id)), \(conn.literal(t.name)), \(conn.literal(t.role.rawValue)), \(PGBytes.literal(t.hash)), \(time(t.created)), \(time(t.expires)), \(time(t.lastUsed)))"
    }

    /// The statements that write `tables` into empty people tables (an import), tokens in
    /// their order; the version 1 when there is anything. Empty when there is nothing.
    static func insert(_ tables: PeopleTables, _ conn: PGConnection) -> String {
        var sql = ""
        if !tables.tokens.isEmpty {
            sql += "INSERT INTO swiped_tokens (id, name, role, hash, created, expires, last_used) VALUES "
            sql += tables.tokens.map { values($0, conn) }.joined(separator: ", ") + ";\n"
        }
        if !tables.grants.isEmpty {
            let rows = tables.grants.sorted { $0.key < $1.key }.map {
                "(\(conn.literal($0.key)), \(conn.literal($0.value.rawValue)))"
            }
            sql += "INSERT INTO swiped_roles (name, role) VALUES \(rows.joined(separator: ", "));\n"
        }
        if !sql.isEmpty { sql += "UPDATE swiped_people_version SET version = 1 WHERE id = 1;\n" }
        return sql
    }

    /// The tables from the rows of `tablesRead` (tokens, then roles). A row this build cannot
    /// read (a role it has no name for, a hash that is not 32 bytes) is damage: `storage`.
    static func decode(tokens: PGRows?, roles: PGRows?) throws(StoreError) -> PeopleTables {
        guard let tokens, let roles else {
            throw StoreError(.storage, "reading the people tables returned no rows")
        }
        var made: [TokenRecord] = []
        for r in tokens.rows {
            func time(_ i: Int) -> UInt64? { r[i].flatMap { Int64($0) }.map { UInt64(bitPattern: $0) } }
            guard r.count == 7, let id = r[0], let name = r[1],
                let role = r[2].flatMap(AccessRole.init(rawValue:)),
                let hash = r[3].flatMap(PGBytes.decode), hash.count == 32, let created = time(4),
                r[5] == nil || time(5) != nil, r[6] == nil || time(6) != nil
            else {
                throw StoreError(
                    .storage,
                    "a row of swiped_tokens cannot be read (token \(String(reflecting: r.first ?? nil))): a role of \(AccessRole.names), a hash of 32 bytes expected; the table is damaged"
                )
            }
            made.append(
                TokenRecord(
                    id: id, name: name, role: role, hash: hash, created: created, expires: time(5),
                    lastUsed: time(6)))
        }
        var grants: [String: AccessRole] = [:]
        for r in roles.rows {
            guard r.count == 2, let name = r[0], let role = r[1].flatMap(AccessRole.init(rawValue:)) else {
                throw StoreError(
                    .storage,
                    "a row of swiped_roles cannot be read (\(String(reflecting: r.first ?? nil)) given \(String(reflecting: r.last ?? nil)), not one of \(AccessRole.names)); the table is damaged"
                )
            }
            grants[name] = role
        }
        return PeopleTables(tokens: made, grants: grants)
    }

    /// The version and the tables from the rows of `read`.
    static func decode(_ rows: [PGRows]) throws(StoreError) -> (version: Int64, tables: PeopleTables) {
        guard rows.count == 3, let version = rows[0].rows.first?.first.flatMap({ $0 }).flatMap({ Int64($0) })
        else {
            throw StoreError(.storage, "swiped_people_version has no row: the schema is damaged")
        }
        return (version, try decode(tokens: rows[1], roles: rows[2]))
    }
}

// Logs of the schema before issue 46, made from this build's, for the tests of the migrations:
// what a log that an earlier release wrote looks like when this build first opens it.
import CSQLite

public enum LegacyLogs {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Turns the closed SQLite log at `path` (schema 3) into a log of schema 2, as the release
    /// before issue 46 wrote it: no `author` column (every author is lost),
    /// `user_version` 2. The events, keys, snapshots, id and people tables stay as they are.
    public static func downgradeToSchema2(_ path: String) throws {
        var db: OpaquePointer?
        guard sqlite3_open(path, &db) == SQLITE_OK else { throw Failure(description: "open \(path)") }
        defer { sqlite3_close(db) }
        let sql = """
            BEGIN;
            DROP INDEX IF EXISTS events_by_author;
            ALTER TABLE events DROP COLUMN author;
            PRAGMA user_version = 2;
            COMMIT;
            PRAGMA wal_checkpoint(TRUNCATE);
            """
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else {
            throw Failure(description: "\(path): \(String(cString: sqlite3_errmsg(db)))")
        }
    }

    /// What turns a PostgreSQL database of schema 3 into one of schema 2, as the release before
    /// issue 46 made it (to be run with psql while no store has it open): no `author` column
    /// (every author is lost), no author index, version 2.
    public static let postgresSchema2 = """
        DROP INDEX swiped_events_by_author;
        ALTER TABLE swiped_events DROP COLUMN author;
        UPDATE swiped_schema SET version = 2;
        """
}

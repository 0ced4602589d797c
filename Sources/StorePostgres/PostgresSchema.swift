// The PostgreSQL store's tables (docs/postgres.md, "Tables"), created and migrated at start in
// one transaction under an advisory lock (so daemons starting together take turns), the rows
// of swiped_events decoded back into events, and the start-up load: the newest snapshot and
// the events after it.
import LogTypes
import Movies
import StoreCore

enum PostgresSchema {
    /// The newest schema this build knows. Version 2 (issue 45) added the people tables
    /// (`peopleTables`), version 3 (issue 46) the events' `author` and its index
    /// (`authorColumn`); a database of an older version gets what it lacks at the next start
    /// (`migrate`), and a build that knows less refuses it from then on.
    static let version = 3
    /// `pg_advisory_xact_lock`'s key for migrations: "swip" in ASCII.
    static let migrationLock = 0x7377_6970
    /// `pg_advisory_xact_lock`'s key for appends (`PGStatement.appendLock`): "swap" in ASCII.
    static let appendLock = 0x7377_6170
    /// The columns an event is read with, in `Row`'s order.
    static let columns = "seq, stream, kind, payload, at, key, token, author"
    /// Events read per query when catching up.
    static let page = 10_000

    /// The tables besides swiped_schema (also made by `swiped import`, PostgresMoves.swift).
    static let tables = """
        CREATE TABLE swiped_head (id integer PRIMARY KEY CHECK (id = 1), seq bigint NOT NULL);
        CREATE TABLE swiped_events (seq bigint PRIMARY KEY, stream text NOT NULL,
            kind text NOT NULL, payload bytea NOT NULL, at bigint NOT NULL,
            key text UNIQUE, token text, author text);
        \(authorIndex);
        CREATE TABLE swiped_snapshots (seq bigint PRIMARY KEY, data bytea NOT NULL);
        \(identityTable);
        \(peopleTables)
        """

    /// The people tables of schema 2 (issue 45): the tokens (their hashes, never a token), in
    /// the order they were made (`n`); the roles given to names; the version row, which every
    /// change moves and every daemon's people store polls (PostgresPeopleStore.swift). Times are
    /// µs since the epoch, as the signed 64 bits of the UInt64 (`Int64(bitPattern:)`).
    static let peopleTables = """
        CREATE TABLE IF NOT EXISTS swiped_tokens (n bigint GENERATED ALWAYS AS IDENTITY,
            id text PRIMARY KEY, name text NOT NULL, role text NOT NULL,
            hash bytea NOT NULL UNIQUE, created bigint NOT NULL, expires bigint, last_used bigint);
        CREATE TABLE IF NOT EXISTS swiped_roles (name text PRIMARY KEY, role text NOT NULL);
        CREATE TABLE IF NOT EXISTS swiped_people_version (id integer PRIMARY KEY CHECK (id = 1),
            version bigint NOT NULL);
        INSERT INTO swiped_people_version VALUES (1, 0) ON CONFLICT (id) DO NOTHING;
        """

    /// Schema 3 (issue 46): who made each event, NULL for the events of a database of an older
    /// schema (and for any an older build's daemon still running appends), and one person's
    /// events in seq order, for `StoreRead.eventsBy`; only events with an author are in the
    /// index, so the migration builds it empty. ADD COLUMN without a default rewrites nothing.
    static let authorColumn = """
        ALTER TABLE swiped_events ADD COLUMN IF NOT EXISTS author text;
        \(authorIndex);
        """

    static let authorIndex =
        "CREATE INDEX IF NOT EXISTS swiped_events_by_author ON swiped_events (author, seq) WHERE author IS NOT NULL"

    /// Every table of the schema, for `swiped import`'s refusal of a database that has any.
    static let tableNames = [
        "swiped_schema", "swiped_head", "swiped_events", "swiped_snapshots", "swiped_identity",
        "swiped_tokens", "swiped_roles", "swiped_people_version",
    ]

    /// The log's id (LogIdentity), one row. Not a new schema version: a database of schema 1
    /// made before it gets it at the next start (`migrate`), and an older build ignores it.
    static let identityTable =
        "CREATE TABLE IF NOT EXISTS swiped_identity (id integer PRIMARY KEY CHECK (id = 1), log text NOT NULL)"

    /// Gives the log a new id, or keeps the one it has (inside the caller's transaction).
    static func identityInsert(_ conn: PGConnection) -> String {
        "INSERT INTO swiped_identity VALUES (1, \(conn.literal(LogIdentity.make()))) ON CONFLICT (id) DO NOTHING"
    }

    /// Creates the tables (with the seed catalogue) or checks their version. Returns the version
    /// found before, whether it seeded, and the log's id (made now for a log without one).
    static func migrate(_ conn: PGConnection) throws(StoreError) -> (found: Int, seeded: Bool, logID: String)
    {
        do {
            let rows = try conn.execute(
                """
                BEGIN;
                SELECT pg_advisory_xact_lock(\(migrationLock));
                CREATE TABLE IF NOT EXISTS swiped_schema (version integer NOT NULL);
                SELECT version FROM swiped_schema
                """)
            let found = rows.last?.rows.first?.first.flatMap { $0 }.flatMap { Int($0) } ?? 0
            if found > version {
                _ = try conn.execute("ROLLBACK")
                throw StoreError(
                    .storage,
                    "the database has swiped schema version \(found); this swiped knows up to \(version)")
            }
            guard found < 1 else {
                // Version 1 to 2: the people tables; 2 to 3: the events' author (an older build
                // refuses the database from then on: docs/postgres.md, "Schema creation and
                // migration").
                let steps = (found < 2 ? peopleTables : "") + (found < 3 ? authorColumn : "")
                let step = found < version ? "\(steps)\nUPDATE swiped_schema SET version = \(version);" : ""
                let id = try conn.execute(
                    """
                    \(step)
                    \(identityTable);
                    \(identityInsert(conn));
                    SELECT log FROM swiped_identity WHERE id = 1;
                    COMMIT
                    """)
                return (found, false, try logID(id.last))
            }
            let now = SystemClock.wallMicroseconds()
            // ANALYZE before the first commit: a table never analyzed has no statistics, and the
            // planner read `seq > N ORDER BY seq` (every transaction's catch-up, under the lock)
            // as a third of the table, with a sequential scan and a sort; one transaction went
            // from 0.3 ms to 1.7 ms as the log grew to 20,000 events in its first seconds, before
            // autovacuum's first ANALYZE. With statistics, a bound past their histogram is
            // measured on the index (the planner's actual-range probe): an index scan at any size.
            let seeds = MovieState.seedCatalogue.enumerated().map { i, e in
                "(\(i + 1), \(conn.literal(e.movieID)), \(conn.literal(e.kind.rawValue)), \(PGBytes.literal(e.payload)), \(now), NULL, NULL, NULL)"
            }
            let created = try conn.execute(
                """
                \(tables)
                INSERT INTO swiped_events (\(columns)) VALUES \(seeds.joined(separator: ", "));
                INSERT INTO swiped_head VALUES (1, \(seeds.count));
                DELETE FROM swiped_schema;
                INSERT INTO swiped_schema VALUES (\(version));
                \(identityInsert(conn));
                ANALYZE swiped_events, swiped_head;
                SELECT log FROM swiped_identity WHERE id = 1;
                COMMIT
                """)
            return (found, true, try logID(created.last))
        } catch let e as StoreError {
            throw e
        } catch let e as PGFailure {
            // The caller drops the connection (and the transaction with it) when this throws.
            throw StoreError(
                e == .lost(e.message) ? .unavailable : .storage,
                "creating or checking the schema failed: \(e.message)")
        } catch {
            throw StoreError(.internal, "\(error)")
        }
    }

    /// The id in the result of `SELECT log FROM swiped_identity`.
    private static func logID(_ result: PGRows?) throws(StoreError) -> String {
        guard let id = result?.rows.first?.first ?? nil else {
            throw StoreError(.storage, "swiped_identity has no row: the schema is damaged")
        }
        return id
    }

    /// The newest usable snapshot and the events after it, folded (up to `upTo` when given).
    static func load(_ conn: PGConnection, upTo: UInt64? = nil) throws(StoreError) -> (
        state: MovieState, snapshotSeq: UInt64, replayed: Int, ignored: String?
    ) {
        do {
            let head = try conn.execute("SELECT seq FROM swiped_head WHERE id = 1")
            guard let found = head.first?.rows.first?.first.flatMap({ $0 }).flatMap({ UInt64($0) }) else {
                throw StoreError(.storage, "swiped_head has no row: the schema is damaged")
            }
            if let upTo, found < upTo {
                throw StoreError(
                    .storage, "the database's head is \(found), below \(upTo) which this daemon applied")
            }
            let h = upTo ?? found
            var state = MovieState()
            var snapshotSeq: UInt64 = 0
            var ignored: String?
            let snap = try conn.execute(
                "SELECT seq, data FROM swiped_snapshots WHERE seq <= \(h) ORDER BY seq DESC LIMIT 1")
            if let row = snap.first?.rows.first, let s = row[0].flatMap({ UInt64($0) }),
                let data = row[1].flatMap(PGBytes.decode)
            {
                do throws(MovieDecodingError) {
                    let decoded = try MovieState(snapshot: data)
                    if decoded.lastSeq == s {
                        state = decoded
                        snapshotSeq = s
                    } else {
                        ignored = "snapshot at \(s) says it is at \(decoded.lastSeq)"
                    }
                } catch {
                    ignored = "snapshot at \(s) cannot be decoded: \(error.message)"
                }
            }
            var replayed = 0
            // One COPY of the rows after the snapshot, in binary, streamed: PostgreSQL reads and
            // sends the next rows while this thread folds these (pages of a prepared statement
            // made the two take turns: 1.3–1.5 s for 1,000,000 events, against ≈ 0.55 s for
            // the server alone), each row decoded only as far as the fold needs (the event, not
            // the movie it records).
            var failure: StoreError?
            var kinds = InternedStrings()
            if state.lastSeq < h {
                try conn.copyOut(
                    "SELECT seq, stream, kind, payload FROM swiped_events WHERE seq > \(state.lastSeq) AND seq <= \(h) ORDER BY seq"
                ) { row in
                    guard let s = row.int64(0), s > 0, let stream = row.text(1), let k = row.field(2),
                        let payload = row.field(3)
                    else {
                        failure = StoreError(
                            .storage, "a row of swiped_events cannot be read after event \(state.lastSeq)")
                        return false
                    }
                    let seq = UInt64(s)
                    guard seq == state.lastSeq + 1 else {
                        failure = StoreError(
                            .storage, "gap in swiped_events: event \(seq) follows \(state.lastSeq)")
                        return false
                    }
                    // Kinds repeat: one String each, not one per row.
                    let kind = kinds.string(k)
                    // Every event this store writes records its movie (`Row` reads it for history),
                    // so an empty payload is damage here, as it is there.
                    guard !payload.isEmpty else {
                        failure = StoreError(
                            .storage,
                            "event \(seq) in swiped_events cannot be decoded: the payload does not record the movie"
                        )
                        return false
                    }
                    do throws(MovieDecodingError) {
                        let event = try MovieEvent(stream: stream, kind: kind, payload: Array(payload))
                        _ = state.apply(event, seq: seq)
                    } catch {
                        failure = StoreError(
                            .storage, "event \(seq) in swiped_events cannot be decoded: \(error.message)")
                        return false
                    }
                    replayed += 1
                    return true
                }
            }
            if let failure { throw failure }
            guard state.lastSeq == h else {
                throw StoreError(.storage, "swiped_events ends at \(state.lastSeq), swiped_head says \(h)")
            }
            return (state, snapshotSeq, replayed, ignored)
        } catch let e as PGFailure {
            throw StoreError(.unavailable, "loading the log failed: \(e.message)")
        } catch let e as StoreError {
            throw e
        } catch {
            throw StoreError(.internal, "\(error)")
        }
    }

    /// One row of swiped_events, decoded.
    struct Row {
        var seq: UInt64
        var event: MovieEvent
        var committed: CommittedEvent
        var key: String?
        var token: String?

        /// Row `i` of a prepared statement's binary result (`columns`' order).
        init(_ r: PGResult, _ i: Int) throws(StoreError) {
            guard let s = r.int64(i, 0), s > 0, let stream = r.text(i, 1), let kind = r.text(i, 2),
                let payload = r.bytes(i, 3), let at = r.int64(i, 4)
            else {
                throw StoreError(
                    .storage,
                    "a row of swiped_events cannot be read: \([r.int64(i, 0).map(String.init), r.text(i, 1)])"
                )
            }
            try self.init(
                seq: UInt64(s), stream: stream, kind: kind, payload: payload, at: at, key: r.text(i, 5),
                token: r.text(i, 6), author: r.text(i, 7))
        }

        private init(
            seq: UInt64, stream: String, kind: String, payload: [UInt8], at: Int64, key: String?,
            token: String?, author: String?
        ) throws(StoreError) {
            do throws(MovieDecodingError) {
                event = try MovieEvent(stream: stream, kind: kind, payload: payload)
                guard
                    let rec = try MovieEvent.recorded(stream: stream, kind: kind, payload: payload, seq: seq)
                else {
                    throw MovieDecodingError("the payload does not record the movie")
                }
                committed = CommittedEvent(
                    seq: seq, kind: event.kind, movie: rec.movie, at: at, undoes: rec.undoes, by: author,
                    to: rec.to,
                    from: rec.from)
            } catch {
                throw StoreError(
                    .storage, "event \(seq) in swiped_events cannot be decoded: \(error.message)")
            }
            self.seq = seq
            self.key = key
            self.token = token
        }
    }
}

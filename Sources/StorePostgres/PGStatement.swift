// The statements the PostgreSQL store prepares on each connection, and why each is written as it is.

/// The statements of the store's transactions, catch-up and reads, prepared once per connection
/// (docs/postgres.md, "The statements and what they cost"). Each is planned once (plan_cache_mode =
/// force_generic_plan), so each is written for a generic plan that is an index scan: the events
/// after a position are read as a range `seq > $1 AND seq <= $2` (positions are dense, so a
/// range of n positions is the next n events), which a generic plan estimates as a small range
/// of the primary key, where `seq > $1` alone is estimated as a third of the table.
package enum PGStatement: CaseIterable {
    case begin, appendLock, headAndWALEnd, lockHead, head, eventsBetween, eventsWithKeys, eventsBy, append
    case commit, walFlushed, syncStandbys, flush, notify, listen, unlisten

    var name: String {
        switch self {
        case .begin: "swiped_begin"
        case .appendLock: "swiped_append_lock"
        case .headAndWALEnd: "swiped_head_and_wal_end"
        case .lockHead: "swiped_lock_head"
        case .head: "swiped_head"
        case .eventsBetween: "swiped_events_between"
        case .eventsWithKeys: "swiped_events_with_keys"
        case .eventsBy: "swiped_events_by"
        case .append: "swiped_append"
        case .commit: "swiped_commit"
        case .walFlushed: "swiped_wal_flushed"
        case .syncStandbys: "swiped_sync_standbys"
        case .flush: "swiped_flush"
        case .notify: "swiped_notify"
        case .listen: "swiped_listen"
        case .unlisten: "swiped_unlisten"
        }
    }

    var sql: String {
        switch self {
        case .begin: "BEGIN"
        case .appendLock:
            // Appends take turns under this lock, then the head's row lock (`lockHead`). Taking
            // it writes nothing, so the WAL end that `headAndWALEnd` reads behind it comes
            // before every record of this transaction (the row lock writes one). The row lock
            // is kept: a daemon of an earlier build takes only that one, and with both, a
            // change of the head between the two statements shows that such a daemon committed
            // in between (docs/postgres.md, "Handing over what other daemons wrote").
            "SELECT pg_advisory_xact_lock(\(PostgresSchema.appendLock))"
        case .headAndWALEnd:
            // The head, and where the WAL ends: every commit of events so far ended before it
            // (they all committed under these locks, which this transaction holds), and none of
            // this transaction's records did.
            "SELECT seq, pg_current_wal_insert_lsn() FROM swiped_head WHERE id = 1"
        case .lockHead: "SELECT seq FROM swiped_head WHERE id = 1 FOR UPDATE"
        case .head: "SELECT seq FROM swiped_head WHERE id = 1"
        case .eventsBetween:
            "SELECT \(PostgresSchema.columns) FROM swiped_events WHERE seq > $1::bigint AND seq <= $2::bigint ORDER BY seq"
        case .eventsWithKeys:
            "SELECT \(PostgresSchema.columns) FROM swiped_events WHERE key = ANY($1::text[])"
        case .eventsBy:
            // One person's events in a range of positions, through the author index (whose
            // condition, author IS NOT NULL, `author = $1` implies, also in a generic plan). The
            // range is a row comparison, which only that index can serve: written on `seq`
            // alone, the generic plan took it for a small range of the primary key and read
            // every event after `$2`, filtering the person's out (PostgresAuthorTests).
            "SELECT \(PostgresSchema.columns) FROM swiped_events WHERE author = $1::text AND (author, seq) > ($1::text, $2::bigint) AND (author, seq) <= ($1::text, $3::bigint) ORDER BY seq LIMIT $4::bigint"
        case .append:
            // One statement for any number of events (a column of each as an array) and the new
            // head ($9): the INSERT and UPDATE of docs/postgres.md. It also makes this
            // transaction's COMMIT not wait for the WAL flush (SET LOCAL), so that the head's
            // lock is released at once; `flush`, right behind COMMIT in the same pipeline, waits
            // for the flush, and `notify` then announces the head (docs/postgres.md, "The lock is not
            // held through the flush").
            """
            WITH appended AS (INSERT INTO swiped_events (\(PostgresSchema.columns)) SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bytea[], $5::bigint[], $6::text[], $7::text[], $8::text[])),
            head AS (UPDATE swiped_head SET seq = $9::bigint WHERE id = 1)
            SELECT set_config('synchronous_commit', 'off', true)
            """
        case .commit: "COMMIT"
        case .walFlushed:
            // How far the WAL is on disk: by any session's flush, or the server's WAL writer.
            // No row when commits wait for a synchronous standby: then a commit is durable once
            // the standby has it, and the primary's disk says nothing of that (another daemon's
            // commit is on it, and visible, while its daemon still waits for the standby; a
            // failover to the standby loses it: docs/postgres.md, "Faults, checked", finding
            // 1). What the standby confirmed is in pg_stat_replication only for roles with
            // pg_read_all_stats; instead, those events wait for this transaction's own flush,
            // behind them in the same pipeline, whose commit waits for the standby: a barrier
            // for every event read under the lock at once, and no round trip of its own.
            "SELECT pg_current_wal_flush_lsn() WHERE current_setting('synchronous_standby_names') = ''"
        case .syncStandbys:
            // Whether commits wait for a synchronous standby (any name: PostgreSQL waits for one
            // that never connects too).
            "SELECT current_setting('synchronous_standby_names')"
        case .flush:
            // A transaction of its own (the pipeline's implicit one, ending at its Sync) that
            // writes a WAL record, so that its commit, with the session's synchronous_commit =
            // on, waits until the WAL is on disk up to its own commit record: past every commit
            // this connection saw before it. A transaction that writes nothing commits without
            // waiting for anything. The message (prefix "swiped", empty) is read only by logical
            // decoding, and only by a consumer that asks for messages.
            "SELECT pg_logical_emit_message(true, 'swiped', '')"
        case .notify:
            // The notification of the new head ($1), in a transaction of its own that does not
            // wait for the disk, behind the flush's transaction. NOTIFY takes a lock of its own
            // (one per database, serializing the queue) at commit and holds it until the
            // transaction ends: in the flush's transaction it was held through the flush, so
            // the daemons' flushes went one after another instead of sharing one (waits on
            // `Lock:object` in pg_stat_activity). Sent after the flush has returned, a notified
            // head is durable.
            "SELECT set_config('synchronous_commit', 'off', true), pg_notify('swiped', $1::bigint::text)"
        case .listen:
            // Notifications wake a daemon only while it is quiet: a daemon that commits reads the
            // other daemons' events under the head's lock in each transaction, and a notification
            // would wake its backend and its store thread for nothing (PostgresWorker.listening).
            "LISTEN swiped"
        case .unlisten: "UNLISTEN swiped"
        }
    }
}

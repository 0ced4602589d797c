// One libpq connection, and what the PostgreSQL store needs of libpq: a connection string
// checked for a password; the statements of every transaction prepared once per connection and
// sent in pipeline mode (several statements, one round trip, nothing parsed or planned again),
// with binary parameters and results; the rare ones (schema, start-up, snapshots) as one
// simple-query string with text results; notifications. Blocking: it runs on the store's own
// thread (PostgresWorker.swift) and, before READY=1, on the opening thread.
import CLibPQ
import Foundation
import Glibc
import StoreCore

/// Why a query failed: the connection broke (nothing more is known about the statements sent),
/// or the server refused a statement (the connection is still usable; the transaction, if one
/// was open, is aborted).
package enum PGFailure: Error, Equatable {
    case lost(String)
    case failed(sqlState: String, message: String)

    package var message: String {
        switch self {
        case .lost(let m): m
        case .failed(_, let m): m
        }
    }
}

/// The rows of one statement's result, as text (NULL is nil).
struct PGRows {
    var rows: [[String?]]
}

/// The statements of the store's transactions, catch-up and reads, prepared once per connection
/// (docs/postgres.md, "The statements and what they cost"). Each is planned once (plan_cache_mode =
/// force_generic_plan), so each is written for a generic plan that is an index scan: the events
/// after a position are read as a range `seq > $1 AND seq <= $2` (positions are dense, so a
/// range of n positions is the next n events), which a generic plan estimates as a small range
/// of the primary key, where `seq > $1` alone is estimated as a third of the table.
package enum PGStatement: CaseIterable {
    case begin, appendLock, headAndWALEnd, lockHead, head, eventsBetween, eventsWithKeys, append
    case commit, walFlushed, flush, notify, listen, unlisten

    var name: String {
        switch self {
        case .begin: "swiped_begin"
        case .appendLock: "swiped_append_lock"
        case .headAndWALEnd: "swiped_head_and_wal_end"
        case .lockHead: "swiped_lock_head"
        case .head: "swiped_head"
        case .eventsBetween: "swiped_events_between"
        case .eventsWithKeys: "swiped_events_with_keys"
        case .append: "swiped_append"
        case .commit: "swiped_commit"
        case .walFlushed: "swiped_wal_flushed"
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
        case .append:
            // One statement for any number of events (a column of each as an array) and the new
            // head ($8): the INSERT and UPDATE of docs/postgres.md. It also makes this
            // transaction's COMMIT not wait for the WAL flush (SET LOCAL), so that the head's
            // lock is released at once; `flush`, right behind COMMIT in the same pipeline, waits
            // for the flush, and `notify` then announces the head (docs/postgres.md, "The lock is not
            // held through the flush").
            """
            WITH appended AS (INSERT INTO swiped_events (\(PostgresSchema.columns)) SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bytea[], $5::bigint[], $6::text[], $7::text[])),
            head AS (UPDATE swiped_head SET seq = $8::bigint WHERE id = 1)
            SELECT set_config('synchronous_commit', 'off', true)
            """
        case .commit: "COMMIT"
        case .walFlushed:
            // How far the WAL is on disk: by any session's flush, or the server's WAL writer.
            "SELECT pg_current_wal_flush_lsn()"
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

/// One row of a binary COPY: its fields, each nil for NULL, valid while the row's bytes are.
/// Up to `CopyRow.maxFields` fields, kept inline: a million rows make no allocation here.
struct CopyRow {
    static let maxFields = 8
    private let bytes: UnsafeRawBufferPointer
    /// Each field's offset and length (-1: NULL).
    private var offsets = InlineArray<8, Int>(repeating: 0)
    private var lengths = InlineArray<8, Int>(repeating: -1)
    let count: Int

    /// Nil when the bytes are not one row (a field count, then each field's length and bytes)
    /// or the row has more than `maxFields` fields.
    init?(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
        guard bytes.count >= 2 else { return nil }
        let count = Int(Int16(bitPattern: UInt16(bytes[0]) << 8 | UInt16(bytes[1])))
        guard count >= 0, count <= CopyRow.maxFields else { return nil }
        self.count = count
        var at = 2
        for i in 0..<count {
            guard let n = CopyRow.int32(bytes, at) else { return nil }
            at += 4
            offsets[i] = at
            guard n >= 0 else { continue }
            guard bytes.count - at >= Int(n) else { return nil }
            lengths[i] = Int(n)
            at += Int(n)
        }
        guard at == bytes.count else { return nil }
    }

    /// Field `i`'s bytes, nil for NULL or a field the row does not have.
    func field(_ i: Int) -> UnsafeRawBufferPointer? {
        guard i >= 0, i < count, lengths[i] >= 0 else { return nil }
        return UnsafeRawBufferPointer(rebasing: bytes[offsets[i]..<offsets[i] + lengths[i]])
    }

    /// Field `i` as a bigint.
    func int64(_ i: Int) -> Int64? {
        guard let f = field(i), f.count == 8 else { return nil }
        return Int64(bigEndian: f.loadUnaligned(as: Int64.self))
    }

    /// Field `i` as text (UTF-8, as the connection's client encoding is).
    func text(_ i: Int) -> String? { field(i).map { String(decoding: $0, as: UTF8.self) } }

    static func int32(_ bytes: UnsafeRawBufferPointer, _ at: Int) -> Int32? {
        guard at >= 0, bytes.count - at >= 4 else { return nil }
        return Int32(bigEndian: bytes.loadUnaligned(fromByteOffset: at, as: Int32.self))
    }
}

/// A parameter in PostgreSQL's binary form.
package enum PGParam {
    case int64(Int64)
    case int64s([Int64])
    case texts([String?])
    case byteas([[UInt8]])

    // The binary forms: an int8 is 8 bytes big-endian, text and bytea their bytes; an array is
    // its dimensions, a null flag and the element type, then each element's length (-1: NULL)
    // and bytes (PostgreSQL's array_send). Measured first, then written in place: built as an
    // array per element and joined, the append's parameters were a third of the store thread's
    // instructions (callgrind, 16 events a transaction), and appended byte by byte still a
    // twelfth.

    /// The length of the binary form.
    var encodedCount: Int {
        switch self {
        case .int64: 8
        case .int64s(let a): PGParam.arrayHeaderCount + a.count * 12
        case .texts(let a): a.reduce(PGParam.arrayHeaderCount) { $0 + 4 + ($1?.utf8.count ?? 0) }
        case .byteas(let a): a.reduce(PGParam.arrayHeaderCount) { $0 + 4 + $1.count }
        }
    }

    /// Writes the binary form at `p`, which has room for `encodedCount` bytes; returns the
    /// bytes written (the caller checks them against what it measured).
    func encode(to p: UnsafeMutableRawPointer) -> Int {
        var at = 0
        func put(_ v: Int32) {
            p.storeBytes(of: v.bigEndian, toByteOffset: at, as: Int32.self)
            at += 4
        }
        func put(_ v: Int64) {
            p.storeBytes(of: v.bigEndian, toByteOffset: at, as: Int64.self)
            at += 8
        }
        func put(_ bytes: UnsafeRawBufferPointer) {
            put(Int32(bytes.count))
            if let base = bytes.baseAddress { (p + at).copyMemory(from: base, byteCount: bytes.count) }
            at += bytes.count
        }
        func header(oid: Int32, count: Int, hasNull: Bool) {
            put(Int32(1))  // dimensions
            put(Int32(hasNull ? 1 : 0))
            put(oid)
            put(Int32(count))
            put(Int32(1))  // the lower bound
        }
        switch self {
        case .int64(let v):
            put(v)
        case .int64s(let a):
            header(oid: 20, count: a.count, hasNull: false)
            for v in a {
                put(Int32(8))
                put(v)
            }
        case .texts(let a):
            header(oid: 25, count: a.count, hasNull: a.contains(nil))
            for e in a {
                guard var e else {
                    put(Int32(-1))
                    continue
                }
                e.withUTF8 { put(UnsafeRawBufferPointer($0)) }
            }
        case .byteas(let a):
            header(oid: 17, count: a.count, hasNull: false)
            for e in a { e.withUnsafeBytes { put($0) } }
        }
        return at
    }

    private static let arrayHeaderCount = 20
}

/// The rows of one prepared statement, in binary (freed with it).
package final class PGResult {
    private let raw: OpaquePointer
    let count: Int

    init(_ raw: OpaquePointer) {
        self.raw = raw
        count = Int(PQntuples(raw))
    }

    deinit { PQclear(raw) }

    private func value(_ row: Int, _ column: Int) -> UnsafeRawBufferPointer? {
        let (i, j) = (Int32(row), Int32(column))
        guard PQgetisnull(raw, i, j) == 0, let p = PQgetvalue(raw, i, j) else { return nil }
        return UnsafeRawBufferPointer(start: p, count: Int(PQgetlength(raw, i, j)))
    }

    /// An int8 column.
    func int64(_ row: Int, _ column: Int) -> Int64? {
        guard let v = value(row, column), v.count == 8 else { return nil }
        return Int64(bigEndian: v.loadUnaligned(as: Int64.self))
    }

    /// A text column (the database's encoding is UTF-8).
    func text(_ row: Int, _ column: Int) -> String? {
        value(row, column).map { String(decoding: $0, as: UTF8.self) }
    }

    /// A bytea column.
    func bytes(_ row: Int, _ column: Int) -> [UInt8]? {
        value(row, column).map { Array($0) }
    }
}

/// A libpq connection owned by one thread at a time (libpq allows a connection to move between
/// threads, not to be used by two at once).
package final class PGConnection: @unchecked Sendable {
    private let conn: OpaquePointer
    /// What `send` queues a statement's parameters in, kept from statement to statement: the
    /// values' bytes, and libpq's arrays of their pointers, lengths and formats (binary).
    private var scratch = UnsafeMutableRawPointer.allocate(byteCount: 4096, alignment: 8)
    private var scratchCapacity = 4096
    private var values: [UnsafePointer<CChar>?] = []
    private var lengths: [Int32] = []
    private var formats: [Int32] = []

    /// Connects (blocking: host names are resolved, TLS is negotiated). The connection string's
    /// own `connect_timeout` wins over the default of 5 s. Errors are `unavailable`.
    init(_ conninfo: String, durability: Durability) throws(StoreError) {
        // Defaults the connection string may override (libpq lets the values expanded from
        // `dbname` win over the keywords before it): a connect gives up after 5 s, and over TCP
        // a peer that vanished without a word (a partition, a powered-off host) is noticed
        // within about 15 s instead of the kernel's two hours, so that writes turn to
        // `unavailable` and the store reconnects.
        let keywords = [
            "connect_timeout", "application_name", "keepalives_idle", "keepalives_interval",
            "keepalives_count", "tcp_user_timeout", "dbname",
        ]
        let values = ["5", "swiped", "5", "2", "3", "15000", conninfo]
        let made: OpaquePointer? = withCStrings(keywords) { k in
            withCStrings(values) { v in PQconnectdbParams(k, v, 1) }
        }
        guard let made else {
            throw StoreError(.unavailable, "PostgreSQL: out of memory allocating a connection")
        }
        guard PQstatus(made) == CONNECTION_OK else {
            let why = PGConnection.message(made)
            PQfinish(made)
            throw StoreError(.unavailable, "cannot connect to PostgreSQL: \(why)")
        }
        // libpq prints the server's notices and warnings to standard error by default (e.g.
        // "terminating connection due to immediate shutdown command" before the connection
        // breaks): the break itself is what the store reports, once, in the journal.
        _ = PQsetNoticeProcessor(made, { _, _ in }, nil)
        conn = made
        let sync = durability == .full ? "on" : "off"
        // force_generic_plan: a prepared statement is planned once, not again for each of its
        // first five runs and then whenever a custom plan looks cheaper. enable_seqscan off:
        // every statement of the store reads by a primary key or the key index, and a generic
        // plan made while swiped_events had its 10 seed rows (a connection prepares right after
        // creating the schema) was a sequential scan, kept until autovacuum's next ANALYZE:
        // 1.3 ms per catch-up read at 20,000 events instead of 20 µs.
        do throws(PGFailure) {
            _ = try execute(
                "SET synchronous_commit = \(sync); SET client_min_messages = warning; SET plan_cache_mode = force_generic_plan; SET enable_seqscan = off; LISTEN swiped"
            )
        } catch {
            PQfinish(made)
            throw StoreError(.unavailable, "PostgreSQL: setting up the session failed: \(error.message)")
        }
    }

    deinit {
        PQfinish(conn)
        scratch.deallocate()
    }

    /// `PostgreSQL <db> on <host>`: the database as the journal names it (never the connection
    /// string, which could hold more than it should).
    var description: String {
        let db = PQdb(conn).map { String(cString: $0) } ?? "?"
        let host = PQhost(conn).map { String(cString: $0) } ?? "?"
        let port = PQport(conn).map { String(cString: $0) } ?? ""
        return "PostgreSQL \(db) on \(host)\(port.isEmpty ? "" : ":" + port)"
    }

    package var socket: Int32 { PQsocket(conn) }

    var isBroken: Bool { PQstatus(conn) != CONNECTION_OK }

    /// Runs `sql` (one or more statements, no parameters) in one round trip; returns the rows of
    /// each statement that returned rows, in order.
    func execute(_ sql: String) throws(PGFailure) -> [PGRows] {
        guard PQsendQuery(conn, sql) == 1 else { throw .lost(PGConnection.message(conn)) }
        var out: [PGRows] = []
        var failure: PGFailure?
        while let result = PQgetResult(conn) {
            defer { PQclear(result) }
            switch PQresultStatus(result) {
            case PGRES_TUPLES_OK:
                out.append(PGRows(rows: PGConnection.rows(result)))
            case PGRES_COMMAND_OK, PGRES_EMPTY_QUERY:
                break
            default:
                if failure == nil {
                    let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map {
                        String(cString: $0)
                    }
                    let text = PQresultErrorMessage(result).map { String(cString: $0) } ?? "unknown error"
                    failure = .failed(sqlState: state ?? "", message: PGConnection.trimmed(text))
                }
            }
        }
        if isBroken { throw .lost(PGConnection.message(conn)) }
        // A connection that was idle when the server went away can still read as
        // CONNECTION_OK: libpq reports the failed write as a result with its own message ("server
        // closed the connection unexpectedly") and no SQLSTATE. That, a connection exception
        // (class 08) and the server shutting down (57P01–57P03) mean the connection is lost, not
        // that the server refused the statement: nothing of this query committed unless COMMIT
        // was sent, and the caller must treat it as a broken connection (unavailable, or in doubt).
        if case .failed(let state, let message) = failure, PGConnection.meansLost(sqlState: state) {
            throw .lost(message)
        }
        // Notifications that came with the answer: freed now (a busy store would otherwise
        // pile them up), remembered for `consumeNotifications()`.
        drainNotifications()
        if let failure { throw failure }
        return out
    }

    /// Whether the statements of `PGStatement` are prepared on this connection (at its first
    /// pipeline: the tables may not exist before the schema is created).
    private var prepared = false

    /// The index of the statement that failed in the last `run` that threw `.failed`.
    private(set) var failedStep: Int?

    /// Runs prepared statements in one round trip (libpq's pipeline mode: each is sent as Bind
    /// and Execute, then one Sync), parameters and results in binary. Returns each statement's
    /// rows (nil for a statement without rows). A statement that fails aborts the ones after
    /// it, and an open transaction (an explicit BEGIN earlier) is left aborted: the caller rolls
    /// back. `early`: the index of a statement whose rows the server sends at once (a Flush
    /// message behind it), handed to `onEarly` while the statements after it run; not called
    /// when it or a statement before it failed.
    package func run(
        _ steps: [(PGStatement, [PGParam])], early: Int = -1, onEarly: (PGResult?) -> Void = { _ in }
    ) throws(PGFailure) -> [PGResult?] {
        try sendPipeline(steps, early: early)
        return try receivePipeline(steps, early: early, onEarly: onEarly)
    }

    /// `run`'s first half: sends `steps` and the Sync, and returns with the connection in
    /// pipeline mode (`receivePipeline` reads the results and leaves it); on a failure it has
    /// left pipeline mode. Apart from `run` only for a test's fault (PostgresFaults), which
    /// breaks the connection between the halves.
    package func sendPipeline(_ steps: [(PGStatement, [PGParam])], early: Int) throws(PGFailure) {
        if !prepared {
            for s in PGStatement.allCases {
                guard let r = PQprepare(conn, s.name, s.sql, 0, nil) else {
                    throw .lost(PGConnection.message(conn))
                }
                defer { PQclear(r) }
                guard PQresultStatus(r) == PGRES_COMMAND_OK else {
                    throw failure(r) ?? .lost(PGConnection.message(conn))
                }
            }
            prepared = true
        }
        guard PQenterPipelineMode(conn) == 1 else { throw .lost(PGConnection.message(conn)) }
        for (index, (statement, params)) in steps.enumerated() {
            guard send(statement.name, params), index != early || PQsendFlushRequest(conn) == 1 else {
                _ = PQexitPipelineMode(conn)
                throw .lost(PGConnection.message(conn))
            }
        }
        // On a blocking connection PQpipelineSync writes everything queued before it returns.
        guard PQpipelineSync(conn) == 1 else {
            _ = PQexitPipelineMode(conn)
            throw .lost(PGConnection.message(conn))
        }
    }

    /// `run`'s second half: reads the results of `steps`, sent by `sendPipeline`.
    private func receivePipeline(
        _ steps: [(PGStatement, [PGParam])], early: Int, onEarly: (PGResult?) -> Void
    ) throws(PGFailure) -> [PGResult?] {
        defer { _ = PQexitPipelineMode(conn) }
        var out: [PGResult?] = []
        var failed: PGFailure?
        failedStep = nil
        for (index, _) in steps.enumerated() {
            var rows: PGResult?
            // Each statement's results end with a null result.
            while let r = PQgetResult(conn) {
                switch PQresultStatus(r) {
                case PGRES_TUPLES_OK:
                    rows = PGResult(r)
                case PGRES_COMMAND_OK, PGRES_PIPELINE_ABORTED:
                    PQclear(r)
                default:
                    if failed == nil {
                        failed = failure(r)
                        failedStep = index
                    }
                    PQclear(r)
                }
            }
            out.append(rows)
            if isBroken { throw .lost(PGConnection.message(conn)) }
            if index == early && failed == nil { onEarly(rows) }
        }
        // The Sync's own result. A statement outside BEGIN … COMMIT commits at the Sync, and an
        // error of that commit (a full NOTIFY queue, say) comes first, then a null result, then
        // the Sync's: it is the last step's failure, not a broken connection.
        var synced = false
        for _ in 0..<3 {
            guard let r = PQgetResult(conn) else { continue }
            let status = PQresultStatus(r)
            if status == PGRES_PIPELINE_SYNC {
                PQclear(r)
                synced = true
                break
            }
            if failed == nil {
                failed = failure(r) ?? .lost("PostgreSQL: the pipeline ended without its sync")
                failedStep = steps.count - 1
            }
            PQclear(r)
        }
        if !synced, failed == nil { failed = .lost("PostgreSQL: the pipeline ended without its sync") }
        if isBroken { throw .lost(PGConnection.message(conn)) }
        if case .failed(let state, let message) = failed, PGConnection.meansLost(sqlState: state) {
            throw .lost(message)
        }
        drainNotifications()
        if let failed { throw failed }
        return out
    }

    /// Queues one prepared statement with binary parameters and binary results.
    private func send(_ name: String, _ params: [PGParam]) -> Bool {
        // The values go into one buffer kept by the connection (and a byte at its end, so that
        // no pointer is null for an empty value); libpq copies them into its output buffer
        // before returning. Arrays made per statement cost ≈ 4,000 instructions a statement,
        // more than libpq's own work (callgrind): a transaction is about 12 statements.
        lengths.removeAll(keepingCapacity: true)
        values.removeAll(keepingCapacity: true)
        var total = 1
        for p in params {
            let n = p.encodedCount
            lengths.append(Int32(n))
            total += n
        }
        if total > scratchCapacity {
            scratch.deallocate()
            scratchCapacity = max(total, scratchCapacity * 2)
            scratch = .allocate(byteCount: scratchCapacity, alignment: 8)
        }
        var at = scratch
        for (i, p) in params.enumerated() {
            let written = p.encode(to: at)
            precondition(written == Int(lengths[i]), "\(p): \(written) bytes written for \(lengths[i])")
            values.append(UnsafePointer(at.assumingMemoryBound(to: CChar.self)))
            at += Int(lengths[i])
        }
        at.storeBytes(of: 0, as: UInt8.self)
        while formats.count < params.count { formats.append(1) }
        return name.withCString {
            PQsendQueryPrepared(conn, $0, Int32(params.count), values, lengths, formats, 1)
        } == 1
    }

    /// Runs `COPY (query) TO STDOUT (FORMAT binary)` and hands `row` each row's fields as the
    /// server sends them: the server reads and formats the next rows while the caller decodes
    /// these, where a page per query made the two take turns. `row` returns false to ignore the
    /// rest (they are read and dropped: the statement must end before the connection is used
    /// again). `query` takes no parameters: COPY has none.
    func copyOut(_ query: String, _ row: (CopyRow) -> Bool) throws(PGFailure) {
        guard PQsendQuery(conn, "COPY (\(query)) TO STDOUT (FORMAT binary)") == 1 else {
            throw .lost(PGConnection.message(conn))
        }
        var failed: PGFailure?
        var wanted = true
        var header = true
        while let r = PQgetResult(conn) {
            let status = PQresultStatus(r)
            if status == PGRES_COPY_OUT {
                PQclear(r)
                while true {
                    var buffer: UnsafeMutablePointer<CChar>?
                    let n = PQgetCopyData(conn, &buffer, 0)
                    if n < 0 { break }  // -1: the end (PQgetResult says how it ended); -2: broken
                    defer { PQfreemem(buffer) }
                    guard wanted, failed == nil, let buffer else { continue }
                    var bytes = UnsafeRawBufferPointer(start: buffer, count: Int(n))
                    if header {
                        // "PGCOPY\n\377\r\n\0", flags, the header extension's length and bytes;
                        // the server sends it with the first row.
                        header = false
                        guard bytes.count >= 19, let ext = CopyRow.int32(bytes, 15), ext >= 0,
                            bytes.count >= 19 + Int(ext)
                        else {
                            failed = .failed(
                                sqlState: "XX000", message: "COPY sent a header that cannot be read")
                            continue
                        }
                        bytes = UnsafeRawBufferPointer(rebasing: bytes[(19 + Int(ext))...])
                    }
                    // The trailer: a field count of -1.
                    if bytes.count == 2 && bytes[0] == 0xFF && bytes[1] == 0xFF { continue }
                    guard let parsed = CopyRow(bytes) else {
                        failed = .failed(sqlState: "XX000", message: "COPY sent a row that cannot be read")
                        continue
                    }
                    wanted = row(parsed)
                }
                continue
            }
            if failed == nil { failed = failure(r) }
            PQclear(r)
        }
        if isBroken { throw .lost(PGConnection.message(conn)) }
        drainNotifications()
        if case .failed(let state, let message) = failed, PGConnection.meansLost(sqlState: state) {
            throw .lost(message)
        }
        if let failed { throw failed }
    }

    /// A failed result as a failure (nil when it is not one).
    private func failure(_ r: OpaquePointer) -> PGFailure? {
        let status = PQresultStatus(r)
        guard status != PGRES_COMMAND_OK, status != PGRES_TUPLES_OK else { return nil }
        let state = PQresultErrorField(r, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
        let text = PQresultErrorMessage(r).map { String(cString: $0) } ?? "unknown error"
        return .failed(sqlState: state ?? "", message: PGConnection.trimmed(text))
    }

    /// Whether a failed result's SQLSTATE says the connection is gone rather than the statement
    /// refused: none at all (an error of libpq's own), class 08, or 57P01–57P03.
    static func meansLost(sqlState: String) -> Bool {
        sqlState.isEmpty || sqlState.hasPrefix("08") || ["57P01", "57P02", "57P03"].contains(sqlState)
    }

    /// The highest head another session's notification announced since
    /// `consumeNotifications()` last ran (UInt64.max for a payload that is not a number).
    private var notified: UInt64?

    /// Reads what the server sent without waiting; returns the highest head another session's
    /// notification announced, nil when none came.
    func consumeNotifications() throws(PGFailure) -> UInt64? {
        guard PQconsumeInput(conn) == 1 else { throw .lost(PGConnection.message(conn)) }
        drainNotifications()
        defer { notified = nil }
        return notified
    }

    /// Whether another session's notification waits for `consumeNotifications()`.
    var hasNotification: Bool { notified != nil }

    /// Frees the notifications libpq holds, noting the highest head announced by another
    /// session (this session's own commits notify it too).
    private func drainNotifications() {
        let me = PQbackendPID(conn)
        while let n = PQnotifies(conn) {
            if n.pointee.be_pid != me {
                let head = n.pointee.extra.flatMap { UInt64(String(cString: $0)) } ?? UInt64.max
                notified = max(notified ?? 0, head)
            }
            PQfreemem(n)
        }
    }

    /// `s` as an SQL string literal.
    func literal(_ s: String) -> String {
        guard let p = PQescapeLiteral(conn, s, strlen(s)) else {
            // Only on an out-of-memory or an encoding error; the text was validated UTF-8, so
            // this is the former. Spell it by hand with standard_conforming_strings (on).
            return "'" + s.replacingAll("'", with: "''") + "'"
        }
        defer { PQfreemem(p) }
        return String(cString: p)
    }

    private static func rows(_ result: OpaquePointer) -> [[String?]] {
        let n = PQntuples(result)
        let m = PQnfields(result)
        var rows: [[String?]] = []
        rows.reserveCapacity(Int(n))
        for i in 0..<n {
            var row: [String?] = []
            row.reserveCapacity(Int(m))
            for j in 0..<m {
                row.append(PQgetisnull(result, i, j) == 1 ? nil : String(cString: PQgetvalue(result, i, j)))
            }
            rows.append(row)
        }
        return rows
    }

    private static func message(_ conn: OpaquePointer) -> String {
        trimmed(PQerrorMessage(conn).map { String(cString: $0) } ?? "unknown error")
    }

    /// libpq's messages end in a newline and may span lines: one line for the journal.
    private static func trimmed(_ s: String) -> String {
        s.split(whereSeparator: \.isNewline).map { $0.trimmingSpaces() }.joined(separator: "; ")
    }

    // MARK: - Connection strings

    /// How the refusal of a password begins.
    static let passwordRefusal = "must not contain a password"

    /// Why `conninfo` must not be used, or nil: it does not parse, or it holds a password (it
    /// would show in `ps` and `systemctl show`). The reason never repeats the string.
    static func refusal(_ conninfo: String) -> String? {
        var error: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(conninfo, &error) else {
            if let error { PQfreemem(error) }
            return "is not a libpq connection string (key=value pairs, or a postgresql:// URI)"
        }
        defer { PQconninfoFree(options) }
        var i = 0
        while let keyword = options[i].keyword {
            defer { i += 1 }
            guard let value = options[i].val, value.pointee != 0 else { continue }
            let name = String(cString: keyword)
            if name == "password" {
                return PGConnection.passwordRefusal
                    + " (it would show in ps and systemctl show); put it in PGPASSFILE, ~/.pgpass or the unit's LoadCredential="
            }
            // A dbname spelled as a connection string (an `=`, or a URI's prefix: libpq's
            // `recognized_connection_string`) is taken as a database's name here, since libpq
            // expands only the first dbname, which is CONNINFO itself. A password written in it
            // would still show in ps: refuse that. Anything else in it is a name (`a=b` too).
            if name == "dbname" {
                let inner = String(cString: value)
                if inner.contains("=") || inner.hasPrefix("postgresql://") || inner.hasPrefix("postgres://"),
                    inner != conninfo,
                    let why = refusal(inner), why.hasPrefix(PGConnection.passwordRefusal)
                {
                    return why
                }
            }
        }
        return nil
    }
}

/// Byte strings as the hex form of bytea, and back.
enum PGBytes {
    private static let digits = Array("0123456789abcdef".utf8)

    /// `'\x…'::bytea`, a literal needing no escaping.
    static func literal(_ bytes: [UInt8]) -> String {
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2 + 12)
        out += Array("'\\x".utf8)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 15)])
        }
        out += Array("'::bytea".utf8)
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of a bytea column's text (`\x…`), nil when it is not that form.
    static func decode(_ text: String) -> [UInt8]? {
        let u = Array(text.utf8)
        guard u.count >= 2, u[0] == UInt8(ascii: "\\"), u[1] == UInt8(ascii: "x"), u.count % 2 == 0 else {
            return nil
        }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var out = [UInt8]()
        out.reserveCapacity((u.count - 2) / 2)
        var i = 2
        while i < u.count {
            guard let h = nibble(u[i]), let l = nibble(u[i + 1]) else { return nil }
            out.append(h << 4 | l)
            i += 2
        }
        return out
    }
}

/// Calls `body` with `strings` as a NULL-terminated array of C strings.
private func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
    let copies = strings.map { strdup($0) }
    defer { for p in copies { free(p) } }
    let pointers: [UnsafePointer<CChar>?] = copies.map { $0.map { UnsafePointer($0) } } + [nil]
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}

extension String {
    fileprivate func replacingAll(_ target: Character, with replacement: String) -> String {
        var out = ""
        for c in self {
            if c == target { out += replacement } else { out.append(c) }
        }
        return out
    }
}

extension Substring {
    fileprivate func trimmingSpaces() -> String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}

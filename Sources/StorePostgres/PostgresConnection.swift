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

/// When the store must have stopped waiting for the server (monotonic ns; 0: no such time):
/// set by the loop's thread when the daemon stops, read by the store thread's round trips,
/// which give their connection up then rather than wait for a server that does not answer.
package final class PGStopSignal: @unchecked Sendable {
    private let lock = NSLock()
    private var at: UInt64 = 0

    package init() {}

    package var deadline: UInt64 {
        get { lock.withLock { at } }
        set { lock.withLock { at = newValue } }
    }
}

/// A libpq connection owned by one thread at a time (libpq allows a connection to move between
/// threads, not to be used by two at once).
package final class PGConnection: @unchecked Sendable {
    let conn: OpaquePointer
    /// What `send` queues a statement's parameters in, kept from statement to statement: the
    /// values' bytes, and libpq's arrays of their pointers, lengths and formats (binary).
    private var scratch = UnsafeMutableRawPointer.allocate(byteCount: 4096, alignment: 8)
    private var scratchCapacity = 4096
    private var values: [UnsafePointer<CChar>?] = []
    private var lengths: [Int32] = []
    private var formats: [Int32] = []

    /// Connects (blocking: host names are resolved, TLS is negotiated), with the store's
    /// defaults under what the connection string says (`defaults(reconnecting:)`). Errors are
    /// `unavailable`. `connectTimeout`: seconds for each host's connect, over the connection
    /// string's own (a stopping daemon's last attempt to learn what its commits in doubt became).
    /// `listens`: the session runs `LISTEN swiped` (the event store's; the people store polls
    /// instead). `applicationName`: unless the connection string names one.
    init(
        _ conninfo: String, durability: Durability, reconnecting: Bool = false, connectTimeout: Int? = nil,
        stopSignal: PGStopSignal? = nil, listens: Bool = true, applicationName: String = "swiped"
    ) throws(StoreError) {
        let defaults = PGConnection.defaults(reconnecting: reconnecting, applicationName: applicationName)
        var forced: [(String, String)] = []
        if let connectTimeout { forced.append(("connect_timeout", "\(max(2, connectTimeout))")) }
        // The hosts one at a time: libpq tries the next host when one refuses the connection or
        // is not read-write, but not when one accepts it and closes it during the start-up (a
        // proxy, pooler or port forward whose server is gone): that ended the whole attempt
        // (docs/postgres.md, "Faults, checked", finding 3).
        var why: [String] = []
        var made: OpaquePointer?
        for host in PGConnection.hosts(conninfo) {
            // Later keywords win over earlier ones (libpq keeps the last value of each).
            let pairs = host.map { defaults + $0 + forced } ?? defaults + [("dbname", conninfo)] + forced
            switch PGConnection.connect(pairs, expand: host == nil) {
            case .connected(let c): made = c
            case .failed(let message): why.append(message)
            }
            if made != nil { break }
        }
        guard let made else {
            throw StoreError(.unavailable, "cannot connect to PostgreSQL: \(why.joined(separator: "; "))")
        }
        // libpq prints the server's notices and warnings to standard error by default (e.g.
        // "terminating connection due to immediate shutdown command" before the connection
        // breaks): the break itself is what the store reports, once, in the journal.
        _ = PQsetNoticeProcessor(made, { _, _ in }, nil)
        conn = made
        // Before the session's first round trip: a link that goes silent right after the
        // connect must not hold the store thread for tcp_user_timeout (issue 40).
        self.stopSignal = stopSignal
        let sync = durability == .full ? "on" : "off"
        // force_generic_plan: a prepared statement is planned once, not again for each of its
        // first five runs and then whenever a custom plan looks cheaper. enable_seqscan off:
        // every statement of the store reads by a primary key or the key index, and a generic
        // plan made while swiped_events had its 10 seed rows (a connection prepares right after
        // creating the schema) was a sequential scan, kept until autovacuum's next ANALYZE:
        // 1.3 ms per catch-up read at 20,000 events instead of 20 µs.
        // The server's side of a vanished daemon (a partition, a crashed host), which the
        // server notices only through its own TCP keepalives, left to the kernel (two hours
        // idle) since it sends nothing to a client it waits for. A session that vanished while
        // its transaction held the appends' lock stopped every daemon's writes until then
        // (docs/postgres.md, "Faults, checked", finding 2): the store's transactions are never
        // idle longer than one round trip to the daemon, so `idle_in_transaction_session_timeout`
        // ends such a session, and with it the lock, after `idleInTransactionSeconds`; the
        // keepalives and `tcp_user_timeout` (ignored on a Unix socket) end an idle session the
        // same way, mirroring the daemon's own settings above.
        let serverSide =
            "SET idle_in_transaction_session_timeout = '\(PGConnection.idleInTransactionSeconds)s'; SET tcp_keepalives_idle = 5; SET tcp_keepalives_interval = 2; SET tcp_keepalives_count = 3; SET tcp_user_timeout = 15000"
        do throws(PGFailure) {
            _ = try execute(
                "SET synchronous_commit = \(sync); SET client_min_messages = warning; SET plan_cache_mode = force_generic_plan; SET enable_seqscan = off; \(serverSide)\(listens ? "; LISTEN swiped" : "")"
            )
        } catch {
            PQfinish(made)
            throw StoreError(.unavailable, "PostgreSQL: setting up the session failed: \(error.message)")
        }
    }

    /// How long the server lets one of the store's sessions sit idle inside a transaction
    /// before it ends the session (and its locks). The store's transactions wait only for its
    /// own thread between two round trips, microseconds; 3 s leaves room for a loaded host and
    /// is shorter than `cancelAfterNanos`, so that another daemon waiting for the lock behind
    /// a vanished session gets it before its own round trip is cancelled.
    static let idleInTransactionSeconds = 3

    /// How long a round trip waits for the server's answer before the store asks the server to
    /// cancel it (a cancel request, on a connection of its own). What waits that long on a
    /// healthy server is a commit waiting for a synchronous standby that does not answer (a
    /// partition between the servers: it would wait for the partition's whole length), or a
    /// lock held by a session that went silent; a cancelled commit is answered in doubt, a
    /// cancelled statement before COMMIT `unavailable` (PostgresWorker+Commit.swift).
    static let cancelAfterNanos: UInt64 = 5_000_000_000
    /// How long after the cancel request the round trip still waits for an answer before the
    /// connection is given up as lost (its socket shut): a server that answers neither the
    /// statement nor the cancel is unreachable (a silent partition), which is then known
    /// after 8 s instead of the 15 s of `tcp_user_timeout`.
    static let lostAfterCancelNanos: UInt64 = 3_000_000_000

    /// Whether the last `run` or `execute` sent a cancel request (`cancelAfterNanos`): what it
    /// returned may be the server's answer to the cancel. A commit then returns as committed
    /// when its wait for the synchronous standby was cancelled (PostgreSQL only warns: "canceling
    /// wait for synchronous replication … already committed locally"), so nothing it returned
    /// says the standby has it. The connection is not used again: a cancel request is not tied
    /// to a statement, and one that reached the server late could cancel a later one, unseen.
    var cancelled = false

    /// The store's stop (`PGStopSignal`): a round trip still waiting at its deadline gives the
    /// connection up. Set on the store thread's connections, and only their round trips are
    /// bounded (`cancelAfterNanos`): a store's opening waits for a migration or an import that
    /// holds the schema's lock, as it did, and an import's statements over a million events may
    /// take longer than the bound on a slow disk.
    var stopSignal: PGStopSignal?

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
        let started = SystemClock.monotonicNanoseconds()
        cancelled = false
        var out: [PGRows] = []
        var failure: PGFailure?
        while try awaitResult(since: started), let result = PQgetResult(conn) {
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
        if cancelled { throw givenUp() }
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
            // Sent, then waited for within the round trip's bound: PQprepare would wait for the
            // server as long as the kernel lets it (tcp_user_timeout), and the first pipeline
            // after a reconnection is where a link that went silent again meets it (issue 40).
            let started = SystemClock.monotonicNanoseconds()
            cancelled = false
            for s in PGStatement.allCases {
                guard PQsendPrepare(conn, s.name, s.sql, 0, nil) == 1 else {
                    throw .lost(PGConnection.message(conn))
                }
                var failed: PGFailure?
                var answered = false
                while try awaitResult(since: started), let r = PQgetResult(conn) {
                    answered = true
                    if PQresultStatus(r) != PGRES_COMMAND_OK, failed == nil {
                        failed = failure(r) ?? .lost(PGConnection.message(conn))
                    }
                    PQclear(r)
                }
                if cancelled { throw givenUp() }
                if isBroken || !answered { throw .lost(PGConnection.message(conn)) }
                if let failed { throw failed }
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
        let started = SystemClock.monotonicNanoseconds()
        cancelled = false
        var out: [PGResult?] = []
        var failed: PGFailure?
        failedStep = nil
        for (index, _) in steps.enumerated() {
            var rows: PGResult?
            // Each statement's results end with a null result.
            while try awaitResult(since: started), let r = PQgetResult(conn) {
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
            try awaitResult(since: started)
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
        if cancelled { throw givenUp() }
        if isBroken { throw .lost(PGConnection.message(conn)) }
        if case .failed(let state, let message) = failed, PGConnection.meansLost(sqlState: state) {
            throw .lost(message)
        }
        drainNotifications()
        if let failed { throw failed }
        return out
    }

    /// Waits until `PQgetResult` has an answer to return without blocking, within the round
    /// trip's bound (it began at `started`; only on the store thread's connections, those with
    /// a `stopSignal`): after `cancelAfterNanos` a cancel request goes to
    /// the server (`cancelled`), after `lostAfterCancelNanos` more the socket is shut and the
    /// connection is lost. Always true (it lets the caller's `while` call it in its condition).
    @discardableResult
    func awaitResult(since started: UInt64) throws(PGFailure) -> Bool {
        guard stopSignal != nil else { return true }
        while PQisBusy(conn) == 1 {
            // A broken connection: PQgetResult reports it without waiting.
            if !(try awaitInput(since: started)) { return true }
        }
        return true
    }

    /// Waits once for input, within the round trip's bound (`awaitResult`), and reads what came
    /// into libpq's buffer. False when the connection broke (the caller's next libpq call says
    /// so without waiting). Without a `stopSignal`, waits as long as it takes.
    func awaitInput(since started: UInt64) throws(PGFailure) -> Bool {
        guard let stopSignal else {
            var p = pollfd(fd: PQsocket(conn), events: Int16(POLLIN), revents: 0)
            let n = poll(&p, 1, 1_000)
            return n <= 0 || PQconsumeInput(conn) == 1
        }
        let now = SystemClock.monotonicNanoseconds()
        let cancelAt = started + PGConnection.cancelAfterNanos
        let lostAt = cancelAt + PGConnection.lostAfterCancelNanos
        let stop = stopSignal.deadline
        if stop != 0 && now >= stop {
            _ = shutdown(PQsocket(conn), Int32(SHUT_RDWR))
            throw .lost(
                "the daemon is stopping and PostgreSQL has not answered; the connection is given up")
        }
        if now >= lostAt {
            _ = shutdown(PQsocket(conn), Int32(SHUT_RDWR))
            throw .lost(
                "PostgreSQL answered neither within \(PGConnection.cancelAfterNanos / 1_000_000_000) s nor \(PGConnection.lostAfterCancelNanos / 1_000_000_000) s after a cancel request; the connection is given up"
            )
        }
        if now >= cancelAt && !cancelled {
            cancelled = true
            sendCancel()
        }
        let until = min(cancelled ? lostAt : cancelAt, stop != 0 ? stop : .max)
        var p = pollfd(fd: PQsocket(conn), events: Int16(POLLIN), revents: 0)
        let n = poll(&p, 1, Int32(min((until - now) / 1_000_000 + 1, 1_000)))
        return n <= 0 || PQconsumeInput(conn) == 1
    }

    /// A round trip that had to be cancelled, whatever the server answered: the connection is
    /// given up (`cancelled` says why), its socket shut so that closing it waits for nothing.
    func givenUp() -> PGFailure {
        _ = shutdown(PQsocket(conn), Int32(SHUT_RDWR))
        return .lost(
            "PostgreSQL did not answer within \(PGConnection.cancelAfterNanos / 1_000_000_000) s (a synchronous standby that does not confirm, a lock held by a silent session, or a server unreachable); the statement was cancelled and the connection is given up"
        )
    }

    /// Asks the server to cancel what this connection runs, on a thread of its own: libpq's
    /// `PQcancel` connects to the server and has no timeout, and a server that does not answer
    /// (a silent partition) would hold it for the kernel's connect retries.
    private func sendCancel() {
        guard let request = PQgetCancel(conn) else { return }
        let box = CancelRequest(request)
        Thread {
            var error = [CChar](repeating: 0, count: 256)
            _ = PQcancel(box.request, &error, Int32(error.count))
            PQfreeCancel(box.request)
        }.start()
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

    /// A failed result as a failure (nil when it is not one).
    func failure(_ r: OpaquePointer) -> PGFailure? {
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
    func drainNotifications() {
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

    static func message(_ conn: OpaquePointer) -> String {
        trimmed(PQerrorMessage(conn).map { String(cString: $0) } ?? "unknown error")
    }

    /// libpq's messages end in a newline and may span lines: one line for the journal.
    private static func trimmed(_ s: String) -> String {
        s.split(whereSeparator: \.isNewline).map { $0.trimmingSpaces() }.joined(separator: "; ")
    }
}

/// A cancel request (`PQgetCancel`), handed to the thread that sends it and frees it: libpq
/// makes it for use from any thread.
private final class CancelRequest: @unchecked Sendable {
    let request: OpaquePointer
    init(_ request: OpaquePointer) { self.request = request }
}

/// Calls `body` with `strings` as a NULL-terminated array of C strings.
func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
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

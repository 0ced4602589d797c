// The people tables (issue 45) in the PostgreSQL database the daemons share (schema 2:
// PostgresSchema.peopleTables, PostgresPeople.swift), so that every daemon on one database knows
// the same tokens and roles. A thread of its own, `swiped-people`, with a connection of its own
// (`application_name` swiped-people unless CONNINFO names one; no `LISTEN`), does every round
// trip: the loop only queues changes and collects outcomes. Every round trip is bounded as the
// event store's are (`PGStopSignal`: a cancel after 5 s, the connection given up 3 s later).
//
// Other daemons' changes are found by polling: while idle the thread reads the version row every
// `pollMicroseconds` (250 ms), and the tables when it moved, so a change made anywhere is in
// `completions().tables` within about 0.3 s. Not LISTEN/NOTIFY: the thread would have to wait
// on the socket and the loop's queue at once, a notification sent while the connection is away
// is lost (the version must be read after every reconnection anyway, so the poll is needed
// regardless), and a pooler in transaction mode drops LISTEN. A poll is one primary-key read,
// four a second per daemon.
//
// When the database goes away the tables keep their last contents, the loss is noted once (and
// the return once), changes submitted meanwhile are answered `unavailable` (nothing was sent),
// and the thread reconnects with the event store's backoff (50 ms doubling to 1 s).
import CLibPQ
import Foundation
import Glibc
import LogTypes
import People
import Plumbing
import StoreCore

public final class PostgresPeopleStore: PeopleStore, @unchecked Sendable {
    /// `PostgreSQL <db> on <host>`, for the journal (never the connection string).
    public let database: String

    /// The tables as last reported (the loop's).
    public private(set) var tables: PeopleTables

    private let doorbell: Doorbell
    private let cond = NSCondition()
    // Guarded by `cond`.
    private var jobs: [(change: PeopleChange, token: UInt64)] = []
    private var results: [PeopleResult] = []
    /// The tables as the thread last read them, when they may differ from `tables`.
    private var latest: PeopleTables?
    private var notes: [StoreNote] = []
    private var closing = false
    private var running = true

    // Owned by the thread once it runs.
    private let conninfo: String
    private let durability: Durability
    private var conn: PGConnection?
    /// The version row as last read (-1: read the tables at the next poll whatever it says).
    private var version: Int64
    private let pollNanos: UInt64
    private var backoffMillis = 50
    private var nextAttempt: UInt64 = 0
    private var downSince: String?
    /// A read refused by the server (warned once until one succeeds).
    private var readFailed = false
    /// The close's deadline, for the round trip in flight then and for every other.
    private let stopSignal = PGStopSignal()

    static let applicationName = "swiped-people"

    /// Connects (blocking: at start-up), creates or migrates the schema as the event store does
    /// (PostgresSchema.migrate: either store may open first), reads the tables and starts the
    /// thread. `pollMicroseconds`: how often the idle thread reads the version row.
    public init(conninfo: String, durability: Durability = .full, pollMicroseconds: UInt64 = 250_000)
        throws(StoreError)
    {
        if let why = PGConnection.refusal(conninfo) {
            throw StoreError(.badRequest, "the PostgreSQL connection string \(why)")
        }
        self.conninfo = conninfo
        self.durability = durability
        pollNanos = max(1_000, pollMicroseconds) * 1_000
        let c = try PGConnection(
            conninfo, durability: durability, listens: false,
            applicationName: PostgresPeopleStore.applicationName)
        database = c.description
        _ = try PostgresSchema.migrate(c)
        let read: (version: Int64, tables: PeopleTables)
        do throws(PGFailure) {
            read = try PostgresPeopleStore.decode(try c.execute(PostgresPeople.read))
        } catch {
            let lost = if case .lost = error { true } else { false }
            throw StoreError(
                lost ? .unavailable : .storage, "reading the people tables failed: \(error.message)")
        }
        version = read.version
        tables = read.tables
        do throws(PlumbingError) {
            doorbell = try Doorbell("the PostgreSQL people store")
        } catch {
            throw StoreError(.internal, error.message)
        }
        c.stopSignal = stopSignal
        conn = c
        Thread { [self] in run() }.start()
    }

    deinit {
        close()
        doorbell.close()
    }

    // MARK: - The loop's side

    public var completionFD: Int32 { doorbell.fd }

    public func submit(_ change: PeopleChange, token: UInt64) {
        cond.lock()
        if closing {
            results.append(PeopleResult(token: token, result: .failure(.closed)))
            doorbell.ring()
        } else {
            jobs.append((change, token))
            cond.signal()
        }
        cond.unlock()
    }

    public func completions() -> PeopleCompletions {
        cond.lock()
        var out = PeopleCompletions(results: results, notes: notes)
        results = []
        notes = []
        let read = latest
        latest = nil
        doorbell.reset()
        cond.unlock()
        if let read, read != tables {
            tables = read
            out.tables = read
        }
        return out
    }

    /// Makes the changes queued (within 5 s: the round trips' deadline, then they are given
    /// up), then stops the thread and closes its connection. Idempotent.
    public func close() {
        cond.lock()
        if !closing { stopSignal.deadline = SystemClock.monotonicNanoseconds() + 5_000_000_000 }
        closing = true
        cond.broadcast()
        while running { cond.wait() }
        cond.unlock()
    }

    // MARK: - The thread

    private func run() {
        nameCurrentThread("swiped-people")
        var wakeAt = SystemClock.monotonicNanoseconds() + pollNanos
        while true {
            cond.lock()
            while jobs.isEmpty && !closing {
                let now = SystemClock.monotonicNanoseconds()
                if now >= wakeAt { break }
                _ = cond.wait(until: Date(timeIntervalSinceNow: Double(wakeAt - now) / 1e9))
            }
            let now = jobs
            jobs = []
            let isClosing = closing
            cond.unlock()
            if isClosing && now.isEmpty { break }
            if conn == nil && !isClosing { reconnectIfDue() }
            var out: [PeopleResult] = []
            for job in now { out.append(PeopleResult(token: job.token, result: apply(job.change))) }
            let read = conn == nil ? nil : readIfChanged()
            post(out, read)
            wakeAt =
                conn == nil
                ? max(nextAttempt, SystemClock.monotonicNanoseconds() + 1_000_000)
                : SystemClock.monotonicNanoseconds() + pollNanos
        }
        conn = nil
        cond.lock()
        running = false
        cond.broadcast()
        cond.unlock()
    }

    /// Hands outcomes, tables and notes to the loop.
    private func post(_ out: [PeopleResult], _ read: PeopleTables?, _ note: StoreNote? = nil) {
        cond.lock()
        results += out
        if let read { latest = read }
        if let note { notes.append(note) }
        if !out.isEmpty || read != nil || note != nil { doorbell.ring() }
        cond.unlock()
    }

    private var unavailable: StoreError {
        StoreError(.unavailable, "the shared database is unreachable; nothing was written, try again later")
    }

    private func apply(_ change: PeopleChange) -> Result<Int, StoreError> {
        guard let c = conn, !c.isBroken else {
            if let c = conn, c.isBroken { lost(PGConnection.message(c.conn)) }
            return .failure(unavailable)
        }
        do throws(PGFailure) {
            let rows = try c.execute(PostgresPeople.change(change, c))
            guard let n = rows.first?.rows.first?.first.flatMap({ $0 }).flatMap({ Int($0) }) else {
                return .failure(StoreError(.storage, "a change of the people tables returned no count"))
            }
            if case .createToken = change, n == 0 {
                return .failure(StoreError(.conflict, "a token with this id or hash exists"))
            }
            return .success(n)
        } catch .lost(let why) {
            lost(why)
            return .failure(
                StoreError(
                    .storage,
                    "the outcome is unknown: the connection to PostgreSQL was lost during the change; the people tables, read again once it is back, say whether it was made (\(why))"
                ))
        } catch {
            return .failure(
                StoreError(.storage, "the change of the people tables was refused: \(error.message)"))
        }
    }

    /// The tables, when the version row moved since the last read (nil otherwise, or when the
    /// read failed: the tables keep their last contents, a refusal is noted once).
    private func readIfChanged() -> PeopleTables? {
        guard let c = conn else { return nil }
        do throws(PGFailure) {
            let rows = try c.execute("SELECT version FROM swiped_people_version WHERE id = 1")
            let now = rows.first?.rows.first?.first.flatMap { $0 }.flatMap { Int64($0) }
            guard now != version else { return nil }
            let read = try PostgresPeopleStore.decode(try c.execute(PostgresPeople.read))
            version = read.version
            readFailed = false
            return read.tables
        } catch .lost(let why) {
            lost(why)
        } catch {
            // A refused statement leaves the read's transaction open: end it. The next read that
            // works reads the tables whatever the version says (they may have been made anew).
            _ = try? c.execute("ROLLBACK")
            version = -1
            if !readFailed {
                readFailed = true
                post(
                    [], nil,
                    StoreNote(
                        .warning, "reading the people tables failed; their last contents stay in force",
                        reason: error.message))
            }
        }
        return nil
    }

    /// `PostgresPeople.decode`, its damage thrown as a refusal (`readIfChanged` notes it).
    private static func decode(_ rows: [PGRows]) throws(PGFailure) -> (version: Int64, tables: PeopleTables) {
        do throws(StoreError) {
            return try PostgresPeople.decode(rows)
        } catch {
            throw .failed(sqlState: "", message: error.message)
        }
    }

    // MARK: - The connection

    private func reconnectIfDue() {
        let now = SystemClock.monotonicNanoseconds()
        guard now >= nextAttempt else { return }
        do throws(StoreError) {
            conn = try PGConnection(
                conninfo, durability: durability, reconnecting: true, stopSignal: stopSignal, listens: false,
                applicationName: PostgresPeopleStore.applicationName)
        } catch {
            nextAttempt = now + UInt64(backoffMillis) * 1_000_000
            backoffMillis = min(backoffMillis * 2, 1_000)
            return
        }
        backoffMillis = 50
        // Whatever changed meanwhile is read now, whatever the version says (the database may
        // be another one, restored, whose version is the one this store last read).
        version = -1
        post(
            [], nil,
            StoreNote(
                .info, "PostgreSQL connection of the people store restored",
                reason: "unreachable since \(downSince ?? "?")"))
        downSince = nil
    }

    /// The connection broke: dropped, said once, retried with backoff.
    private func lost(_ why: String) {
        conn = nil
        nextAttempt = SystemClock.monotonicNanoseconds() + UInt64(backoffMillis) * 1_000_000
        guard downSince == nil else { return }
        var t = time(nil)
        var tm = tm()
        gmtime_r(&t, &tm)
        downSince = String(format: "%02d:%02d:%02d UTC", tm.tm_hour, tm.tm_min, tm.tm_sec)
        post(
            [], nil,
            StoreNote(
                .warning,
                "PostgreSQL connection of the people store lost, reconnecting with backoff; token and role changes are refused meanwhile",
                reason: why))
    }
}

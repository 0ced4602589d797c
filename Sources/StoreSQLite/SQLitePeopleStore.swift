// The people tables (issue 45) in the SQLite log's own file (EventLog's PeopleTables+SQLite.swift),
// so that `swiped backup` keeps them with the events. A thread of its own, `swiped-people`,
// with a connection of its own, does every read and write: the loop only queues changes and
// collects outcomes, never waiting for the disk (the log's writer may hold the file's write lock
// for a commit: this connection's busy timeout waits for it here, not on the loop).
//
// The thread also reads the version row every `pollMicroseconds` while idle and the tables when
// it moved: one daemon holds a state directory, but a person may still change the file with
// another program (`sqlite3`, to revoke a token while the daemon cannot be reached), and that
// reaches the daemon as another daemon's change would on PostgreSQL.
import CSQLite
import EventLog
import Foundation
import People
import Plumbing
import StoreCore

public final class SQLitePeopleStore: PeopleStore, @unchecked Sendable {
    public let path: String

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
    private let log: EventLog
    private var version: Int64
    private let pollNanos: UInt64
    /// A read that failed (warned once until one succeeds).
    private var readFailed = false

    /// Opens the people tables of the log at `path` (a state directory's events.sqlite3, which
    /// must exist: open the event store first), creating them in a log made before them, reads
    /// them (blocking: at start-up) and starts the thread. `pollMicroseconds`: how often the
    /// idle thread looks at the version row.
    public init(path: String, durability: Durability = .full, pollMicroseconds: UInt64 = 250_000)
        throws(StoreError)
    {
        self.path = path
        pollNanos = max(1_000, pollMicroseconds) * 1_000
        do throws(LogError) {
            log = try EventLog(path: path, durability: durability, create: false)
        } catch {
            throw StoreError(opening: error)
        }
        do throws(LogError) {
            try log.ensurePeopleTables()
            let read = try log.readPeople()
            version = read.version
            tables = read.tables
        } catch {
            log.close()
            throw StoreError(opening: error)
        }
        do throws(PlumbingError) {
            doorbell = try Doorbell("\(path): the people store")
        } catch {
            log.close()
            throw StoreError(opening: .other(error.message))
        }
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

    /// Makes the changes queued, then stops the thread and closes its connection. Idempotent.
    public func close() {
        cond.lock()
        closing = true
        cond.broadcast()
        while running { cond.wait() }
        cond.unlock()
    }

    // MARK: - The thread

    private func run() {
        nameCurrentThread("swiped-people")
        var nextPoll = SystemClock.monotonicNanoseconds() + pollNanos
        while true {
            cond.lock()
            while jobs.isEmpty && !closing {
                let now = SystemClock.monotonicNanoseconds()
                if now >= nextPoll { break }
                _ = cond.wait(until: Date(timeIntervalSinceNow: Double(nextPoll - now) / 1e9))
            }
            let now = jobs
            jobs = []
            let stop = closing && now.isEmpty
            cond.unlock()
            if stop { break }
            var out: [PeopleResult] = []
            for job in now { out.append(PeopleResult(token: job.token, result: apply(job.change))) }
            // Every time round: after a change of this store's (its version moved the row) and
            // at each poll.
            let read = readIfChanged()
            cond.lock()
            results += out
            if let read = read.tables { latest = read }
            if let note = read.note { notes.append(note) }
            if !out.isEmpty || read.tables != nil || read.note != nil { doorbell.ring() }
            cond.unlock()
            nextPoll = SystemClock.monotonicNanoseconds() + pollNanos
        }
        log.close()
        cond.lock()
        running = false
        cond.broadcast()
        cond.unlock()
    }

    private func apply(_ change: PeopleChange) -> Result<Int, StoreError> {
        do throws(LogError) {
            return .success(try log.apply(change))
        } catch {
            if case .keyConflict = error {
                return .failure(StoreError(.conflict, "a token with this id or hash exists"))
            }
            return .failure(StoreError(error))
        }
    }

    /// The tables, when the version row moved since the last read; a note the first time a
    /// read fails (the tables keep their last contents meanwhile).
    private func readIfChanged() -> (tables: PeopleTables?, note: StoreNote?) {
        do throws(LogError) {
            let now = try log.peopleVersion()
            guard now != version else { return (nil, nil) }
            let read = try log.readPeople()
            version = read.version
            readFailed = false
            return (read.tables, nil)
        } catch {
            // The next read that works reads the tables whatever the version says.
            version = -1
            guard !readFailed else { return (nil, nil) }
            readFailed = true
            return (
                nil,
                StoreNote(
                    .warning, "reading the people tables failed; their last contents stay in force",
                    reason: error.message)
            )
        }
    }
}

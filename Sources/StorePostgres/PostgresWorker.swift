// The PostgreSQL store's thread: everything that may block on the database runs here, so that
// the event loop never does. It owns the one connection (queries and LISTEN), its own copy of
// the state at the position it last applied, and the commands handed over by the loop. Each
// group of commands is decided and appended in one transaction under the appends' locks
// (docs/postgres.md: commit order is position order, decisions hold across daemons;
// PostgresWorker+Commit.swift). Whatever
// it applies, its own commits and other daemons', goes to the loop in one ordered stream, once
// it is known on disk (a flush after it returned, or the WAL's flushed position past it): the
// commit releases the lock before its flush, so an event read here may not be on disk yet
// (docs/postgres.md, "The lock is not held through the flush"). Reading the log is in
// PostgresWorker+Reading.swift, the connection's loss and return in +Connection.swift.
import CLibPQ
import Foundation
import Glibc
import LogTypes
import Metrics
import Movies
import Plumbing
import StoreCore

final class PostgresWorker: @unchecked Sendable {
    /// A command handed over by the loop, under the loop's token.
    struct Job {
        var token: UInt64
        var command: MovieCommand
    }

    /// A job in a transaction, with the commit token stored with its event. (A struct, not a
    /// tuple: a tuple of a String and a Job was copied through the runtime's generic tuple
    /// witnesses, four times per event, ≈ 1,700 instructions; callgrind.)
    struct Attempt {
        var job: Job
        var token: String
    }

    /// An attempt the transaction appends, with its event.
    struct Accepted {
        var attempt: Attempt
        var event: MovieEvent
        var committed: CommittedEvent
    }

    /// What the loop learns, in the order it happened.
    enum Output {
        /// An event now in the log at the next position: fold it. `token` is the loop's token
        /// when it is the commit of a command handed over here, nil for another daemon's event.
        case applied(CommittedEvent, MovieEvent, key: String?, token: UInt64?)
        /// A command's outcome other than its own commit: refused at commit, replayed from a
        /// key in the log, unavailable, failed.
        case answered(token: UInt64, Result<CommittedEvent, StoreError>, replayed: Bool)
        case read(ReadResult)
        /// The connection was lost (`status` says so) or is back (`status` nil).
        case connection(StoreNote, status: String?)
        /// Something a person should read once (a snapshot that could not be saved).
        case note(StoreNote)
        case fatal(StoreError)
    }

    struct Read {
        var token: UInt64
        var after: UInt64
        var limit: Int
        /// One person's events only (`StoreRead.eventsBy`).
        var person: String? = nil
    }

    /// Readable exactly while outputs wait (rung and reset under `lock`).
    let doorbell: Doorbell
    /// The loop rings this to wake the thread from `poll`; the thread resets it when it wakes.
    let wake: Doorbell
    let lock = NSLock()
    // Guarded by `lock`.
    var jobs: [Job] = []
    var reads: [Read] = []
    var outputs: [Output] = []
    var closing = false
    var running = true
    /// `listening`, for a test to read.
    var listeningNow = true

    /// How each transaction's commit pipeline reaches the server (PGCommitPath.swift).
    let commitPath: any PGCommitPath

    // Owned by the worker thread.
    let conninfo: String
    /// The id of the log this store serves (`swiped_identity`), checked on every reconnection.
    let logID: String
    let durability: Durability
    let snapshotEvery: UInt64
    var conn: PGConnection?
    var state: MovieState
    var snapshotSeq: UInt64
    /// Commands whose COMMIT was sent when the connection broke, by commit token.
    var inDoubt: [String: Job] = [:]
    var inDoubtOrder: [String] = []
    /// Commands not yet in a transaction (handed over, or in doubt and not found after the
    /// reconnection: decided again).
    var waiting: [Job] = []
    var waitingReads: [Read] = []
    /// A random id of this store's life and a colon, then a counter: the commit tokens.
    let tokenPrefix: String
    var commits: UInt64 = 0
    var backoffMillis = 50
    var nextAttempt: UInt64 = 0
    var downSince: String?
    /// Whether the last commit's notification was refused (warned once until one succeeds).
    var notifyFailed = false
    /// Whether this connection listens for the other daemons' notifications. Only while the
    /// daemon is quiet: each transaction reads what the other daemons appended under the head's
    /// lock, so while it commits, a notification only wakes its backend and this thread for
    /// nothing (under 3 daemons' load, ≈ 1.5 of each transaction's ≈ 9 context switches in
    /// PostgreSQL and ≈ 0.6 of this thread's 4.5; docs/postgres.md, "Listening only while
    /// quiet"). A transaction stops it (`UNLISTEN` in its first pipeline), `relistenNanos` without
    /// one starts it again, then a catch-up reads what came meanwhile. False whenever it is
    /// not known to be true (a transaction that rolled back kept its `UNLISTEN` undone).
    var listening = true {
        didSet {
            guard listening != oldValue else { return }
            lock.lock()
            listeningNow = listening
            lock.unlock()
        }
    }
    /// When the last transaction ended (monotonic ns).
    var lastCommitEnd: UInt64 = 0
    /// When the transaction being committed began (the thread's clock), and where its duration
    /// and events go (`status`, `/metrics`; nil: not measured).
    var commitBegan: UInt64 = 0
    let meters: CommitMeters?
    /// When the thread last read the log up to its head (monotonic ns): in a transaction that
    /// succeeded (it read under the lock), or in a catch-up to the head (not one that stops at a
    /// notified head). The safety net's read is due `safetyNetMillis` after it, however often
    /// the thread is woken meanwhile (`history` reads wake it without reading past what it has).
    var lastReadToHead = SystemClock.monotonicNanoseconds()
    /// Whether `LISTEN` was refused (warned once until it succeeds).
    var listenFailed = false
    /// The close's deadline (`closeWaitNanos` after `beginClose`), also for the round trip in
    /// flight then: shared with each connection (PGConnection.stopSignal).
    let stopSignal = PGStopSignal()
    var failed = false
    /// Set when a transaction or read failed after what it applied was folded into `state`: the
    /// state is read again from the database up to this position (what the loop has) before it
    /// is used (cheaper than copying the whole state before every transaction to roll it back).
    var reloadTo: UInt64?
    /// Events applied to `state` (read from the log, or committed here) that wait for a flush of
    /// the WAL started after them: only then are they handed to the loop. A commit does not hold
    /// the head's lock through its flush, so another daemon may read an event before it is on
    /// disk; handed over then, a server crash could take back what subscribers were shown
    /// (docs/postgres.md, "The lock is not held through the flush").
    var unflushed: [Output] = []
    /// The commands in doubt whose commits `unflushed` holds: in doubt again if it is dropped.
    var unflushedDoubts: [Attempt] = []
    /// The last position handed to the loop: with `--durability full`, on the database's disk.
    var handedOver: UInt64

    /// The longest wait between two reconnection attempts that fail at once (a refused
    /// connection, an unreachable network): what a write waits at most after the database is
    /// back, before the connect itself (goal: the first `ok` within 2 s of a heal). A handful of
    /// daemons costs a server that refuses them a handful of connects a second.
    static let maxBackoffMillis = 1_000
    static let closeWaitNanos: UInt64 = 5_000_000_000

    /// The safety net: a connected daemon reads the log up to its head at least this often
    /// (ms), whatever the notifications say.
    let safetyNetMillis: Int32
    /// How long a quiet daemon goes without a transaction before it listens again (ns).
    let relistenNanos: UInt64

    init(
        connection: PGConnection, conninfo: String, logID: String, durability: Durability, state: MovieState,
        snapshotSeq: UInt64, snapshotEvery: UInt64, safetyNetMillis: Int32, relistenMillis: Int32,
        commitPath: any PGCommitPath, meters: CommitMeters? = nil
    ) throws(StoreError) {
        self.commitPath = commitPath
        self.meters = meters
        self.safetyNetMillis = safetyNetMillis
        relistenNanos = UInt64(relistenMillis) * 1_000_000
        do throws(PlumbingError) {
            doorbell = try Doorbell("PostgreSQL store")
        } catch {
            throw StoreError(.internal, error.message)
        }
        do throws(PlumbingError) {
            wake = try Doorbell("PostgreSQL store")
        } catch {
            doorbell.close()
            throw StoreError(.internal, error.message)
        }
        connection.stopSignal = stopSignal
        self.conn = connection
        self.conninfo = conninfo
        self.logID = logID
        self.durability = durability
        self.state = state
        handedOver = state.lastSeq
        self.snapshotSeq = snapshotSeq
        self.snapshotEvery = snapshotEvery
        tokenPrefix = String(UInt64.random(in: 0...UInt64.max), radix: 16) + ":"
        Thread { [self] in run() }.start()
    }

    deinit {
        close()
        doorbell.close()
        wake.close()
    }

    // MARK: - The loop's side

    func submit(_ batch: [Job]) {
        lock.lock()
        jobs += batch
        lock.unlock()
        wake.ring()
    }

    func read(_ r: Read) {
        lock.lock()
        reads.append(r)
        lock.unlock()
        wake.ring()
    }

    func drain() -> [Output] {
        lock.lock()
        defer { lock.unlock() }
        guard !outputs.isEmpty else { return [] }
        doorbell.reset()
        let out = outputs
        outputs = []
        return out
    }

    /// Whether the connection listens for notifications (`listening`), as a test sees it.
    var isListening: Bool {
        lock.lock()
        defer { lock.unlock() }
        return listeningNow
    }

    /// Whether the thread has stopped (after `beginClose()`, once it finished).
    var isFinished: Bool {
        lock.lock()
        defer { lock.unlock() }
        return !running
    }

    /// Asks the thread to finish what it has (commands in doubt wait at most 5 s for the
    /// database) and stop.
    func beginClose() {
        lock.lock()
        if !closing {
            stopSignal.deadline = SystemClock.monotonicNanoseconds() + PostgresWorker.closeWaitNanos
        }
        closing = true
        lock.unlock()
        wake.ring()
    }

    /// Stops the thread, waiting for it. Idempotent.
    func close() {
        beginClose()
        while !isFinished { usleep(1000) }
    }

    func emit(_ o: [Output]) {
        guard !o.isEmpty else { return }
        lock.lock()
        outputs += o
        doorbell.ring()
        lock.unlock()
    }

    // MARK: - The thread

    func run() {
        nameCurrentThread("swiped-pg")
        while true {
            lock.lock()
            waiting += jobs
            waitingReads += reads
            jobs = []
            reads = []
            let isClosing = closing
            lock.unlock()
            if failed {
                answerAll(.failure(StoreError(.storage, "the store stopped after a fatal error")))
                if isClosing { break }
                idle(timeout: -1)
                continue
            }
            // Closing without a connection: only commands in doubt are worth one, and only
            // until the close's deadline (a connect to a silent host waits its whole timeout).
            if conn == nil && isClosing {
                let now = SystemClock.monotonicNanoseconds()
                let deadline = stopSignal.deadline
                if inDoubt.isEmpty || now >= deadline {
                    answerAll(.failure(unavailable))
                    giveUpInDoubt()
                    break
                }
                // The time left shared by the hosts (each gets its connect_timeout), 2 s at
                // least: libpq's shortest.
                let perHost = Int((deadline - now) / 1_000_000_000) / PGConnection.hosts(conninfo).count
                if perHost >= 2 { reconnectIfDue(connectTimeout: perHost) }
            } else if conn == nil {
                reconnectIfDue()
            }
            if conn == nil {
                answerAll(.failure(unavailable))
                let now = SystemClock.monotonicNanoseconds()
                let wait = nextAttempt > now ? Int32(min((nextAttempt - now) / 1_000_000, 100)) + 1 : 1
                idle(timeout: wait)
                continue
            }
            // Reads are answered after each transaction, not only when no command waits: under
            // a steady stream of writes a history page would otherwise never come.
            let busy = !waiting.isEmpty || !inDoubt.isEmpty || !waitingReads.isEmpty
            if !waiting.isEmpty || !inDoubt.isEmpty {
                let batch = waiting
                waiting = []
                commitBegan = SystemClock.monotonicNanoseconds()
                commit(batch)
                lastCommitEnd = SystemClock.monotonicNanoseconds()
            } else if let conn, !waitingReads.isEmpty {
                // Only reads: they may come faster than they are answered, and the thread
                // would then never wait. What is due (a notification libpq took in with a
                // read's rows, the safety net) is done between them.
                _ = catchUpIfDue(conn)
            }
            if conn != nil && !waitingReads.isEmpty {
                let rs = waitingReads
                waitingReads = []
                answer(rs)
            }
            // Before waiting: the snapshot a long replay at start calls for is saved at once,
            // not a wait (up to the 1 s safety net) later, and also when the store closes right
            // away (the next start would otherwise replay the whole log again).
            maybeSnapshot()
            if !busy {
                if isClosing { break }
                waitForNotification()
            }
        }
        conn = nil
        lock.lock()
        running = false
        lock.unlock()
    }

    /// Lends `state` in place: called through the class's stored property, each `decide` and
    /// `apply` first copied the state (a retain and release of each of its arrays).
    @inline(__always)
    func lendState<R>(_ body: (inout MovieState) -> R) -> R { body(&state) }

    /// The commit token of the next command.
    func nextToken() -> String {
        commits += 1
        return PostgresWorker.commitToken(prefix: tokenPrefix, count: commits)
    }

    /// `prefix` (this daemon's instance and a colon) then `count` in decimal, written in place:
    /// an interpolation cost ≈ 1,200 instructions a command and a concatenation ≈ 700
    /// (callgrind).
    static func commitToken(prefix: String, count: UInt64) -> String {
        var digits = 1
        var rest = count
        while rest >= 10 {
            rest /= 10
            digits += 1
        }
        let head = prefix.utf8
        return String(unsafeUninitializedCapacity: head.count + digits) { buffer in
            _ = buffer.initialize(fromContentsOf: head)
            var n = count
            for i in stride(from: head.count + digits - 1, through: head.count, by: -1) {
                buffer[i] = UInt8(ascii: "0") + UInt8(n % 10)
                n /= 10
            }
            return head.count + digits
        }
    }

    /// The commands the loop handed over since the thread last looked.
    func takeLateJobs() -> [Job] {
        lock.lock()
        defer { lock.unlock() }
        let late = jobs
        jobs = []
        return late
    }

    var unavailable: StoreError {
        StoreError(.unavailable, "the shared database is unreachable; nothing was written, try again later")
    }

    /// Answers every command and read waiting (not those in doubt).
    func answerAll(_ result: Result<CommittedEvent, StoreError>) {
        var out: [Output] = waiting.map { .answered(token: $0.token, result, replayed: false) }
        let error: StoreError
        switch result {
        case .failure(let e): error = e
        case .success: error = unavailable
        }
        out += waitingReads.map { .read(ReadResult(token: $0.token, result: .failure(error))) }
        waiting = []
        waitingReads = []
        emit(out)
    }

    /// Closing, and the database did not come back within 5 s: the outcome of the commands in
    /// doubt is unknown here (the database decides it; a client retries with its key).
    func giveUpInDoubt() {
        let e = StoreError(
            .storage,
            "the outcome is unknown: the database became unreachable during the commit and the daemon is stopping; retry with the same key to find out"
        )
        emit(
            inDoubtOrder.compactMap { inDoubt[$0] }.map {
                .answered(token: $0.token, .failure(e), replayed: false)
            })
        inDoubt = [:]
        inDoubtOrder = []
    }

    /// Waits for the loop's bell (or `timeout` ms; -1: forever).
    func idle(timeout: Int32) {
        var p = pollfd(fd: wake.fd, events: Int16(POLLIN), revents: 0)
        _ = poll(&p, 1, timeout)
        wake.reset()
    }

    /// Connected and idle: waits for the loop, a notification or a deadline (the safety net's
    /// read, listening again), unless something is due already.
    func waitForNotification() {
        guard let conn, let timeout = catchUpIfDue(conn) else { return }
        var fds = [
            pollfd(fd: wake.fd, events: Int16(POLLIN), revents: 0),
            pollfd(fd: conn.socket, events: Int16(POLLIN), revents: 0),
        ]
        let n = poll(&fds, 2, timeout)
        if fds[0].revents != 0 { wake.reset() }
        if n == 0 { return }  // a deadline: the next wait finds it due
        if fds[1].revents != 0 {
            do throws(PGFailure) {
                if let head = try conn.consumeNotifications(), head > state.lastSeq {
                    catchUp(notified: PostgresWorker.announced(head))
                }
            } catch {
                lost(error.message)
            }
        }
    }

    /// Does what is due without waiting for the socket: a notification libpq holds already
    /// (taken in with a query's rows), the safety net's read, listening again. Nil when it did
    /// one of them; otherwise the milliseconds until the next is due (at least 1).
    func catchUpIfDue(_ conn: PGConnection) -> Int32? {
        // Another daemon committed while this one was in a transaction of its own. Mostly
        // that commit came just before this daemon took the lock, and its events were read
        // under it: a notification whose head this daemon has applied announces nothing new
        // (each commit notifies its own head, so a later one brings its own notification), and
        // a catch-up would be a round trip that reads nothing.
        if conn.hasNotification {
            let head: UInt64
            do throws(PGFailure) {
                guard let h = try conn.consumeNotifications(), h > state.lastSeq else { return nil }
                head = h
            } catch {
                lost(error.message)
                return nil
            }
            catchUp(notified: PostgresWorker.announced(head))
            return nil
        }
        // Both deadlines are kept across wake-ups: the loop's reads wake the thread without
        // reading past what it has, and must not put the safety net off.
        let now = SystemClock.monotonicNanoseconds()
        let safetyNetDue = lastReadToHead + UInt64(safetyNetMillis) * 1_000_000
        if now >= safetyNetDue {
            if listening { catchUp() } else { listen(conn) }
            return nil
        }
        var due = safetyNetDue
        if !listening {
            if now >= lastCommitEnd + relistenNanos {
                listen(conn)
                return nil
            }
            due = min(due, lastCommitEnd + relistenNanos)
        }
        return Int32((due - now + 999_999) / 1_000_000)
    }

    /// Quiet for `relistenNanos`: listens again, then reads what was committed while it did
    /// not (its `LISTEN` commits before the read's snapshot is taken, so a commit the read does
    /// not see notifies it). A refused `LISTEN` leaves the safety net's timer (warned once).
    func listen(_ conn: PGConnection) {
        do throws(PGFailure) {
            _ = try conn.run([(.listen, [])])
            listenFailed = false
        } catch .lost(let why) {
            return lost(why)
        } catch {
            if !listenFailed {
                listenFailed = true
                emit([
                    .note(
                        StoreNote(
                            .warning,
                            "listening for the other daemons' notifications failed; reading new events every \(safetyNetMillis) ms until it succeeds",
                            reason: error.message))
                ])
            }
        }
        // Refused, it is tried again after the next transaction, not at every wake-up.
        listening = true
        catchUp()
    }

    // MARK: - Snapshots

    func maybeSnapshot() {
        guard let conn, !failed, reloadTo == nil, state.lastSeq >= snapshotSeq + snapshotEvery else { return }
        let seq = state.lastSeq
        do throws(PGFailure) {
            _ = try conn.execute(
                """
                INSERT INTO swiped_snapshots VALUES (\(seq), \(PGBytes.literal(state.snapshotBytes()))) ON CONFLICT DO NOTHING;
                DELETE FROM swiped_snapshots WHERE seq < (SELECT min(seq) FROM (SELECT seq FROM swiped_snapshots ORDER BY seq DESC LIMIT 2) s)
                """)
            snapshotSeq = seq
            meters?.savedSnapshot(seq: seq)
        } catch .lost(let why) {
            lost(why)
        } catch {
            // A snapshot only shortens the next start: retried after the next snapshotEvery events.
            snapshotSeq = seq
            emit([
                .note(
                    StoreNote(
                        .warning, "saving a snapshot failed, trying again after \(snapshotEvery) more events",
                        reason: error.message))
            ])
        }
    }
}

extension PostgresSchema.Row {
    init(seq: UInt64, event: MovieEvent, committed: CommittedEvent, key: String?) {
        self.seq = seq
        self.event = event
        self.committed = committed
        self.key = key
        self.token = nil
    }
}

// The PostgreSQL store's thread: everything that may block on the database runs here, so that
// the event loop never does. It owns the one connection (queries and LISTEN), its own copy of
// the state at the position it last applied, and the commands handed over by the loop. Each
// group of commands is decided and appended in one transaction under the appends' locks
// (docs/postgres.md: commit order is position order, decisions hold across daemons). Whatever
// it applies, its own commits and other daemons', goes to the loop in one ordered stream, once
// it is known on disk (a flush after it returned, or the WAL's flushed position past it): the
// commit releases the lock before its flush, so an event read here may not be on disk yet
// (docs/postgres.md, "The lock is not held through the flush").
import CLibPQ
import EventLog
import Foundation
import Glibc
import Movies
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
    }

    /// Readable exactly while outputs wait (rung and reset under `lock`).
    let doorbell: Doorbell
    /// The loop rings this to wake the thread from `poll`.
    private let wake: Int32
    private let lock = NSLock()
    // Guarded by `lock`.
    private var jobs: [Job] = []
    private var reads: [Read] = []
    private var outputs: [Output] = []
    private var closing = false
    private var running = true
    /// `listening`, for a test to read.
    private var listeningNow = true

    /// How each transaction's commit pipeline reaches the server (PGCommitPath.swift).
    private let commitPath: any PGCommitPath

    // Owned by the worker thread.
    private let conninfo: String
    private let durability: Durability
    private let snapshotEvery: UInt64
    private var conn: PGConnection?
    private var state: MovieState
    private var snapshotSeq: UInt64
    /// Commands whose COMMIT was sent when the connection broke, by commit token.
    private var inDoubt: [String: Job] = [:]
    private var inDoubtOrder: [String] = []
    /// Commands not yet in a transaction (handed over, or in doubt and not found after the
    /// reconnection: decided again).
    private var waiting: [Job] = []
    private var waitingReads: [Read] = []
    /// A random id of this store's life and a colon, then a counter: the commit tokens.
    private let tokenPrefix: String
    private var commits: UInt64 = 0
    private var backoffMillis = 50
    private var nextAttempt: UInt64 = 0
    private var downSince: String?
    /// Whether the last commit's notification was refused (warned once until one succeeds).
    private var notifyFailed = false
    /// Whether this connection listens for the other daemons' notifications. Only while the
    /// daemon is quiet: each transaction reads what the other daemons appended under the head's
    /// lock, so while it commits, a notification only wakes its backend and this thread for
    /// nothing (under 3 daemons' load, ≈ 1.5 of each transaction's ≈ 9 context switches in
    /// PostgreSQL and ≈ 0.6 of this thread's 4.5; docs/postgres.md, "Listening only while
    /// quiet"). A transaction stops it (`UNLISTEN` in its first pipeline), `relistenNanos` without
    /// one starts it again, then a catch-up reads what came meanwhile. False whenever it is
    /// not known to be true (a transaction that rolled back kept its `UNLISTEN` undone).
    private var listening = true {
        didSet {
            guard listening != oldValue else { return }
            lock.lock()
            listeningNow = listening
            lock.unlock()
        }
    }
    /// When the last transaction ended (monotonic ns).
    private var lastCommitEnd: UInt64 = 0
    /// When the thread last read the log up to its head (monotonic ns): in a transaction that
    /// succeeded (it read under the lock), or in a catch-up to the head (not one that stops at a
    /// notified head). The safety net's read is due `safetyNetMillis` after it, however often
    /// the thread is woken meanwhile (`history` reads wake it without reading past what it has).
    private var lastReadToHead = SystemClock.monotonicNanoseconds()
    /// Whether `LISTEN` was refused (warned once until it succeeds).
    private var listenFailed = false
    /// Since when the thread is closing with commands in doubt (monotonic ns).
    private var closingSince: UInt64?
    private var failed = false
    /// Set when a transaction or read failed after what it applied was folded into `state`: the
    /// state is read again from the database up to this position (what the loop has) before it
    /// is used (cheaper than copying the whole state before every transaction to roll it back).
    private var reloadTo: UInt64?
    /// Events applied to `state` (read from the log, or committed here) that wait for a flush of
    /// the WAL started after them: only then are they handed to the loop. A commit does not hold
    /// the head's lock through its flush, so another daemon may read an event before it is on
    /// disk; handed over then, a server crash could take back what subscribers were shown
    /// (docs/postgres.md, "The lock is not held through the flush").
    private var unflushed: [Output] = []
    /// The commands in doubt whose commits `unflushed` holds: in doubt again if it is dropped.
    private var unflushedDoubts: [Attempt] = []
    /// The last position handed to the loop: with `--durability full`, on the database's disk.
    private var handedOver: UInt64

    static let maxBackoffMillis = 2_000
    static let closeWaitNanos: UInt64 = 5_000_000_000

    /// The safety net: a connected daemon reads the log up to its head at least this often
    /// (ms), whatever the notifications say.
    let safetyNetMillis: Int32
    /// How long a quiet daemon goes without a transaction before it listens again (ns).
    let relistenNanos: UInt64

    init(
        connection: PGConnection, conninfo: String, durability: Durability, state: MovieState,
        snapshotSeq: UInt64, snapshotEvery: UInt64, safetyNetMillis: Int32, relistenMillis: Int32,
        commitPath: any PGCommitPath
    ) throws(StoreError) {
        self.commitPath = commitPath
        self.safetyNetMillis = safetyNetMillis
        relistenNanos = UInt64(relistenMillis) * 1_000_000
        do throws(LogError) {
            doorbell = try Doorbell("PostgreSQL store")
        } catch {
            throw StoreError(.internal, error.message)
        }
        wake = swiped_pq_eventfd()
        guard wake >= 0 else {
            doorbell.close()
            throw StoreError(
                .internal, "PostgreSQL store: eventfd failed: \(String(cString: strerror(errno)))")
        }
        self.conn = connection
        self.conninfo = conninfo
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
        Glibc.close(wake)
    }

    // MARK: - The loop's side

    func submit(_ batch: [Job]) {
        lock.lock()
        jobs += batch
        lock.unlock()
        ring(wake)
    }

    func read(_ r: Read) {
        lock.lock()
        reads.append(r)
        lock.unlock()
        ring(wake)
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
        closing = true
        lock.unlock()
        ring(wake)
    }

    /// Stops the thread, waiting for it. Idempotent.
    func close() {
        beginClose()
        while !isFinished { usleep(1000) }
    }

    private func ring(_ fd: Int32) {
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { Glibc.write(fd, $0.baseAddress, 8) }
    }

    private func emit(_ o: [Output]) {
        guard !o.isEmpty else { return }
        lock.lock()
        outputs += o
        doorbell.ring()
        lock.unlock()
    }

    // MARK: - The thread

    private func run() {
        _ = swiped_pq_name_thread("swiped-pg")
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
            if conn == nil { reconnectIfDue() }
            if conn == nil {
                answerAll(.failure(unavailable))
                if isClosing {
                    let now = SystemClock.monotonicNanoseconds()
                    if closingSince == nil { closingSince = now }
                    if inDoubt.isEmpty || now - closingSince! >= PostgresWorker.closeWaitNanos {
                        giveUpInDoubt()
                        break
                    }
                }
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

    /// A statement before COMMIT failed: nothing of the transaction is written. A lost
    /// connection makes the batch `unavailable` (try again); a refusal by the server, `storage`.
    private func failedBeforeCommit(_ batch: [Job], _ error: PGFailure, _ conn: PGConnection) {
        switch error {
        case .lost(let why):
            // The note first: the loop then refuses what comes next at once, and whoever reads
            // the answers sees the store unreachable with them.
            lost(why)
            emit(batch.map { .answered(token: $0.token, .failure(unavailable), replayed: false) })
        case .failed:
            rollback(conn)
            dropUnflushed()
            let e = StoreError(.storage, "PostgreSQL refused the transaction: \(error.message)")
            emit(batch.map { .answered(token: $0.token, .failure(e), replayed: false) })
        }
    }

    /// Lends `state` in place: called through the class's stored property, each `decide` and
    /// `apply` first copied the state (a retain and release of each of its arrays).
    @inline(__always)
    private func lendState<R>(_ body: (inout MovieState) -> R) -> R { body(&state) }

    /// The commit token of the next command.
    private func nextToken() -> String {
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
    private func takeLateJobs() -> [Job] {
        lock.lock()
        defer { lock.unlock() }
        let late = jobs
        jobs = []
        return late
    }

    private var unavailable: StoreError {
        StoreError(.unavailable, "the shared database is unreachable; nothing was written, try again later")
    }

    /// Answers every command and read waiting (not those in doubt).
    private func answerAll(_ result: Result<CommittedEvent, StoreError>) {
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
    private func giveUpInDoubt() {
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
    private func idle(timeout: Int32) {
        var p = pollfd(fd: wake, events: Int16(POLLIN), revents: 0)
        _ = poll(&p, 1, timeout)
        drainWake()
    }

    private func drainWake() {
        var counter: UInt64 = 0
        _ = withUnsafeMutableBytes(of: &counter) { Glibc.read(wake, $0.baseAddress, 8) }
    }

    /// Connected and idle: waits for the loop, a notification or a deadline (the safety net's
    /// read, listening again), unless something is due already.
    private func waitForNotification() {
        guard let conn, let timeout = catchUpIfDue(conn) else { return }
        var fds = [
            pollfd(fd: wake, events: Int16(POLLIN), revents: 0),
            pollfd(fd: conn.socket, events: Int16(POLLIN), revents: 0),
        ]
        let n = poll(&fds, 2, timeout)
        if fds[0].revents != 0 { drainWake() }
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
    private func catchUpIfDue(_ conn: PGConnection) -> Int32? {
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
    private func listen(_ conn: PGConnection) {
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

    // MARK: - Connection

    private func reconnectIfDue() {
        let now = SystemClock.monotonicNanoseconds()
        guard now >= nextAttempt else { return }
        do throws(StoreError) {
            conn = try PGConnection(conninfo, durability: durability)
        } catch {
            nextAttempt = now + UInt64(backoffMillis) * 1_000_000
            backoffMillis = min(backoffMillis * 2, PostgresWorker.maxBackoffMillis)
            return
        }
        backoffMillis = 50
        // A new session: its setup ran LISTEN.
        listening = true
        let since = downSince ?? "?"
        downSince = nil
        emit([
            .connection(
                StoreNote(
                    .info, "PostgreSQL connection restored, catching up",
                    reason: "unreachable since \(since)"), status: nil)
        ])
        catchUp()
    }

    /// The connection broke: drop it, tell the loop once, retry with backoff.
    private func lost(_ why: String) {
        conn = nil
        dropUnflushed()
        nextAttempt = SystemClock.monotonicNanoseconds() + UInt64(backoffMillis) * 1_000_000
        guard downSince == nil else { return }
        var t = time(nil)
        var tm = tm()
        gmtime_r(&t, &tm)
        let since = String(format: "%02d:%02d:%02d UTC", tm.tm_hour, tm.tm_min, tm.tm_sec)
        downSince = since
        emit([
            .connection(
                StoreNote(
                    .warning,
                    "PostgreSQL connection lost, reconnecting with backoff; writes are refused meanwhile",
                    reason: why),
                status: "PostgreSQL unreachable since \(since), retrying; writes refused.")
        ])
    }

    private func fatal(_ e: StoreError) {
        var e = e
        e.fatal = true
        failed = true
        unflushed = []
        unflushedDoubts = []
        emit([.fatal(e)])
        answerAll(.failure(e))
        inDoubt = [:]
        inDoubtOrder = []
    }

    // MARK: - Reading the log

    /// The head a notification announced, nil for a payload that is not one (a `NOTIFY swiped`
    /// from elsewhere: `PGConnection` reads it as the highest head, so that it is not ignored).
    private static func announced(_ head: UInt64) -> UInt64? { head == .max ? nil : head }

    /// Reads and applies what was committed after the position applied here, in pages, without
    /// a lock (every snapshot sees a prefix of the positions), and hands it to the loop once it
    /// is on disk. `notified`: the head of a notification, sent after the flush of its commit,
    /// so everything up to it is on disk: the read stops there and each page goes to the loop
    /// as it comes (a later commit brings its own notification). Otherwise (a reconnection, the
    /// safety net) the read goes to the head, and what it found waits for a flush started after
    /// it; a read that found nothing flushes nothing (an idle daemon would otherwise write a WAL
    /// record and wait for the disk every second).
    private func catchUp(notified: UInt64? = nil) {
        guard let conn, stateIsCurrent(conn) else { return }
        do throws(PGFailure) {
            if let notified {
                while notified > state.lastSeq {
                    let count = Int(min(notified - state.lastSeq, UInt64(PostgresSchema.page)))
                    let r = try conn.run([
                        (.eventsBetween, PostgresWorker.range(after: state.lastSeq, count: count))
                    ])
                    guard applyRows(r[0]) else { return }
                    handOver()
                    if (r[0]?.count ?? 0) < count { break }
                }
                return
            }
            while true {
                let r = try conn.run([
                    (.head, []),
                    (.eventsBetween, PostgresWorker.range(after: state.lastSeq, count: PostgresSchema.page)),
                ])
                guard r.count == 2, let head = PostgresWorker.head(r[0]) else {
                    return fatal(StoreError(.storage, "swiped_head cannot be read"))
                }
                if head < handedOver {
                    return fatal(
                        StoreError(
                            .storage,
                            "the database lost events this daemon applied (its head is \(head), this daemon is at \(handedOver)); restarting from the database"
                        ))
                }
                guard applyRows(r[1]) else { return }
                let read = r[1]?.count ?? 0
                if read > 0 && durability == .full { _ = try conn.run([(.flush, [])]) }
                handOver()
                if read < PostgresSchema.page {
                    lastReadToHead = SystemClock.monotonicNanoseconds()
                    return
                }
            }
        } catch {
            lost(error.message)
        }
    }

    /// Applies rows read from swiped_events (in seq order) to `state`, into `unflushed`,
    /// matching the commands in doubt they commit. False after a fatal error.
    private func applyRows(_ rows: PGResult?) -> Bool {
        guard let rows else { return true }
        unflushed.reserveCapacity(unflushed.count + rows.count)
        for i in 0..<rows.count {
            let row: PostgresSchema.Row
            do throws(StoreError) {
                row = try PostgresSchema.Row(rows, i)
            } catch {
                fatal(error)
                return false
            }
            guard row.seq == state.lastSeq + 1, state.apply(row.event, seq: row.seq) != nil else {
                fatal(
                    StoreError(
                        .storage,
                        "event \(row.seq) does not follow this daemon's state at \(state.lastSeq) (\(row.event))"
                    ))
                return false
            }
            var token: UInt64?
            if let t = row.token, let job = inDoubt.removeValue(forKey: t) {
                token = job.token
                unflushedDoubts.append(Attempt(job: job, token: t))
            }
            unflushed.append(.applied(row.committed, row.event, key: row.key, token: token))
        }
        return true
    }

    /// A flush after everything in `state` returned: the events waiting for it, then `more`
    /// (the outcomes of the transaction's commands), go to the loop. `through`: the position
    /// the loop then has, when `state` is further on (a transaction's own events, decided and
    /// folded, not yet committed: what a failure drops and reads again from there).
    private func handOver(_ more: [Output] = [], through: UInt64? = nil) {
        let out = unflushed.isEmpty ? more : unflushed + more
        unflushed = []
        unflushedDoubts = []
        handedOver = through ?? state.lastSeq
        emit(out)
    }

    /// The transaction or read under way failed before its flush returned: what it applied is
    /// not handed over (it is read again, if the database kept it), the commands in doubt it
    /// matched are in doubt again (first: they are the older), and the state is read again up to
    /// what the loop has.
    private func dropUnflushed() {
        let again = unflushedDoubts.filter { inDoubt[$0.token] == nil }
        for d in again { inDoubt[d.token] = d.job }
        inDoubtOrder = again.map(\.token) + inDoubtOrder.filter { t in !again.contains { $0.token == t } }
        unflushed = []
        unflushedDoubts = []
        if state.lastSeq > handedOver && !failed { reloadTo = min(reloadTo ?? handedOver, handedOver) }
    }

    /// Answers `history` pages. A page ends at the last position handed to the loop: a later
    /// event may not be on disk yet, and the loop's own state has not reached it.
    private func answer(_ rs: [Read]) {
        guard let conn else { return }
        var out: [Output] = []
        for r in rs {
            let count = r.after >= handedOver ? 0 : Int(min(UInt64(max(r.limit, 0)), handedOver - r.after))
            guard count > 0 else {
                out.append(.read(ReadResult(token: r.token, result: .success([]))))
                continue
            }
            do throws(PGFailure) {
                let rows = try conn.run([
                    (.eventsBetween, PostgresWorker.range(after: r.after, count: count))
                ])
                var page: [CommittedEvent] = []
                var bad: StoreError?
                for i in 0..<(rows.first??.count ?? 0) {
                    do throws(StoreError) {
                        page.append(try PostgresSchema.Row(rows[0]!, i).committed)
                    } catch {
                        bad = error
                        break
                    }
                }
                out.append(
                    .read(ReadResult(token: r.token, result: bad.map { .failure($0) } ?? .success(page))))
            } catch .lost(let why) {
                out.append(.read(ReadResult(token: r.token, result: .failure(unavailable))))
                lost(why)
            } catch {
                out.append(
                    .read(ReadResult(token: r.token, result: .failure(StoreError(.storage, error.message)))))
            }
        }
        emit(out)
    }

    // MARK: - Committing

    /// Decides and appends `batch` (after the commands in doubt that are not in the log) in one
    /// transaction under swiped_head's lock.
    private func commit(_ batch: [Job]) {
        guard let conn, stateIsCurrent(conn) else {
            // Nothing was sent: these were not written.
            return emit(batch.map { .answered(token: $0.token, .failure(unavailable), replayed: false) })
        }
        // Commands in doubt: under the lock, every transaction that held it has ended, so an
        // in-doubt commit is either among the events read below or never happened.
        var batch = batch
        var jobs: [Attempt] = []
        let doubted = inDoubtOrder.compactMap { t in inDoubt[t].map { Attempt(job: $0, token: t) } }
        for j in batch {
            jobs.append(Attempt(job: j, token: nextToken()))
        }
        var keys = Set<String>()
        for a in doubted { if let k = a.job.command.key { keys.insert(k) } }
        for j in batch { if let k = j.command.key { keys.insert(k) } }
        // The first round trip: BEGIN, the locks with the head and the WAL's end between them,
        // the events other daemons appended since (read after the locks, by a statement of its
        // own, so that its snapshot has them), the keys.
        var steps: [(PGStatement, [PGParam])] = [
            (.begin, []), (.appendLock, []), (.headAndWALEnd, []), (.lockHead, []),
            (.eventsBetween, PostgresWorker.range(after: state.lastSeq, count: PostgresSchema.page)),
        ]
        if !keys.isEmpty { steps.append((.eventsWithKeys, [.texts(Array(keys))])) }
        if listening {
            // Busy: notifications stop with this transaction's commit (`listening`). Last, so
            // that the results above keep their places.
            steps.append((.unlisten, []))
            listening = false
        }
        let first: [PGResult?]
        do throws(PGFailure) {
            first = try conn.run(steps)
        } catch {
            return failedBeforeCommit(batch, error, conn)
        }
        guard first.count == steps.count, let head = PostgresWorker.head(first[3]),
            let before = PostgresWorker.head(first[2]), let walEnd = first[2]?.int64(0, 1)
        else {
            rollback(conn)
            return fatal(StoreError(.storage, "swiped_head cannot be read"))
        }
        // Every event read below committed before `walEnd`, unless the head moved between the
        // two locks: a daemon of an earlier build, which takes only the row lock, committed
        // after that WAL end was read. Then they wait for this transaction's own flush.
        let readBefore = head == before ? UInt64(bitPattern: walEnd) : nil
        guard applyRows(first[4]) else { return rollback(conn) }
        // More than a page behind (rare: a daemon catches up whenever it is idle): the rest.
        var read = first[4]?.count ?? 0
        while head > state.lastSeq && read == PostgresSchema.page {
            do throws(PGFailure) {
                let more = try conn.run([
                    (.eventsBetween, PostgresWorker.range(after: state.lastSeq, count: PostgresSchema.page))
                ])
                guard applyRows(more[0]) else { return rollback(conn) }
                read = more[0]?.count ?? 0
            } catch {
                return failedBeforeCommit(batch, error, conn)
            }
        }
        var keyed: [String: PostgresSchema.Row] = [:]
        var keyedRows = keys.isEmpty ? [] : [first[5]]
        guard head == state.lastSeq else {
            rollback(conn)
            return fatal(
                StoreError(
                    .storage,
                    "swiped_head says \(head), the events end at \(state.lastSeq): the log is damaged"))
        }
        // What this daemon's clients sent while it waited for the lock (other daemons'
        // transactions, one after another) joins this transaction: taken before the lock, a
        // batch stayed as small as what came in during one transaction, ≈ 4 commands where 16
        // clients were waiting, and the transactions, one at a time across all daemons, are
        // what the throughput is made of.
        let late = takeLateJobs()
        if !late.isEmpty {
            for j in late {
                jobs.append(Attempt(job: j, token: nextToken()))
            }
            batch += late
            let lateKeys = Set(late.compactMap(\.command.key)).subtracting(keys)
            if !lateKeys.isEmpty {
                do throws(PGFailure) {
                    keyedRows += try conn.run([(.eventsWithKeys, [.texts(Array(lateKeys))])])
                } catch {
                    return failedBeforeCommit(batch, error, conn)
                }
            }
        }
        // What was in doubt and is not in the log was not committed: decide it again, first.
        if !inDoubtOrder.isEmpty {
            jobs = inDoubtOrder.compactMap { t in inDoubt[t].map { Attempt(job: $0, token: t) } } + jobs
            inDoubt = [:]
            inDoubtOrder = []
        }
        for result in keyedRows {
            for i in 0..<(result?.count ?? 0) {
                do throws(StoreError) {
                    let row = try PostgresSchema.Row(result!, i)
                    if let k = row.key { keyed[k] = row }
                } catch {
                    rollback(conn)
                    return fatal(error)
                }
            }
        }
        var answers: [Output] = []
        // The commands answered without a write (refused, replayed from a key): their answers
        // were decided against events that may not be on disk yet, so they are held with them.
        var answered: [Attempt] = []
        var accepted: [Accepted] = []
        // The INSERT's columns.
        var seqs: [Int64] = []
        var streams: [String?] = []
        var kinds: [String?] = []
        var payloads: [[UInt8]] = []
        var ats: [Int64] = []
        var keyColumn: [String?] = []
        var tokens: [String?] = []
        // Sized once: grown by appending, the columns were reallocated about twice a command.
        answers.reserveCapacity(jobs.count)
        accepted.reserveCapacity(jobs.count)
        seqs.reserveCapacity(jobs.count)
        streams.reserveCapacity(jobs.count)
        kinds.reserveCapacity(jobs.count)
        payloads.reserveCapacity(jobs.count)
        ats.reserveCapacity(jobs.count)
        keyColumn.reserveCapacity(jobs.count)
        tokens.reserveCapacity(jobs.count)
        let at = SystemClock.wallMicroseconds()
        // The state is lent in place: called through the class's property, each decision and
        // fold copied the state's arrays first (five retains and releases a command).
        lendState { state in
            for attempt in jobs {
                let job = attempt.job
                if let key = job.command.key, let row = keyed[key] {
                    let result = CommandQueue.replay(job.command, key: key, loggedAs: row.event, row.committed)
                    answers.append(.answered(token: job.token, result, replayed: result.isSuccess))
                    answered.append(attempt)
                    continue
                }
                let event: MovieEvent
                do throws(CommandError) {
                    event = try state.decide(job.command)
                } catch {
                    answers.append(.answered(token: job.token, .failure(StoreError(error)), replayed: false))
                    answered.append(attempt)
                    continue
                }
                let seq = state.lastSeq + 1
                guard let movie = state.apply(event, seq: seq) else {
                    preconditionFailure("decided event \(event) does not apply")
                }
                let payload = event.payload(after: movie, undoes: job.command.undoes)
                seqs.append(Int64(seq))
                streams.append(event.movieID)
                kinds.append(event.kind)
                payloads.append(payload)
                ats.append(at)
                keyColumn.append(job.command.key)
                tokens.append(attempt.token)
                accepted.append(
                    Accepted(
                        attempt: attempt, event: event,
                        committed: CommittedEvent(
                            seq: seq, kind: event.kind, movie: movie, at: at, undoes: job.command.undoes)))
                if let key = job.command.key {
                    // A later command of the batch with the same key replays this one.
                    keyed[key] = PostgresSchema.Row(
                        seq: seq, event: event, committed: accepted.last!.committed, key: key)
                }
            }
        }
        guard !accepted.isEmpty else {
            // Nothing to append. The lock's transaction ends with a WAL record of its own and a
            // commit that waits for the flush (`--durability full`): the other daemons' events
            // read under the lock, and the refusals decided against them, are then on disk.
            do throws(PGFailure) {
                _ = try conn.run([(.flush, []), (.commit, [])])
            } catch .lost(let why) {
                // Nothing was written by this transaction; whether what it read is on disk is
                // not known: the commands are answered as if the database were unreachable.
                lost(why)
                return emit(
                    answered.map { .answered(token: $0.job.token, .failure(unavailable), replayed: false) })
            } catch {
                rollback(conn)
                dropUnflushed()
                let e = StoreError(.storage, "PostgreSQL refused the transaction: \(error.message)")
                return emit(answered.map { .answered(token: $0.job.token, .failure(e), replayed: false) })
            }
            lastReadToHead = SystemClock.monotonicNanoseconds()
            return handOver(answers)
        }
        let n = state.lastSeq
        var notifyBlockOpen = false
        // The other daemons' events read under the lock go to the loop as soon as the WAL is on
        // disk past them: mostly their own daemons' flushes have put them there by the time
        // this one has decided, and they need not wait for this transaction's flush
        // (docs/postgres.md, "Handing over what other daemons wrote"). How far the WAL is on
        // disk is asked first, and sent back at once, while the append runs.
        let early = durability == .full && !unflushed.isEmpty && readBefore != nil ? 0 : -1
        let shift = early + 1  // the steps below are one further on behind it
        do throws(PGFailure) {
            // The second round trip: the append, COMMIT (which releases the head's lock without
            // waiting for the WAL flush), the flush in a transaction of its own, then the
            // notification in another (`PGStatement.notify` says why not in the flush's); the
            // reply to it comes once everything above is on disk.
            _ = try commitPath.run(
                conn,
                (early == 0 ? [(.walFlushed, [])] : []) + [
                    (
                        .append,
                        [
                            .int64s(seqs), .texts(streams), .texts(kinds), .byteas(payloads), .int64s(ats),
                            .texts(keyColumn), .texts(tokens), .int64(Int64(n)),
                        ]
                    ),
                    (.commit, []),
                    (.begin, []), (.flush, []), (.commit, []),
                    (.begin, []), (.notify, [.int64(Int64(n))]), (.commit, []),
                ], early: early
            ) { rows in
                guard let flushed = rows?.int64(0, 0), let readBefore,
                    UInt64(bitPattern: flushed) >= readBefore
                else { return }
                handOver(through: head)
            }
            notifyFailed = false
        } catch .lost(let why) {
            // In doubt: COMMIT was sent. Found after the reconnection, or decided again; so are
            // the commands answered without a write (their answers rested on what this
            // transaction read, which the flush did not confirm).
            for attempt in jobs {
                inDoubt[attempt.token] = attempt.job
                inDoubtOrder.append(attempt.token)
            }
            return lost(why)
        } catch {
            if let step = conn.failedStep.map({ $0 - shift }), step >= 5 {
                // Committed and on disk; only the notification was refused: by the statement
                // (a role without EXECUTE on pg_notify), or at its COMMIT (a full NOTIFY queue,
                // which NOTIFY finds at commit). The other daemons read these events on their
                // safety-net timer. A refusal before its COMMIT leaves the block open, aborted:
                // rolled back after the handover below.
                notifyBlockOpen = step < 7
                if !notifyFailed {
                    notifyFailed = true
                    emit([
                        .note(
                            StoreNote(
                                .warning,
                                "notifying the other daemons failed; they read new events on their timer until a notification succeeds",
                                reason: error.message))
                    ])
                }
            } else if let step = conn.failedStep.map({ $0 - shift }), (2...4).contains(step) {
                // COMMIT succeeded and the flush after it was refused: the commands are in the
                // log and whether they are on disk is unknown. A server that refuses
                // pg_logical_emit_message refuses it at start (`PostgresStore.open`), so this
                // is a server in trouble: the daemon stops (systemd restarts it from the log).
                let e = StoreError(
                    .storage,
                    "the outcome is unknown: PostgreSQL committed and then refused to flush (\(error.message)); retry with the same key to find out"
                )
                emit(
                    (accepted.map(\.attempt.job) + answered.map(\.job)).map {
                        .answered(token: $0.token, .failure(e), replayed: false)
                    })
                // A refusal inside the flush's BEGIN … COMMIT leaves that block open, aborted.
                if step < 4 { rollback(conn) }
                return fatal(StoreError(.storage, "PostgreSQL refused to flush a commit: \(error.message)"))
            } else {
                rollback(conn)
                dropUnflushed()
                let e = StoreError(.storage, "PostgreSQL refused the commit: \(error.message)")
                emit(
                    answers
                        + accepted.map {
                            .answered(token: $0.attempt.job.token, .failure(e), replayed: false)
                        })
                return
            }
        }
        lastReadToHead = SystemClock.monotonicNanoseconds()
        handOver(
            accepted.map {
                .applied($0.committed, $0.event, key: $0.attempt.job.command.key, token: $0.attempt.job.token)
            }
                + answers)
        // After the handover: what it handed over is on disk, whatever the rollback does to the
        // connection.
        if notifyBlockOpen { rollback(conn) }
    }

    /// Reads the state again when a failed transaction left it ahead of the database; false
    /// when that failed (the connection is lost, or the store stopped).
    private func stateIsCurrent(_ conn: PGConnection) -> Bool {
        guard let p = reloadTo else { return true }
        do throws(StoreError) {
            state = try PostgresSchema.load(conn, upTo: p).state
            reloadTo = nil
            return true
        } catch {
            if conn.isBroken { lost(error.message) } else { fatal(error) }
            return false
        }
    }

    /// The parameters of `eventsBetween` for the `count` positions after `after`.
    private static func range(after: UInt64, count: Int) -> [PGParam] {
        let from = Int64(clamping: after)
        let (to, overflow) = from.addingReportingOverflow(Int64(max(count, 0)))
        return [.int64(from), .int64(overflow ? Int64.max : to)]
    }

    /// The head in a result of `headAndWALEnd`, `lockHead` or `head`.
    private static func head(_ r: PGResult?) -> UInt64? {
        guard let r, r.count == 1, let h = r.int64(0, 0), h >= 0 else { return nil }
        return UInt64(h)
    }

    private func rollback(_ conn: PGConnection) {
        do throws(PGFailure) {
            _ = try conn.execute("ROLLBACK")
        } catch {
            lost(error.message)
        }
    }

    // MARK: - Snapshots

    private func maybeSnapshot() {
        guard let conn, !failed, reloadTo == nil, state.lastSeq >= snapshotSeq + snapshotEvery else { return }
        let seq = state.lastSeq
        do throws(PGFailure) {
            _ = try conn.execute(
                """
                INSERT INTO swiped_snapshots VALUES (\(seq), \(PGBytes.literal(state.snapshotBytes()))) ON CONFLICT DO NOTHING;
                DELETE FROM swiped_snapshots WHERE seq < (SELECT min(seq) FROM (SELECT seq FROM swiped_snapshots ORDER BY seq DESC LIMIT 2) s)
                """)
            snapshotSeq = seq
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

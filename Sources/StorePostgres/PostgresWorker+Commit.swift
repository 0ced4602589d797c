// The PostgreSQL store thread's transaction: a group of commands decided and appended in one
// transaction under the appends' locks, in two round trips (docs/postgres.md: commit order is
// position order, decisions hold across daemons). `commit` runs it as named steps:
//   1. `lock`: BEGIN, the locks, the head and the WAL's end, the events other daemons appended
//      since and the keys in the log (the first round trip), and the rest of the events when
//      more than a page;
//   2. `joinLate`: the commands handed over meanwhile join, with their keys; `takeInDoubt`: the
//      commands in doubt not found in the log are decided again, first;
//   3. `decide`: each command against the state, into the INSERT's columns or an answer;
//   4. `endWithoutAppending` when nothing was accepted; else `append`: the append, COMMIT, the
//      flush and the notification (the second round trip), and what a refusal at each means.
// Each step that ends the transaction early (failed, rolled back, lost) says so by returning nil
// or false, having answered what it must.
import Movies
import Plumbing
import StoreCore

extension PostgresWorker {
    /// A transaction under way: its commands, each with its commit token.
    struct Transaction {
        /// As handed over by the loop: answered at once when the transaction fails before COMMIT.
        var batch: [Job]
        /// The commands it decides, with their commit tokens: the batch, and in front of it,
        /// once read under the lock, the commands in doubt that are not in the log.
        var attempts: [Attempt]
        /// The keys of the batch and of the commands in doubt, looked up in the log.
        var keys: Set<String>
    }

    /// What the first round trip found under the locks.
    struct Locked {
        /// swiped_head, locked: `state` has been read up to it.
        var head: UInt64
        /// Where the WAL ended before this transaction's records, when every event read under
        /// the locks committed before it; nil when the head moved between the two locks (`lock`).
        var readBefore: UInt64?
        /// The events the keys asked for wrote.
        var keyRows: [PGResult]
    }

    /// What deciding a transaction's commands gave.
    struct Decided {
        /// The answers of the commands answered without a write (refused, replayed from a key):
        /// decided against events that may not be on disk yet, so they are held with them.
        var answers: [Output] = []
        /// Those commands.
        var answered: [Attempt] = []
        /// The commands appended, with their events.
        var accepted: [Accepted] = []
        /// The INSERT's columns, one element per accepted command.
        var columns: AppendColumns

        init(capacity: Int) {
            answers.reserveCapacity(capacity)
            accepted.reserveCapacity(capacity)
            columns = AppendColumns(capacity: capacity)
        }
    }

    /// The INSERT's columns (`PGStatement.append`). Sized once: grown by appending, the columns
    /// were reallocated about twice a command.
    struct AppendColumns {
        var seqs: [Int64] = []
        var streams: [String?] = []
        var kinds: [String?] = []
        var payloads: [[UInt8]] = []
        var ats: [Int64] = []
        var keys: [String?] = []
        var tokens: [String?] = []
        var authors: [String?] = []

        init(capacity n: Int) {
            seqs.reserveCapacity(n)
            streams.reserveCapacity(n)
            kinds.reserveCapacity(n)
            payloads.reserveCapacity(n)
            ats.reserveCapacity(n)
            keys.reserveCapacity(n)
            tokens.reserveCapacity(n)
            authors.reserveCapacity(n)
        }

        /// `append`'s parameters, with `head` the new head.
        func parameters(head: UInt64) -> [PGParam] {
            [
                .int64s(seqs), .texts(streams), .texts(kinds), .byteas(payloads), .int64s(ats), .texts(keys),
                .texts(tokens), .texts(authors), .int64(Int64(head)),
            ]
        }
    }

    /// The second round trip's statements: the append, COMMIT (which releases the head's lock
    /// without waiting for the WAL flush), the flush in a transaction of its own, then the
    /// notification in another (`PGStatement.notify` says why not in the flush's); the reply
    /// to it comes once everything before it is on disk. Each statement's place is kept, so
    /// that a refusal is read by what was refused.
    struct AppendPipeline {
        /// Which part of the pipeline the server refused.
        enum Refusal {
            /// The append or its COMMIT (or asking how far the WAL is flushed): nothing written.
            case commit
            /// The flush after COMMIT: the events are in the log, whether on disk is unknown.
            /// `blockOpen`: refused before its COMMIT, which leaves its block open, aborted.
            case flush(blockOpen: Bool)
            /// Only the notification: the events are committed and on disk. `blockOpen`: as
            /// for the flush.
            case notify(blockOpen: Bool)
        }

        private(set) var statements = PGPipeline(capacity: 9)
        /// Where `walFlushed` is, whose rows the server sends at once (`run`'s `early`); -1
        /// when it is not asked.
        private(set) var walFlushedAt = -1
        private var flushBegin = 0
        private var flushCommit = 0
        private var notifyBegin = 0
        private var notifyCommit = 0

        init(_ columns: AppendColumns, head: UInt64, askingWALFlushed: Bool) {
            if askingWALFlushed { walFlushedAt = statements.add(.walFlushed) }
            statements.add(.append, columns.parameters(head: head))
            statements.add(.commit)
            flushBegin = statements.add(.begin)
            statements.add(.flush)
            flushCommit = statements.add(.commit)
            notifyBegin = statements.add(.begin)
            statements.add(.notify, [.int64(Int64(head))])
            notifyCommit = statements.add(.commit)
        }

        /// What a refusal at `step` (`PGConnection.failedStep`; nil: not known) refused.
        func refusal(at step: Int?) -> Refusal {
            guard let step else { return .commit }
            if step >= notifyBegin { return .notify(blockOpen: step < notifyCommit) }
            if step >= flushBegin { return .flush(blockOpen: step < flushCommit) }
            return .commit
        }
    }

    // MARK: - The steps

    /// Decides and appends `batch` (after the commands in doubt that are not in the log) in one
    /// transaction under swiped_head's lock.
    func commit(_ batch: [Job]) {
        guard let conn, stateIsCurrent(conn) else {
            // Nothing was sent: these were not written.
            return emit(batch.map { .answered(token: $0.token, .failure(unavailable), replayed: false) })
        }
        var tx = Transaction(batch: batch, attempts: [], keys: [])
        for j in batch {
            tx.attempts.append(Attempt(job: j, token: nextToken()))
        }
        // Commands in doubt: under the lock, every transaction that held it has ended, so an
        // in-doubt commit is either among the events read there or never happened.
        for t in inDoubtOrder { if let k = inDoubt[t]?.command.key { tx.keys.insert(k) } }
        for j in batch { if let k = j.command.key { tx.keys.insert(k) } }
        guard let locked = lock(conn, tx) else { return }
        guard let lateRows = joinLate(conn, &tx) else { return }
        takeInDoubt(&tx)
        guard var keyed = rowsByKey(locked.keyRows + lateRows, conn) else { return }
        let at = SystemClock.wallMicroseconds()
        // The state is lent in place: called through the class's property, each decision and
        // fold copied the state's arrays first (five retains and releases a command).
        let decided = lendState { PostgresWorker.decide(tx.attempts, keyed: &keyed, at: at, state: &$0) }
        if decided.accepted.isEmpty { return endWithoutAppending(conn, decided) }
        append(conn, decided, tx.attempts, locked)
    }

    /// Step 1, the first round trip: BEGIN, the locks with the head and the WAL's end between
    /// them, the events other daemons appended since (read after the locks, by a statement of
    /// its own, so that its snapshot has them), the keys; then the rest of the events when more
    /// than a page. Nil when the transaction ended here.
    func lock(_ conn: PGConnection, _ tx: Transaction) -> Locked? {
        var p = PGPipeline(capacity: 7)
        p.add(.begin)
        p.add(.appendLock)
        let walEndAt = p.add(.headAndWALEnd)
        let headAt = p.add(.lockHead)
        let eventsAt = p.add(
            .eventsBetween, PostgresWorker.range(after: state.lastSeq, count: PostgresSchema.page))
        let keysAt = tx.keys.isEmpty ? nil : p.add(.eventsWithKeys, [.texts(Array(tx.keys))])
        if listening {
            // Busy: notifications stop with this transaction's commit (`listening`).
            p.add(.unlisten)
            listening = false
        }
        let r: [PGResult?]
        do throws(PGFailure) {
            r = try conn.run(p.steps)
        } catch {
            failedBeforeCommit(tx.batch, error, conn)
            return nil
        }
        guard r.count == p.steps.count, let head = PostgresWorker.head(r[headAt]),
            let before = PostgresWorker.head(r[walEndAt]), let walEnd = r[walEndAt]?.int64(0, 1)
        else {
            rollback(conn)
            fatal(StoreError(.storage, "swiped_head cannot be read"))
            return nil
        }
        // Every event read below committed before `walEnd`, unless the head moved between the
        // two locks: a daemon of an earlier build, which takes only the row lock, committed
        // after that WAL end was read. Then they wait for this transaction's own flush.
        let readBefore = head == before ? UInt64(bitPattern: walEnd) : nil
        guard applyRows(r[eventsAt]) else {
            rollback(conn)
            return nil
        }
        guard readRest(conn, tx.batch, head: head, read: r[eventsAt]?.count ?? 0) else { return nil }
        guard head == state.lastSeq else {
            rollback(conn)
            fatal(
                StoreError(
                    .storage,
                    "swiped_head says \(head), the events end at \(state.lastSeq): the log is damaged"))
            return nil
        }
        return Locked(
            head: head, readBefore: readBefore, keyRows: keysAt.flatMap { r[$0] }.map { [$0] } ?? [])
    }

    /// Step 1's end, when more than a page behind (rare: a daemon catches up whenever it is
    /// idle): the rest of the events up to `head`. False when the transaction ended here.
    func readRest(_ conn: PGConnection, _ batch: [Job], head: UInt64, read: Int) -> Bool {
        var read = read
        while head > state.lastSeq && read == PostgresSchema.page {
            do throws(PGFailure) {
                let more = try conn.run([
                    (.eventsBetween, PostgresWorker.range(after: state.lastSeq, count: PostgresSchema.page))
                ])
                guard applyRows(more[0]) else {
                    rollback(conn)
                    return false
                }
                read = more[0]?.count ?? 0
            } catch {
                failedBeforeCommit(batch, error, conn)
                return false
            }
        }
        return true
    }

    /// Step 2: what this daemon's clients sent while it waited for the lock (other daemons'
    /// transactions, one after another) joins this transaction: taken before the lock, a batch
    /// stayed as small as what came in during one transaction, ≈ 4 commands where 16 clients
    /// were waiting, and the transactions, one at a time across all daemons, are what the
    /// throughput is made of. Returns the events their new keys wrote; nil when the transaction
    /// ended here.
    func joinLate(_ conn: PGConnection, _ tx: inout Transaction) -> [PGResult]? {
        let late = takeLateJobs()
        guard !late.isEmpty else { return [] }
        for j in late {
            tx.attempts.append(Attempt(job: j, token: nextToken()))
        }
        tx.batch += late
        let lateKeys = Set(late.compactMap(\.command.key)).subtracting(tx.keys)
        guard !lateKeys.isEmpty else { return [] }
        do throws(PGFailure) {
            return try conn.run([(.eventsWithKeys, [.texts(Array(lateKeys))])]).compactMap { $0 }
        } catch {
            failedBeforeCommit(tx.batch, error, conn)
            return nil
        }
    }

    /// Step 2's end: what was in doubt and is not among the events read under the lock was not
    /// committed: it is decided again, first (it is the older).
    func takeInDoubt(_ tx: inout Transaction) {
        guard !inDoubtOrder.isEmpty else { return }
        tx.attempts =
            inDoubtOrder.compactMap { t in inDoubt[t].map { Attempt(job: $0, token: t) } } + tx.attempts
        inDoubt = [:]
        inDoubtOrder = []
    }

    /// The events in `results` (read by key), by key; nil when one cannot be read (the store
    /// stopped).
    func rowsByKey(_ results: [PGResult], _ conn: PGConnection) -> [String: PostgresSchema.Row]? {
        var keyed: [String: PostgresSchema.Row] = [:]
        for result in results {
            for i in 0..<result.count {
                do throws(StoreError) {
                    let row = try PostgresSchema.Row(result, i)
                    if let k = row.key { keyed[k] = row }
                } catch {
                    rollback(conn)
                    fatal(error)
                    return nil
                }
            }
        }
        return keyed
    }

    /// Step 3: decides each command against `state` (folding what it accepts, at `at`), after
    /// the keys in the log (`keyed`, which the accepted commands' keys join).
    ///
    /// The second decision of a command: the loop decided it at submit against its projection
    /// (`CommandQueue.decide`), which may be out of date, since another daemon may have written
    /// since (added the movie, moved its version, used the key). Here `state` has caught up to
    /// the head under the appends' lock, so this decision is the one that holds across daemons.
    /// It is made by the same function as every store's (`CommandDecision.decide`), on the
    /// fresher state: only where it is made, and the key looked up in the database, differ.
    static func decide(
        _ attempts: [Attempt], keyed: inout [String: PostgresSchema.Row], at: Int64, state: inout MovieState
    ) -> Decided {
        var d = Decided(capacity: attempts.count)
        for attempt in attempts {
            let job = attempt.job
            let logged = job.command.key.flatMap { keyed[$0] }.map {
                (event: $0.event, committed: $0.committed)
            }
            let seq = state.lastSeq + 1
            let event: MovieEvent
            let movie: Movie
            switch CommandDecision.decide(job.command, logged: logged, in: &state) {
            case .replayed(let result):
                d.answers.append(.answered(token: job.token, result, replayed: result.isSuccess))
                d.answered.append(attempt)
                continue
            case .refused(let error):
                d.answers.append(.answered(token: job.token, .failure(StoreError(error)), replayed: false))
                d.answered.append(attempt)
                continue
            case .accepted(let accepted, let after):
                guard let after else { preconditionFailure("decided event \(accepted) does not apply") }
                event = accepted
                movie = after
            }
            let payload = event.payload(after: movie, undoes: job.command.undoes)
            d.columns.seqs.append(Int64(seq))
            d.columns.streams.append(event.movieID)
            d.columns.kinds.append(event.kind.rawValue)
            d.columns.payloads.append(payload)
            d.columns.ats.append(at)
            d.columns.keys.append(job.command.key)
            d.columns.tokens.append(attempt.token)
            d.columns.authors.append(job.command.by)
            d.accepted.append(
                Accepted(
                    attempt: attempt, event: event,
                    committed: CommittedEvent(
                        seq: seq, kind: event.kind, movie: movie, at: at, undoes: job.command.undoes,
                        by: job.command.by, to: event.to, from: event.from)))
            if let key = job.command.key {
                // A later command of the batch with the same key replays this one.
                keyed[key] = PostgresSchema.Row(
                    seq: seq, event: event, committed: d.accepted[d.accepted.count - 1].committed, key: key)
            }
        }
        return d
    }

    /// Step 4, nothing to append. The lock's transaction ends with a WAL record of its own and
    /// a commit that waits for the flush (`--durability full`): the other daemons' events read
    /// under the lock, and the refusals decided against them, are then on disk.
    func endWithoutAppending(_ conn: PGConnection, _ d: Decided) {
        do throws(PGFailure) {
            _ = try conn.run([(.flush, []), (.commit, [])])
        } catch .lost(let why) {
            // Nothing was written by this transaction; whether what it read is on disk is not
            // known: the commands are answered as if the database were unreachable.
            lost(why)
            return emit(
                d.answered.map { .answered(token: $0.job.token, .failure(unavailable), replayed: false) })
        } catch {
            rollback(conn)
            dropUnflushed()
            let e = StoreError(.storage, "PostgreSQL refused the transaction: \(error.message)")
            return emit(d.answered.map { .answered(token: $0.job.token, .failure(e), replayed: false) })
        }
        lastReadToHead = SystemClock.monotonicNanoseconds()
        meters?.readToHead(at: lastReadToHead)
        handOver(d.answers)
    }

    /// Step 4, the second round trip (`AppendPipeline`). The other daemons' events read under
    /// the lock go to the loop as soon as the WAL is on disk past them: mostly their own
    /// daemons' flushes have put them there by the time this one has decided, and they need not
    /// wait for this transaction's flush (docs/postgres.md, "Handing over what other daemons
    /// wrote"). How far the WAL is on disk is asked first, and sent back at once, while the
    /// append runs.
    func append(_ conn: PGConnection, _ d: Decided, _ attempts: [Attempt], _ locked: Locked) {
        let pipeline = AppendPipeline(
            d.columns, head: state.lastSeq,
            askingWALFlushed: durability == .full && !unflushed.isEmpty && locked.readBefore != nil)
        var notifyBlockOpen = false
        do throws(PGFailure) {
            _ = try commitPath.run(conn, pipeline.statements.steps, early: pipeline.walFlushedAt) { rows in
                guard let flushed = rows?.int64(0, 0), let readBefore = locked.readBefore,
                    UInt64(bitPattern: flushed) >= readBefore
                else { return }
                handOver(through: locked.head)
            }
            notifyFailed = false
        } catch .lost(let why) {
            if conn.cancelled { return commitCancelled(d, why) }
            // In doubt: COMMIT was sent. Found after the reconnection, or decided again; so are
            // the commands answered without a write (their answers rested on what this
            // transaction read, which the flush did not confirm).
            for attempt in attempts {
                inDoubt[attempt.token] = attempt.job
                inDoubtOrder.append(attempt.token)
            }
            return lost(why)
        } catch {
            switch pipeline.refusal(at: conn.failedStep) {
            case .notify(let blockOpen):
                // Committed and on disk: the handover below goes on; the block a refusal before
                // its COMMIT left open is rolled back after it.
                notifyBlockOpen = blockOpen
                notifyRefused(error)
            case .flush(let blockOpen):
                return flushRefused(conn, d, error, blockOpen: blockOpen)
            case .commit:
                return commitRefused(conn, d, error)
            }
        }
        lastReadToHead = SystemClock.monotonicNanoseconds()
        meters?.readToHead(at: lastReadToHead)
        meters?.committed(nanoseconds: lastReadToHead &- commitBegan, events: d.accepted.count)
        handOver(
            d.accepted.map {
                .applied($0.committed, $0.event, key: $0.attempt.job.command.key, token: $0.attempt.job.token)
            }
                + d.answers)
        // After the handover: what it handed over is on disk, whatever the rollback does to the
        // connection.
        if notifyBlockOpen { rollback(conn) }
    }

    /// The commit's round trip was not answered in time and was cancelled
    /// (`PGConnection.cancelled`): mostly a commit waiting for a synchronous standby that does
    /// not confirm it (a partition between the servers), which PostgreSQL then returns as
    /// committed, on the primary alone, where a failover loses it. Its commands are answered
    /// now, in doubt, never `ok`: waiting for the standby would keep their clients waiting
    /// for as long as the partition lasts, and it may never come back. The commands answered
    /// without a write wrote nothing: `unavailable`. Nothing is handed over; the events, if
    /// committed, are read again and handed over after a flush that the standby confirmed.
    func commitCancelled(_ d: Decided, _ why: String) {
        let e = StoreError(
            .storage,
            "the outcome is unknown: PostgreSQL did not confirm the commit within \(PGConnection.cancelAfterNanos / 1_000_000_000) s (a synchronous standby that does not answer, or the server unreachable); it may be committed on the primary alone; retry with the same key to find out"
        )
        lost(why)
        emit(
            d.accepted.map { .answered(token: $0.attempt.job.token, .failure(e), replayed: false) }
                + d.answered.map { .answered(token: $0.job.token, .failure(unavailable), replayed: false) })
    }

    /// Only the notification was refused: by the statement (a role without EXECUTE on
    /// pg_notify), or at its COMMIT (a full NOTIFY queue, which NOTIFY finds at commit). The
    /// other daemons read these events on their safety-net timer (warned once until a
    /// notification succeeds).
    func notifyRefused(_ error: PGFailure) {
        guard !notifyFailed else { return }
        notifyFailed = true
        emit([
            .note(
                StoreNote(
                    .warning,
                    "notifying the other daemons failed; they read new events on their timer until a notification succeeds",
                    reason: error.message))
        ])
    }

    /// COMMIT succeeded and the flush after it was refused: the commands are in the log and
    /// whether they are on disk is unknown. A server that refuses pg_logical_emit_message
    /// refuses it at start (`PostgresStore.open`), so this is a server in trouble: the daemon
    /// stops (systemd restarts it from the log).
    func flushRefused(_ conn: PGConnection, _ d: Decided, _ error: PGFailure, blockOpen: Bool) {
        let e = StoreError(
            .storage,
            "the outcome is unknown: PostgreSQL committed and then refused to flush (\(error.message)); retry with the same key to find out"
        )
        emit(
            (d.accepted.map(\.attempt.job) + d.answered.map(\.job)).map {
                .answered(token: $0.token, .failure(e), replayed: false)
            })
        if blockOpen { rollback(conn) }
        fatal(StoreError(.storage, "PostgreSQL refused to flush a commit: \(error.message)"))
    }

    /// The append or its COMMIT was refused: nothing of the transaction is written.
    func commitRefused(_ conn: PGConnection, _ d: Decided, _ error: PGFailure) {
        rollback(conn)
        dropUnflushed()
        let e = StoreError(.storage, "PostgreSQL refused the commit: \(error.message)")
        emit(
            d.answers
                + d.accepted.map { .answered(token: $0.attempt.job.token, .failure(e), replayed: false) })
    }

    // MARK: - Helpers

    /// A statement before COMMIT failed: nothing of the transaction is written. A lost
    /// connection makes the batch `unavailable` (try again); a refusal by the server, `storage`.
    func failedBeforeCommit(_ batch: [Job], _ error: PGFailure, _ conn: PGConnection) {
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

    /// Reads the state again when a failed transaction left it ahead of the database; false
    /// when that failed (the connection is lost, or the store stopped).
    func stateIsCurrent(_ conn: PGConnection) -> Bool {
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
    static func range(after: UInt64, count: Int) -> [PGParam] {
        let from = Int64(clamping: after)
        let (to, overflow) = from.addingReportingOverflow(Int64(max(count, 0)))
        return [.int64(from), .int64(overflow ? Int64.max : to)]
    }

    /// The head in a result of `headAndWALEnd`, `lockHead` or `head`.
    static func head(_ r: PGResult?) -> UInt64? {
        guard let r, r.count == 1, let h = r.int64(0, 0), h >= 0 else { return nil }
        return UInt64(h)
    }

    func rollback(_ conn: PGConnection) {
        do throws(PGFailure) {
            _ = try conn.execute("ROLLBACK")
        } catch {
            lost(error.message)
        }
    }
}

import CSQLite
import Foundation
import Glibc
import Metrics
import Plumbing

/// Group commit on a dedicated writer thread with its own connection.
///
/// The owner's event loop calls `submit` (never blocks on I/O), watches `completionFD` (an
/// eventfd) and calls `drain()` when it is readable. The writer takes everything queued, commits
/// it in ONE transaction (one fsync for many batches), posts one completion per batch and
/// signals the eventfd. After a slow commit (a disk in a busy spell) it first waits a moment for
/// the clients that commit answered (`CommitHold`).
///
/// Failure semantics: when a transaction fails, every batch in it fails with the same error, and
/// every batch submitted after it fails with `.aborted` until the owner calls `resume()` (its
/// validation assumed the failed events; it must decide again). After `.io` the committer never
/// writes again: the owner must stop and exit non-zero.
public final class GroupCommitter: @unchecked Sendable {
    public struct Completion: Sendable {
        public let token: UInt64
        public let result: Result<[StoredEvent], LogError>
    }

    private enum Job {
        case batch([NewEvent], token: UInt64)
        case snapshot(seq: UInt64, data: [UInt8], token: UInt64)

        var token: UInt64 {
            switch self {
            case .batch(_, let t), .snapshot(_, _, let t): return t
            }
        }
    }

    public let path: String
    /// Readable (non-zero counter) when completions are waiting; `drain()` resets it.
    public var completionFD: Int32 { doorbell.fd }
    private let doorbell: Doorbell

    private let cond = NSCondition()
    // Guarded by `cond`.
    private var queue: [Job] = []
    /// The events in `queue`'s batches (what a `CommitHold` waits for).
    private var queuedEvents = 0
    private var completed: [Completion] = []
    private var halted: LogError?
    private var closing = false
    private var running = true
    private var started = false
    private var scheduling: String?
    private var statistics = Statistics()

    /// Owned by the writer thread while it runs.
    private let log: EventLog
    private let holdPolicy: CommitHold.Policy
    /// The transactions' durations and events, for `status` and `/metrics` (nil: not measured).
    private let meters: CommitMeters?

    /// Counters for benchmarks and tests.
    public struct Statistics: Sendable, Equatable {
        public var transactions = 0
        public var batches = 0
        public var events = 0
    }

    /// Opens (creating if needed) the log at `path` with its own connection and starts the writer.
    public convenience init(path: String, durability: Durability = .full, meters: CommitMeters? = nil)
        throws(LogError)
    {
        try self.init(path: path, durability: durability, hold: .standard, meters: meters)
    }

    /// The same, with how slow commits hold the next one (`CommitHold`): tests set it.
    package init(path: String, durability: Durability, hold: CommitHold.Policy, meters: CommitMeters? = nil)
        throws(LogError)
    {
        self.path = path
        holdPolicy = hold
        self.meters = meters
        log = try EventLog(path: path, durability: durability)
        do throws(PlumbingError) {
            doorbell = try Doorbell(path)
        } catch {
            log.close()
            throw .other(error.message)
        }
        let thread = Thread { [self] in self.run() }
        thread.start()
        cond.lock()
        while !started { cond.wait() }
        cond.unlock()
    }

    /// Why the writer thread runs with the default scheduling policy rather than SCHED_BATCH
    /// (see `yieldToOwner`), or nil when it runs with SCHED_BATCH.
    public var schedulingNote: String? {
        cond.lock()
        defer { cond.unlock() }
        return scheduling
    }

    /// Puts the calling thread (the writer) in SCHED_BATCH: the same share of the CPU as any
    /// other thread of its nice level, but its wake-ups never preempt the running thread.
    ///
    /// Why: the writer wakes when a batch is handed over and when an fsync completes. With the
    /// default policy each wake-up on the owner's CPU preempts the event loop mid-iteration, and
    /// the two threads take turns at the cost of a context switch each way. In SCHED_BATCH the
    /// writer runs when the loop waits for input, so the loop answers everything that is ready
    /// first: under durable toggles at 16 x 1 on one CPU, context switches per toggle went from
    /// 0.8 to 0.4 and the daemon's CPU per toggle from 21 to 15 us (BENCHMARKS.md). Gestures lose
    /// nothing: they never wait for a commit. Only a lower priority is asked for, which needs no
    /// privilege; where a sandbox forbids the call the default stays and the owner is told.
    private static func yieldToOwner() -> String? {
        var parameters = sched_param()
        parameters.sched_priority = 0
        // SCHED_BATCH (3): <sched.h> defines it only under _GNU_SOURCE, which Swift does not see.
        let schedBatch: Int32 = 3
        guard sched_setscheduler(0, schedBatch, &parameters) != 0 else { return nil }
        return "sched_setscheduler(SCHED_BATCH): \(String(cString: strerror(errno)))"
    }

    /// The writer thread holds the committer until `close()`: call it.
    deinit {
        close()
        doorbell.close()
    }

    // MARK: - Owner side

    /// Queues `batch`; its completion carries `token`. Never blocks on I/O.
    public func submit(_ batch: [NewEvent], token: UInt64) {
        enqueue(.batch(batch, token: token))
    }

    /// Saves a snapshot through the writer (after everything submitted before it); its
    /// completion carries `token` and no events. A failed snapshot does not halt the committer
    /// (except `.io`, which is fatal as always).
    public func saveSnapshot(seq: UInt64, data: [UInt8], token: UInt64) {
        enqueue(.snapshot(seq: seq, data: data, token: token))
    }

    private func enqueue(_ job: Job) {
        cond.lock()
        if closing {
            completed.append(
                Completion(token: job.token, result: .failure(.closed("\(path): the committer is closed"))))
            doorbell.ring()
            cond.unlock()
            return
        }
        queue.append(job)
        if case .batch(let events, _) = job { queuedEvents += events.count }
        cond.signal()
        cond.unlock()
    }

    /// The completions posted so far, in commit order. Also resets the eventfd.
    ///
    /// The eventfd is written and reset only under the lock, together with `completed`: so it
    /// is readable exactly when completions wait, and a drain that finds none costs no syscall
    /// (the owner may call this once per loop iteration, readable or not).
    public func drain() -> [Completion] {
        cond.lock()
        defer { cond.unlock() }
        guard !completed.isEmpty else { return [] }
        doorbell.reset()
        let out = completed
        completed = []
        return out
    }

    /// Blocks until completions are waiting or `timeoutMs` passes (-1: forever). For owners
    /// without an event loop (tests, benchmarks, close).
    @discardableResult
    public func wait(timeoutMs: Int32 = -1) -> Bool {
        var p = pollfd(fd: completionFD, events: Int16(POLLIN), revents: 0)
        while true {
            let r = poll(&p, 1, timeoutMs)
            if r < 0 && errno == EINTR { continue }
            return r > 0
        }
    }

    /// Lets batches through again after a failure (not after `.io`).
    public func resume() {
        cond.lock()
        if let h = halted, !h.isFatal { halted = nil }
        cond.unlock()
    }

    /// The error that halted the committer, if any.
    public var haltedBy: LogError? {
        cond.lock()
        defer { cond.unlock() }
        return halted
    }

    public var stats: Statistics {
        cond.lock()
        defer { cond.unlock() }
        return statistics
    }

    /// Commits everything submitted so far, then stops the writer thread and closes its
    /// connection. Completions stay available to `drain()`. Idempotent.
    public func close() {
        cond.lock()
        closing = true
        cond.broadcast()
        while running { cond.wait() }
        cond.unlock()
    }

    // MARK: - Writer thread

    private func run() {
        // As `top -H` and /proc/PID/task/TID/comm show it.
        nameCurrentThread("swiped-log-wr")
        let note = GroupCommitter.yieldToOwner()
        cond.lock()
        scheduling = note
        started = true
        cond.broadcast()
        cond.unlock()
        var hold: CommitHold?
        while true {
            cond.lock()
            while queue.isEmpty && !closing { cond.wait() }
            if let h = hold {
                // The last commit was slow: its clients get a moment to come back (CommitHold).
                hold = nil
                while !closing && queuedEvents < h.events {
                    let now = SystemClock.monotonicNanoseconds()
                    guard now < h.deadline else { break }
                    _ = cond.wait(until: Date(timeIntervalSinceNow: Double(h.deadline - now) / 1e9))
                }
            }
            if queue.isEmpty {
                running = false
                cond.broadcast()
                cond.unlock()
                break
            }
            let jobs = queue
            queue = []
            queuedEvents = 0
            let haltedNow = halted
            cond.unlock()
            let began = SystemClock.monotonicNanoseconds()

            var out: [Completion] = []
            var newHalt: LogError?
            var batches: [[NewEvent]] = []
            var tokens: [UInt64] = []
            for case .batch(let events, let token) in jobs {
                batches.append(events)
                tokens.append(token)
            }
            var committed = 0
            if !batches.isEmpty {
                if let h = haltedNow {
                    let e: LogError =
                        h.isFatal
                        ? h
                        : .aborted(
                            "not written: an earlier batch failed (\(h.message)); waiting for resume()")
                    for t in tokens { out.append(Completion(token: t, result: .failure(e))) }
                } else {
                    let results = log.appendBatches(batches)
                    for (t, r) in zip(tokens, results) {
                        out.append(Completion(token: t, result: r))
                        switch r {
                        case .success(let ev): committed += ev.count
                        case .failure(let e): if newHalt == nil { newHalt = e }
                        }
                    }
                }
            }
            for case .snapshot(let seq, let data, let token) in jobs {
                if let h = newHalt ?? haltedNow, h.isFatal {
                    out.append(Completion(token: token, result: .failure(h)))
                    continue
                }
                do throws(LogError) {
                    try log.saveSnapshot(seq: seq, data: data)
                    meters?.savedSnapshot(seq: seq)
                    out.append(Completion(token: token, result: .success([])))
                } catch {
                    if error.isFatal && newHalt == nil { newHalt = error }
                    out.append(Completion(token: token, result: .failure(error)))
                }
            }

            cond.lock()
            if let newHalt, !(halted?.isFatal ?? false) { halted = newHalt }
            if haltedNow == nil && !batches.isEmpty {
                statistics.transactions += 1
                statistics.batches += batches.count
                statistics.events += committed
            }
            completed.append(contentsOf: out)
            doorbell.ring()  // under `cond` (see `drain`)
            let ended = SystemClock.monotonicNanoseconds()
            if haltedNow == nil && !batches.isEmpty {
                meters?.committed(nanoseconds: ended - began, events: committed)
            }
            hold = CommitHold.after(
                duration: ended - began, committed: committed, queued: queuedEvents, now: ended,
                policy: holdPolicy)
            cond.unlock()
        }
        log.close()
    }
}

extension GroupCommitter.Completion: Equatable {}

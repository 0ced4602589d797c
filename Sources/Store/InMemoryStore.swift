// A store that keeps its log in memory: the fake a Session's tests use, and a second
// implementation the contract tests hold to the same outcomes as the SQLite one.
import CSQLite
import EventLog
import Glibc
import Movies

/// The movie catalogue with its log in memory. Behaves as `SQLiteStore` does on every outcome:
/// commands are decided at `submit` against the projected state (refusals and key replays are
/// answered by the next `completions()`); `flush()` hands them on; the next `completions()`
/// commits them, in order, as one transaction, and answers reads from the log. Test hooks make a
/// commit fail, refuse a command at commit (as a store shared with another daemon may), or hold
/// commits until released.
public final class InMemoryStore: Store {
    private var state = MovieState()
    private var projected = MovieState()
    private var log: [CommittedEvent] = []
    /// Key to the seq and event it wrote.
    private var keys: [String: (seq: UInt64, event: MovieEvent)] = [:]
    private var lastAt: Int64 = 0

    private struct Entry {
        var token: UInt64
        var command: MovieCommand
        var event: MovieEvent
        var waiters: [UInt64] = []
    }
    /// Decided, not yet flushed; flushed, not yet committed.
    private var queued: [Entry] = []
    private var flushed: [Entry] = []
    private var answered: [CommandResult] = []
    private var answeredReads: [ReadResult] = []
    private var reads: [(token: UInt64, after: UInt64, limit: Int)] = []
    private var fatal: StoreError?
    private var closed = false
    private var submitted = 0
    private var reported = 0
    private let doorbell: Int32

    // MARK: - Test hooks

    /// While set, `completions()` commits nothing (what is flushed waits, as behind a slow disk).
    public var holdsCommits = false {
        didSet { if !holdsCommits && !flushed.isEmpty { ring() } }
    }
    private var failure: StoreError?
    private var refusals: [StoreError] = []

    /// Makes the next commit fail with `error` (default: the disk is full): everything in it
    /// fails, what was decided behind it is decided again. A `fatal` error stops the store.
    public func failNextCommit(
        _ error: StoreError = StoreError(.storage, "the disk is full; nothing was saved")
    ) {
        failure = error
    }

    /// Makes the next command to be committed fail with `error` though it was accepted (another
    /// daemon changed the movie first): nothing is written for it, and the commands behind it
    /// are decided again. Several calls refuse as many commands, in order.
    public func refuseAtCommit(
        _ error: StoreError = StoreError(.conflict, "the movie was changed by another daemon")
    ) {
        refusals.append(error)
    }

    // MARK: - Opening

    /// A new store holding the seed catalogue, as a new SQLite store does.
    public init() {
        doorbell = swiped_eventfd()
        precondition(doorbell >= 0, "eventfd failed: \(String(cString: strerror(errno)))")
        for event in MovieState.seedCatalogue {
            commit(event, key: nil)
        }
        projected = state
    }

    deinit { Glibc.close(doorbell) }

    // MARK: - Store

    public var latestSeq: UInt64 { state.lastSeq }
    public func withState<R>(_ body: (borrowing MovieState) -> R) -> R { body(state) }
    public var pendingCount: Int { submitted - reported }
    public var completionFD: Int32 { doorbell }
    public var startupFields: [(String, String)] {
        [("MOVIES", "\(state.movies.count)"), ("SEQ", "\(state.lastSeq)"), ("SEEDED", "yes")]
    }
    public var startupNotes: [StoreNote] { [] }

    public func submit(_ command: MovieCommand, token: UInt64) {
        submitted += 1
        if let fatal { return answer(token, .failure(fatal)) }
        if closed { return answer(token, .failure(.closed)) }
        if let key = command.key, answeredByKey(key, command, token: token) { return }
        do throws(CommandError) {
            let event = try projected.decide(command)
            projected.apply(event, seq: projected.lastSeq + 1)
            queued.append(Entry(token: token, command: command, event: event))
        } catch {
            answer(token, .failure(StoreError(error)))
        }
    }

    public func read(_ request: StoreRead, token: UInt64) {
        switch request {
        case .events(let after, let limit):
            guard !closed else {
                return answeredReads.append(ReadResult(token: token, result: .failure(.closed)))
            }
            guard after < state.lastSeq, limit > 0 else {
                return answeredReads.append(ReadResult(token: token, result: .success([])))
            }
            reads.append((token, after, limit))
            ring()
        }
    }

    public func flush() {
        guard !queued.isEmpty, fatal == nil else { return }
        flushed += queued
        queued = []
        if !holdsCommits { ring() }
    }

    public func completions() -> Completions {
        var out = Completions()
        swap(&out.commands, &answered)
        swap(&out.reads, &answeredReads)
        var counter: UInt64 = 0
        _ = withUnsafeMutableBytes(of: &counter) { Glibc.read(doorbell, $0.baseAddress, 8) }
        if !holdsCommits && !flushed.isEmpty { commitFlushed(&out) }
        for r in reads {
            let page = log.drop { $0.seq <= r.after }.prefix(r.limit)
            out.reads.append(ReadResult(token: r.token, result: .success(Array(page))))
        }
        reads = []
        reported += out.commands.count
        return out
    }

    @discardableResult
    public func close() -> Completions {
        guard !closed else { return Completions() }
        holdsCommits = false
        flush()
        let out = completions()
        closed = true
        return out
    }

    // MARK: - Commits

    private func answeredByKey(_ key: String, _ command: MovieCommand, token: UInt64) -> Bool {
        if let i = queued.firstIndex(where: { $0.command.key == key }) {
            return join(&queued[i], key, command, token)
        }
        if let i = flushed.firstIndex(where: { $0.command.key == key }) {
            return join(&flushed[i], key, command, token)
        }
        guard let (seq, event) = keys[key] else { return false }
        if command.wrote(event) {
            answer(token, .success(log[Int(seq) - 1]), replayed: true)
        } else {
            answer(token, .failure(.keyReused(key)))
        }
        return true
    }

    private func join(_ entry: inout Entry, _ key: String, _ command: MovieCommand, _ token: UInt64) -> Bool {
        if command.wrote(entry.event) {
            entry.waiters.append(token)
        } else {
            answer(token, .failure(.keyReused(key)))
        }
        return true
    }

    private func answer(_ token: UInt64, _ result: Result<CommittedEvent, StoreError>, replayed: Bool = false)
    {
        answered.append(CommandResult(token: token, result: result, replayed: replayed))
    }

    /// Commits what is flushed as one transaction. After a refusal the commands behind it, in
    /// this commit and queued, are decided again against the committed state, as after a
    /// failed commit.
    private func commitFlushed(_ out: inout Completions) {
        let batch = flushed
        flushed = []
        if let error = failure {
            failure = nil
            fail(batch, error, &out)
            if error.fatal { return goFatal(error, &out) }
            return decideQueuedAgain(&out)
        }
        var again = false
        for var entry in batch {
            if !refusals.isEmpty {
                fail([entry], refusals.removeFirst(), &out)
                again = true
                continue
            }
            if again {
                do throws(CommandError) {
                    entry.event = try state.decide(entry.command)
                } catch {
                    fail([entry], StoreError(error), &out)
                    continue
                }
            }
            let ce = commit(entry.event, key: entry.command.key)
            out.committed.append(ce)
            out.commands.append(CommandResult(token: entry.token, result: .success(ce)))
            for t in entry.waiters {
                out.commands.append(CommandResult(token: t, result: .success(ce), replayed: true))
            }
        }
        if again { decideQueuedAgain(&out) }
    }

    @discardableResult
    private func commit(_ event: MovieEvent, key: String?) -> CommittedEvent {
        let seq = state.lastSeq + 1
        guard let movie = state.apply(event, seq: seq) else {
            preconditionFailure("decided event \(event) does not apply to the committed state")
        }
        lastAt = max(lastAt, SystemClock.wallMicroseconds())
        let ce = CommittedEvent(seq: seq, kind: event.kind, movie: movie, at: lastAt)
        log.append(ce)
        if let key { keys[key] = (seq, event) }
        return ce
    }

    private func decideQueuedAgain(_ out: inout Completions) {
        projected = state
        let again = queued
        queued = []
        for var entry in again {
            do throws(CommandError) {
                entry.event = try projected.decide(entry.command)
                projected.apply(entry.event, seq: projected.lastSeq + 1)
                queued.append(entry)
            } catch {
                fail([entry], StoreError(error), &out)
            }
        }
    }

    private func fail(_ entries: [Entry], _ error: StoreError, _ out: inout Completions) {
        for e in entries {
            out.commands.append(CommandResult(token: e.token, result: .failure(error)))
            for t in e.waiters {
                out.commands.append(CommandResult(token: t, result: .failure(error), replayed: true))
            }
        }
    }

    private func goFatal(_ error: StoreError, _ out: inout Completions) {
        fatal = error
        out.fatal = error
        fail(queued, error, &out)
        queued = []
        projected = state
    }

    private func ring() {
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { Glibc.write(doorbell, $0.baseAddress, 8) }
    }
}

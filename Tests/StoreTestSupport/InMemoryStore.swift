// A store that keeps its log in memory: the fake a Session's tests use, and a second
// implementation the contract tests hold to the same outcomes as the SQLite one.
import EventLog
import Movies
import Plumbing
import StoreCore

/// The movie catalogue with its log in memory. Behaves as `SQLiteStore` does on every outcome:
/// commands are decided at `submit` against the projected state (refusals and key replays are
/// answered by the next `completions()`); `flush()` hands them on; the next `completions()`
/// commits them, in order, as one transaction, and answers reads from the log. Test hooks make a
/// commit fail, refuse a command at commit (as a store shared with another daemon may), or hold
/// commits until released.
public final class InMemoryStore: Store {
    private var state = MovieState()
    /// Decided, not yet flushed (`commands.queued`).
    private var commands = CommandQueue(projecting: MovieState())
    private var log: [CommittedEvent] = []
    /// Key to the seq and event it wrote.
    private var keys: [String: (seq: UInt64, event: MovieEvent)] = [:]
    private var lastAt: Int64 = 0

    /// Flushed, not yet committed.
    private var flushed: [CommandQueue.Entry] = []
    private var answeredReads: [ReadResult] = []
    private var reads: [(token: UInt64, request: StoreRead)] = []
    private var fatal: StoreError?
    private var closed = false
    private var submitted = 0
    private var reported = 0
    private let doorbell: Doorbell

    // MARK: - Test hooks

    /// While set, `completions()` commits nothing (what is flushed waits, as behind a slow disk).
    public var holdsCommits = false {
        didSet { if !holdsCommits && !flushed.isEmpty { doorbell.ring() } }
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
        do throws(PlumbingError) {
            doorbell = try Doorbell("the in-memory store")
        } catch {
            preconditionFailure(error.message)
        }
        for event in MovieState.seedCatalogue {
            commit(event, key: nil)
        }
        commands = CommandQueue(projecting: state)
    }

    deinit { doorbell.close() }

    // MARK: - Store

    public var latestSeq: UInt64 { state.lastSeq }
    /// The same for every in-memory store, so that two sessions on two stores greet alike
    /// (SessionLanesTests compares them byte for byte); a test of ids sets its own.
    public var logID = "00000000000000000000000000000001"
    public func withState<R>(_ body: (borrowing MovieState) -> R) -> R { lendState(&state, body) }
    public var pendingCount: Int { submitted - reported }

    /// Nothing else writes it.
    public var refusesAtSubmit: Bool { true }
    public var completionFD: Int32 { doorbell.fd }
    public var startupFields: [(String, String)] {
        [("MOVIES", "\(state.movies.count)"), ("SEQ", "\(state.lastSeq)"), ("SEEDED", "yes")]
    }
    public var startupNotes: [StoreNote] { [] }

    public func submit(_ command: consuming MovieCommand, token: UInt64) {
        submitted += 1
        if let fatal { return commands.answer(token, .failure(fatal)) }
        if closed { return commands.answer(token, .failure(.closed)) }
        if let key = command.key, answeredByKey(key, command, token: token) { return }
        commands.decide(command, token: token)
    }

    public func read(_ request: StoreRead, token: UInt64) {
        let (after, limit) =
            switch request {
            case .events(let after, let limit), .eventsBy(_, let after, let limit): (after, limit)
            }
        if let r = ReadResult.withoutReading(
            token: token, after: after, limit: limit, closed: closed, latestSeq: state.lastSeq)
        {
            return answeredReads.append(r)
        }
        reads.append((token, request))
        doorbell.ring()
    }

    public func flush() {
        guard !commands.queued.isEmpty, fatal == nil else { return }
        flushed += commands.queued
        commands.queued = []
        if !holdsCommits { doorbell.ring() }
    }

    public func completions() -> Completions {
        var out = Completions()
        swap(&out.commands, &commands.answered)
        swap(&out.reads, &answeredReads)
        doorbell.reset()
        if !holdsCommits && !flushed.isEmpty { commitFlushed(&out) }
        for r in reads {
            let page =
                switch r.request {
                case .events(let after, let limit):
                    Array(log.drop { $0.seq <= after }.prefix(limit))
                case .eventsBy(let person, let after, let limit):
                    Array(log.drop { $0.seq <= after }.lazy.filter { $0.by == person }.prefix(limit))
                }
            out.reads.append(ReadResult(token: r.token, result: .success(page)))
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
        if commands.join(key, command, token: token) { return true }
        if commands.join(key, command, token: token, among: &flushed) { return true }
        guard let (seq, event) = keys[key] else { return false }
        commands.answer(token, command, key: key, loggedAs: event, log[Int(seq) - 1])
        return true
    }

    /// Commits what is flushed as one transaction. After a refusal the commands behind it, in
    /// this commit and queued, are decided again against the committed state, as after a
    /// failed commit.
    private func commitFlushed(_ out: inout Completions) {
        let batch = flushed
        flushed = []
        if let error = failure {
            failure = nil
            CommandQueue.fail(batch, error, &out)
            if error.fatal { return goFatal(error, &out) }
            return commands.redecide(after: state, &out)
        }
        var again = false
        for entry in batch {
            if !refusals.isEmpty {
                entry.report(.failure(refusals.removeFirst()), into: &out)
                again = true
                continue
            }
            let event: MovieEvent
            if !again, let decided = entry.event {
                event = decided
            } else {
                do throws(CommandError) {
                    event = try state.decide(entry.command)
                } catch {
                    entry.report(.failure(StoreError(error)), into: &out)
                    continue
                }
            }
            let ce = commit(event, key: entry.command.key, undoes: entry.command.undoes, by: entry.command.by)
            out.committed.append(ce)
            entry.report(.success(ce), into: &out)
        }
        if again { commands.redecide(after: state, &out) }
    }

    @discardableResult
    private func commit(_ event: MovieEvent, key: String?, undoes: UInt64? = nil, by: String? = nil)
        -> CommittedEvent
    {
        let seq = state.lastSeq + 1
        guard let movie = state.apply(event, seq: seq) else {
            preconditionFailure("decided event \(event) does not apply to the committed state")
        }
        lastAt = max(lastAt, SystemClock.wallMicroseconds())
        let ce = CommittedEvent(
            seq: seq, kind: event.kind, movie: movie, at: lastAt, undoes: undoes, by: by,
            to: event.to, from: event.from)
        log.append(ce)
        if let key { keys[key] = (seq, event) }
        return ce
    }

    private func goFatal(_ error: StoreError, _ out: inout Completions) {
        fatal = error
        out.fatal = error
        commands.failAll(error, reverting: state, &out)
    }
}

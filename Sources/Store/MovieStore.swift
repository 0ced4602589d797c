import EventLog
import Foundation
import Glibc
import Movies

extension StoreError {
    init(_ e: CommandError) {
        switch e {
        case .notFound(let m): self.init(.notFound, m)
        case .badRequest(let m): self.init(.badRequest, m)
        case .conflict(let m): self.init(.conflict, m)
        }
    }

    init(_ e: LogError) {
        switch e {
        case .full(let m): self.init(.storage, "the disk is full; nothing was saved (\(m))")
        case .io(let m):
            self.init(.storage, "I/O error writing the event log; the daemon stops (\(m))", fatal: true)
        case .keyConflict(let m): self.init(.internal, "idempotency key already in the log (\(m))")
        default: self.init(.storage, e.message)
        }
    }
}

/// What `submit` did with a command.
public enum Submitted: Equatable, Sendable {
    /// Answered at once: an error (nothing written) or the replay of an idempotency key
    /// (nothing written; the original seq and the movie as it was after that event).
    case done(Result<CommittedEvent, StoreError>)
    /// Decided and queued; its `CommandResult` comes from `completions()` once durable.
    case pending
}

/// The movie catalogue on a durable event log, owned by the daemon's single-threaded loop.
///
/// Commands are decided at once against the *projected* state (committed plus pending), so
/// errors come back immediately; accepted ones are handed to a `GroupCommitter` once per loop
/// iteration, which commits whatever it finds queued in one transaction (so those that arrive
/// during a commit share the next one). When `completionFD` is readable
/// the loop calls `completions()`, which applies committed events to `state` and reports them.
public final class MovieStore {
    public let directory: String
    public let path: String
    public let durability: Durability
    /// A snapshot is saved after this many events (and on close).
    public let snapshotEvery: UInt64

    /// The committed state: what clients see.
    public private(set) var state: MovieState

    /// `state.movie(id)`, without a copy of the whole state on the way (this runs for every
    /// gesture: reading `store.state` from outside copies its arrays and dictionaries, retain by
    /// retain).
    public func movie(_ id: String) -> Movie? { withState { $0.movie(id) } }

    /// Lends the state to `body` in place: a read of the stored property itself would copy it
    /// (a retain and a release per array, dictionary and set in it).
    @inline(__always)
    private func withState<R>(_ body: (borrowing MovieState) -> R) -> R { body(state) }
    /// Set once the log failed with an I/O error.
    public private(set) var fatal: StoreError?

    /// What start-up did.
    public struct Startup: Equatable, Sendable {
        public var snapshotSeq: UInt64 = 0
        public var replayed = 0
        public var seeded = false
        public var snapshotIgnored: String?
        public var micros: Int64 = 0
    }
    public private(set) var startup = Startup()

    private struct Entry {
        var token: UInt64
        var command: MovieCommand
        var event: MovieEvent
        /// The movie right after the event, as projected (stored with the event for history).
        var after: Movie?
        var waiters: [UInt64] = []  // later submissions with the same key
    }

    private var projected: MovieState
    private let reader: EventLog
    private let committer: GroupCommitter
    /// A group of entries handed to the writer together (one `submit`, one completion).
    private struct Batch {
        var token: UInt64
        var entries: [Entry]
    }

    /// Decided, not yet handed to the writer.
    private var queued: [Entry] = []
    /// Handed to the writer, in submission (and so commit) order. Several may be in flight: the
    /// writer starts the next transaction as soon as one is durable, without waiting for this
    /// thread to collect the completion and hand it more (one round trip between the two
    /// threads, and two context switches, per transaction fewer).
    private var inFlight: [Batch] = []
    /// A commit failed: the batches submitted after it come back `.aborted` (the writer holds
    /// until `resume()`). Their entries wait here, and new ones in `queued`, until every batch
    /// in flight is back; then all are decided again against the committed state.
    private var recovering = false
    private var aborted: [Entry] = []
    private var batchToken: UInt64 = 0
    private var snapshotSeq: UInt64 = 0
    private var snapshotInFlight: UInt64?
    private var closed = false
    private let lock: DirectoryLock
    private static let snapshotTokenBit: UInt64 = 1 << 63

    // MARK: - Opening

    /// Opens `<directory>/events.sqlite3` (creating both when missing), appends the seed
    /// catalogue when the log is empty, loads the newest snapshot and folds the events after it.
    public static func open(
        directory: String, durability: Durability = .full,
        snapshotEvery: UInt64 = 10_000
    ) throws(StoreError) -> MovieStore {
        try MovieStore(directory: directory, durability: durability, snapshotEvery: snapshotEvery)
    }

    private init(directory: String, durability: Durability, snapshotEvery: UInt64) throws(StoreError) {
        let start = EventLogClock.micros()
        self.directory = directory
        self.path = directory + "/events.sqlite3"
        self.durability = durability
        self.snapshotEvery = max(1, snapshotEvery)
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw StoreError(
                .storage, "\(directory): cannot create the state directory: \(error.localizedDescription)")
        }
        let lock = try DirectoryLock(directory)
        var info = Startup()
        var state = MovieState()
        let reader: EventLog
        do {
            reader = try EventLog(path: path, durability: durability)
            let latest = try reader.latestSeq()
            if let snap = try reader.latestSnapshot() {
                do throws(MovieDecodingError) {
                    let s = try MovieState(snapshot: snap.data)
                    if s.lastSeq == snap.seq && snap.seq <= latest {
                        state = s
                        info.snapshotSeq = snap.seq
                    } else {
                        info.snapshotIgnored =
                            "snapshot at \(snap.seq) does not match the log (latest \(latest))"
                    }
                } catch {
                    info.snapshotIgnored = "snapshot at \(snap.seq) cannot be decoded: \(error.message)"
                }
            }
            var bad: String?
            var replayed = 0
            try reader.forEachEvent(after: state.lastSeq) { e in
                do throws(MovieDecodingError) {
                    let ev = try MovieEvent(stream: e.stream, kind: e.kind, payload: e.payload)
                    guard e.seq == state.lastSeq + 1 else {
                        bad = "gap in the log: event \(e.seq) follows \(state.lastSeq)"
                        return false
                    }
                    state.apply(ev, seq: e.seq)
                    replayed += 1
                    return true
                } catch {
                    bad = "event \(e.seq) cannot be decoded: \(error.message)"
                    return false
                }
            }
            if let bad { throw StoreError(.internal, "\(path): \(bad); refusing to start") }
            info.replayed = replayed
            if latest == 0 {
                let stored = try reader.append(
                    MovieState.seedCatalogue.map {
                        NewEvent(stream: $0.movieID, kind: $0.kind, payload: $0.payload)
                    })
                for (e, s) in zip(MovieState.seedCatalogue, stored) { state.apply(e, seq: s.seq) }
                info.seeded = true
            } else if state.lastSeq != latest {
                throw StoreError(.internal, "\(path): replay ended at \(state.lastSeq), the log at \(latest)")
            }
        } catch let e as LogError {
            throw StoreError(.storage, e.message, fatal: e.isFatal)
        } catch let e as StoreError {
            throw e
        } catch {
            throw StoreError(.internal, "\(error)")
        }
        let committer: GroupCommitter
        do throws(LogError) {
            committer = try GroupCommitter(path: path, durability: durability)
        } catch {
            reader.close()
            throw StoreError(.storage, error.message, fatal: error.isFatal)
        }
        self.reader = reader
        self.committer = committer
        self.lock = lock
        self.state = state
        self.projected = state
        self.snapshotSeq = info.snapshotSeq
        info.micros = EventLogClock.micros() - start
        self.startup = info
        // A log replayed at length gets a snapshot now, in the background.
        if info.replayed >= Int(self.snapshotEvery) { maybeSnapshot(force: true) }
    }

    deinit { close() }

    // MARK: - Commands

    /// Why the log's writer thread has the default scheduling policy, or nil when it has
    /// SCHED_BATCH (`GroupCommitter.schedulingNote`).
    public var writerSchedulingNote: String? { committer.schedulingNote }

    /// Readable when `completions()` has something: watch it in the event loop.
    public var completionFD: Int32 { committer.completionFD }

    /// The last committed sequence number (what clients have seen).
    public var latestSeq: UInt64 { state.lastSeq }

    /// Number of commands decided but not yet durable.
    public var pendingCount: Int {
        inFlight.reduce(queued.count + aborted.count) { $0 + $1.entries.count }
    }

    /// Decides `command` against the projected state and returns at once.
    public func submit(_ command: MovieCommand, token: UInt64) -> Submitted {
        if let fatal { return .done(.failure(fatal)) }
        if closed { return .done(.failure(StoreError(.internal, "the store is closed"))) }
        if let key = command.key {
            if let i = queued.firstIndex(where: { $0.command.key == key }) {
                guard MovieStore.matches(command, queued[i].event) else {
                    return .done(.failure(keyReused(key)))
                }
                queued[i].waiters.append(token)
                return .pending
            }
            if let i = aborted.firstIndex(where: { $0.command.key == key }) {
                guard MovieStore.matches(command, aborted[i].event) else {
                    return .done(.failure(keyReused(key)))
                }
                aborted[i].waiters.append(token)
                return .pending
            }
            for b in inFlight.indices {
                guard let i = inFlight[b].entries.firstIndex(where: { $0.command.key == key }) else {
                    continue
                }
                guard MovieStore.matches(command, inFlight[b].entries[i].event) else {
                    return .done(.failure(keyReused(key)))
                }
                inFlight[b].entries[i].waiters.append(token)
                return .pending
            }
            do throws(StoreError) {
                if let replay = try replay(key: key, command: command) { return .done(.success(replay)) }
            } catch {
                return .done(.failure(error))
            }
        }
        let event: MovieEvent
        do throws(CommandError) {
            event = try projected.decide(command)
        } catch {
            return .done(.failure(StoreError(error)))
        }
        let after = projected.apply(event, seq: projected.lastSeq + 1)
        queued.append(Entry(token: token, command: command, event: event, after: after))
        if flushesAtOnce { flushQueued() }
        return .pending
    }

    /// Whether `submit` hands each command to the writer at once. An event loop sets it to
    /// false and calls `flush()` once per iteration instead: one hand-over (one lock, one
    /// wake-up of the writer) for the commands of every client that became readable together.
    public var flushesAtOnce = true

    /// Hands what is queued to the writer (it commits whatever it finds queued when it starts a
    /// transaction, so batches handed over while a commit is under way share the next one).
    public func flush() {
        flushQueued()
    }

    private func keyReused(_ key: String) -> StoreError {
        StoreError(.conflict, "key \(String(reflecting: key)) was already used for a different command")
    }

    /// Whether `command`, sent again with a key, is the command that wrote `event` under that
    /// key: the same kind on the same movie, or an add of the same title and image (a missing
    /// image being the id, as `decide` makes it). One rule for pending and committed keys.
    private static func matches(_ command: MovieCommand, _ event: MovieEvent) -> Bool {
        switch (command.op, event) {
        case (.add(let title, let image), .added(let id, let t, let i)):
            return title == t && (image ?? id) == i
        case (.toggleWatched(let m), .watchedToggled(let id)),
            (.toggleWatchedWithFriends(let m), .watchedWithFriendsToggled(let id)),
            (.remove(let m), .removed(let id)):
            return m == id
        default:
            return false
        }
    }

    /// The original result of a key already in the log, or nil when the key is new.
    private func replay(key: String, command: MovieCommand) throws(StoreError) -> CommittedEvent? {
        let stored: StoredEvent?
        do throws(LogError) {
            stored = try reader.event(forKey: key)
        } catch {
            throw StoreError(error)
        }
        guard let stored, stored.seq <= state.lastSeq else { return nil }
        let event: MovieEvent
        do throws(MovieDecodingError) {
            event = try MovieEvent(stream: stored.stream, kind: stored.kind, payload: stored.payload)
        } catch {
            throw StoreError(.internal, "\(path): event \(stored.seq) cannot be decoded: \(error.message)")
        }
        guard MovieStore.matches(command, event) else { throw keyReused(key) }
        return try committedEvents([stored]).first
    }

    private func flushQueued() {
        guard !queued.isEmpty, fatal == nil, !recovering else { return }
        batchToken += 1
        committer.submit(
            queued.map {
                NewEvent(
                    stream: $0.event.movieID, kind: $0.event.kind,
                    payload: $0.after.map($0.event.payload(after:)) ?? $0.event.payload, key: $0.command.key)
            }, token: batchToken)
        inFlight.append(Batch(token: batchToken, entries: queued))
        queued = []
    }

    /// Collects what the writer finished: call when `completionFD` is readable.
    public func completions() -> Completions {
        var out = Completions()
        for c in committer.drain() {
            if c.token & MovieStore.snapshotTokenBit != 0 {
                switch c.result {
                case .success:
                    if let s = snapshotInFlight { snapshotSeq = max(snapshotSeq, s) }
                case .failure(let e):
                    if e.isFatal { goFatal(StoreError(e), &out) }
                }
                snapshotInFlight = nil
                continue
            }
            guard let first = inFlight.first, c.token == first.token else { continue }
            inFlight.removeFirst()
            let batch = first.entries
            switch c.result {
            case .success(let stored):
                // The committer writes nothing between a failure and `resume()`, which comes only
                // once every batch in flight is back.
                assert(!recovering, "a batch committed behind a failed one")
                for (entry, s) in zip(batch, stored) {
                    precondition(s.seq == state.lastSeq + 1, "log seq \(s.seq) after state \(state.lastSeq)")
                    guard let movie = state.apply(entry.event, seq: s.seq) else {
                        preconditionFailure(
                            "decided event \(entry.event) does not apply to the committed state")
                    }
                    let ce = CommittedEvent(seq: s.seq, kind: s.kind, movie: movie, at: s.at)
                    out.committed.append(ce)
                    out.commands.append(CommandResult(token: entry.token, result: .success(ce)))
                    for t in entry.waiters {
                        out.commands.append(CommandResult(token: t, result: .success(ce)))
                    }
                }
            case .failure(let e) where e.isFatal:
                fail(batch, StoreError(e), &out)
                goFatal(StoreError(e), &out)
            case .failure(.aborted) where recovering:
                // Not written because an earlier batch failed: decided on top of it, so decide again.
                aborted += batch
            case .failure(let e):
                // The commit failed (a batch in the same transaction fails with the same error).
                fail(batch, StoreError(e), &out)
                recovering = true
            }
        }
        if recovering && inFlight.isEmpty && fatal == nil {
            recovering = false
            committer.resume()
            projected = state
            let again = aborted + queued
            aborted = []
            queued = []
            for var entry in again {
                do throws(CommandError) {
                    entry.event = try projected.decide(entry.command)
                    entry.after = projected.apply(entry.event, seq: projected.lastSeq + 1)
                    queued.append(entry)
                } catch {
                    fail([entry], StoreError(error), &out)
                }
            }
        }
        if fatal == nil {
            flushQueued()
            maybeSnapshot()
        }
        return out
    }

    private func fail(_ entries: [Entry], _ error: StoreError, _ out: inout Completions) {
        for e in entries {
            out.commands.append(CommandResult(token: e.token, result: .failure(error)))
            for t in e.waiters { out.commands.append(CommandResult(token: t, result: .failure(error))) }
        }
    }

    private func goFatal(_ error: StoreError, _ out: inout Completions) {
        var error = error
        error.fatal = true
        fatal = error
        out.fatal = error
        fail(inFlight.flatMap(\.entries) + aborted + queued, error, &out)
        inFlight = []
        aborted = []
        queued = []
        projected = state
    }

    private func maybeSnapshot(force: Bool = false) {
        guard snapshotInFlight == nil, state.lastSeq > snapshotSeq,
            force || state.lastSeq - snapshotSeq >= snapshotEvery
        else { return }
        snapshotInFlight = state.lastSeq
        committer.saveSnapshot(
            seq: state.lastSeq, data: state.snapshotBytes(),
            token: MovieStore.snapshotTokenBit | state.lastSeq)
    }

    // MARK: - Reads

    /// Committed events with seq > `after`, at most `limit`, each with the movie right after it.
    public func history(after: UInt64, limit: Int) throws(StoreError) -> [CommittedEvent] {
        guard after < state.lastSeq, limit > 0 else { return [] }
        let stored: [StoredEvent]
        do throws(LogError) {
            stored = try reader.events(after: after, limit: min(limit, Int(state.lastSeq - after)))
        } catch {
            throw StoreError(error)
        }
        return try committedEvents(stored)
    }

    /// Decodes stored events and finds each one's movie: the current movie when it is still at
    /// that version, else the fold of its stream up to that seq.
    private func committedEvents(_ stored: [StoredEvent]) throws(StoreError) -> [CommittedEvent] {
        var out: [CommittedEvent] = []
        out.reserveCapacity(stored.count)
        var folded: [String: [UInt64: Movie]] = [:]
        for e in stored {
            if let m = try? MovieEvent.movieAfter(
                stream: e.stream, kind: e.kind, payload: e.payload, seq: e.seq)
            {
                out.append(CommittedEvent(seq: e.seq, kind: e.kind, movie: m, at: e.at))
                continue
            }
            if let m = state.movie(e.stream), m.version == e.seq {
                out.append(CommittedEvent(seq: e.seq, kind: e.kind, movie: m, at: e.at))
                continue
            }
            if folded[e.stream]?[e.seq] == nil {
                let upTo = stored.last { $0.stream == e.stream }!.seq
                var s = MovieState()
                var movies: [UInt64: Movie] = [:]
                do throws(LogError) {
                    for x in try reader.events(stream: e.stream, upTo: upTo) {
                        guard let ev = try? MovieEvent(stream: x.stream, kind: x.kind, payload: x.payload)
                        else {
                            throw .corrupt("\(path): event \(x.seq) cannot be decoded")
                        }
                        if let m = s.apply(ev, seq: x.seq) { movies[x.seq] = m }
                    }
                } catch {
                    throw StoreError(error)
                }
                folded[e.stream] = movies
            }
            guard let m = folded[e.stream]?[e.seq] else {
                throw StoreError(.internal, "\(path): event \(e.seq) does not apply to movie \(e.stream)")
            }
            out.append(CommittedEvent(seq: e.seq, kind: e.kind, movie: m, at: e.at))
        }
        return out
    }

    // MARK: - Closing

    /// Finishes pending commits (their results are returned), saves a snapshot, stops the
    /// writer and closes the log. Idempotent.
    @discardableResult
    public func close() -> Completions {
        var out = Completions()
        guard !closed else { return out }
        while fatal == nil
            && (!inFlight.isEmpty || !queued.isEmpty || !aborted.isEmpty || snapshotInFlight != nil)
        {
            committer.wait(timeoutMs: 1000)
            let c = completions()
            out.commands += c.commands
            out.committed += c.committed
            out.fatal = c.fatal ?? out.fatal
        }
        closed = true
        if fatal == nil {
            maybeSnapshot(force: true)
            while snapshotInFlight != nil {
                committer.wait(timeoutMs: 1000)
                _ = completions()
            }
        }
        committer.close()
        reader.close()
        lock.release()
        return out
    }
}

/// An exclusive `flock` on `<dir>/lock`: one store per state directory, so the log has one writer.
final class DirectoryLock {
    private var fd: Int32

    init(_ directory: String) throws(StoreError) {
        let path = directory + "/lock"
        fd = Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw StoreError(
                .storage, "\(path): cannot open the lock file: \(String(cString: strerror(errno)))")
        }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let busy = errno == EWOULDBLOCK
            let why = String(cString: strerror(errno))
            Glibc.close(fd)
            fd = -1
            throw StoreError(
                .storage,
                busy
                    ? "\(directory): the state directory is in use by another process"
                    : "\(path): cannot lock: \(why)")
        }
    }

    func release() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    deinit { release() }
}

/// Wall clock in µs (UTC) for start-up timing.
enum EventLogClock {
    static func micros() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
    }
}

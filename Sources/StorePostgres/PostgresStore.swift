// The movie catalogue on an event log in PostgreSQL, shared by several daemons (issue 17;
// docs/postgres.md). This is the loop's side: it decides each command at once against its
// projected state (what no state could make right, a bad request, is answered without a round
// trip; the projection lets a client's pipelined commands follow each other) and hands every
// other command to the store thread (PostgresWorker.swift), which decides them where it
// counts, at commit, under the database's lock: a refusal of this daemon's view may be stale. The events the thread applies, this
// daemon's and the others', come back in one ordered stream and are folded here.
import Glibc
import LogTypes
import Metrics
import Movies
import StoreCore

public final class PostgresStore: Store {
    /// `PostgreSQL <db> on <host>`, for the journal (never the connection string).
    public let database: String
    public let durability: Durability

    /// The committed state: what clients see.
    var state: MovieState
    public internal(set) var fatal: StoreError?

    /// What start-up did.
    public private(set) var startup = StoreStartup()
    public let logID: String

    typealias Entry = CommandQueue.Entry

    /// Decided against the projected state (the committed state plus every command in flight)
    /// and not yet handed to the store thread (`commands.queued`); outcomes known at `submit`
    /// (`commands.answered`). A command the projection refuses (`not-found`, `conflict`) is
    /// queued undecided: another daemon may have made it right, or its key may be in the log,
    /// so the store thread decides it.
    var commands: CommandQueue
    /// Handed to the store thread and not yet answered, by token, and the order handed.
    var handed: [UInt64: Entry] = [:]
    var handedOrder: [UInt64] = []
    /// The token handed for each key handed (one at most: a command with the same key waits for
    /// it or is refused), so that a keyed command finds it without a scan.
    var handedKeys: [String: UInt64] = [:]
    /// The projection no longer follows from the committed state and what is in flight (another
    /// daemon's event arrived, or a command was refused at commit): projected again once
    /// nothing is in flight.
    var projectionStale = false
    /// Keys of the newest events applied since start (at most `keysKept`), with the event each
    /// wrote, for replays answered at once. Older keys are looked up by the store thread, in
    /// the database.
    var keys: [String: (event: MovieEvent, committed: CommittedEvent)] = [:]
    /// The keys in `keys`, oldest first from `keysHead`.
    var keyOrder: [String] = []
    var keysHead = 0
    static let keysKept = 100_000
    let worker: PostgresWorker
    var answeredReads: [ReadResult] = []
    var readsInFlight = 0
    var submitted = 0
    var reported = 0
    var closed = false
    /// Set while the database is unreachable: mutations are answered `unavailable` at once.
    public private(set) var statusNote: String?

    // MARK: - Opening

    /// Why `conninfo` must not be used (it holds a password, or does not parse), or nil. The
    /// reason never repeats the string.
    public static func refusal(conninfo: String) -> String? { PGConnection.refusal(conninfo) }

    /// Connects (blocking, before the daemon is ready), creates or migrates the schema, loads the
    /// newest snapshot and the events after it, and starts the store thread.
    /// - `safetyNetMillis`: how often a quiet daemon reads the log whatever the notifications
    ///   say (tests make it long, to see that what arrives came without it).
    /// - `relistenMillis`: how long a daemon goes without a transaction before it listens for
    ///   notifications again (it does not while it commits: docs/postgres.md, "Listening only
    ///   while quiet"). Longer than the gap between the transactions of a busy daemon (its
    ///   replies go out, its next requests come in), which would otherwise listen and read
    ///   between each two; short against the 10 ms in which issue 17 wants another daemon's
    ///   change to reach a subscriber, for the change made just after this daemon's last commit.
    public static func open(
        conninfo: String, durability: Durability = .full, snapshotEvery: UInt64 = 10_000,
        safetyNetMillis: Int32 = 1_000, relistenMillis: Int32 = 5, meters: CommitMeters? = nil
    ) throws(StoreError) -> PostgresStore {
        try PostgresStore(
            conninfo: conninfo, durability: durability, snapshotEvery: snapshotEvery,
            safetyNetMillis: safetyNetMillis, relistenMillis: relistenMillis, commitPath: PGDirectCommit(),
            meters: meters)
    }

    /// `open`, with the commits sent through `commitPath` (a test's faults: PGCommitPath.swift).
    package static func open(
        conninfo: String, durability: Durability = .full, snapshotEvery: UInt64 = 10_000,
        safetyNetMillis: Int32 = 1_000, relistenMillis: Int32 = 5, commitPath: any PGCommitPath
    ) throws(StoreError) -> PostgresStore {
        try PostgresStore(
            conninfo: conninfo, durability: durability, snapshotEvery: snapshotEvery,
            safetyNetMillis: safetyNetMillis, relistenMillis: relistenMillis, commitPath: commitPath,
            meters: nil)
    }

    private init(
        conninfo: String, durability: Durability, snapshotEvery: UInt64, safetyNetMillis: Int32,
        relistenMillis: Int32, commitPath: any PGCommitPath, meters: CommitMeters?
    ) throws(StoreError) {
        let start = SystemClock.wallMicroseconds()
        if let why = PGConnection.refusal(conninfo) {
            throw StoreError(.badRequest, "the PostgreSQL connection string \(why)")
        }
        let conn = try PGConnection(conninfo, durability: durability)
        database = conn.description
        self.durability = durability
        var info = StoreStartup()
        let migrated = try PostgresSchema.migrate(conn)
        info.seeded = migrated.seeded
        logID = migrated.logID
        let loaded = try PostgresSchema.load(conn)
        // What was just read may include a commit of another daemon whose flush has not
        // returned yet (commits release the head's lock before their flush): on disk before the
        // daemon serves it (with `--durability normal` the flush waits for nothing). This is
        // also where a server that refuses the flush's pg_logical_emit_message is found: at
        // start, not at the first commit.
        do throws(PGFailure) {
            _ = try conn.run([(.flush, [])])
        } catch {
            // The grant is named only when it is what failed (insufficient_privilege): a
            // connection lost here is the network's, and says so.
            switch error {
            case .lost(let why):
                throw StoreError(
                    .unavailable,
                    "the connection to PostgreSQL was lost while flushing its WAL at start: \(why)")
            case .failed("42501", let why):
                throw StoreError(
                    .storage,
                    "flushing PostgreSQL's WAL with pg_logical_emit_message failed (the role needs EXECUTE on it,"
                        + " which PostgreSQL grants to PUBLIC by default): \(why)")
            case .failed(_, let why):
                throw StoreError(
                    .storage, "flushing PostgreSQL's WAL with pg_logical_emit_message at start failed: \(why)"
                )
            }
        }
        state = loaded.state
        info.snapshotSeq = loaded.snapshotSeq
        info.replayed = loaded.replayed
        info.snapshotIgnored = loaded.ignored
        commands = CommandQueue(projecting: loaded.state, refusesAtSubmit: false)
        let every = max(1, snapshotEvery)
        worker = try PostgresWorker(
            connection: conn, conninfo: conninfo, logID: migrated.logID, durability: durability,
            state: loaded.state,
            // A long replay gets a snapshot at once.
            snapshotSeq: loaded.replayed >= Int(every) ? 0 : max(loaded.snapshotSeq, loaded.state.lastSeq),
            snapshotEvery: every, safetyNetMillis: max(1, safetyNetMillis),
            relistenMillis: max(0, relistenMillis), commitPath: commitPath, meters: meters)
        info.micros = SystemClock.wallMicroseconds() - start
        startup = info
    }

    deinit { close() }

    // MARK: - What the loop reads

    public var completionFD: Int32 { worker.doorbell.fd }

    public var latestSeq: UInt64 { state.lastSeq }

    @inline(__always)
    public func withState<R>(_ body: (borrowing MovieState) -> R) -> R { lendState(&state, body) }

    public var pendingCount: Int { submitted - reported }

    /// Other daemons write the log too.
    public var refusesAtSubmit: Bool { false }

    public var startupFields: [(String, String)] {
        [
            ("STORE", "postgres"), ("DATABASE", database), ("MOVIES", "\(state.movies.count)"),
            ("SEQ", "\(state.lastSeq)"), ("SNAPSHOT_SEQ", "\(startup.snapshotSeq)"),
            ("REPLAYED", "\(startup.replayed)"), ("SEEDED", startup.seeded ? "yes" : "no"),
            ("LOAD_MS", "\(startup.micros / 1000)"), ("SCHEMA_VERSION", "\(PostgresSchema.version)"),
            ("LOG_ID", logID),
        ]
    }

    public var startupNotes: [StoreNote] {
        guard let reason = startup.snapshotIgnored else { return [] }
        return [StoreNote(.warning, "snapshot ignored, replayed the whole log", reason: reason)]
    }

    // MARK: - Commands and reads

    public func submit(_ command: consuming MovieCommand, token: UInt64) {
        submitted += 1
        if let fatal { return commands.answer(token, .failure(fatal)) }
        if closed { return commands.answer(token, .failure(.closed)) }
        if statusNote != nil { return commands.answer(token, .failure(PostgresStore.unavailable)) }
        if let key = command.key, answeredByKey(key, command, token: token) { return }
        // Only what no state could make right is refused here (a blank title); anything else
        // this view refuses another daemon may already have made right (added the movie, moved
        // its version): the store thread decides it at commit, against the database's state,
        // as the decision across daemons must be.
        commands.decide(command, token: token)
    }

    static let unavailable = StoreError(
        .unavailable, "the shared database is unreachable; nothing was written, try again later")

    /// A key pending here waits for it; a key applied since start is answered from memory; else
    /// the store thread looks it up in the log at commit.
    private func answeredByKey(_ key: String, _ command: MovieCommand, token: UInt64) -> Bool {
        if commands.join(key, command, token: token) { return true }
        if let t = handedKeys[key] {
            guard handed[t] != nil else { preconditionFailure("key \(key) is handed as \(t), which is not") }
            commands.join(command, token: token, pending: &handed[t]!)
            return true
        }
        guard let original = keys[key] else { return false }
        commands.answer(token, command, key: key, loggedAs: original.event, original.committed)
        return true
    }

    public func flush() {
        guard !commands.queued.isEmpty, fatal == nil, !closed else { return }
        var jobs: [PostgresWorker.Job] = []
        jobs.reserveCapacity(commands.queued.count)
        for e in commands.queued {
            jobs.append(PostgresWorker.Job(token: e.token, command: e.command))
            if let key = e.command.key { handedKeys[key] = e.token }
            handed[e.token] = e
            handedOrder.append(e.token)
        }
        commands.queued.removeAll(keepingCapacity: true)
        worker.submit(jobs)
    }

    public func read(_ request: StoreRead, token: UInt64) {
        let (after, limit, person): (UInt64, Int, String?) =
            switch request {
            case .events(let after, let limit): (after, limit, nil)
            case .eventsBy(let person, let after, let limit): (after, limit, person)
            }
        if let r = ReadResult.withoutReading(
            token: token, after: after, limit: limit, closed: closed, latestSeq: state.lastSeq)
        {
            return answeredReads.append(r)
        }
        if statusNote != nil {
            return answeredReads.append(ReadResult(token: token, result: .failure(PostgresStore.unavailable)))
        }
        readsInFlight += 1
        worker.read(
            .init(token: token, after: after, limit: min(limit, Int(state.lastSeq - after)), person: person))
    }

    public func completions() -> Completions {
        var out = Completions()
        if !commands.answered.isEmpty { swap(&out.commands, &commands.answered) }
        if !answeredReads.isEmpty { swap(&out.reads, &answeredReads) }
        for o in worker.drain() { collect(o, &out) }
        if projectionStale && handed.isEmpty && commands.queued.isEmpty {
            commands.projected = state
            projectionStale = false
        }
        if fatal == nil && !closed { flush() }
        reported += out.commands.count
        return out
    }

    private func collect(_ o: PostgresWorker.Output, _ out: inout Completions) {
        switch o {
        case .applied(let ce, let event, let key, let token):
            guard ce.seq == state.lastSeq + 1, state.apply(event, seq: ce.seq) != nil else {
                // The store thread checked the order already: this would be a bug here.
                preconditionFailure("event \(ce.seq) does not follow the committed state at \(state.lastSeq)")
            }
            out.committed.append(ce)
            if let key { remember(key, event, ce) }
            if let token, let e = landed(token) {
                e.report(.success(ce), into: &out)
            } else {
                // Another daemon's event: the projection did not include it. Folded in at its own
                // seq (so the movie has the version clients see in its event), on top of what
                // is in flight; projected again exactly once nothing is in flight.
                projectionStale = true
                commands.projected.apply(event, seq: ce.seq)
            }
        case .answered(let token, let result, let replayed):
            guard let e = landed(token) else {
                preconditionFailure("the store thread answered \(token), which is not in flight")
            }
            projectionStale = true
            Entry.report(result, token: token, waiters: e.waiters, replayed: replayed, into: &out)
        case .read(var r):
            readsInFlight -= 1
            if case .success(let events) = r.result, let last = events.last, last.seq > state.lastSeq {
                r.result = .success(Array(events.prefix { $0.seq <= state.lastSeq }))
            }
            out.reads.append(r)
        case .connection(let note, let status):
            statusNote = status
            out.notes.append(note)
        case .note(let note):
            out.notes.append(note)
        case .fatal(let e):
            fatal = e
            out.fatal = e
        }
        if handed.count < handedOrder.count / 2 { handedOrder.removeAll { handed[$0] == nil } }
    }

    /// The command handed as `token`, now answered: no longer in flight.
    private func landed(_ token: UInt64) -> Entry? {
        guard let e = handed.removeValue(forKey: token) else { return nil }
        if let key = e.command.key { handedKeys[key] = nil }
        return e
    }

    private func remember(_ key: String, _ event: MovieEvent, _ ce: CommittedEvent) {
        keys[key] = (event, ce)
        keyOrder.append(key)
        guard keyOrder.count - keysHead > PostgresStore.keysKept else { return }
        keys[keyOrder[keysHead]] = nil
        keysHead += 1
        if keysHead >= PostgresStore.keysKept {
            keyOrder.removeFirst(keysHead)
            keysHead = 0
        }
    }

    // MARK: - Closing

    /// Finishes what was handed to the store thread (commands in doubt wait at most 5 s for the
    /// database), answers what is left, and stops the thread. Idempotent.
    @discardableResult
    public func close() -> Completions {
        guard !closed else { return Completions() }
        flush()
        var out = completions()
        closed = true
        worker.beginClose()
        while !worker.isFinished {
            var p = pollfd(fd: worker.doorbell.fd, events: Int16(POLLIN), revents: 0)
            _ = poll(&p, 1, 10)
            out.append(completions())
        }
        out.append(completions())
        worker.close()
        // Whatever the thread did not answer (it stopped after a fatal error).
        var left = Completions()
        let unknown = StoreError(.storage, "the store closed before this command's outcome was known")
        CommandQueue.fail(handedOrder.compactMap { handed[$0] }, fatal ?? unknown, &left)
        CommandQueue.fail(commands.queued, fatal ?? unknown, &left)
        handed = [:]
        handedOrder = []
        handedKeys = [:]
        commands.queued = []
        reported += left.commands.count
        out.append(left)
        return out
    }
}

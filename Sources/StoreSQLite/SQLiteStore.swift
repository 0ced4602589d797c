// The movie catalogue on a durable event log in one SQLite file: the embedded `Store`.
import CSQLite
import EventLog
import Foundation
import Glibc
import Metrics
import Movies
import Plumbing
import StoreCore

/// The movie catalogue on a durable event log, owned by the daemon's single-threaded loop.
///
/// Commands are decided at once against the *projected* state (committed plus pending); a
/// refusal, or the replay of a key already in the log, is answered by the next `completions()`.
/// Accepted ones are handed to a `GroupCommitter` by `flush()` (once per loop iteration), which
/// commits whatever it finds queued in one transaction (so those that arrive during a commit
/// share the next one). When `completionFD` is readable the loop calls `completions()`, which
/// applies committed events to the committed state and reports them. Reads run on a reader
/// thread of their own (SQLiteReader.swift).
public final class SQLiteStore: Store {
    public let directory: String
    public let path: String
    public let durability: Durability
    /// A snapshot is saved after this many events (and on close).
    public let snapshotEvery: UInt64

    /// The committed state: what clients see.
    var state: MovieState

    /// Set once the log failed with an I/O error.
    public internal(set) var fatal: StoreError?

    /// What start-up did.
    public private(set) var startup = StoreStartup()
    public let logID: String

    typealias Entry = CommandQueue.Entry

    /// A group of entries handed to the writer together (one `submit`, one completion).
    struct Batch {
        var token: UInt64
        var entries: [Entry]
    }

    /// Decided, not yet handed to the writer (`commands.queued`), and decided again after a
    /// failed commit (`commands.aborted`).
    var commands: CommandQueue
    /// The loop thread's own connection: start-up, and the key index (a local index lookup).
    let keyLog: EventLog
    let committer: GroupCommitter
    let reader: SQLiteReader
    /// An epoll descriptor over the committer's and the reader's eventfds.
    let signal: Int32
    /// Handed to the writer, in submission (and so commit) order. Several may be in flight: the
    /// writer starts the next transaction as soon as one is durable, without waiting for this
    /// thread to collect the completion and hand it more (one round trip between the two
    /// threads, and two context switches, per transaction fewer).
    var inFlight: [Batch] = []
    /// A commit failed: the batches submitted after it come back `.aborted` (the writer holds
    /// until `resume()`). Their entries wait in `commands.aborted`, and new ones in
    /// `commands.queued`, until every batch in flight is back; then all are decided again
    /// against the committed state.
    var recovering = false
    var batchToken: UInt64 = 0
    var snapshotSeq: UInt64 = 0
    var snapshotInFlight: UInt64?
    /// Outcomes of reads known at `read`, for the next `completions()`.
    var answeredReads: [ReadResult] = []
    var readsInFlight = 0
    /// Commands submitted and reported: `pendingCount` is the difference (each submit is
    /// reported exactly once).
    var submitted = 0
    var reported = 0
    var closed = false
    let lock: DirectoryLock
    /// Why the state directory is not its owner's alone, when it is not (a start-up warning).
    let openness: String?
    static let snapshotTokenBit: UInt64 = 1 << 63

    // MARK: - Opening

    /// Opens `<directory>/events.sqlite3` (creating both when missing), appends the seed
    /// catalogue when the log is empty, loads the newest snapshot and folds the events after it.
    /// `meters`: the writer thread measures each transaction there (`status`, `/metrics`).
    public static func open(
        directory: String, durability: Durability = .full, snapshotEvery: UInt64 = 10_000,
        meters: CommitMeters? = nil
    ) throws(StoreError) -> SQLiteStore {
        try SQLiteStore(
            directory: directory, durability: durability, snapshotEvery: snapshotEvery, meters: meters)
    }

    private init(directory: String, durability: Durability, snapshotEvery: UInt64, meters: CommitMeters?)
        throws(StoreError)
    {
        let start = SystemClock.wallMicroseconds()
        self.directory = directory
        self.path = directory + "/" + StateDirectory.logName
        self.durability = durability
        self.snapshotEvery = max(1, snapshotEvery)
        do {
            // 0700 whatever the umask (FileManager sets the mode after mkdir): the log is for the
            // daemon's user alone, as under the unit (StateDirectory=, DynamicUser=).
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw StoreError(
                .storage, "\(directory): cannot create the state directory: \(error.localizedDescription)")
        }
        // Checked before the lock file is made in it: a refused directory is left as it was.
        let exposure = try StateDirectory.exposure(of: directory)
        if exposure.writableByOthers {
            throw StoreError(.storage, StateDirectory.refusal(directory, exposure))
        }
        lock = try DirectoryLock(directory)
        var info = StoreStartup()
        openness = exposure.isPrivate ? nil : StateDirectory.openness(directory, exposure)
        do throws(LogError) {
            keyLog = try EventLog(path: path, durability: durability)
        } catch {
            throw StoreError(opening: error)
        }
        do throws(StoreError) {
            state = try SQLiteStore.load(keyLog, path: path, &info)
            do throws(LogError) { logID = try keyLog.logID() } catch { throw StoreError(opening: error) }
        } catch {
            keyLog.close()
            throw error
        }
        do throws(LogError) {
            committer = try GroupCommitter(path: path, durability: durability, meters: meters)
            reader = try SQLiteReader(path: path, durability: durability)
        } catch {
            keyLog.close()
            throw StoreError(opening: error)
        }
        signal = epollEither(committer.completionFD, reader.fd)
        guard signal >= 0 else {
            let why = String(cString: strerror(errno))
            keyLog.close()
            throw StoreError(.storage, "\(path): epoll_create1 failed: \(why)")
        }
        commands = CommandQueue(projecting: state)
        snapshotSeq = info.snapshotSeq
        info.micros = SystemClock.wallMicroseconds() - start
        startup = info
        // A log replayed at length gets a snapshot now, in the background.
        if info.replayed >= Int(self.snapshotEvery) { maybeSnapshot(force: true) }
    }

    /// The committed state in the log: the newest usable snapshot and the events after it, or
    /// the seed catalogue appended to an empty log.
    private static func load(_ log: EventLog, path: String, _ info: inout StoreStartup) throws(StoreError)
        -> MovieState
    {
        do {
            let latest = try log.latestSeq()
            var state = try snapshot(log, latest: latest, &info)
            var bad: String?
            try log.forEachEvent(after: state.lastSeq) { e in
                do throws(MovieDecodingError) {
                    let ev = try MovieEvent(stream: e.stream, kind: e.kind, payload: e.payload)
                    guard e.seq == state.lastSeq + 1 else {
                        bad = "gap in the log: event \(e.seq) follows \(state.lastSeq)"
                        return false
                    }
                    state.apply(ev, seq: e.seq)
                    info.replayed += 1
                    return true
                } catch {
                    bad = "event \(e.seq) cannot be decoded: \(error.message)"
                    return false
                }
            }
            if let bad { throw StoreError(.internal, "\(path): \(bad); refusing to start") }
            if latest == 0 {
                let stored = try log.append(
                    MovieState.seedCatalogue.map {
                        NewEvent(stream: $0.movieID, kind: $0.kind.rawValue, payload: $0.payload)
                    })
                for (e, s) in zip(MovieState.seedCatalogue, stored) { state.apply(e, seq: s.seq) }
                info.seeded = true
            } else if state.lastSeq != latest {
                throw StoreError(.internal, "\(path): replay ended at \(state.lastSeq), the log at \(latest)")
            }
            return state
        } catch let e as LogError {
            throw StoreError(opening: e)
        } catch let e as StoreError {
            throw e
        } catch {
            throw StoreError(.internal, "\(error)")
        }
    }

    /// The newest snapshot when it matches the log, else an empty state (and why, in `info`).
    /// An MVS1 snapshot from a build before issue 13 is not used either (it lacks the seqs of
    /// removals, `MovieState.init(snapshot:)`): the whole log is replayed once and snapshotted
    /// again in MVS2 (at once when the replay was long, on close in any case).
    private static func snapshot(_ log: EventLog, latest: UInt64, _ info: inout StoreStartup) throws(LogError)
        -> MovieState
    {
        guard let snap = try log.latestSnapshot() else { return MovieState() }
        do throws(MovieDecodingError) {
            let s = try MovieState(snapshot: snap.data)
            if s.lastSeq == snap.seq && snap.seq <= latest {
                info.snapshotSeq = snap.seq
                return s
            }
            info.snapshotIgnored = "snapshot at \(snap.seq) does not match the log (latest \(latest))"
        } catch {
            info.snapshotIgnored = "snapshot at \(snap.seq) cannot be decoded: \(error.message)"
        }
        return MovieState()
    }

    deinit {
        close()
        Glibc.close(signal)
    }

    // MARK: - What the loop reads

    /// Why the log's writer thread has the default scheduling policy, or nil when it has
    /// SCHED_BATCH (`GroupCommitter.schedulingNote`).
    public var writerSchedulingNote: String? { committer.schedulingNote }

    public var completionFD: Int32 { signal }

    public var latestSeq: UInt64 { state.lastSeq }

    /// Lends the state to `body` in place: a read of the stored property itself would copy it
    /// (a retain and a release per array, dictionary and set in it).
    @inline(__always)
    public func withState<R>(_ body: (borrowing MovieState) -> R) -> R { lendState(&state, body) }

    public var pendingCount: Int { submitted - reported }

    /// This daemon owns the log.
    public var refusesAtSubmit: Bool { true }

    public var startupFields: [(String, String)] {
        [
            ("MOVIES", "\(state.movies.count)"), ("SEQ", "\(state.lastSeq)"),
            ("SNAPSHOT_SEQ", "\(startup.snapshotSeq)"), ("REPLAYED", "\(startup.replayed)"),
            ("SEEDED", startup.seeded ? "yes" : "no"), ("LOAD_MS", "\(startup.micros / 1000)"),
            ("LOG_WRITER_SCHEDULING", writerSchedulingNote == nil ? "batch" : "default"), ("LOG_ID", logID),
        ]
    }

    public var startupNotes: [StoreNote] {
        var notes: [StoreNote] = []
        if let note = writerSchedulingNote {
            notes.append(
                StoreNote(
                    .info,
                    "the log writer keeps the default scheduling policy; commits may preempt the event loop",
                    reason: note))
        }
        if let reason = openness {
            notes.append(
                StoreNote(
                    .warning, "the state directory is open to others, serving from it as it is",
                    reason: reason))
        }
        if let reason = startup.snapshotIgnored {
            notes.append(StoreNote(.warning, "snapshot ignored, replayed the whole log", reason: reason))
        }
        return notes
    }

    // MARK: - Closing

    /// Finishes pending commits and reads (their outcomes are returned), saves a snapshot, stops
    /// the threads and closes the log. Idempotent.
    @discardableResult
    public func close() -> Completions {
        guard !closed else { return Completions() }
        flushQueued()
        var out = completions()
        while readsInFlight > 0
            || (fatal == nil
                && (!inFlight.isEmpty || !commands.queued.isEmpty || !commands.aborted.isEmpty
                    || snapshotInFlight != nil))
        {
            waitForCompletions()
            out.append(completions())
        }
        closed = true
        if fatal == nil {
            maybeSnapshot(force: true)
            while snapshotInFlight != nil {
                waitForCompletions()
                out.append(completions())
            }
        }
        committer.close()
        reader.close()
        keyLog.close()
        lock.release()
        return out
    }

    /// Blocks until the committer or the reader has something, at most a second.
    private func waitForCompletions() {
        var p = pollfd(fd: signal, events: Int16(POLLIN), revents: 0)
        while poll(&p, 1, 1000) < 0 && errno == EINTR {}
    }
}

// The boundary between the daemon and its durable movie log: what a Session asks of a store and
// what comes back. Written so that a store across the network (PostgreSQL) fits it as well as
// the embedded SQLite one: every operation is asynchronous. A caller submits *commands* (not
// events it already decided) and *reads*, each with a token of its choosing, and learns their
// outcomes later from `completions()`, as facts. A store may refuse at commit a command that the
// committed state it showed would have accepted (another daemon got there first), accept at
// commit one that state would have refused (another daemon made it right: `refusesAtSubmit`),
// and may fail.
import Movies

/// A durable, event-sourced movie catalogue. Owned by one thread (the daemon's event loop): no
/// method may block on the disk or the network for longer than a local index lookup; anything
/// longer happens elsewhere and is reported through `completionFD` and `completions()`.
public protocol Store: AnyObject {
    /// The seq of the newest event folded into the committed state (what clients have seen).
    var latestSeq: UInt64 { get }

    /// The log's identity: made when the log was created, made anew by every import (a restore
    /// from a backup is one), never changed otherwise. `hello` says it, so that a client which
    /// resumes from a seq of another log (the one before an import) learns that it must start
    /// over.
    var logID: String { get }

    /// Lends the committed state to `body` in place (reading it through a getter would copy it,
    /// a retain per array and dictionary in it).
    func withState<R>(_ body: (borrowing MovieState) -> R) -> R

    /// Commands submitted and not yet reported by `completions()`.
    var pendingCount: Int { get }

    /// Whether the committed state is the whole truth when a command is submitted, so that what
    /// it refuses is refused at once (from the next `completions()`): true for a log that one
    /// daemon owns. False for a log shared by several daemons, where another daemon may already
    /// have made right what this state refuses (added the movie, moved its version): only what
    /// no state could make right (`badRequest`) is refused at once, and every other refusal
    /// comes with the commit it would have been.
    var refusesAtSubmit: Bool { get }

    /// Readable whenever `completions()` may have something the caller did not cause itself
    /// (a commit finished on another thread, a read answered, another daemon's events). Outcomes
    /// of the caller's own calls may also be waiting without it: call `completions()` once per
    /// loop iteration after submitting anything.
    var completionFD: Int32 { get }

    /// Asks for `command` to be decided and made durable. Its outcome comes back from
    /// `completions()` under `token`: the committed event, or why nothing was written. An
    /// outcome known at once (a refusal, when `refusesAtSubmit`; a key already in the log)
    /// comes back from the next `completions()`, whatever `completionFD` says.
    func submit(_ command: consuming MovieCommand, token: UInt64)

    /// Asks for a read of committed events. Its outcome comes back from `completions()` under
    /// `token`. A read never returns events past the committed state's `latestSeq` as of the
    /// `completions()` call that reports it.
    func read(_ request: StoreRead, token: UInt64)

    /// Hands what was submitted since the last call on to be committed together (group commit:
    /// called once per loop iteration).
    func flush()

    /// What is known now: outcomes of commands and reads, and the events newly folded into the
    /// committed state, in order.
    func completions() -> Completions

    /// Finishes what is in flight (its outcomes are returned), then releases everything.
    /// Idempotent.
    @discardableResult func close() -> Completions

    /// What opening the store did, for the start-up journal entry (field name, value).
    var startupFields: [(String, String)] { get }

    /// What opening the store wants said in entries of their own (a snapshot it ignored).
    var startupNotes: [StoreNote] { get }

    /// What `STATUS=` should add about the store now (a lost database connection), or nil.
    var statusNote: String? { get }
}

/// How a store lends its state (`Store.withState`): `lendState(&state, body)`. `body(state)`
/// on a class's stored property copied the state on every lending (a retain and a release of
/// each array, dictionary and set in it: ≈ 6 of each, ≈ 250 instructions, several times a
/// request), because the read of the property ends before the call it feeds; borrowed from an
/// `inout` access, which lasts while `body` runs, it is passed in place. The access is
/// exclusive: nothing may read or change the store's state inside `withState` (the loop's
/// thread alone touches it, and never from a lending; exclusivity enforcement would stop the
/// process if it did).
@inline(__always)
public func lendState<R>(_ state: inout MovieState, _ body: (borrowing MovieState) -> R) -> R { body(state) }

extension Store {
    /// `state.movie(id)`, without a copy of the whole state on the way. Off the request path
    /// (tests, tools): sessions read the state the manager lends them.
    public func movie(_ id: String) -> Movie? { withState { $0.movie(id) } }

    /// The embedded stores have nothing to add.
    public var statusNote: String? { nil }
}

/// Something a store noticed while opening, for a journal entry of its own.
public struct StoreNote: Equatable, Sendable {
    public enum Level: Sendable { case info, warning }
    public var level: Level
    /// Constant: the data is in `reason`.
    public var message: String
    public var reason: String

    public init(_ level: Level, _ message: String, reason: String) {
        self.level = level
        self.message = message
        self.reason = reason
    }
}

/// A read a caller may ask of a store.
public enum StoreRead: Equatable, Sendable {
    /// Committed events with seq > `after`, in order, at most `limit`, each with the movie as it
    /// was right after it: a `history` page, or a subscriber catching up.
    case events(after: UInt64, limit: Int)
    /// The committed events made by `person` (`CommittedEvent.by`) with seq > `after`, in order,
    /// at most `limit`, each with the movie as it was right after it: `history` with `"by"`
    /// (issue 46), paged as `events` is (the next page is after the last seq of this one). An
    /// event whose author is not known (made before authors were kept) is nobody's.
    case eventsBy(person: String, after: UInt64, limit: Int)
}

/// Why a store operation failed. `code` has the wire's error code names.
public struct StoreError: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable, CaseIterable {
        case notFound = "not-found"
        case badRequest = "bad-request"
        case conflict
        case storage
        /// The store is across the network and unreachable (PostgreSQL): nothing was written.
        case unavailable
        case `internal`
    }

    public var code: Code
    /// A sentence for a person.
    public var message: String
    /// An I/O error on commit: the daemon must stop taking writes, log at the highest priority
    /// and exit non-zero so systemd restarts it from what is really on disk.
    public var fatal: Bool
    /// Why, for a `conflict` (always set for one).
    public var reason: ConflictReason?

    public init(_ code: Code, _ message: String, fatal: Bool = false, reason: ConflictReason? = nil) {
        self.code = code
        self.message = message
        self.fatal = fatal
        self.reason = reason
    }

    public var description: String { "\(code.rawValue): \(message)" }
}

/// The outcome of a submitted command.
public struct CommandResult: Equatable, Sendable {
    public var token: UInt64
    public var result: Result<CommittedEvent, StoreError>
    /// The command carried an idempotency key already in the log, or already pending: nothing
    /// was written for it, and `result` is the original event (or the original's failure).
    public var replayed: Bool

    public init(token: UInt64, result: Result<CommittedEvent, StoreError>, replayed: Bool = false) {
        self.token = token
        self.result = result
        self.replayed = replayed
    }
}

/// The outcome of a read.
public struct ReadResult: Equatable, Sendable {
    public var token: UInt64
    public var result: Result<[CommittedEvent], StoreError>

    public init(token: UInt64, result: Result<[CommittedEvent], StoreError>) {
        self.token = token
        self.result = result
    }

    /// The answer to a read of the events after `after` that needs no reading: `.closed` once
    /// the store is closed, an empty page when nothing is committed after `after` (or `limit`
    /// is not positive). Nil when the log must be read.
    package static func withoutReading(
        token: UInt64, after: UInt64, limit: Int, closed: Bool, latestSeq: UInt64
    ) -> ReadResult? {
        if closed { return ReadResult(token: token, result: .failure(.closed)) }
        guard after < latestSeq, limit > 0 else { return ReadResult(token: token, result: .success([])) }
        return nil
    }
}

/// What `completions()` returns.
public struct Completions: Equatable, Sendable {
    /// One per command whose fate is now known: first those known at `submit` (refusals,
    /// replays), then those of commits, whose successes are in seq order.
    public var commands: [CommandResult] = []
    /// One per read answered (in no particular order: match them by token).
    public var reads: [ReadResult] = []
    /// Events newly folded into the committed state, in order: fan these out. For the caller's
    /// own commands they are the successes that are not `replayed`, in the same order.
    public var committed: [CommittedEvent] = []
    /// Set when the store failed for good (an I/O error on commit): stop taking writes and exit
    /// non-zero.
    public var fatal: StoreError?
    /// What happened to the store that a person should read once (a database connection lost or
    /// restored), each for a journal entry; `statusNote` may have changed with them.
    public var notes: [StoreNote] = []

    public init(
        commands: [CommandResult] = [], reads: [ReadResult] = [], committed: [CommittedEvent] = [],
        fatal: StoreError? = nil
    ) {
        self.commands = commands
        self.reads = reads
        self.committed = committed
        self.fatal = fatal
    }

    public var isEmpty: Bool {
        commands.isEmpty && reads.isEmpty && committed.isEmpty && fatal == nil && notes.isEmpty
    }

    public mutating func append(_ other: Completions) {
        commands += other.commands
        reads += other.reads
        committed += other.committed
        fatal = fatal ?? other.fatal
        notes += other.notes
    }
}

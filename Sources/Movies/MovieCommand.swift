/// A request to change the catalogue. `decide` turns it into one event or a `CommandError`.
public struct MovieCommand: Equatable, Hashable, Sendable {
    public enum Op: Equatable, Hashable, Sendable {
        case add(title: String, image: String?)
        case toggleWatched(movie: String)
        case toggleWatchedWithFriends(movie: String)
        case remove(movie: String)
        /// Brings a removed movie back as it was, at its place in list order.
        case restore(movie: String)
        /// Moves a movie to a place in list order (issue 48): after a movie, or first.
        case move(movie: String, to: ListPlace)
        /// Appends the event that compensates an earlier one (issue 14, section 2).
        case undo(Undo)
        /// An `undo` from a connection with no change of its own left to undo. Decided, it is a
        /// `conflict` `nothing-to-undo`; it exists so that a keyed undo sent again (after a
        /// reconnection, or after the first undo used up the connection's changes) reaches the
        /// store, which answers it from the key as it does every other op's.
        case undoNothing
    }

    public var op: Op
    /// The version the client last saw; a different current version is a `conflict`.
    public var expect: UInt64?
    /// Idempotency key: the same key again returns the original result and writes nothing.
    public var key: String?
    /// Who asks (issue 46): the person whose connection sent it, nil when anonymous. The event
    /// it writes carries it (`CommittedEvent.by`).
    public var by: String?

    public init(_ op: Op, expect: UInt64? = nil, key: String? = nil, by: String? = nil) {
        self.op = op
        self.expect = expect
        self.key = key
        self.by = by
    }

    /// The kind of event this command writes when it succeeds (nil for `undoNothing`, which
    /// never writes one).
    public var kind: EventKind? {
        switch op {
        case .add: return MovieEvent.Kind.added
        case .toggleWatched: return MovieEvent.Kind.watchedToggled
        case .toggleWatchedWithFriends: return MovieEvent.Kind.watchedWithFriendsToggled
        case .remove: return MovieEvent.Kind.removed
        case .restore: return MovieEvent.Kind.restored
        case .move: return MovieEvent.Kind.moved
        case .undo(let u): return u.compensation.kind
        case .undoNothing: return nil
        }
    }

    /// The movie the command names (nil for `add`, whose id is generated).
    public var movieID: String? {
        switch op {
        case .add: return nil
        case .toggleWatched(let m), .toggleWatchedWithFriends(let m), .remove(let m), .restore(let m),
            .move(let m, _):
            return m
        case .undo(let u): return u.movie
        case .undoNothing: return nil
        }
    }

    /// Whether this is an `undo` (with a change to undo or without): a key used by one is
    /// answered only to another undo.
    public var isUndo: Bool {
        switch op {
        case .undo, .undoNothing: true
        case .add, .toggleWatched, .toggleWatchedWithFriends, .remove, .restore, .move: false
        }
    }

    /// The seq of the event this command undoes (stored with its event as `undoes`).
    public var undoes: UInt64? {
        if case .undo(let u) = op { return u.original }
        return nil
    }
}

/// What an `undo` asks: append the event that compensates `original` (an event of `movie`), on
/// condition that the movie is still at `version` (the undoing connection's own last change of
/// it). The connection that made the change knows these; the decision is the state's.
public struct Undo: Equatable, Hashable, Sendable {
    /// The event that compensates an event of a kind.
    public enum Compensation: Equatable, Hashable, Sendable {
        case toggleWatched, toggleWatchedWithFriends, remove, restore
        /// A move back to where the movie was (issue 48): after the movie it followed then, or
        /// where that movie's place is when it has gone since (`MovieState.place(of:)`).
        case reorder(to: ListPlace)

        /// The compensation of `event` (`added` → remove, a toggle → the same toggle, `removed`
        /// → restore, `restored` → remove, `moved` → a move back to its `from`); nil for an
        /// event that cannot be undone (of a kind this build does not know).
        public init?(undoing event: CommittedEvent) {
            switch event.kind {
            case .added, .restored: self = .remove
            case .watchedToggled: self = .toggleWatched
            case .watchedWithFriendsToggled: self = .toggleWatchedWithFriends
            case .removed: self = .restore
            case .moved:
                guard let from = event.from else { return nil }
                self = .reorder(to: from)
            case .unknown: return nil
            }
        }

        /// The kind of the compensating event.
        public var kind: EventKind {
            switch self {
            case .toggleWatched: MovieEvent.Kind.watchedToggled
            case .toggleWatchedWithFriends: MovieEvent.Kind.watchedWithFriendsToggled
            case .remove: MovieEvent.Kind.removed
            case .restore: MovieEvent.Kind.restored
            case .reorder: MovieEvent.Kind.moved
            }
        }
    }

    public var movie: String
    /// The seq of the event undone.
    public var original: UInt64
    public var compensation: Compensation
    /// The movie's version the undo expects (for a removed movie: the seq of its removal); any
    /// other is `conflict` `changed-since`.
    public var version: UInt64

    public init(movie: String, original: UInt64, compensation: Compensation, version: UInt64) {
        self.movie = movie
        self.original = original
        self.compensation = compensation
        self.version = version
    }
}

/// Why a command is a `conflict`: a program can tell the causes apart (the wire spells them,
/// Wire's `ConflictReason.name`).
public enum ConflictReason: Equatable, Hashable, Sendable, CaseIterable {
    /// `expect` is not the movie's version.
    case version
    /// An idempotency key reused for a different command.
    case key
    /// `restore` of a movie that is not removed.
    case notRemoved
    /// `undo` with nothing of this connection's left to undo.
    case nothingToUndo
    /// `undo` of a change after which the movie was changed by someone else.
    case changedSince
}

/// Why a command was refused; nothing was written. The code maps to the wire's error codes.
public enum CommandError: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
    /// `not-found`: the movie does not exist (or no longer exists).
    case notFound(String)
    /// `bad-request`: the arguments are invalid (for example a blank title).
    case badRequest(String)
    /// `conflict`: the state is not what the command expects; `reason` says how.
    case conflict(ConflictReason, String)

    public var code: String {
        switch self {
        case .notFound: return "not-found"
        case .badRequest: return "bad-request"
        case .conflict: return "conflict"
        }
    }

    public var message: String {
        switch self {
        case .notFound(let m), .badRequest(let m), .conflict(_, let m): return m
        }
    }

    public var description: String { "\(code): \(message)" }
}

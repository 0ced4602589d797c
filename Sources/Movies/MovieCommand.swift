/// A request to change the catalogue. `decide` turns it into one event or a `CommandError`.
public struct MovieCommand: Equatable, Hashable, Sendable {
    public enum Op: Equatable, Hashable, Sendable {
        case add(title: String, image: String?)
        case toggleWatched(movie: String)
        case toggleWatchedWithFriends(movie: String)
        case remove(movie: String)
    }

    public var op: Op
    /// The version the client last saw; a different current version is a `conflict`.
    public var expect: UInt64?
    /// Idempotency key: the same key again returns the original result and writes nothing.
    public var key: String?

    public init(_ op: Op, expect: UInt64? = nil, key: String? = nil) {
        self.op = op
        self.expect = expect
        self.key = key
    }

    /// The kind of event this command writes when it succeeds.
    public var kind: String {
        switch op {
        case .add: return MovieEvent.Kind.added
        case .toggleWatched: return MovieEvent.Kind.watchedToggled
        case .toggleWatchedWithFriends: return MovieEvent.Kind.watchedWithFriendsToggled
        case .remove: return MovieEvent.Kind.removed
        }
    }

    /// The movie the command names (nil for `add`, whose id is generated).
    public var movieID: String? {
        switch op {
        case .add: return nil
        case .toggleWatched(let m), .toggleWatchedWithFriends(let m), .remove(let m): return m
        }
    }
}

/// Why a command was refused; nothing was written. The code maps to the wire's error codes.
public enum CommandError: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
    /// `not-found`: the movie does not exist (or no longer exists).
    case notFound(String)
    /// `bad-request`: the arguments are invalid (for example a blank title).
    case badRequest(String)
    /// `conflict`: `expect` differs from the movie's version, or a key was reused for another command.
    case conflict(String)

    public var code: String {
        switch self {
        case .notFound: return "not-found"
        case .badRequest: return "bad-request"
        case .conflict: return "conflict"
        }
    }

    public var message: String {
        switch self {
        case .notFound(let m), .badRequest(let m), .conflict(let m): return m
        }
    }

    public var description: String { "\(code): \(message)" }
}

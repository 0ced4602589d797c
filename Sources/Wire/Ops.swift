// Every op of protocol v1 with its arguments, in one table. Request decoding checks unknown
// arguments and types against it, and the `help` op prints it, so the two cannot drift apart.

public enum ArgType: String, Sendable {
    case string, integer, number, boolean
    /// An array of action objects: {action, label?, icon?, tint?, role?, activeLabel?, activeIcon?}.
    case actions
    /// Any JSON value (only `id`, which is echoed verbatim).
    case any
}

public struct ArgSpec: Sendable {
    public let name: String
    public let type: ArgType
    public let required: Bool
    public let summary: String

    init(_ name: String, _ type: ArgType, required: Bool = false, _ summary: String) {
        self.name = name
        self.type = type
        self.required = required
        self.summary = summary
    }
}

/// A class, not a struct: the decoder looks one up and keeps it for every request, and a struct
/// of strings and arrays would be copied (retained member by member) each time.
public final class OpSpec: Sendable {
    public enum Scope: String, Sendable {
        /// The shared movie state.
        case state
        /// This client's own swipe engine.
        case swipe
        /// The connection itself.
        case session
    }

    /// The op, for `switch`: matching an enum costs nothing, matching its name costs a string
    /// comparison per case.
    public enum Kind: String, Sendable, CaseIterable {
        case ping, help, list, add
        case toggleWatched = "toggle-watched"
        case toggleWatchedWithFriends = "toggle-watched-with-friends"
        case remove, subscribe, unsubscribe, history, viewport, configure, drag, release, tap, close, rows
    }

    public let name: String
    public let kind: Kind
    public let scope: Scope
    /// Whether the op can change the shared state (subject to `--writers`).
    public let mutates: Bool
    public let args: [ArgSpec]
    public let summary: String

    init(name: String, scope: Scope, mutates: Bool, args: [ArgSpec], summary: String) {
        self.name = name
        guard let kind = Kind(rawValue: name) else { preconditionFailure("op \(name) has no Kind") }
        self.kind = kind
        self.scope = scope
        self.mutates = mutates
        self.args = args
        self.summary = summary
    }
}

public enum Ops {
    static let expect = ArgSpec("expect", .integer, "fail with conflict unless the movie's version is this")
    static let key = ArgSpec("key", .string, "idempotency key: the same key again returns the first result")
    static let movie = ArgSpec("movie", .string, required: true, "movie id")

    public static let all: [OpSpec] = [
        OpSpec(name: "ping", scope: .session, mutates: false, args: [], summary: "answers {\"ok\":true}"),
        OpSpec(
            name: "help", scope: .session, mutates: false, args: [],
            summary: "every op with its arguments and their types"),
        OpSpec(
            name: "list", scope: .state, mutates: false, args: [],
            summary: "the movies in list order, and the latest seq"),
        OpSpec(
            name: "add", scope: .state, mutates: true,
            args: [
                ArgSpec("title", .string, required: true, "1 to 200 characters, not blank"),
                ArgSpec("image", .string, "image name (default: the new movie's id)"), key,
            ],
            summary: "adds a movie at the end of the list"),
        OpSpec(
            name: "toggle-watched", scope: .state, mutates: true, args: [movie, expect, key],
            summary: "flips the movie's watched flag"),
        OpSpec(
            name: "toggle-watched-with-friends", scope: .state, mutates: true, args: [movie, expect, key],
            summary: "flips the movie's watched-with-friends flag"),
        OpSpec(
            name: "remove", scope: .state, mutates: true, args: [movie, expect, key],
            summary: "removes the movie; the reply carries its last state"),
        OpSpec(
            name: "subscribe", scope: .state, mutates: false,
            args: [
                ArgSpec("from", .integer, "send every event after this seq first (default: only new ones)")
            ],
            summary: "pushes every change as a movie event, in order, with no gap"),
        OpSpec(name: "unsubscribe", scope: .state, mutates: false, args: [], summary: "stops movie events"),
        OpSpec(
            name: "history", scope: .state, mutates: false,
            args: [
                ArgSpec("from", .integer, "events after this seq (default 0)"),
                ArgSpec("limit", .integer, "1 to 1000 (default 100)"),
            ],
            summary: "stored events in order"),
        OpSpec(
            name: "viewport", scope: .swipe, mutates: false,
            args: [
                ArgSpec("width", .number, "row width in points, 100 to 4000 (default 390)"),
                ArgSpec("direction", .string, "ltr or rtl (default ltr)"),
            ],
            summary: "sets this client's row width and layout direction"),
        OpSpec(
            name: "configure", scope: .swipe, mutates: false,
            args: [
                ArgSpec("leading", .actions, "leading actions, outermost first"),
                ArgSpec("trailing", .actions, "trailing actions, outermost first"),
                ArgSpec("allowsFullSwipeLeading", .boolean, "default true"),
                ArgSpec("allowsFullSwipeTrailing", .boolean, "default true"),
                ArgSpec("buttonWidth", .number, "button width in points, 20 to 400 (default 70)"),
            ],
            summary: "sets this client's swipe layout; no arguments: the movie layout"),
        OpSpec(
            name: "drag", scope: .swipe, mutates: false,
            args: [movie, ArgSpec("dx", .number, required: true, "translation since touch-down, + = right")],
            summary: "a finger moved on the row"),
        OpSpec(
            name: "release", scope: .swipe, mutates: true,
            args: [
                movie, ArgSpec("dx", .number, "final translation (default: the last drag)"),
                ArgSpec("vx", .number, "velocity in points per second"),
            ],
            summary: "the finger lifted: snaps open, closes, or fires a full swipe"),
        OpSpec(
            name: "tap", scope: .swipe, mutates: true,
            args: [movie, ArgSpec("action", .string, required: true, "a revealed button's action")],
            summary: "taps a revealed button: fires its action and closes the row"),
        OpSpec(
            name: "close", scope: .swipe, mutates: false,
            args: [ArgSpec("movie", .string, "movie id (default: every row)")],
            summary: "closes a row, or every row"),
        OpSpec(
            name: "rows", scope: .swipe, mutates: false, args: [],
            summary: "every row of this client that is not closed"),
    ]

    /// A scan that compares lengths first: a name of another length costs one integer compare,
    /// where hashing the name or comparing it whole costs far more (this runs for every request).
    public static func named(_ name: String) -> OpSpec? {
        let count = name.utf8.count
        for op in all where op.name.utf8.count == count && op.name == name { return op }
        return nil
    }
}

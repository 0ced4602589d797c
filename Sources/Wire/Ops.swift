// Every op of protocol v1 with its arguments, in one table: each argument's type, range and
// default is declared here once (ArgSpec.swift). Request decoding checks arguments against it
// (Request.swift), the `help` op prints it (Help.swift), and swipectl checks its options
// against it, so none of them can drift apart.
//
// The op list itself is `OpSpec.Kind`. Every other place that lists the ops is a switch over
// `Kind` or `Request` with no `default:`, so an op added to `Kind` does not compile until it is
// declared here (`Ops.declaration`), decoded (`Arguments.build`), taken or left by the fast path
// (`FastArguments.request(for:)`), given its `Request` (`Request.kind`) and answered (the
// Session's `handle`). OpsTests checks that each kind decodes to a request of that kind.
import JSONCodec
import People
import SwipeEngine

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
        case ping, help, options, list, add
        case toggleWatched = "toggle-watched"
        case toggleWatchedWithFriends = "toggle-watched-with-friends"
        case remove
        case restore, move, undo
        case subscribe, unsubscribe, history, viewport, configure, drag, release, tap, close, rows
        case open, perform, peek
        case record, recording, share, peers
        case status
        case auth
        case tokenCreate = "token-create"
        case tokenList = "token-list"
        case tokenRevoke = "token-revoke"
        case role, denials
    }

    public let name: String
    public let kind: Kind
    public let scope: Scope
    /// Whether the op can change the shared state: itself (a writer's op), or through a bound
    /// action its gesture fires (`release`, `tap`, `perform`: a reader's op, whose firing needs
    /// a writer).
    public let mutates: Bool
    /// The least role that may send it (protocol.md, "Who may do what"): the one table of
    /// rights, which the Session checks every request against.
    public let needs: AccessRole
    public let args: [ArgSpec]
    public let summary: String

    init(
        _ kind: Kind, scope: Scope, mutates: Bool, needs: AccessRole? = nil, args: [ArgSpec], summary: String
    ) {
        name = kind.rawValue
        self.kind = kind
        self.scope = scope
        self.mutates = mutates
        // A state op that mutates is a writer's; everything else a reader's unless it says.
        self.needs = needs ?? (mutates && scope == .state ? .writer : .reader)
        self.args = args
        self.summary = summary
    }
}

public enum Ops {
    static let expect = ArgSpec.sequence("expect", "fail with conflict unless the movie's version is this")
    static let key = ArgSpec(
        "key", .string(bytes: Limits.keyBytes),
        "idempotency key: the same key again returns the first result")
    static let movie = ArgSpec.text("movie", required: true, "movie id")

    /// Every op, in the order of `Kind` (the order `help` lists them in).
    public static let all: [OpSpec] = OpSpec.Kind.allCases.map(declaration)

    // Long: it is the op table itself, one case per op, each read on its own.
    /// The declaration of `kind`.
    static func declaration(_ kind: OpSpec.Kind) -> OpSpec {
        switch kind {
        case .ping:
            OpSpec(
                kind, scope: .session, mutates: false, needs: AccessRole.none, args: [],
                summary: "answers {\"ok\":true}")
        case .help:
            OpSpec(
                kind, scope: .session, mutates: false, needs: AccessRole.none, args: [],
                summary: "this description of protocol 1: ops, objects, errors, events")
        case .options:
            OpSpec(
                kind, scope: .session, mutates: false,
                args: [
                    ArgSpec(
                        "rows", .string(values: RowForm.allCases.map(\.rawValue)),
                        default: .string(RowForm.full.rawValue),
                        "the rows this connection receives: full, or compact (no spring, no accessibilityActions); left out: unchanged, full at connect"
                    ),
                    ArgSpec(
                        "crossings", .boolean, default: false,
                        "true: a drag's reply lists the thresholds it crossed (crossed; rule 12); left out: unchanged, false at connect"
                    ),
                ],
                summary: "sets this connection's options; no arguments: answers them as they are")
        case .list:
            OpSpec(
                kind, scope: .state, mutates: false,
                args: [
                    ArgSpec.text(
                        "after",
                        "movie id: only the movies after it in list order (a removed one's place counts)"),
                    ArgSpec(
                        "limit", .integer(min: 1, max: 1000),
                        "the most movies in the reply (left out: every one; next names where to go on)"),
                    ArgSpec(
                        "match", .string(bytes: 1...Limits.stringBytes.upperBound),
                        "only movies whose title contains this, ignoring case"),
                ],
                summary:
                    "the movies in list order, the latest seq, and next: the id to ask after for more, or null"
            )
        case .add:
            OpSpec(
                kind, scope: .state, mutates: true,
                args: [
                    // Blank and over-long titles are the domain's to refuse (Movies), in characters.
                    ArgSpec(
                        "title", .string(bytes: 0...Limits.stringBytes.upperBound), required: true,
                        "1 to 200 characters, not blank"),
                    ArgSpec.text("image", "image name (left out: the new movie's id)"), key,
                ],
                summary: "adds a movie at the end of the list")
        case .toggleWatched:
            OpSpec(
                kind, scope: .state, mutates: true, args: [movie, expect, key],
                summary: "flips the movie's watched flag")
        case .toggleWatchedWithFriends:
            OpSpec(
                kind, scope: .state, mutates: true, args: [movie, expect, key],
                summary: "flips the movie's watched-with-friends flag")
        case .remove:
            OpSpec(
                kind, scope: .state, mutates: true, args: [movie, expect, key],
                summary: "removes the movie; the reply carries its last state")
        case .restore:
            OpSpec(
                kind, scope: .state, mutates: true,
                args: [
                    movie,
                    ArgSpec.sequence("expect", "fail with conflict unless the movie was removed at this seq"),
                    key,
                ],
                summary: "brings a removed movie back as it was, at its place in the list")
        case .move:
            OpSpec(
                kind, scope: .state, mutates: true,
                args: [
                    movie,
                    ArgSpec(
                        "after", .string(bytes: Limits.stringBytes), required: true, nullable: true,
                        "the movie it goes after: a movie id, or null for the first place"),
                    expect, key,
                ],
                summary: "moves a movie to another place in the list: right after a movie, or first")
        case .undo:
            OpSpec(
                kind, scope: .state, mutates: true,
                args: [
                    ArgSpec.sequence(
                        "seq",
                        "the change to undo, whoever made it (left out: this connection's latest not yet undone)"
                    ),
                    key,
                ],
                summary:
                    "undoes a change with a compensating event: this connection's latest, or the one at seq")
        case .subscribe:
            OpSpec(
                kind, scope: .state, mutates: false,
                args: [
                    ArgSpec.sequence(
                        "from", "send every event after this seq first (left out: only new ones)")
                ],
                summary: "pushes every change as a movie event, in order, with no gap")
        case .unsubscribe:
            OpSpec(
                kind, scope: .state, mutates: false, args: [], summary: "stops movie events")
        case .history:
            OpSpec(
                kind, scope: .state, mutates: false,
                args: [
                    ArgSpec.sequence("from", default: 0, "events after this seq"),
                    ArgSpec(
                        "limit", .integer(min: 1, max: 1000), default: 100, "the most events in the reply"),
                    ArgSpec(
                        "by", .string(bytes: 1...PersonName.maxBytes),
                        "a person's name: only the events they made (left out: everyone's)"),
                ],
                summary: "stored events in order")
        case .viewport:
            OpSpec(
                kind, scope: .swipe, mutates: false,
                args: [
                    ArgSpec(
                        "width", .number(100...4000), default: .number(JSONNumber(Rules.defaultRowWidth)),
                        "row width in points (left out: unchanged; the default at connect)"),
                    ArgSpec(
                        "direction", .string(values: Direction.allCases.map(\.rawValue)),
                        default: .string(Direction.ltr.rawValue),
                        "layout direction (left out: unchanged; the default at connect)"),
                ],
                summary: "sets this client's row width and layout direction")
        case .configure:
            OpSpec(
                kind, scope: .swipe, mutates: false,
                args: [
                    ArgSpec(
                        "leading", .actions(maxItems: Limits.actionsPerEdge), default: [],
                        "leading actions, outermost first"),
                    ArgSpec(
                        "trailing", .actions(maxItems: Limits.actionsPerEdge), default: [],
                        "trailing actions, outermost first"),
                    ArgSpec(
                        "allowsFullSwipeLeading", .boolean, default: true,
                        "a full swipe may fire the outermost leading action"),
                    ArgSpec(
                        "allowsFullSwipeTrailing", .boolean, default: true,
                        "a full swipe may fire the outermost trailing action"),
                    ArgSpec(
                        "buttonWidth", .number(20...400),
                        default: .number(JSONNumber(Rules.defaultButtonWidth)),
                        "button width in points"),
                    fullSwipeStyle(.leading),
                    fullSwipeStyle(.trailing),
                ],
                summary: "sets this client's swipe layout; no arguments: the movie layout")
        case .drag:
            OpSpec(
                kind, scope: .swipe, mutates: false,
                args: [
                    movie, ArgSpec.number("dx", required: true, "translation since touch-down, + = right"),
                    ArgSpec.number(
                        "dy",
                        "vertical translation since touch-down, + = down: before the gesture starts, a mostly vertical touch is a scroll (rule 13; left out: horizontal)"
                    ),
                ],
                summary: "a finger moved on the row")
        case .release:
            OpSpec(
                kind, scope: .swipe, mutates: true,
                args: [
                    movie, ArgSpec.number("dx", "final translation (left out: the last drag's)"),
                    ArgSpec.number("vx", "velocity in points per second (left out: none)"),
                ],
                summary: "the finger lifted: snaps open, closes, or fires a full swipe")
        case .tap:
            OpSpec(
                kind, scope: .swipe, mutates: true,
                args: [movie, ArgSpec.text("action", required: true, "a revealed button's action")],
                summary:
                    "taps a revealed button: fires its action and closes the row (an action that asks to confirm waits for a second tap)"
            )
        case .close:
            OpSpec(
                kind, scope: .swipe, mutates: false,
                args: [ArgSpec.text("movie", "movie id (left out: every row)")],
                summary: "closes a row, or every row")
        case .rows:
            OpSpec(
                kind, scope: .swipe, mutates: false, args: [],
                summary: "every row of this client that is not closed")
        case .open:
            OpSpec(
                kind, scope: .swipe, mutates: false,
                args: [
                    movie,
                    ArgSpec(
                        "edge", .string(values: Edge.allCases.map(\.rawValue)), required: true,
                        "the edge to reveal; it must have buttons"),
                ],
                summary: "opens the row on an edge, as a swipe would, closing this client's other rows")
        case .perform:
            OpSpec(
                kind, scope: .swipe, mutates: true,
                args: [movie, ArgSpec.text("action", required: true, "any action of this client's layout")],
                summary: "fires an action as a tap on its button would, without it showing")
        case .peek:
            OpSpec(
                kind, scope: .swipe, mutates: false,
                args: [
                    movie,
                    ArgSpec(
                        "edge", .string(values: Edge.allCases.map(\.rawValue)),
                        "the edge to show; it must have buttons (left out: trailing when it has buttons, else leading)"
                    ),
                ],
                summary:
                    "shows a closed row's buttons half-way for \(format(Rules.peekDuration)) s and springs it back, firing nothing (rule 14)"
            )
        case .record:
            OpSpec(
                kind, scope: .swipe, mutates: false,
                args: [
                    ArgSpec(
                        "on", .boolean, required: true,
                        "true: close every row and start a new recording of this connection's swipe session (the last one is dropped); false: stop, keeping it for recording"
                    )
                ],
                summary:
                    "starts or stops recording this connection's swipe session (at most \(Recording.cap) inputs"
                    + " and \(Recording.maxBytes) bytes of entries)"
            )
        case .recording:
            OpSpec(
                kind, scope: .swipe, mutates: false, args: [],
                summary:
                    "this connection's recording (the one going on, else the last), in recording format 1")
        case .share:
            OpSpec(
                kind, scope: .swipe, mutates: false,
                args: [
                    ArgSpec(
                        "on", .boolean, required: true,
                        "true: every change of this connection's rows goes to watchers; false: private again (off at connect)"
                    )
                ],
                summary: "shares this connection's rows with the connections that watch peers")
        case .peers:
            OpSpec(
                kind, scope: .swipe, mutates: false,
                args: [
                    ArgSpec(
                        "watch", .boolean, required: true,
                        "true: receive peer-row events for every change of a sharing connection's rows; false: stop"
                    )
                ],
                summary: "the sharing connections and their open rows; starts or stops peer-row events")
        case .status:
            OpSpec(
                kind, scope: .session, mutates: false, args: [],
                summary:
                    "how the daemon is doing: server, store, clients, requests, errors, latencies, commits, process (protocol.md, \"status\"); the store's location, the pid and the limits only to writers and admins, every connection only to admins"
            )
        // People and their rights (issue 45): `auth` for anyone, the rest for admins.
        case .auth:
            OpSpec(
                kind, scope: .session, mutates: false, needs: AccessRole.none,
                args: [
                    ArgSpec("token", .string(bytes: 1...256), required: true, "a token from token-create")
                ],
                summary:
                    "signs this connection in as the token's person: answers user and role (failures are slowed, per client address)"
            )
        case .tokenCreate:
            OpSpec(
                kind, scope: .session, mutates: false, needs: .admin,
                args: [
                    personName,
                    ArgSpec(
                        "role", .string(values: ["reader", "writer", "admin"]), required: true,
                        "what the token may do (unless an admin gave its person a role: role)"),
                    ArgSpec(
                        "expiresIn", .integer(min: 1, max: 10 * 366 * 86_400),
                        "seconds until it stops working (left out: never)"),
                ],
                summary: "makes a token for a person: the reply has the token, shown this once and never kept"
            )
        case .tokenList:
            OpSpec(
                kind, scope: .session, mutates: false, needs: .admin, args: [],
                summary: "every token: tokenId, name, role, created, expires, lastUsed (never the token)")
        case .tokenRevoke:
            OpSpec(
                kind, scope: .session, mutates: false, needs: .admin,
                args: [
                    personName,
                    ArgSpec.text("tokenId", "only the token with this tokenId (left out: all of name's)"),
                ],
                summary:
                    "deletes a person's tokens; connections signed in with them are anonymous within a second, on every daemon"
            )
        case .role:
            OpSpec(
                kind, scope: .session, mutates: false, needs: .admin,
                args: [
                    personName,
                    ArgSpec(
                        "role", .string(values: AccessRole.names), nullable: true,
                        "the role to give, winning over the group's, the token's and the proxy's; none takes every right; null: the door decides again (left out: only answers)"
                    ),
                ],
                summary:
                    "gives a person a role, or answers the one given; live connections follow within a second"
            )
        case .denials:
            OpSpec(
                kind, scope: .session, mutates: false, needs: .admin, args: [],
                summary: "the latest 100 refusals: forbidden requests and failed auth, newest last")
        }
    }

    static let personName = ArgSpec(
        "name", .string(bytes: 1...PersonName.maxBytes), required: true,
        "a person's name (a Unix user's, a token's, a proxy's user): no spaces or control characters")

    /// `configure`'s full-swipe style of `edge` (rule 15).
    static func fullSwipeStyle(_ edge: Edge) -> ArgSpec {
        ArgSpec(
            edge == .leading ? "fullSwipeStyleLeading" : "fullSwipeStyleTrailing",
            .string(values: FullSwipeStyle.allCases.map(\.rawValue)),
            default: .string(FullSwipeStyle.fill.rawValue),
            "what a full swipe on the \(edge.rawValue) edge does once its action fires: fill (the button fills the row, which closes 0.5 s later), close (the row closes at once) or dismiss (the row slides out until its movie goes, back after \(format(Rules.dismissTimeout)) s if it does not)"
        )
    }

    /// Each op's `needs`, by its slot (`metricsIndex`, its place in `Kind.allCases`): read for
    /// every request, so an array of one-byte values rather than a lookup of the spec.
    @usableFromInline static let neededRoles: [AccessRole] = OpSpec.Kind.allCases.map {
        declaration($0).needs
    }

    /// The least role that may send an op of `kind`.
    @inlinable
    public static func needs(_ kind: OpSpec.Kind) -> AccessRole { neededRoles[kind.metricsIndex] }

    /// The op of `kind` (`all` has one per kind, made by `declaration`).
    public static func spec(_ kind: OpSpec.Kind) -> OpSpec {
        all.first { $0.kind == kind }!
    }

    /// A scan that compares lengths first: a name of another length costs one integer compare,
    /// where hashing the name or comparing it whole costs far more (this runs for every request).
    public static func named(_ name: String) -> OpSpec? {
        let count = name.utf8.count
        for op in all where op.name.utf8.count == count && op.name == name { return op }
        return nil
    }
}

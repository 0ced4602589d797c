// The objects and the server events of protocol 1, declared for `help` (Help.swift) in the
// words of the op table (ArgSpec.swift): what a client needs to read every reply and event
// (protocol.md, "Objects" and "Server events"). The action object is also what `configure`'s
// decoder checks (Request.swift).
import Movies
import People
import SwipeEngine

/// A named object of the protocol.
public struct ObjectSpec: Sendable {
    public let name: String
    public let summary: String
    public let fields: [ArgSpec]
}

/// A message the server sends on its own.
public struct EventSpec: Sendable {
    public let name: String
    /// Who gets it.
    public let to: String
    public let summary: String
    public let fields: [ArgSpec]
    /// `bye`: the reasons it gives.
    public var reasons: [ByeReason] = []
}

/// Why the server says `bye` (protocol.md, "Session").
public enum ByeReason: String, Sendable, CaseIterable {
    case tooManyClients = "too-many-clients"
    case slowConsumer = "slow-consumer"
    case shutdown
    case revoked

    public var summary: String {
        switch self {
        case .tooManyClients: "--max-clients connections are already served; sent instead of hello"
        case .slowConsumer:
            "a subscriber's (or a peer watcher's) write queue is still over its cap when an event is due"
        case .shutdown: "the daemon is stopping; sent after every reply still owed"
        case .revoked:
            "this connection's rights dropped to none (its person was given the role none, or its token went and anonymous connections may do nothing); sent after a role event"
        }
    }
}

public enum Schema {
    /// The fields of a `configure` action object.
    public static let action = ObjectSpec(
        name: "action",
        summary: "a swipe action of configure's leading or trailing; names are unique across both edges",
        fields: [
            ArgSpec("action", .string(bytes: Limits.actionFieldBytes), required: true, "the action's name"),
            ArgSpec("label", .string(bytes: Limits.actionFieldBytes), "the button's text"),
            ArgSpec("icon", .string(bytes: Limits.actionFieldBytes), "the button's icon name"),
            ArgSpec(
                "tint", .string(bytes: Limits.actionFieldBytes),
                "the button's colour (default gray, red when destructive)"),
            ArgSpec(
                "role", .string(bytes: Limits.actionFieldBytes, values: [Role.destructive.rawValue]),
                "the button's role"),
            ArgSpec(
                "activeLabel", .string(bytes: Limits.actionFieldBytes),
                "the label when the row's movie has this action's flag set"),
            ArgSpec(
                "activeIcon", .string(bytes: Limits.actionFieldBytes),
                "the icon when the row's movie has this action's flag set"),
            ArgSpec(
                "confirm", .boolean, default: false,
                "where it would fire (full swipe, tap, perform), the row asks to confirm it first (phase confirming)"
            ),
            ArgSpec(
                "confirmLabel", .string(bytes: Limits.actionFieldBytes),
                default: .string(Rules.defaultConfirmLabel), "the confirming button's label"),
        ])

    static let movie = ObjectSpec(
        name: "movie", summary: "a movie of the shared list",
        fields: [
            ArgSpec("id", .string(), required: true, "made from the title; never reused"),
            ArgSpec("title", .string(), required: true, "the title"),
            ArgSpec("image", .string(), required: true, "image name"),
            ArgSpec("watched", .boolean, required: true, "the watched flag"),
            ArgSpec("watchedWithFriends", .boolean, required: true, "the watched-with-friends flag"),
            ArgSpec(
                "version", .integer(min: 1), required: true,
                "the seq of the last event that touched it (expect)"),
        ])

    static let event = ObjectSpec(
        name: "event", summary: "a stored change, in history and in movie events",
        fields: [
            ArgSpec("seq", .integer(min: 1), required: true, "its sequence number"),
            ArgSpec(
                "kind",
                .string(values: EventKind.known.map(\.rawValue)), required: true,
                "what happened; a client shows a kind it does not know by its movie"),
            ArgSpec(
                "movie", .object("movie"), required: true,
                "the movie right after it (removed: its last state)"),
            ArgSpec("at", .string(), required: true, "when it was stored: RFC 3339, UTC, microseconds"),
            ArgSpec(
                "undoes", .integer(min: 1),
                "the seq of the event this one compensates (written by undo); left out otherwise"),
            ArgSpec(
                "after", .string(), nullable: true,
                "moved and restored: the movie it now comes right after, null when it is first; left out for the other kinds, and for a restored event from before moves existed"
            ),
            ArgSpec(
                "from", .string(), nullable: true,
                "moved: the movie it came right after before the move (what its undo takes it back to), null when it was first; left out for the other kinds"
            ),
            ArgSpec(
                "by", .string(),
                "who made it: the person whose connection caused it (for a gesture's bound action, whoever swiped; for an undo, whoever undid); left out for a change made before authors were kept, or by an anonymous browser"
            ),
        ])

    static let row = ObjectSpec(
        name: "row",
        summary:
            "a row of this client's swipe engine (rows are movies, by id), in this connection's form (options)",
        fields: [
            ArgSpec("movie", .string(), required: true, "the movie id"),
            ArgSpec("offset", .number(), required: true, "physical points, + = the content moved right"),
            ArgSpec(
                "phase", .string(values: Phase.allCases.map(\.rawValue)), required: true,
                "closed, dragging, open, fired, confirming (one button waits for a tap, 3 s), peeking (peek: half open, closes on its own) or dismissed (a full swipe slid it out: it goes with its movie); a client shows a phase it does not know by its offset and buttons"
            ),
            ArgSpec(
                "edge", .string(values: ["leading", "trailing"]), required: true, nullable: true,
                "the revealed edge; null: nothing revealed"),
            ArgSpec("fullSwipe", .boolean, required: true, "past the full-swipe threshold"),
            ArgSpec("buttons", .array(of: "button"), required: true, "the visible buttons, left to right"),
            ArgSpec(
                "spring", .object("spring"),
                "how to animate to the target; left out when this connection's rows are compact (options)"),
            ArgSpec(
                "accessibilityActions", .array(of: "accessibilityAction"),
                "every action of the row, leading outermost first, then trailing; left out when this connection's rows are compact (options)"
            ),
        ])

    static let button = ObjectSpec(
        name: "button", summary: "a visible button; the buttons tile the revealed strip",
        fields: [
            ArgSpec("action", .string(), required: true, "the action's name"),
            ArgSpec(
                "label", .string(),
                "left out when the action has none; while confirming, the action's confirmLabel"),
            ArgSpec("icon", .string(), "left out when the action has none, and while confirming"),
            ArgSpec("tint", .string(), required: true, "gray by default, red for destructive"),
            ArgSpec(
                "role", .string(values: [Role.destructive.rawValue]), "left out when the action has none"),
            ArgSpec("x", .number(), required: true, "points from the row's left edge"),
            ArgSpec("width", .number(), required: true, "points"),
        ])

    static let spring = ObjectSpec(
        name: "spring", summary: "SwiftUI's .spring(response:dampingFraction:) toward target",
        fields: [
            ArgSpec("target", .number(), required: true, "the offset the row settles at"),
            ArgSpec("response", .number(), required: true, "seconds"),
            ArgSpec("dampingFraction", .number(), required: true, "0 to 1"),
        ])

    static let accessibilityAction = ObjectSpec(
        name: "accessibilityAction", summary: "an action a screen reader offers without swiping",
        fields: [
            ArgSpec("action", .string(), required: true, "the action's name"),
            ArgSpec("label", .string(), required: true, "what to say"),
            ArgSpec("destructive", .boolean, required: true, "its role is destructive"),
            ArgSpec("edge", .string(values: ["leading", "trailing"]), required: true, "the edge it is on"),
        ])

    /// A threshold a drag crossed (rule 12), in a row reply's `crossed` (options `crossings`).
    static let crossing = ObjectSpec(
        name: "crossing",
        summary:
            "a threshold the request's drag crossed, in the reply's crossed list (in the order crossed; only with options crossings)",
        fields: [
            ArgSpec(
                "threshold", .string(values: Crossing.Threshold.allCases.map(\.rawValue)), required: true,
                "open: 0.8 of a button's width (a release opens); full: half the row, on an edge that allows full swipe (a release fires)"
            ),
            ArgSpec(
                "direction", .string(values: Crossing.Direction.allCases.map(\.rawValue)), required: true,
                "out: now past it; back: no longer past it"),
        ])

    public static let objects: [ObjectSpec] =
        [movie, event, row, button, spring, accessibilityAction, action, viewport, crossing, token, denial]
        + statusObjects

    static let token = ObjectSpec(
        name: "token", summary: "a token as token-list shows it (token-create's reply adds the token itself)",
        fields: [
            ArgSpec(
                "tokenId", .string(), required: true,
                "its public handle: token-revoke may name it; not a secret"),
            ArgSpec("name", .string(), required: true, "the person it signs in as"),
            ArgSpec(
                "role", .string(values: ["reader", "writer", "admin"]), required: true, "what it may do"),
            ArgSpec("created", .string(), required: true, "RFC 3339, UTC"),
            ArgSpec("expires", .string(), required: true, nullable: true, "RFC 3339, UTC; null: never"),
            ArgSpec(
                "lastUsed", .string(), nullable: true,
                "token-list only: when it last signed in (to the minute)"),
        ])

    static let denial = ObjectSpec(
        name: "denial", summary: "one refusal, as denials lists them",
        fields: [
            ArgSpec("at", .string(), required: true, "RFC 3339, UTC"),
            ArgSpec("user", .string(), required: true, nullable: true, "the person; null: anonymous"),
            ArgSpec("client", .integer(), required: true, "the connection's number"),
            ArgSpec("transport", .string(values: ["unix", "web"]), required: true, "how it is connected"),
            ArgSpec(
                "address", .string(), required: true,
                "a browser's address (as its trusted proxy forwarded it), a Unix peer's pid"),
            ArgSpec("op", .string(), required: true, "the op refused; empty for a header or a connection"),
            ArgSpec(
                "reason", .string(values: DenialReason.allCases.map(\.rawValue)), required: true,
                "forbidden, bad-token, expired-token, untrusted-header, rate-limited or no-rights"),
        ])

    static let viewport = ObjectSpec(
        name: "viewport", summary: "a connection's row width and layout direction",
        fields: [
            ArgSpec("width", .number(), required: true, "points"),
            ArgSpec(
                "direction", .string(values: Direction.allCases.map(\.rawValue)), required: true, "ltr or rtl"
            ),
        ])

    public static let events: [EventSpec] = [
        EventSpec(
            name: "hello", to: "the new connection", summary: "the server speaks first, on connect",
            fields: [
                ArgSpec(
                    "protocol", .integer(), required: true, "1; it stays 1 while only additions are made"),
                ArgSpec("server", .string(), required: true, "swiped/VERSION"),
                ArgSpec("client", .integer(), required: true, "this connection's number"),
                ArgSpec("seq", .integer(), required: true, "the latest durable event's seq"),
                ArgSpec(
                    "writer", .boolean, required: true,
                    "whether this connection may change the shared state (its role is writer or admin)"),
                ArgSpec(
                    "user", .string(), required: true, nullable: true,
                    "the person this connection acts for: a Unix peer's user name; null for an anonymous WebSocket"
                ),
                ArgSpec(
                    "role", .string(values: AccessRole.names), required: true,
                    "what it may do (protocol.md, \"Who may do what\")"),
                ArgSpec(
                    "log", .string(), required: true,
                    "the log's id: another id than before means another log (imported or restored), whose seqs are not the old ones; start over"
                ),
            ]),
        EventSpec(
            name: "bye", to: "one connection", summary: "the last message before the server closes it",
            fields: [
                ArgSpec(
                    "reason", .string(values: ByeReason.allCases.map(\.rawValue)), required: true,
                    "why (see reasons)")
            ], reasons: ByeReason.allCases),
        EventSpec(
            name: "role", to: "one connection",
            summary:
                "this connection's role changed (a role given or taken back, a token revoked or expired): from now on it may do what the new role may",
            fields: [
                ArgSpec(
                    "user", .string(), required: true, nullable: true,
                    "the person it acts for now; null: anonymous (its token went)"),
                ArgSpec(
                    "role", .string(values: AccessRole.names), required: true,
                    "the new role; none is followed by bye (revoked)"),
            ]),
        EventSpec(
            name: "movie", to: "subscribers", summary: "every durable change, in order, with no gap",
            fields: event.fields),
        EventSpec(
            name: "row", to: "the owning client",
            summary:
                "the server changed one of this client's rows (a close timer after a full swipe, a peek or a dismissal; rule 8; a movie changed; a confirmation timed out)",
            fields: [
                ArgSpec("row", .object("row"), required: true, "the row as it is now"),
                ArgSpec("removed", .boolean, "true when the row was dropped because its movie was removed"),
                ArgSpec(
                    "cancelled", .string(values: ["timeout"]),
                    "timeout: the row's confirmation got no tap within 3 s; the row closed, nothing fired"),
            ]),
        EventSpec(
            name: "peer-row", to: "connections watching peers",
            summary:
                "a row of a sharing connection changed (at most one event per row every 16 ms, the latest state last), or was closed because it stopped sharing or went",
            fields: [
                ArgSpec("client", .integer(), required: true, "the sharing connection's number"),
                ArgSpec(
                    "viewport", .object("viewport"), required: true,
                    "the sharer's viewport: the row's positions are in it"),
                ArgSpec("row", .object("row"), required: true, "the row as it is now, in the watcher's form"),
            ]),
    ]
}

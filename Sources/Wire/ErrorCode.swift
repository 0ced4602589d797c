// The protocol's error codes (protocol.md, "Errors"). A program switches on the code; a person
// reads the message, which always says what was wrong in plain words.
import Movies
import SwipeEngine

public enum ErrorCode: String, Sendable, CaseIterable {
    case badJSON = "bad-json"
    case badRequest = "bad-request"
    case unknownOp = "unknown-op"
    case notFound = "not-found"
    case conflict = "conflict"
    case notRevealed = "not-revealed"
    case tooLarge = "too-large"
    case storage = "storage"
    case forbidden = "forbidden"
    case overloaded = "overloaded"
    case unavailable = "unavailable"
    case `internal` = "internal"

    /// What the code means, in a sentence (protocol.md, "Errors"; `help` prints it).
    public var summary: String {
        switch self {
        case .badJSON:
            "the line is not one strict RFC 8259 JSON text, or not an object; the message names the byte offset"
        case .badRequest:
            "a missing or unknown argument, a wrong type, a value out of range, a duplicate key; the message names the argument"
        case .unknownOp: "op names no op; send {\"op\":\"help\"}"
        case .notFound: "no movie with that id (never existed or removed)"
        case .conflict:
            "the state is not what the request expects; reason says why: version, key, not-removed, nothing-to-undo, changed-since"
        case .notRevealed: "tap on an action whose button is not showing on that row"
        case .tooLarge: "the line was longer than --max-line"
        case .storage: "the disk refused the write (for example, full): nothing was written, try again later"
        case .forbidden: "this connection's role may not do this (protocol.md, \"Who may do what\")"
        case .overloaded:
            "the daemon's pending-write queue is full, or this person's rate limit is reached (retryAfter); nothing was written, try again"
        case .unavailable:
            "the shared database (--postgres) is unreachable: nothing was written, try again later; reads and swipes go on"
        case .internal: "a bug in swiped; the journal has details"
        }
    }
}

extension ConflictReason {
    /// The protocol's spelling (the error object's `reason`).
    public var name: String {
        switch self {
        case .version: "version"
        case .key: "key"
        case .notRemoved: "not-removed"
        case .nothingToUndo: "nothing-to-undo"
        case .changedSince: "changed-since"
        }
    }

    /// What the reason means, in a sentence (protocol.md, "Errors"; `help` prints it).
    public var summary: String {
        switch self {
        case .version: "expect is not the movie's version"
        case .key: "an idempotency key reused for a different command"
        case .notRemoved: "restore of a movie that is not removed"
        case .nothingToUndo: "undo with no change of this connection left to undo"
        case .changedSince: "undo of a change after which someone else changed the movie; nothing is written"
        }
    }
}

public struct WireError: Error, Equatable, Sendable {
    public var code: ErrorCode
    public var message: String
    /// Why, for a `conflict` (the error object's `reason`).
    public var reason: ConflictReason?
    /// For an `overloaded` past a person's rate limit: milliseconds until a mutation would go
    /// (the error object's `retryAfter`).
    public var retryAfter: UInt64?

    public init(
        _ code: ErrorCode, _ message: String, reason: ConflictReason? = nil, retryAfter: UInt64? = nil
    ) {
        self.code = code
        self.message = message
        self.reason = reason
        self.retryAfter = retryAfter
    }

    public static func badRequest(_ message: String) -> WireError { WireError(.badRequest, message) }
}

extension WireError {
    /// The error a connection answers an input its engine refused with (a replay says the same).
    public init(swipe error: SwipeError) {
        self =
            switch error {
            case .notRevealed(let row, let action):
                WireError(
                    .notRevealed,
                    "the \"\(RequestDecoder.truncated(action))\" button is not showing on row \"\(row)\"; swipe to reveal it first"
                )
            case .unknownAction(_, let action):
                .badRequest("this client's layout has no action \"\(RequestDecoder.truncated(action))\"")
            case .firing(let row, let action):
                WireError(
                    .notRevealed,
                    "row \"\(row)\" has already fired \"\(RequestDecoder.truncated(action))\" and closes in a moment; its button takes no tap until then"
                )
            case .noButtons(_, let edge):
                .badRequest("this client's layout has no \(edge.rawValue) actions; that edge cannot open")
            }
    }
}

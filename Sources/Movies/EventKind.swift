/// What an event says happened (issue 42): the log's and the wire's word for it, as a type, so
/// that a switch over the kinds this build makes needs no `default:` and a new kind does not
/// compile until every switch says what it does with it.
///
/// Protocol 1 must take kinds it does not know (a newer daemon's events, read by an older
/// swipectl or TUI): such a kind is kept, as it was spelled, in `unknown`, and a client shows it
/// by its movie. The log never holds one this build cannot fold (`MovieEvent(stream:kind:payload:)`
/// refuses it).
public enum EventKind: Hashable, Sendable, CustomStringConvertible {
    case added
    case watchedToggled
    case watchedWithFriendsToggled
    case removed
    case restored
    case moved
    /// A kind this build does not know, as it was spelled.
    case unknown(String)

    /// Every kind this build makes, in the order `help` lists them.
    public static let known: [EventKind] = [
        .added, .watchedToggled, .watchedWithFriendsToggled, .removed, .restored, .moved,
    ]

    /// The kind spelled `raw` (the log's and the wire's word).
    public init(_ raw: String) {
        switch raw {
        case "added": self = .added
        case "watched-toggled": self = .watchedToggled
        case "watched-with-friends-toggled": self = .watchedWithFriendsToggled
        case "removed": self = .removed
        case "restored": self = .restored
        case "moved": self = .moved
        default: self = .unknown(raw)
        }
    }

    /// Its word in the log and on the wire.
    public var rawValue: String {
        switch self {
        case .added: "added"
        case .watchedToggled: "watched-toggled"
        case .watchedWithFriendsToggled: "watched-with-friends-toggled"
        case .removed: "removed"
        case .restored: "restored"
        case .moved: "moved"
        case .unknown(let raw): raw
        }
    }

    public var description: String { rawValue }
}

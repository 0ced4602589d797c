// Who may do what (issue 45). A person is a name; every connection acts for one person, or for
// nobody (an anonymous browser), with one role. The roles are ordered: each may do all that the
// ones below it may.

/// What a connection may do. `Comparable` in the order of the cases, so that a right is one
/// comparison: `role >= .writer`.
public enum AccessRole: String, Sendable, CaseIterable, Comparable, CustomStringConvertible {
    /// Nothing but `ping`, `help` and `auth`: an anonymous browser under `--web-anonymous none`,
    /// and a person whose access was taken back (`role NAME none`).
    case none
    /// Read the list, history and events; swipe, record, share.
    case reader
    /// And change the list (every mutating op, a gesture that fires a bound action, `undo`).
    case writer
    /// And manage tokens and roles, see every client in `status`, read the denials.
    case admin

    public static func < (a: AccessRole, b: AccessRole) -> Bool { a.rank < b.rank }

    private var rank: Int {
        switch self {
        case .none: 0
        case .reader: 1
        case .writer: 2
        case .admin: 3
        }
    }

    public var description: String { rawValue }

    /// The roles a person can be given, for `help` and the command lines.
    public static let names = allCases.map(\.rawValue)
}

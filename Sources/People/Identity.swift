// Which door a connection came in by, and so who it is. The same name from two doors is the
// same person: alice at her terminal (her uid's name) and alice in her browser (a token made
// for "alice") share a role given to "alice", a rate limit and their changes' author.

/// How a connection said who it is.
public enum Door: Equatable, Sendable {
    /// A Unix-socket peer, by its credentials (`SO_PEERCRED`): its user's name.
    case unix(uid: UInt32)
    /// The `auth` op, or the web page's sign-in cookie, with a token: its id.
    case token(id: String)
    /// A trusted reverse proxy's header (`--web-trust-header`).
    case proxy
    /// Nobody yet: a WebSocket before `auth`.
    case anonymous

    /// For the journal's `DOOR=` and `status`.
    public var name: String {
        switch self {
        case .unix: "unix"
        case .token: "token"
        case .proxy: "proxy"
        case .anonymous: "anonymous"
        }
    }
}

/// Who a connection acts for, and with what rights.
public struct Identity: Equatable, Sendable {
    /// The person, nil for an anonymous connection.
    public var user: String?
    public var role: AccessRole
    public var door: Door

    public init(user: String?, role: AccessRole, door: Door) {
        self.user = user
        self.role = role
        self.door = door
    }

    public static func anonymous(_ role: AccessRole) -> Identity {
        Identity(user: nil, role: role, door: .anonymous)
    }

    public var mayWrite: Bool { role >= .writer }
}

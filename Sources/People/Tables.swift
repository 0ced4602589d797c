// What the store keeps about people: the tokens (only their hashes) and the roles admins gave
// to names. Tables beside the events, not events: `history` stays the list's history, and a
// revoked token is gone rather than folded away. Every daemon on one database reads the same
// tables (the people store polls them), so a change made on one reaches all.

/// One token. The token itself is never kept: only its SHA-256, which is what `auth` looks up.
public struct TokenRecord: Equatable, Sendable {
    /// The token's public handle (12 hex digits of its hash): what `token-list` shows and
    /// `token-revoke` may name, never enough to sign in with.
    public var id: String
    /// The person it signs in as.
    public var name: String
    /// The role it gives when no role was given to `name` (`PeopleTables.role`).
    public var role: AccessRole
    /// SHA-256 of the token's UTF-8 bytes: 32 bytes.
    public var hash: [UInt8]
    /// Microseconds since the epoch.
    public var created: UInt64
    /// When it stops working (microseconds since the epoch), nil for never.
    public var expires: UInt64?
    /// When it last signed a connection in, nil for never (recorded at most once a minute).
    public var lastUsed: UInt64?

    public init(
        id: String, name: String, role: AccessRole, hash: [UInt8], created: UInt64, expires: UInt64? = nil,
        lastUsed: UInt64? = nil
    ) {
        self.id = id
        self.name = name
        self.role = role
        self.hash = hash
        self.created = created
        self.expires = expires
        self.lastUsed = lastUsed
    }

    public func expired(at now: UInt64) -> Bool { expires.map { now >= $0 } ?? false }
}

/// The people tables as the store last read them.
public struct PeopleTables: Equatable, Sendable {
    /// In the order they were made.
    public private(set) var tokens: [TokenRecord]
    /// The roles admins gave to names; they win over what a door would give (`role(of:door:)`).
    public private(set) var grants: [String: AccessRole]
    /// Index of `tokens` by hash.
    private var byHash: [[UInt8]: Int]

    public init(tokens: [TokenRecord] = [], grants: [String: AccessRole] = [:]) {
        self.tokens = tokens
        self.grants = grants
        byHash = [:]
        for (i, t) in tokens.enumerated() { byHash[t.hash] = i }
    }

    public static func == (a: PeopleTables, b: PeopleTables) -> Bool {
        a.tokens == b.tokens && a.grants == b.grants
    }

    /// The token whose hash is `hash`. The hash is of a secret of 192 random bits, so where a
    /// lookup by it spends its time says nothing about how close a guess was; the final
    /// comparison is in constant time all the same (`constantTimeEqual`).
    public func token(hash: [UInt8]) -> TokenRecord? {
        guard let i = byHash[hash], constantTimeEqual(tokens[i].hash, hash) else { return nil }
        return tokens[i]
    }

    public func token(id: String) -> TokenRecord? { tokens.first { $0.id == id } }

    /// Whether `other` gives every connection the same rights: the same tokens (when they were
    /// last used aside) and the same roles given. A sign-in's `touch` changes the tables but
    /// nobody's rights, and re-judging every connection for it would be work for nothing.
    public func sameRights(as other: PeopleTables) -> Bool {
        guard grants == other.grants, tokens.count == other.tokens.count else { return false }
        return zip(tokens, other.tokens).allSatisfy { a, b in
            var a = a
            a.lastUsed = b.lastUsed
            return a == b
        }
    }

    /// The role `name` has when its door would give `doorRole`: the role an admin gave the
    /// name, else the door's. Root (uid 0) is always admin, whatever is given to "root", so that
    /// the operator cannot lock themselves out of their own daemon.
    public func role(of name: String?, door: Door, doorRole: AccessRole) -> AccessRole {
        if case .unix(uid: 0) = door { return .admin }
        guard let name, let given = grants[name] else { return doorRole }
        return given
    }

    /// The role a connection signed in with `token` has now: nil when the token is gone or
    /// expired (the connection goes back to being anonymous).
    public func role(ofToken id: String, at now: UInt64) -> (name: String, role: AccessRole)? {
        guard let t = token(id: id), !t.expired(at: now) else { return nil }
        return (t.name, role(of: t.name, door: .token(id: id), doorRole: t.role))
    }
}

/// Equality of two byte strings that takes the same time wherever they differ.
public func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    var diff: UInt8 = 0
    for i in a.indices { diff |= a[i] ^ b[i] }
    return diff == 0
}

/// A person's name: what a Unix user, a token's owner and a proxy's user are called. 1 to 64
/// bytes of UTF-8 with no control characters and no spaces (user names, e-mail addresses).
public enum PersonName {
    public static let maxBytes = 64

    /// Why `name` is not a person's name, nil when it is.
    public static func problem(_ name: String) -> String? {
        let bytes = name.utf8.count
        if bytes == 0 { return "a name is 1 to \(maxBytes) bytes; this one is empty" }
        if bytes > maxBytes { return "a name is 1 to \(maxBytes) bytes; this one is \(bytes)" }
        for s in name.unicodeScalars
        where s.properties.generalCategory == .control || s.properties.isWhitespace {
            return
                "a name has no spaces or control characters (U+\(String(s.value, radix: 16, uppercase: true)))"
        }
        return nil
    }
}

/// A change to the people tables, as an admin asks it (or `auth` records a token's use).
public enum PeopleChange: Equatable, Sendable {
    /// Adds a token (its id and hash are new).
    case createToken(TokenRecord)
    /// Deletes `name`'s tokens: all of them, or the one with `id`.
    case revokeTokens(name: String, id: String?)
    /// Gives `name` a role, or takes back the role given (nil: the door decides again).
    case setRole(name: String, role: AccessRole?)
    /// Records that token `id` signed a connection in at `at`.
    case touch(id: String, at: UInt64)
}

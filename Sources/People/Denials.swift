// What was refused, for admins (`denials`, as Redis's `ACL LOG`), the journal and the metrics.

/// Why a request or a sign-in was refused: the metrics' `reason` label and the journal's
/// `REASON=`, a closed set.
public enum DenialReason: String, Sendable, CaseIterable {
    /// The connection's role may not send this op (or fire this gesture's bound action).
    case forbidden
    /// `auth` with a token that is no token (never made, or revoked).
    case badToken = "bad-token"
    /// `auth` with a token that expired.
    case expiredToken = "expired-token"
    /// A trusted-proxy header from an address that is not a trusted proxy: ignored.
    case untrustedHeader = "untrusted-header"
    /// Mutations past the person's rate limit.
    case rateLimited = "rate-limited"
    /// A connection whose person has no rights left (role none): closed, or not let in.
    case noRights = "no-rights"
}

/// One refusal.
public struct Denial: Equatable, Sendable {
    /// Microseconds since the epoch.
    public var at: UInt64
    /// The person, nil when anonymous.
    public var user: String?
    public var client: UInt64
    /// "unix" or "web".
    public var transport: String
    /// The peer's address: a browser's (as the trusted proxy forwarded it), a Unix peer's pid.
    public var address: String
    /// The op refused ("" for what no op asked: a header, a connection).
    public var op: String
    public var reason: DenialReason

    public init(
        at: UInt64, user: String?, client: UInt64, transport: String, address: String, op: String,
        reason: DenialReason
    ) {
        self.at = at
        self.user = user
        self.client = client
        self.transport = transport
        self.address = address
        self.op = op
        self.reason = reason
    }
}

/// The latest `capacity` denials, oldest first, and a count per reason since start.
public struct DenialLog: Sendable {
    public let capacity: Int
    private var ring: [Denial] = []
    private var next = 0
    public private(set) var counts: [DenialReason: UInt64] = [:]

    public init(capacity: Int = 100) {
        precondition(capacity > 0, "a denial log holds at least one")
        self.capacity = capacity
    }

    public mutating func append(_ denial: Denial) {
        counts[denial.reason, default: 0] &+= 1
        if ring.count < capacity {
            ring.append(denial)
        } else {
            ring[next] = denial
            next = (next + 1) % capacity
        }
    }

    /// Oldest first.
    public var latest: [Denial] { Array(ring[next...] + ring[..<next]) }

    public func count(_ reason: DenialReason) -> UInt64 { counts[reason] ?? 0 }
}

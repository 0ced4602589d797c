// The two throttles of people: failed sign-ins slowed per client address, and mutations
// limited per person. Pure: the daemon hands them the time.

/// Slows guessing: each failed `auth` from an address doubles the wait, from that failure,
/// before that address's next `auth` is answered (from 100 ms, at most 5 s), and a quiet minute
/// forgets it. Slowed,
/// never locked out: a person who mistyped waits at most 5 s, and behind a proxy (where every
/// browser has the proxy's address) one guesser cannot lock everyone out, only slow the proxy's
/// sign-ins; so the address is the one the trusted proxy forwarded, not the proxy's own.
public struct AuthThrottle: Sendable {
    public static let firstDelay: UInt64 = 100_000
    public static let maxDelay: UInt64 = 5_000_000
    public static let forgetAfter: UInt64 = 60_000_000
    /// Addresses remembered at most: past it, the one failed longest ago is forgotten (a
    /// flood of addresses costs memory no more than this).
    public let capacity: Int

    private struct Entry: Sendable {
        var failures: Int
        var last: UInt64
    }
    private var entries: [String: Entry] = [:]

    public init(capacity: Int = 10_000) {
        self.capacity = capacity
    }

    /// How long to wait, from `now`, before answering an `auth` from `address`: its last
    /// failure's time plus the wait its failures earned, less the time gone since.
    public func delay(for address: String, now: UInt64) -> UInt64 {
        guard let e = entries[address], now &- e.last < Self.forgetAfter, e.failures > 0 else { return 0 }
        let shift = UInt64(min(e.failures - 1, 20))
        let until = e.last + min(Self.firstDelay << shift, Self.maxDelay)
        return until > now ? until - now : 0
    }

    public mutating func failed(_ address: String, now: UInt64) {
        var e = entries[address] ?? Entry(failures: 0, last: now)
        if now &- e.last >= Self.forgetAfter { e.failures = 0 }
        e.failures += 1
        e.last = now
        entries[address] = e
        if entries.count > capacity, let oldest = entries.min(by: { $0.value.last < $1.value.last })?.key {
            entries[oldest] = nil
        }
    }

    public mutating func succeeded(_ address: String) { entries[address] = nil }

    public var remembered: Int { entries.count }
}

/// A token bucket per person: `rate` mutations a second, up to `burst` at once.
public struct RateLimiter: Sendable {
    public struct Limit: Equatable, Sendable {
        public var perSecond: Double
        public var burst: Double

        public init(perSecond: Double, burst: Double) {
            precondition(perSecond > 0 && burst >= 1, "a rate limit lets one through")
            self.perSecond = perSecond
            self.burst = burst
        }

        /// `N/s` or `N/s,BURST` (the burst defaults to N).
        public static func parse(_ text: String) -> Limit? {
            let parts = text.split(separator: ",", omittingEmptySubsequences: false)
            guard parts.count <= 2, parts[0].hasSuffix("/s"), let n = Double(parts[0].dropLast(2)), n > 0,
                n.isFinite
            else { return nil }
            guard parts.count == 2 else { return n >= 1 ? Limit(perSecond: n, burst: n) : nil }
            guard let b = Double(parts[1]), b >= 1, b.isFinite else { return nil }
            return Limit(perSecond: n, burst: b)
        }
    }

    public let limit: Limit
    private struct Bucket: Sendable {
        var tokens: Double
        var at: UInt64
    }
    private var buckets: [String: Bucket] = [:]

    public init(_ limit: Limit) {
        self.limit = limit
    }

    /// Takes one mutation for `person` at `now`: nil when it may go, else how long to wait
    /// (microseconds) before one would.
    public mutating func take(_ person: String, now: UInt64) -> UInt64? {
        var b = buckets[person] ?? Bucket(tokens: limit.burst, at: now)
        let elapsed = Double(now &- b.at) / 1e6
        b.tokens = min(limit.burst, b.tokens + elapsed * limit.perSecond)
        b.at = now
        if b.tokens >= 1 {
            b.tokens -= 1
            buckets[person] = b
            return nil
        }
        buckets[person] = b
        return UInt64(((1 - b.tokens) / limit.perSecond * 1e6).rounded(.up))
    }

    /// Forgets full buckets (a person idle long enough to have every token back), so that the
    /// map holds only the people who are writing now.
    public mutating func sweep(now: UInt64) {
        let full = limit.burst / limit.perSecond * 1e6
        buckets = buckets.filter { Double(now &- $0.value.at) < full }
    }

    public var people: Int { buckets.count }
}

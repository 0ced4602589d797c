// The log's values that both stores share, with no storage of their own: an event to append and
// one as stored, the durability asked of a commit. The SQLite log (EventLog) re-exports them.

/// An event to append: the log knows nothing of its meaning.
public struct NewEvent: Equatable, Hashable, Sendable {
    /// What the event is about (for movies: the movie id).
    public var stream: String
    public var kind: String
    public var payload: [UInt8]
    /// Idempotency key, unique across the whole log when present.
    public var key: String?
    /// Who made it (issue 46: the person whose connection caused it), nil when not known.
    public var author: String?

    public init(
        stream: String, kind: String, payload: [UInt8] = [], key: String? = nil, author: String? = nil
    ) {
        self.stream = stream
        self.kind = kind
        self.payload = payload
        self.key = key
        self.author = author
    }
}

/// An event as stored: with its global, gapless sequence number (from 1) and UTC time.
public struct StoredEvent: Equatable, Hashable, Sendable {
    public var seq: UInt64
    public var stream: String
    public var kind: String
    public var payload: [UInt8]
    public var key: String?
    /// Microseconds since 1970-01-01T00:00:00Z; never decreases along the log.
    public var at: Int64
    /// Who made it (issue 46), nil for an event stored before authors were kept (schema 2 and
    /// older) or made by nobody known.
    public var author: String?

    public init(
        seq: UInt64, stream: String, kind: String, payload: [UInt8], key: String?, at: Int64,
        author: String? = nil
    ) {
        self.seq = seq
        self.stream = stream
        self.kind = kind
        self.payload = payload
        self.key = key
        self.at = at
        self.author = author
    }
}

/// When a commit is reported as successful.
public enum Durability: String, Sendable, CaseIterable {
    /// `synchronous=FULL`: the WAL is fsynced before a commit returns; a crash loses nothing reported.
    case full
    /// `synchronous=NORMAL`: a power loss may lose the last commits (a process crash does not).
    case normal
}

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

/// Why the log refused or failed. Messages name the file and say what was wrong.
public enum LogError: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
    /// The disk is full (SQLITE_FULL): the transaction was rolled back, nothing of it is visible,
    /// the log stays usable and later appends work once space returns.
    case full(String)
    /// An I/O error (SQLITE_IOERR), e.g. a failed fsync on commit. Fatal: the page cache can no
    /// longer be trusted; stop taking writes and exit non-zero so a restart reads what is on disk.
    case io(String)
    /// The file is damaged (not a database, or corrupt pages, or a swiped log missing its tables).
    case corrupt(String)
    /// The file is a valid SQLite database of another application, or of a newer schema.
    case foreign(String)
    /// An idempotency key is already in the log.
    case keyConflict(String)
    /// Not attempted: an earlier batch failed and the committer waits for `resume()`.
    case aborted(String)
    /// The log (or committer) is closed.
    case closed(String)
    /// Any other SQLite or system failure.
    case other(String)

    public var message: String {
        switch self {
        case .full(let m), .io(let m), .corrupt(let m), .foreign(let m), .keyConflict(let m),
            .aborted(let m), .closed(let m), .other(let m):
            return m
        }
    }

    /// True when the owner must stop writing and exit non-zero.
    public var isFatal: Bool {
        if case .io = self { return true }
        return false
    }

    public var description: String { message }
}

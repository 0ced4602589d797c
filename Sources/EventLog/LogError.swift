// The SQLite log's failures, in SQLite's terms (SQLITE_FULL, SQLITE_IOERR, a damaged file).

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

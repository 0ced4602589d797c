// The one place where the errors of the layers below become a store's errors.
import EventLog
import Movies

extension StoreError {
    /// A refused command keeps its code and message (the Session answers a gesture's
    /// `MovieState.notFound` through this too).
    public init(_ e: CommandError) {
        switch e {
        case .notFound(let m): self.init(.notFound, m)
        case .badRequest(let m): self.init(.badRequest, m)
        case .conflict(let reason, let m): self.init(.conflict, m, reason: reason)
        }
    }

    init(_ e: LogError) {
        switch e {
        case .full(let m): self.init(.storage, "the disk is full; nothing was saved (\(m))")
        case .io(let m):
            self.init(.storage, "I/O error writing the event log; the daemon stops (\(m))", fatal: true)
        case .keyConflict(let m): self.init(.internal, "idempotency key already in the log (\(m))")
        default: self.init(.storage, e.message)
        }
    }

    /// Opening: the log's own message, which names the file.
    init(opening e: LogError) {
        self.init(.storage, e.message, fatal: e.isFatal)
    }

    static func keyReused(_ key: String) -> StoreError {
        StoreError(
            .conflict, "key \(String(reflecting: key)) was already used for a different command", reason: .key
        )
    }

    static let closed = StoreError(.internal, "the store is closed")
}

extension MovieCommand {
    /// Whether this command, sent again with a key, is the command that wrote `event` under that
    /// key: the same kind on the same movie, or an add of the same title and image (a missing
    /// image being the id, as `decide` makes it). One rule for pending and committed keys, and
    /// for every store.
    func wrote(_ event: MovieEvent) -> Bool {
        switch (op, event) {
        case (.add(let title, let image), .added(let id, let t, let i)):
            return title == t && (image ?? id) == i
        case (.toggleWatched(let m), .watchedToggled(let id)),
            (.toggleWatchedWithFriends(let m), .watchedWithFriendsToggled(let id)),
            (.remove(let m), .removed(let id)), (.restore(let m), .restored(let id)):
            return m == id
        case (.undo(let u), _):
            return u.movie == event.movieID && u.compensation.kind == event.kind
        default:
            return false
        }
    }
}

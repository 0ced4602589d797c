// A refused command as a store's error, and the rules every store applies to commands and keys.
// (The event log's errors become a store's in StoreSQLite's StoreError+LogError.swift.)
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

    package static func keyReused(_ key: String) -> StoreError {
        StoreError(
            .conflict, "key \(String(reflecting: key)) was already used for a different command", reason: .key
        )
    }

    package static let closed = StoreError(.internal, "the store is closed")
}

extension MovieCommand {
    /// Whether this command, sent again with a key, is the command that wrote `event` under that
    /// key: the same kind on the same movie, or an add of the same title and image (a missing
    /// image being the id, as `decide` makes it). One rule for pending and committed keys, and
    /// for every store.
    package func wrote(_ event: MovieEvent) -> Bool {
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

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
    /// key (`undoes`: the seq the logged event undoes, nil when it undoes none): the same kind on
    /// the same movie, or an add of the same title and image (a missing image being the id, as
    /// `decide` makes it). Any undo is the undo a key wrote: which change an undo compensates
    /// is the connection's to know, and a retry on a new connection (or once the first undo
    /// used up the connection's changes) would pick another. An undo is never a key's toggle,
    /// nor a toggle a key's undo, though both write the same kind. One rule for pending and
    /// committed keys, and for every store.
    package func wrote(_ event: MovieEvent, undoes: UInt64?) -> Bool {
        // By the command's op, each matched against the one kind of event it writes: a `default`
        // over the pairs would also have swallowed a new op, answered "another command" forever.
        if isUndo { return undoes != nil }
        guard undoes == nil else { return false }
        switch op {
        case .add(let title, let image):
            guard case .added(let id, let t, let i) = event else { return false }
            return title == t && (image ?? id) == i
        case .toggleWatched(let m):
            guard case .watchedToggled(let id) = event else { return false }
            return m == id
        case .toggleWatchedWithFriends(let m):
            guard case .watchedWithFriendsToggled(let id) = event else { return false }
            return m == id
        case .remove(let m):
            guard case .removed(let id) = event else { return false }
            return m == id
        case .restore(let m):
            guard case .restored(let id, _) = event else { return false }
            return m == id
        case .move(let m, let to):
            guard case .moved(let id, let place, _) = event else { return false }
            return m == id && to == place
        case .undo, .undoNothing:
            preconditionFailure("an undo past isUndo: \(self)")
        }
    }
}

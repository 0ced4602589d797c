/// The catalogue: the fold of the movie events, in list order.
///
/// `decide` validates a command against this state and names the one event it would write;
/// `apply` folds a stored event in. Neither does I/O.
///
/// List order is the order of the movies' keys (`OrderKey`, issue 48). Movies are kept in an
/// array in that order, so that `list` streams a copy-on-write array; each live movie has a
/// handle, stable while it lives, and `positions` says where each handle is: a toggle finds its
/// movie by one hash of its id, and a move or a removal renumbers the movies it shifts by their
/// handles, without hashing their ids. A move shifts the movies between its two places by one
/// (a memmove of 64 bytes a movie, `MovieState+Order.swift`): O(distance), which at 100,000
/// movies is at most a few hundred microseconds (BENCHMARKS.md, "Reordering").
public struct MovieState: Equatable, Sendable {
    /// Movies in list order.
    public internal(set) var movies: [Movie] = []
    /// The key and the handle of each movie of `movies`, in the same order (keys strictly
    /// increasing). One array, not two, and the free handles chained through `positions`: every
    /// array is a reference the state's copies retain and release, and the loop passes the state
    /// around on every command.
    var slots: [Slot] = []
    /// Each live movie's handle, by id.
    var index: [String: Int] = [:]
    /// Where each handle's movie is in `movies`; for a free handle, -2 - the next free one (-1:
    /// none), from `freeHandle`.
    var positions: [Int] = []
    /// The first free handle, -1 when none is.
    var freeHandle = -1

    struct Slot: Equatable, Sendable {
        var key: OrderKey
        var handle: Int
    }
    /// Every removed movie, by id: its last state (`version` is the seq of its removal, so
    /// that a command or a gesture on it can say when it went) and its key, for `restore`.
    /// With the ids in `index`, every id that ever existed: ids are never reused.
    public internal(set) var removed: [String: RemovedMovie] = [:]
    /// Sequence number of the last event folded in (0 when empty).
    public internal(set) var lastSeq: UInt64 = 0
    /// Next suffix to try per slug base (a hint, not state: not compared, not persisted).
    var suffixHint: [String: Int] = [:]

    public static let maxTitleLength = 200
    public static let maxImageBytes = 1024

    public init() {}

    /// Where the live movie `id` is in `movies`. (No closures here: one that reads `positions`
    /// or `movies` captures the whole state, a copy of every array's reference, retained and
    /// released: ≈ 400 instructions on every toggle, callgrind.)
    @inline(__always)
    public func offset(of id: String) -> Int? {
        guard let h = index[id] else { return nil }
        return positions[h]
    }

    public func movie(_ id: String) -> Movie? {
        guard let i = offset(of: id) else { return nil }
        return movies[i]
    }

    /// Where the live movie at `offset` is, by its neighbour: first, or after the movie before it.
    public func place(at offset: Int) -> ListPlace { offset == 0 ? .first : .after(movies[offset - 1].id) }

    /// Where the movies after `id` in list order start in `movies`: after it when it is in the
    /// list, at the place `restore` would give it back when it was removed (so a page boundary
    /// stays put when its movie goes); nil for an id that never existed. For `list`'s `after`.
    public func position(after id: String) -> Int? {
        if let i = offset(of: id) { return i + 1 }
        guard let gone = removed[id] else { return nil }
        return slot(for: gone.key)
    }

    /// Where a movie of key `key` goes among the live movies: after every one whose key is not
    /// greater (`keys` is increasing).
    func slot(for key: OrderKey) -> Int {
        var low = 0
        var high = slots.count
        while low < high {
            let mid = (low + high) / 2
            if slots[mid].key <= key { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// Whether a movie ever had `id`, removed ones included.
    public func isUsed(_ id: String) -> Bool { index[id] != nil || removed[id] != nil }

    /// The seq of the removal of every removed id.
    public var removedAt: [String: UInt64] { removed.mapValues(\.movie.version) }

    /// The live movies' keys, in list order (for tests and `verify`).
    public var orderKeys: [OrderKey] { slots.map(\.key) }

    /// Handles are how the state finds a movie, not what it is: two states of the same movies,
    /// keys, removed movies and seq are equal however their handles were given out.
    public static func == (a: MovieState, b: MovieState) -> Bool {
        a.movies == b.movies && a.slots.elementsEqual(b.slots, by: { $0.key == $1.key })
            && a.removed == b.removed
            && a.lastSeq == b.lastSeq
    }

    // MARK: - Decide

    /// The event `command` would write, or why it is refused.
    public func decide(_ command: MovieCommand) throws(CommandError) -> MovieEvent {
        switch command.op {
        case .add(let title, let image):
            if command.expect != nil {
                throw .badRequest("expect applies to an existing movie; add creates a new one")
            }
            let title = try MovieState.checkedTitle(title)
            let id = freshID(for: title)
            let image = image ?? id  // protocol.md: `image` defaults to the id
            guard image.utf8.count <= MovieState.maxImageBytes else {
                throw .badRequest("image is longer than \(MovieState.maxImageBytes) bytes")
            }
            guard !image.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw .badRequest("image contains control characters")
            }
            return .added(id: id, title: title, image: image)
        case .toggleWatched(let id):
            try check(id, command.expect)
            return .watchedToggled(id: id)
        case .toggleWatchedWithFriends(let id):
            try check(id, command.expect)
            return .watchedWithFriendsToggled(id: id)
        case .remove(let id):
            try check(id, command.expect)
            return .removed(id: id)
        case .restore(let id):
            guard let gone = removed[id] else {
                if movie(id) != nil {
                    throw .conflict(.notRemoved, "movie \(MovieState.quoted(id)) is not removed")
                }
                throw notFound(id)
            }
            if let expect = command.expect, expect != gone.movie.version {
                throw .conflict(
                    .version,
                    "movie \(MovieState.quoted(id)) was removed at seq \(gone.movie.version), not \(expect) as expected"
                )
            }
            return .restored(id: id, to: restorePlace(of: gone))
        case .move(let id, let to):
            guard let i = offset(of: id) else { throw notFound(id) }
            try MovieState.check(id, at: movies[i].version, command.expect)
            if case .after(let other) = to {
                guard other != id else {
                    throw .badRequest("a movie cannot go after itself (\(MovieState.quoted(id)))")
                }
                guard index[other] != nil else {
                    let why = notFound(other).message
                    throw .notFound("after: \(why)")
                }
            }
            return .moved(id: id, to: to, from: place(at: i))
        case .undo(let undo):
            return try decide(undo)
        case .undoNothing:
            throw .conflict(.nothingToUndo, MovieState.nothingToUndo)
        }
    }

    /// What `undo` says when its connection has no change left to undo.
    public static let nothingToUndo = "this connection has no change left to undo"

    private func check(_ id: String, _ expect: UInt64?) throws(CommandError) {
        guard let i = offset(of: id) else { throw notFound(id) }
        try MovieState.check(id, at: movies[i].version, expect)
    }

    /// Static: it needs nothing of the state, and a method called from `decideAndApply` (a
    /// mutating one) had the whole state copied for its `self` (every array retained and
    /// released, on every toggle: callgrind).
    private static func check(_ id: String, at version: UInt64, _ expect: UInt64?) throws(CommandError) {
        if let expect, expect != version {
            throw .conflict(
                .version, "movie \(MovieState.quoted(id)) is at version \(version), not \(expect) as expected"
            )
        }
    }

    /// `decide`, then `apply` of the event it names at the next seq: what a store does with
    /// each command against the state it projects. A toggle finds its movie once rather than
    /// twice: every lookup hashes the id (SipHash), and toggles are most of the commands.
    public mutating func decideAndApply(_ command: MovieCommand) throws(CommandError) -> (
        event: MovieEvent, after: Movie?
    ) {
        let seq = lastSeq + 1
        switch command.op {
        case .toggleWatched(let id), .toggleWatchedWithFriends(let id):
            guard let h = index[id] else { throw notFound(id) }
            let i = positions[h]
            try MovieState.check(id, at: movies[i].version, command.expect)
            lastSeq = seq
            movies[i].version = seq
            if case .toggleWatched = command.op {
                movies[i].watched.toggle()
                return (.watchedToggled(id: id), movies[i])
            }
            movies[i].watchedWithFriends.toggle()
            return (.watchedWithFriendsToggled(id: id), movies[i])
        case .add, .remove, .restore, .move, .undo, .undoNothing:
            let event = try decide(command)
            return (event, apply(event, seq: seq))
        }
    }

    /// The compensating event of `undo`, when the movie is still at the version the undo expects
    /// (live for a toggle, a remove or a move, removed for a restore).
    private func decide(_ undo: Undo) throws(CommandError) -> MovieEvent {
        let id = undo.movie
        let now: UInt64
        if let i = offset(of: id) {
            now = movies[i].version
            if now == undo.version {
                switch undo.compensation {
                case .toggleWatched: return .watchedToggled(id: id)
                case .toggleWatchedWithFriends: return .watchedWithFriendsToggled(id: id)
                case .remove: return .removed(id: id)
                case .reorder(let to):
                    return .moved(id: id, to: placeBack(id, at: i, to: to), from: place(at: i))
                case .restore: break
                }
            }
        } else if let gone = removed[id] {
            now = gone.movie.version
            if now == undo.version && undo.compensation == .restore {
                return .restored(id: id, to: restorePlace(of: gone))
            }
        } else {
            throw notFound(id)
        }
        throw .conflict(
            .changedSince,
            "movie \(MovieState.quoted(id)) was changed by someone else since (at seq \(now)); seq \(undo.original) is not undone"
        )
    }

    static func quoted(_ id: String) -> String { "\"\(MessageText.truncated(id))\"" }

    // MARK: - Seed

    /// The ten movies appended on first start with an empty log, in this order.
    public static let seedCatalogue: [MovieEvent] = [
        ("godfather", "The Godfather"), ("dark_knight", "The Dark Knight"),
        ("pulp_fiction", "Pulp Fiction"), ("forrest_gump", "Forrest Gump"),
        ("inception", "Inception"), ("matrix", "The Matrix"), ("seven", "Se7en"),
        ("silence_of_lambs", "The Silence of the Lambs"),
        ("saving_private_ryan", "Saving Private Ryan"), ("the_green_mile", "The Green Mile"),
    ].map { MovieEvent.added(id: $0.0, title: $0.1, image: $0.0) }
}

/// A removed movie as the fold keeps it, so that `restore` can bring it back.
public struct RemovedMovie: Equatable, Sendable {
    /// Its last state; `version` is the seq of its removal.
    public var movie: Movie
    /// Its key when it went: where it comes back (`MovieState.slot(for:)`).
    public var key: OrderKey

    public init(movie: Movie, key: OrderKey) {
        self.movie = movie
        self.key = key
    }
}

/// The catalogue: the fold of the movie events, in insertion order.
///
/// `decide` validates a command against this state and names the one event it would write;
/// `apply` folds a stored event in. Neither does I/O.
public struct MovieState: Equatable, Sendable {
    /// Movies in insertion order.
    public private(set) var movies: [Movie] = []
    /// Position of each movie in `movies`.
    private var index: [String: Int] = [:]
    /// The seq of the `added` event of each movie of `movies`, in the same order: a movie's
    /// place in list order, which a restored movie takes again. Increasing.
    private var order: [UInt64] = []
    /// Every removed movie, by id: its last state (`version` is the seq of its removal, so
    /// that a command or a gesture on it can say when it went) and its place, for `restore`.
    /// With the ids in `index`, every id that ever existed: ids are never reused.
    public private(set) var removed: [String: RemovedMovie] = [:]
    /// Sequence number of the last event folded in (0 when empty).
    public private(set) var lastSeq: UInt64 = 0
    /// Next suffix to try per slug base (a hint, not state: not compared, not persisted).
    private var suffixHint: [String: Int] = [:]

    public static let maxTitleLength = 200
    public static let maxImageBytes = 1024

    public init() {}

    public func movie(_ id: String) -> Movie? { index[id].map { movies[$0] } }

    /// Where the movies after `id` in list order start in `movies`: after it when it is in the
    /// list, at the place `restore` would give it back when it was removed (so a page boundary
    /// stays put when its movie goes); nil for an id that never existed. For `list`'s `after`.
    public func position(after id: String) -> Int? {
        if let i = index[id] { return i + 1 }
        guard let gone = removed[id] else { return nil }
        var low = 0
        var high = order.count
        while low < high {
            let mid = (low + high) / 2
            if order[mid] < gone.addedSeq { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// Whether a movie ever had `id`, removed ones included.
    public func isUsed(_ id: String) -> Bool { index[id] != nil || removed[id] != nil }

    /// The seq of the removal of every removed id.
    public var removedAt: [String: UInt64] { removed.mapValues(\.movie.version) }

    public static func == (a: MovieState, b: MovieState) -> Bool {
        a.movies == b.movies && a.order == b.order && a.removed == b.removed && a.lastSeq == b.lastSeq
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
            return .restored(id: id)
        case .undo(let undo):
            return try decide(undo)
        case .undoNothing:
            throw .conflict(.nothingToUndo, MovieState.nothingToUndo)
        }
    }

    /// What `undo` says when its connection has no change left to undo.
    public static let nothingToUndo = "this connection has no change left to undo"

    private func check(_ id: String, _ expect: UInt64?) throws(CommandError) {
        guard let i = index[id] else { throw notFound(id) }
        try check(id, at: movies[i].version, expect)
    }

    private func check(_ id: String, at version: UInt64, _ expect: UInt64?) throws(CommandError) {
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
            guard let i = index[id] else { throw notFound(id) }
            try check(id, at: movies[i].version, command.expect)
            lastSeq = seq
            movies[i].version = seq
            if case .toggleWatched = command.op {
                movies[i].watched.toggle()
                return (.watchedToggled(id: id), movies[i])
            }
            movies[i].watchedWithFriends.toggle()
            return (.watchedWithFriendsToggled(id: id), movies[i])
        case .add, .remove, .restore, .undo, .undoNothing:
            let event = try decide(command)
            return (event, apply(event, seq: seq))
        }
    }

    /// The compensating event of `undo`, when the movie is still at the version the undo expects
    /// (live for a toggle or a remove, removed for a restore).
    private func decide(_ undo: Undo) throws(CommandError) -> MovieEvent {
        let id = undo.movie
        let now: UInt64
        if let live = movie(id) {
            now = live.version
            if now == undo.version {
                switch undo.compensation {
                case .toggleWatched: return .watchedToggled(id: id)
                case .toggleWatchedWithFriends: return .watchedWithFriendsToggled(id: id)
                case .remove: return .removed(id: id)
                case .restore: break
                }
            }
        } else if let gone = removed[id] {
            now = gone.movie.version
            if now == undo.version && undo.compensation == .restore { return .restored(id: id) }
        } else {
            throw notFound(id)
        }
        throw .conflict(
            .changedSince,
            "movie \(MovieState.quoted(id)) was changed by someone else since (at seq \(now)); seq \(undo.original) is not undone"
        )
    }

    static func quoted(_ id: String) -> String { "\"\(MessageText.truncated(id))\"" }

    // MARK: - Fold

    /// Folds a stored event in and returns the movie after it (for `removed`, its last state with
    /// `version = seq`). An event that does not fit (toggle of an unknown id, second `added` of an
    /// id) changes nothing but `lastSeq` and returns nil; `decide` never produces one.
    @discardableResult
    public mutating func apply(_ event: MovieEvent, seq: UInt64) -> Movie? {
        lastSeq = max(lastSeq, seq)
        switch event {
        case .added(let id, let title, let image):
            guard index[id] == nil else { return nil }
            let movie = Movie(id: id, title: title, image: image, version: seq)
            index[id] = movies.count
            movies.append(movie)
            order.append(seq)
            removed[id] = nil  // not from `decide`, which never adds a used id
            noteSuffix(of: id)
            return movie
        case .watchedToggled(let id):
            guard let i = index[id] else { return nil }
            movies[i].watched.toggle()
            movies[i].version = seq
            return movies[i]
        case .watchedWithFriendsToggled(let id):
            guard let i = index[id] else { return nil }
            movies[i].watchedWithFriends.toggle()
            movies[i].version = seq
            return movies[i]
        case .removed(let id):
            guard let i = index.removeValue(forKey: id) else { return nil }
            var movie = movies.remove(at: i)
            movie.version = seq
            for j in i..<movies.count { index[movies[j].id] = j }
            removed[id] = RemovedMovie(movie: movie, addedSeq: order.remove(at: i))
            return movie
        case .restored(let id):
            guard index[id] == nil, let gone = removed.removeValue(forKey: id) else { return nil }
            var movie = gone.movie
            movie.version = seq
            // Its old place: after every movie added before it (`order` is increasing).
            var low = 0
            var high = order.count
            while low < high {
                let mid = (low + high) / 2
                if order[mid] < gone.addedSeq { low = mid + 1 } else { high = mid }
            }
            movies.insert(movie, at: low)
            order.insert(gone.addedSeq, at: low)
            for j in low..<movies.count { index[movies[j].id] = j }
            return movie
        }
    }

    /// The next suffix to try for `base`, when an id with a suffix was seen.
    func nextSuffix(for base: String) -> Int? { suffixHint[base] }

    private mutating func noteSuffix(of id: String) {
        guard let us = id.utf8.lastIndex(of: 0x5F) else { return }
        let base = String(id[..<us])
        guard let n = Int(id[id.index(after: us)...]), n >= 2 else { return }
        if (suffixHint[base] ?? 2) <= n { suffixHint[base] = n + 1 }
    }

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
    /// The seq of its `added` event: its place in list order.
    public var addedSeq: UInt64

    public init(movie: Movie, addedSeq: UInt64) {
        self.movie = movie
        self.addedSeq = addedSeq
    }
}

// MARK: - Snapshot

extension MovieState {
    private static let snapshotMagic: [UInt8] = Array("MVS3".utf8)

    /// Compact bytes of the whole state: "MVS3", lastSeq, the movies in order (each with the
    /// seq of its `added`), the removed movies (sorted by id) each with its last state, the seq
    /// of its removal and the seq of its `added`.
    public func snapshotBytes() -> [UInt8] {
        var w = ByteWriter()
        w.bytes.append(contentsOf: MovieState.snapshotMagic)
        w.u64(lastSeq)
        w.u32(UInt32(movies.count))
        for (m, added) in zip(movies, order) { MovieState.write(m, added: added, &w) }
        w.u32(UInt32(removed.count))
        for (_, gone) in removed.sorted(by: { $0.key < $1.key }) {
            MovieState.write(gone.movie, added: gone.addedSeq, &w)
        }
        return w.bytes
    }

    private static func write(_ m: Movie, added: UInt64, _ w: inout ByteWriter) {
        w.string(m.id)
        w.string(m.title)
        w.string(m.image)
        w.u8((m.watched ? 1 : 0) | (m.watchedWithFriends ? 2 : 0))
        w.u64(m.version)
        w.u64(added)
    }

    /// Rebuilds a state from `snapshotBytes()`; rejects anything else with a typed error.
    ///
    /// A snapshot of an earlier format is rejected too: MVS1 (before issue 13) has the removed
    /// ids but not when they were removed, MVS2 (before issue 14) has when but not what they
    /// were nor where, and `restore` needs both. The SQLite store then ignores it and replays
    /// the whole log, as for any snapshot it cannot use (once: the replay is snapshotted again,
    /// in MVS3, when it is long, and on close in any case). The log has everything.
    public init(snapshot bytes: [UInt8]) throws(MovieDecodingError) {
        var r = ByteReader(bytes)
        let magic = Array(try r.take(4, "snapshot magic"))
        if magic == Array("MVS1".utf8) || magic == Array("MVS2".utf8) {
            throw MovieDecodingError(
                "an \(String(decoding: magic, as: UTF8.self)) snapshot from an earlier build, without the removed movies' last state and place; the log has them"
            )
        }
        guard magic == MovieState.snapshotMagic else {
            throw MovieDecodingError("not a movie snapshot (bad magic)")
        }
        self.init()
        lastSeq = try r.u64("snapshot seq")
        let count = try r.u32("movie count")
        for _ in 0..<count {
            let (movie, added) = try MovieState.read(&r, "movie", lastSeq: lastSeq)
            guard index[movie.id] == nil, added > (order.last ?? 0) else {
                throw MovieDecodingError(
                    "duplicate or misplaced movie \(String(reflecting: movie.id)) in snapshot")
            }
            index[movie.id] = movies.count
            movies.append(movie)
            order.append(added)
            noteSuffix(of: movie.id)
        }
        let gone = try r.u32("removed movie count")
        for _ in 0..<gone {
            let (movie, added) = try MovieState.read(&r, "removed movie", lastSeq: lastSeq)
            guard !isUsed(movie.id), added < movie.version else {
                throw MovieDecodingError(
                    "duplicate or misplaced removed movie \(String(reflecting: movie.id)) in snapshot")
            }
            removed[movie.id] = RemovedMovie(movie: movie, addedSeq: added)
            noteSuffix(of: movie.id)
        }
        try r.end()
    }

    private static func read(_ r: inout ByteReader, _ what: String, lastSeq: UInt64)
        throws(MovieDecodingError)
        -> (Movie, UInt64)
    {
        let id = try r.string("\(what) id")
        guard MovieState.isValidID(id) else {
            throw MovieDecodingError("bad \(what) id \(String(reflecting: id)) in snapshot")
        }
        let title = try r.string("title")
        let image = try r.string("image")
        let flags = try r.u8("flags")
        guard flags < 4 else { throw MovieDecodingError("bad flags \(flags) in snapshot") }
        let version = try r.u64("version")
        let added = try r.u64("added seq")
        guard added > 0, added <= version, version <= lastSeq else {
            throw MovieDecodingError(
                "\(what) \(String(reflecting: id)) added at \(added), version \(version), snapshot seq \(lastSeq)"
            )
        }
        let movie = Movie(
            id: id, title: title, image: image, watched: flags & 1 != 0, watchedWithFriends: flags & 2 != 0,
            version: version)
        return (movie, added)
    }
}

/// The catalogue: the fold of the movie events, in insertion order.
///
/// `decide` validates a command against this state and names the one event it would write;
/// `apply` folds a stored event in. Neither does I/O.
public struct MovieState: Equatable, Sendable {
    /// Movies in insertion order.
    public private(set) var movies: [Movie] = []
    /// Position of each movie in `movies`.
    private var index: [String: Int] = [:]
    /// The seq of the removal of every removed id, so that a command or a gesture on it can
    /// say when it went. With the ids in `index`, every id that ever existed: ids are never reused.
    public private(set) var removedAt: [String: UInt64] = [:]
    /// Sequence number of the last event folded in (0 when empty).
    public private(set) var lastSeq: UInt64 = 0
    /// Next suffix to try per slug base (a hint, not state: not compared, not persisted).
    private var suffixHint: [String: Int] = [:]

    public static let maxTitleLength = 200
    public static let maxImageBytes = 1024

    public init() {}

    public func movie(_ id: String) -> Movie? { index[id].map { movies[$0] } }

    /// Whether a movie ever had `id`, removed ones included.
    public func isUsed(_ id: String) -> Bool { index[id] != nil || removedAt[id] != nil }

    public static func == (a: MovieState, b: MovieState) -> Bool {
        a.movies == b.movies && a.removedAt == b.removedAt && a.lastSeq == b.lastSeq
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
        }
    }

    private func check(_ id: String, _ expect: UInt64?) throws(CommandError) {
        guard let movie = movie(id) else { throw notFound(id) }
        if let expect, expect != movie.version {
            throw .conflict(
                "movie \(String(reflecting: id)) is at version \(movie.version), not \(expect) as expected")
        }
    }

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
            removedAt[id] = nil  // not from `decide`, which never adds a used id
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
            removedAt[id] = seq
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

// MARK: - Snapshot

extension MovieState {
    private static let snapshotMagic: [UInt8] = Array("MVS2".utf8)
    /// The format before removal seqs were kept (issue 13): lastSeq, the movies, the removed ids.
    private static let snapshotMagicV1: [UInt8] = Array("MVS1".utf8)

    /// Compact bytes of the whole state: "MVS2", lastSeq, the movies in order, the removed ids
    /// (sorted) each with the seq of its removal.
    public func snapshotBytes() -> [UInt8] {
        var w = ByteWriter()
        w.bytes.append(contentsOf: MovieState.snapshotMagic)
        w.u64(lastSeq)
        w.u32(UInt32(movies.count))
        for m in movies {
            w.string(m.id)
            w.string(m.title)
            w.string(m.image)
            w.u8((m.watched ? 1 : 0) | (m.watchedWithFriends ? 2 : 0))
            w.u64(m.version)
        }
        w.u32(UInt32(removedAt.count))
        for (id, seq) in removedAt.sorted(by: { $0.key < $1.key }) {
            w.string(id)
            w.u64(seq)
        }
        return w.bytes
    }

    /// Rebuilds a state from `snapshotBytes()`; rejects anything else with a typed error.
    ///
    /// An MVS1 snapshot, written by a build from before issue 13, is rejected too: it has the
    /// removed ids but not when they were removed, and a state without them could not say
    /// "removed at seq N". The SQLite store then ignores it and replays the whole log, as for
    /// any snapshot it cannot use (once: the replay is snapshotted again, in MVS2, when it is
    /// long, and on close in any case). Replaying costs one start; keeping the seqs unknown would
    /// have cost a second message for ever.
    public init(snapshot bytes: [UInt8]) throws(MovieDecodingError) {
        var r = ByteReader(bytes)
        let magic = Array(try r.take(4, "snapshot magic"))
        if magic == MovieState.snapshotMagicV1 {
            throw MovieDecodingError(
                "an MVS1 snapshot from an earlier build, without the seqs of removals; the log has them")
        }
        guard magic == MovieState.snapshotMagic else {
            throw MovieDecodingError("not a movie snapshot (bad magic)")
        }
        self.init()
        lastSeq = try r.u64("snapshot seq")
        let count = try r.u32("movie count")
        for _ in 0..<count {
            let id = try r.string("movie id")
            guard MovieState.isValidID(id), index[id] == nil else {
                throw MovieDecodingError("bad or duplicate movie id \(String(reflecting: id)) in snapshot")
            }
            let title = try r.string("title")
            let image = try r.string("image")
            let flags = try r.u8("flags")
            guard flags < 4 else { throw MovieDecodingError("bad flags \(flags) in snapshot") }
            let version = try r.u64("version")
            guard version <= lastSeq else {
                throw MovieDecodingError("movie version \(version) after snapshot seq \(lastSeq)")
            }
            index[id] = movies.count
            movies.append(
                Movie(
                    id: id, title: title, image: image, watched: flags & 1 != 0,
                    watchedWithFriends: flags & 2 != 0, version: version))
            noteSuffix(of: id)
        }
        let gone = try r.u32("removed id count")
        for _ in 0..<gone {
            let id = try r.string("removed id")
            guard MovieState.isValidID(id), !isUsed(id) else {
                throw MovieDecodingError("bad or duplicate removed id \(String(reflecting: id)) in snapshot")
            }
            let seq = try r.u64("removal seq")
            guard seq > 0, seq <= lastSeq else {
                throw MovieDecodingError(
                    "removal of \(String(reflecting: id)) at seq \(seq), snapshot seq \(lastSeq)")
            }
            removedAt[id] = seq
            noteSuffix(of: id)
        }
        try r.end()
    }
}

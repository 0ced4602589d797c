/// The catalogue: the fold of the movie events, in insertion order.
///
/// `decide` validates a command against this state and names the one event it would write;
/// `apply` folds a stored event in. Neither does I/O.
public struct MovieState: Equatable, Sendable {
    /// Movies in insertion order.
    public private(set) var movies: [Movie] = []
    /// Position of each movie in `movies`.
    private var index: [String: Int] = [:]
    /// Every id that ever existed, removed ones included: ids are never reused.
    public private(set) var usedIDs: Set<String> = []
    /// Sequence number of the last event folded in (0 when empty).
    public private(set) var lastSeq: UInt64 = 0
    /// Next suffix to try per slug base (a hint, not state: not compared, not persisted).
    private var suffixHint: [String: Int] = [:]

    public static let maxTitleLength = 200
    public static let maxImageBytes = 1024

    public init() {}

    public func movie(_ id: String) -> Movie? { index[id].map { movies[$0] } }

    public static func == (a: MovieState, b: MovieState) -> Bool {
        a.movies == b.movies && a.usedIDs == b.usedIDs && a.lastSeq == b.lastSeq
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
        guard let movie = movie(id) else {
            if usedIDs.contains(id) { throw .notFound("movie \(String(reflecting: id)) was removed") }
            throw .notFound("no movie with id \(String(reflecting: id))")
        }
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
            usedIDs.insert(id)
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
    private static let snapshotMagic: [UInt8] = Array("MVS1".utf8)

    /// Compact bytes of the whole state: "MVS1", lastSeq, the movies in order, the removed ids.
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
        let gone = usedIDs.subtracting(index.keys).sorted()
        w.u32(UInt32(gone.count))
        for id in gone { w.string(id) }
        return w.bytes
    }

    /// Rebuilds a state from `snapshotBytes()`; rejects anything else with a typed error.
    public init(snapshot bytes: [UInt8]) throws(MovieDecodingError) {
        var r = ByteReader(bytes)
        guard Array(try r.take(4, "snapshot magic")) == MovieState.snapshotMagic else {
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
            usedIDs.insert(id)
            noteSuffix(of: id)
        }
        let gone = try r.u32("removed id count")
        for _ in 0..<gone {
            let id = try r.string("removed id")
            guard MovieState.isValidID(id), index[id] == nil else {
                throw MovieDecodingError("bad removed id \(String(reflecting: id)) in snapshot")
            }
            usedIDs.insert(id)
            noteSuffix(of: id)
        }
        try r.end()
    }
}

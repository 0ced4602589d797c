// The state's bytes: what the stores keep as snapshots, and what the export's digest hashes.
extension MovieState {
    private static let mvs3: [UInt8] = Array("MVS3".utf8)
    private static let mvs4: [UInt8] = Array("MVS4".utf8)

    /// Compact bytes of the whole state: the magic, lastSeq, the movies in list order (each with
    /// its key), the removed movies (sorted by id) each with its last state, the seq of its
    /// removal and its key.
    ///
    /// "MVS3" while every key is one digit (always so while no movie was moved: each key is then
    /// the seq of its movie's `added`, which is what MVS3 wrote), "MVS4" once one is longer
    /// (issue 48): a key is written as MVS3 wrote an added seq in the first case, as its head,
    /// its number of tail digits (4 bytes) and each digit in the second. So a log without moves
    /// keeps the snapshot bytes, and the digest, it had before moves existed.
    public func snapshotBytes() -> [UInt8] {
        let long =
            !(slots.allSatisfy { $0.key.tail.isEmpty } && removed.values.allSatisfy { $0.key.tail.isEmpty })
        var w = ByteWriter()
        w.bytes.append(contentsOf: long ? MovieState.mvs4 : MovieState.mvs3)
        w.u64(lastSeq)
        w.u32(UInt32(movies.count))
        for (m, slot) in zip(movies, slots) { MovieState.write(m, slot.key, long: long, &w) }
        w.u32(UInt32(removed.count))
        for (_, gone) in removed.sorted(by: { $0.key < $1.key }) {
            MovieState.write(gone.movie, gone.key, long: long, &w)
        }
        return w.bytes
    }

    private static func write(_ m: Movie, _ key: OrderKey, long: Bool, _ w: inout ByteWriter) {
        w.string(m.id)
        w.string(m.title)
        w.string(m.image)
        w.u8((m.watched ? 1 : 0) | (m.watchedWithFriends ? 2 : 0))
        w.u64(m.version)
        if long { key.write(&w) } else { w.u64(key.head) }
    }

    /// Rebuilds a state from `snapshotBytes()`; rejects anything else with a typed error.
    ///
    /// A snapshot of an earlier format is rejected too: MVS1 (before issue 13) has the removed
    /// ids but not when they were removed, MVS2 (before issue 14) has when but not what they
    /// were nor where, and `restore` needs both. The SQLite store then ignores it and replays
    /// the whole log, as for any snapshot it cannot use (once: the replay is snapshotted again
    /// when it is long, and on close in any case). The log has everything.
    public init(snapshot bytes: [UInt8]) throws(MovieDecodingError) {
        var r = ByteReader(bytes)
        let magic = Array(try r.take(4, "snapshot magic"))
        if magic == Array("MVS1".utf8) || magic == Array("MVS2".utf8) {
            throw MovieDecodingError(
                "an \(String(decoding: magic, as: UTF8.self)) snapshot from an earlier build, without the removed movies' last state and place; the log has them"
            )
        }
        guard magic == MovieState.mvs3 || magic == MovieState.mvs4 else {
            throw MovieDecodingError("not a movie snapshot (bad magic)")
        }
        let long = magic == MovieState.mvs4
        self.init()
        lastSeq = try r.u64("snapshot seq")
        let count = try r.u32("movie count")
        for _ in 0..<count {
            let (movie, key) = try MovieState.read(&r, "movie", long: long, lastSeq: lastSeq)
            guard index[movie.id] == nil, slots.last.map({ $0.key < key }) ?? true else {
                throw MovieDecodingError(
                    "duplicate or misplaced movie \(String(reflecting: movie.id)) in snapshot")
            }
            appendLive(movie, key)
            noteSuffix(of: movie.id)
        }
        let gone = try r.u32("removed movie count")
        for _ in 0..<gone {
            let (movie, key) = try MovieState.read(&r, "removed movie", long: long, lastSeq: lastSeq)
            guard !isUsed(movie.id), key.head < movie.version else {
                throw MovieDecodingError(
                    "duplicate or misplaced removed movie \(String(reflecting: movie.id)) in snapshot")
            }
            removed[movie.id] = RemovedMovie(movie: movie, key: key)
            noteSuffix(of: movie.id)
        }
        try r.end()
    }

    private static func read(_ r: inout ByteReader, _ what: String, long: Bool, lastSeq: UInt64)
        throws(MovieDecodingError)
        -> (Movie, OrderKey)
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
        let key = long ? try OrderKey.read(&r) : OrderKey(added: try r.u64("added seq"))
        // A key's head is at most the seq of the event that gave it, which touched the movie.
        guard key.head > 0 || !key.tail.isEmpty, key.head <= version, version <= lastSeq else {
            throw MovieDecodingError(
                "\(what) \(String(reflecting: id)) placed at \(key), version \(version), snapshot seq \(lastSeq)"
            )
        }
        let movie = Movie(
            id: id, title: title, image: image, watched: flags & 1 != 0, watchedWithFriends: flags & 2 != 0,
            version: version)
        return (movie, key)
    }
}

/// A fact about the catalogue. The log stores it as stream (the movie id), kind and payload.
public enum MovieEvent: Equatable, Hashable, Sendable {
    case added(id: String, title: String, image: String)
    case watchedToggled(id: String)
    case watchedWithFriendsToggled(id: String)
    case removed(id: String)
    /// A removed movie back as it was when removed, at its place in list order (its key's:
    /// `OrderKey`); `to` is where that was, the movie it went after (nil: not recorded, as in
    /// the events written before moves existed). The fold places it by its key, which `to`
    /// describes: a `restored` event of `decide` always has one.
    case restored(id: String, to: ListPlace?)
    /// A movie moved to `to` (issue 48): after a movie in the list, or first. `from` is where it
    /// was (what its `undo` takes it back to); the fold does not need it.
    case moved(id: String, to: ListPlace, from: ListPlace)

    /// The kinds of the log and of the wire (`EventKind`).
    public typealias Kind = EventKind

    public var kind: EventKind {
        switch self {
        case .added: return Kind.added
        case .watchedToggled: return Kind.watchedToggled
        case .watchedWithFriendsToggled: return Kind.watchedWithFriendsToggled
        case .removed: return Kind.removed
        case .restored: return Kind.restored
        case .moved: return Kind.moved
        }
    }

    public var movieID: String {
        switch self {
        case .added(let id, _, _), .watchedToggled(let id), .watchedWithFriendsToggled(let id),
            .removed(let id), .restored(let id, _), .moved(let id, _, _):
            return id
        }
    }

    /// Where a `moved` or `restored` event puts its movie (nil for the other kinds, and for a
    /// `restored` event from before moves existed).
    public var to: ListPlace? {
        switch self {
        case .restored(_, let to): to
        case .moved(_, let to, _): to
        case .added, .watchedToggled, .watchedWithFriendsToggled, .removed: nil
        }
    }

    /// Where a `moved` event takes its movie from (nil for the other kinds).
    public var from: ListPlace? {
        if case .moved(_, _, let from) = self { return from }
        return nil
    }
}

/// Why bytes from the log (an event or a snapshot) could not be decoded.
public struct MovieDecodingError: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

// MARK: - Log encoding

extension MovieEvent {
    /// The payload of the log row: for `added`, the title then the image, each a 4-byte
    /// big-endian length and UTF-8 bytes; empty for the other kinds.
    public var payload: [UInt8] {
        switch self {
        case .added(_, let title, let image):
            var w = ByteWriter()
            w.string(title)
            w.string(image)
            return w.bytes
        case .watchedToggled, .watchedWithFriendsToggled, .removed, .restored, .moved:
            return []
        }
    }

    /// The payload with the movie's state right after the event appended, for the kinds whose
    /// payload would otherwise be empty: title, image, watched, watched-with-friends, then, for an
    /// event appended by an `undo`, the seq of the event it undoes (8 bytes). The fold does not
    /// need them (a toggle is a toggle); `history` and subscribers catching up read each event's
    /// movie from it in O(1) instead of folding the movie's stream again.
    ///
    /// A `moved` event, and a `restored` one that says where it went (issue 48), write the seq
    /// of the event undone always (0 when none: no event has seq 0), then `to` and, for `moved`,
    /// `from` (`ListPlace`'s bytes). Their tails are so at least 9 bytes long, where a tail of
    /// before is 0 or 8: a reader tells the two apart by length.
    public func payload(after movie: Movie, undoes: UInt64? = nil) -> [UInt8] {
        switch self {
        case .added:
            return payload
        case .restored(_, let to?):
            return MovieEvent.placedPayload(movie, undoes: undoes, to: to, from: nil)
        case .moved(_, let to, let from):
            return MovieEvent.placedPayload(movie, undoes: undoes, to: to, from: from)
        case .watchedToggled, .watchedWithFriendsToggled, .removed, .restored(_, nil):
            return MovieEvent.statePayload(movie, undoes: undoes)
        }
    }

    private static func placedPayload(_ movie: Movie, undoes: UInt64?, to: ListPlace, from: ListPlace?)
        -> [UInt8]
    {
        var w = ByteWriter()
        w.string(movie.title)
        w.string(movie.image)
        w.u8(movie.watched ? 1 : 0)
        w.u8(movie.watchedWithFriends ? 1 : 0)
        w.u64(undoes ?? 0)
        to.write(&w)
        from?.write(&w)
        return w.bytes
    }

    private static func statePayload(_ movie: Movie, undoes: UInt64?) -> [UInt8] {
        // Written in place, in one allocation: this runs for every toggle the daemon commits
        // (the same bytes as ByteWriter's string, string, u8, u8 and u64). Appended into an
        // empty array rather than made by `init(unsafeUninitializedCapacity:)`, which is not
        // specialised and looked the array's storage type up at run time, about 360
        // instructions per event (callgrind).
        var title = movie.title
        var image = movie.image
        // The flags, not the movie, go into the closures: capturing the movie copied it.
        let watched: UInt8 = movie.watched ? 1 : 0
        let friends: UInt8 = movie.watchedWithFriends ? 1 : 0
        let tail = undoes == nil ? 0 : 8
        var payload: [UInt8] = []
        title.withUTF8 { t in
            image.withUTF8 { i in
                payload.append(addingCapacity: 10 + t.count + i.count + tail) { span in
                    span.withUnsafeMutableBufferPointer { out, count in
                        var k = 0
                        func length(_ n: Int) {
                            for shift in stride(from: 24, through: 0, by: -8) {
                                out[k] = UInt8(truncatingIfNeeded: n >> shift)
                                k += 1
                            }
                        }
                        func bytes(_ b: UnsafeBufferPointer<UInt8>) {
                            if let base = b.baseAddress {
                                (out.baseAddress! + k).initialize(from: base, count: b.count)
                            }
                            k += b.count
                        }
                        length(t.count)
                        bytes(t)
                        length(i.count)
                        bytes(i)
                        out[k] = watched
                        out[k + 1] = friends
                        k += 2
                        if let undoes {
                            for shift in stride(from: 56, through: 0, by: -8) {
                                out[k] = UInt8(truncatingIfNeeded: undoes >> UInt64(shift))
                                k += 1
                            }
                        }
                        count = k
                    }
                }
            }
        }
        return payload
    }

    /// The movie right after the event at `seq`, when the payload says it (see
    /// `payload(after:undoes:)`); nil for an empty payload, written before the state was recorded.
    public static func movieAfter(
        stream: String, kind: String, payload: [UInt8], seq: UInt64
    ) throws(MovieDecodingError) -> Movie? {
        try recorded(stream: stream, kind: kind, payload: payload, seq: seq)?.movie
    }

    /// What a payload records besides the event itself.
    public struct Recorded: Equatable, Sendable {
        /// The movie right after the event.
        public var movie: Movie
        /// The seq of the event it undoes, nil when it undoes none.
        public var undoes: UInt64?
        /// Where a `moved` or `restored` event put the movie (nil: not recorded).
        public var to: ListPlace?
        /// Where a `moved` event took the movie from.
        public var from: ListPlace?
    }

    /// What the payload records besides the event itself (`Recorded`). Nil for an empty payload.
    public static func recorded(
        stream: String, kind: String, payload: [UInt8], seq: UInt64
    ) throws(MovieDecodingError) -> Recorded? {
        let kind = EventKind(kind)
        guard !payload.isEmpty else {
            if kind == Kind.moved { throw MovieDecodingError("a moved event without its places") }
            return nil
        }
        var r = ByteReader(payload)
        let title = try r.string("title")
        let image = try r.string("image")
        if kind == Kind.added {
            try r.end()
            return Recorded(movie: Movie(id: stream, title: title, image: image, version: seq))
        }
        let watched = try r.u8("watched")
        let friends = try r.u8("watchedWithFriends")
        let (undoes, to, from) = try readTail(&r, kind: kind)
        guard watched <= 1, friends <= 1 else { throw MovieDecodingError("flags must be 0 or 1") }
        let movie = Movie(
            id: stream, title: title, image: image, watched: watched == 1,
            watchedWithFriends: friends == 1, version: seq)
        return Recorded(movie: movie, undoes: undoes, to: to, from: from)
    }

    /// What follows the flags: nothing or the seq undone (8 bytes) as before moves; for `moved`
    /// and a `restored` that says where it went, the seq undone (0: none) and the places.
    private static func readTail(_ r: inout ByteReader, kind: EventKind) throws(MovieDecodingError) -> (
        undoes: UInt64?, to: ListPlace?, from: ListPlace?
    ) {
        let left = r.bytes.count - r.at
        let placed = kind == Kind.moved || (kind == Kind.restored && left > 8)
        guard placed else {
            let undoes: UInt64? = left == 0 ? nil : try r.u64("undoes")
            try r.end()
            return (undoes, nil, nil)
        }
        let seq = try r.u64("undoes")
        let to = try ListPlace.read(&r, "to")
        let from = kind == Kind.moved ? try ListPlace.read(&r, "from") : nil
        try r.end()
        return (seq == 0 ? nil : seq, to, from)
    }

    /// `recorded`'s checks of a payload, without making the movie: the same errors, thrown
    /// for the same payloads (`MovieEventTests` compares the two).
    static func checkRecorded(kind: String, payload: [UInt8]) throws(MovieDecodingError) {
        try checkRecorded(kind: EventKind(kind), payload: payload)
    }

    static func checkRecorded(kind: EventKind, payload: [UInt8]) throws(MovieDecodingError) {
        guard !payload.isEmpty else {
            if kind == Kind.moved { throw MovieDecodingError("a moved event without its places") }
            return
        }
        var r = ByteReader(payload)
        try r.skipString("title")
        try r.skipString("image")
        if kind == Kind.added {
            try r.end()
            return
        }
        let watched = try r.u8("watched")
        let friends = try r.u8("watchedWithFriends")
        _ = try readTail(&r, kind: kind)
        guard watched <= 1, friends <= 1 else { throw MovieDecodingError("flags must be 0 or 1") }
    }

    /// Decodes a log row; rejects unknown kinds, bad ids, bad UTF-8 and trailing bytes.
    public init(stream: String, kind text: String, payload: [UInt8]) throws(MovieDecodingError) {
        guard MovieEvent.isValidID(stream) else {
            throw MovieDecodingError("bad movie id \(String(reflecting: stream)) in event stream")
        }
        let kind = EventKind(text)
        switch kind {
        case .added:
            var r = ByteReader(payload)
            let title = try r.string("title")
            let image = try r.string("image")
            try r.end()
            self = .added(id: stream, title: title, image: image)
        case .watchedToggled, .watchedWithFriendsToggled, .removed:
            // Empty, or the movie's state after the event (validated here, used by history).
            try MovieEvent.checkRecorded(kind: kind, payload: payload)
            self =
                kind == .watchedToggled
                ? .watchedToggled(id: stream)
                : kind == .removed ? .removed(id: stream) : .watchedWithFriendsToggled(id: stream)
        case .restored:
            let recorded = try MovieEvent.recorded(stream: stream, kind: text, payload: payload, seq: 1)
            self = .restored(id: stream, to: recorded?.to)
        case .moved:
            // The places are the event's own (the fold reads a move's), so they are decoded.
            guard
                let recorded = try MovieEvent.recorded(stream: stream, kind: text, payload: payload, seq: 1),
                let to = recorded.to, let from = recorded.from
            else {
                throw MovieDecodingError("a moved event without its places")
            }
            self = .moved(id: stream, to: to, from: from)
        case .unknown(let raw):
            throw MovieDecodingError("unknown event kind \(String(reflecting: raw))")
        }
    }

    /// The same, for a caller that holds the kind as a type.
    public init(stream: String, kind: EventKind, payload: [UInt8]) throws(MovieDecodingError) {
        try self.init(stream: stream, kind: kind.rawValue, payload: payload)
    }

    /// `recorded(stream:kind:payload:seq:)`, for a caller that holds the kind as a type.
    public static func recorded(
        stream: String, kind: EventKind, payload: [UInt8], seq: UInt64
    ) throws(MovieDecodingError) -> Recorded? {
        try recorded(stream: stream, kind: kind.rawValue, payload: payload, seq: seq)
    }

    /// `movieAfter(stream:kind:payload:seq:)`, for a caller that holds the kind as a type.
    public static func movieAfter(
        stream: String, kind: EventKind, payload: [UInt8], seq: UInt64
    ) throws(MovieDecodingError) -> Movie? {
        try movieAfter(stream: stream, kind: kind.rawValue, payload: payload, seq: seq)
    }

    /// Whether `id` can be a movie id (see `MovieState.isValidID`).
    public static func isValidID(_ id: String) -> Bool { MovieState.isValidID(id) }
}

// MARK: - Bytes

struct ByteWriter {
    var bytes: [UInt8] = []

    mutating func u8(_ v: UInt8) { bytes.append(v) }
    mutating func u32(_ v: UInt32) {
        for shift in stride(from: 24, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: v >> UInt32(shift)))
        }
    }
    mutating func u64(_ v: UInt64) {
        for shift in stride(from: 56, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: v >> UInt64(shift)))
        }
    }
    mutating func string(_ s: String) {
        var s = s
        s.withUTF8 { utf8 in
            u32(UInt32(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }
}

struct ByteReader {
    let bytes: [UInt8]
    var at = 0
    init(_ bytes: [UInt8]) { self.bytes = bytes }

    mutating func take(_ n: Int, _ what: String) throws(MovieDecodingError) -> ArraySlice<UInt8> {
        guard n >= 0, bytes.count - at >= n else {
            throw MovieDecodingError(
                "truncated \(what): needs \(n) bytes at offset \(at), has \(bytes.count - at)")
        }
        defer { at += n }
        return bytes[at..<at + n]
    }
    mutating func u8(_ what: String) throws(MovieDecodingError) -> UInt8 { try take(1, what).first! }
    mutating func u32(_ what: String) throws(MovieDecodingError) -> UInt32 {
        try take(4, what).reduce(0) { $0 << 8 | UInt32($1) }
    }
    mutating func u64(_ what: String) throws(MovieDecodingError) -> UInt64 {
        try take(8, what).reduce(0) { $0 << 8 | UInt64($1) }
    }
    mutating func string(_ what: String) throws(MovieDecodingError) -> String {
        let slice = try stringBytes(what)
        guard let s = String(validating: slice, as: UTF8.self) else {
            throw MovieDecodingError("\(what) is not valid UTF-8")
        }
        return s
    }

    /// `string`'s checks without making the String (the fold of a long log checks every
    /// payload and keeps none): ASCII is valid UTF-8 as it is, anything else is validated.
    mutating func skipString(_ what: String) throws(MovieDecodingError) {
        let slice = try stringBytes(what)
        let ascii = slice.withUnsafeBufferPointer { b in b.allSatisfy { $0 < 0x80 } }
        if !ascii && String(validating: slice, as: UTF8.self) == nil {
            throw MovieDecodingError("\(what) is not valid UTF-8")
        }
    }

    /// A string's length and bytes. The length's error message is made only when it is thrown.
    private mutating func stringBytes(_ what: String) throws(MovieDecodingError) -> ArraySlice<UInt8> {
        guard bytes.count - at >= 4 else {
            throw MovieDecodingError(
                "truncated length of \(what): needs 4 bytes at offset \(at), has \(bytes.count - at)")
        }
        let n = bytes[at..<at + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        at += 4
        guard n <= 1 << 20 else { throw MovieDecodingError("\(what) claims \(n) bytes") }
        return try take(Int(n), what)
    }
    func end() throws(MovieDecodingError) {
        guard at == bytes.count else {
            throw MovieDecodingError("\(bytes.count - at) trailing bytes after offset \(at)")
        }
    }
}

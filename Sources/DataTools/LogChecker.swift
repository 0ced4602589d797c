// The restore drill's fold (issue 32): every event must follow from the state before it, seqs
// run from 1 without a gap, keys are unique, and what an event records of its movie is what the
// fold makes of it; and the digest of what it folded, keys and authors included. Pure: the
// readers (SQLite, PostgreSQL, an export) hand it rows.
import EventLog
import Movies

/// What is wrong with a log, a file or a target, in words for the operator.
public struct Fault: Error, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// An event of an export: `history`'s event (its `by` included) plus its idempotency key.
public struct ExportedEvent: Equatable, Sendable {
    public var event: CommittedEvent
    public var key: String?

    public init(event: CommittedEvent, key: String?) {
        self.event = event
        self.key = key
    }
}

/// Folds a log from its first event and checks it on the way.
public struct LogChecker {
    public private(set) var state = MovieState()
    public private(set) var events: UInt64 = 0
    private var keys = Set<String>()
    private var keyHash = SHA256()
    /// The authors' part of the digest (issue 46), over the events that have one.
    private var authorHash = SHA256()
    private var hasAuthors = false

    public init() {}

    /// Folds a row of a store. Returns the event as `history` shows it.
    public mutating func fold(_ row: StoredEvent) throws(Fault) -> CommittedEvent {
        let event: MovieEvent
        let recorded: MovieEvent.Recorded?
        do throws(MovieDecodingError) {
            event = try MovieEvent(stream: row.stream, kind: row.kind, payload: row.payload)
            recorded = try MovieEvent.recorded(
                stream: row.stream, kind: row.kind, payload: row.payload, seq: row.seq)
        } catch {
            throw Fault("event \(row.seq) cannot be decoded: \(error.message)")
        }
        let movie = try follow(event, seq: row.seq, key: row.key, by: row.author)
        if let recorded, recorded.movie != movie {
            throw Fault(
                "event \(row.seq) (\(row.kind) of \(String(reflecting: row.stream))) records the movie as \(recorded.movie), the log's fold makes it \(movie)"
            )
        }
        return CommittedEvent(
            seq: row.seq, kind: event.kind, movie: movie, at: row.at, undoes: recorded?.undoes,
            by: row.author,
            to: event.to, from: event.from)
    }

    /// Folds an event of an export. Returns the row a store keeps for it (its payload records
    /// the movie after it, as everything the daemon writes does).
    public mutating func fold(exported x: ExportedEvent) throws(Fault) -> StoredEvent {
        let e = x.event
        let id = e.movie.id
        let event: MovieEvent
        switch e.kind {
        case MovieEvent.Kind.added: event = .added(id: id, title: e.movie.title, image: e.movie.image)
        case MovieEvent.Kind.watchedToggled: event = .watchedToggled(id: id)
        case MovieEvent.Kind.watchedWithFriendsToggled: event = .watchedWithFriendsToggled(id: id)
        case MovieEvent.Kind.removed: event = .removed(id: id)
        case MovieEvent.Kind.restored: event = .restored(id: id, to: e.to)
        case MovieEvent.Kind.moved:
            guard let to = e.to, let from = e.from else {
                throw Fault(
                    "event \(e.seq) moves \(String(reflecting: id)) without saying from where to where")
            }
            event = .moved(id: id, to: to, from: from)
        case .unknown(let raw): throw Fault("unknown event kind \(String(reflecting: raw)) at seq \(e.seq)")
        }
        guard MovieEvent.isValidID(id) else {
            throw Fault("bad movie id \(String(reflecting: id)) at seq \(e.seq)")
        }
        if let undoes = e.undoes {
            guard e.kind != MovieEvent.Kind.added else {
                throw Fault("event \(e.seq) adds a movie and undoes \(undoes)")
            }
            guard undoes > 0, undoes < e.seq else {
                throw Fault("event \(e.seq) undoes \(undoes), which is not an earlier event")
            }
        }
        let movie = try follow(event, seq: e.seq, key: x.key, by: e.by)
        guard movie == e.movie else {
            throw Fault("event \(e.seq) (\(e.kind)) says the movie is \(e.movie), the fold makes it \(movie)")
        }
        let payload =
            e.kind == MovieEvent.Kind.added ? event.payload : event.payload(after: movie, undoes: e.undoes)
        return StoredEvent(
            seq: e.seq, stream: id, kind: e.kind.rawValue, payload: payload, key: x.key, at: e.at,
            author: e.by)
    }

    /// Checks that `event` may come next at `seq` and applies it; returns the movie after it.
    private mutating func follow(_ event: MovieEvent, seq: UInt64, key: String?, by: String?) throws(Fault)
        -> Movie
    {
        let last = state.lastSeq
        guard seq == last + 1 else {
            throw Fault(
                seq <= last
                    ? "seq \(seq) out of order: it follows seq \(last)"
                    : "gap: seq \(seq) follows seq \(last) (missing \(last + 1)\(seq - last > 2 ? "–\(seq - 1)" : ""))"
            )
        }
        let id = event.movieID
        let why: String?
        switch event {
        case .added: why = state.isUsed(id) ? "adds \(String(reflecting: id)), an id already used" : nil
        case .watchedToggled, .watchedWithFriendsToggled, .removed:
            why =
                state.movie(id) == nil
                ? "\(event.kind) of \(String(reflecting: id)), which is not in the list" : nil
        case .restored:
            why = state.removed[id] == nil ? "restores \(String(reflecting: id)), which is not removed" : nil
        case .moved(_, let to, let from):
            why = LogChecker.whyNot(moving: id, to: to, from: from, state)
        }
        if let why { throw Fault("event \(seq) does not follow from the state before it: it \(why)") }
        if let key {
            guard keys.insert(key).inserted else {
                throw Fault(
                    "event \(seq) repeats the idempotency key \(String(reflecting: key)) of an earlier event")
            }
            keyHash.update(LogChecker.entry(seq: seq, key.utf8))
        }
        if let by {
            hasAuthors = true
            authorHash.update(LogChecker.entry(seq: seq, by.utf8))
        }
        guard let movie = state.apply(event, seq: seq) else {
            preconditionFailure(
                "event \(seq) \(event) passed the checks but did not apply to \(state.lastSeq)")
        }
        // Where a restored movie says it went is where its key put it.
        if case .restored(_, let to?) = event, let i = state.offset(of: id), state.place(at: i) != to {
            throw Fault(
                "event \(seq) says it restored \(String(reflecting: id)) \(to), the fold puts it \(state.place(at: i))"
            )
        }
        events += 1
        return movie
    }

    /// Why a move cannot come next: its movie or the one it goes after is not in the list, or it
    /// was not where it says it came from.
    private static func whyNot(moving id: String, to: ListPlace, from: ListPlace, _ state: MovieState)
        -> String?
    {
        guard let i = state.offset(of: id) else {
            return "moves \(String(reflecting: id)), which is not in the list"
        }
        if case .after(let other) = to, other == id || state.offset(of: other) == nil {
            return
                "moves \(String(reflecting: id)) after \(String(reflecting: other)), which is not in the list"
        }
        let was = state.place(at: i)
        return was == from ? nil : "moves \(String(reflecting: id)) from \(from), but it was \(was)"
    }

    /// Whether `snapshot` (bytes of `MovieState.snapshotBytes()`) is the state now; a snapshot of
    /// a format from before issue 14 (MVS1, MVS2) is not compared (the daemon ignores it too).
    public func check(snapshot: [UInt8], at seq: UInt64) throws(Fault) {
        precondition(seq == state.lastSeq, "snapshot at \(seq) checked at \(state.lastSeq)")
        if snapshot.starts(with: Array("MVS1".utf8)) || snapshot.starts(with: Array("MVS2".utf8)) { return }
        do throws(MovieDecodingError) {
            let decoded = try MovieState(snapshot: snapshot)
            guard decoded == state else {
                throw MovieDecodingError("it differs from the fold of the events up to it")
            }
        } catch {
            throw Fault("snapshot at seq \(seq): \(error.message)")
        }
    }

    /// A key's or an author's part of the digest: the event's seq (8 bytes, big-endian), the
    /// length of `text` (4 bytes, big-endian) and its bytes.
    private static func entry(seq: UInt64, _ text: String.UTF8View) -> [UInt8] {
        var b: [UInt8] = []
        b.reserveCapacity(12 + text.count)
        for shift in stride(from: 56, through: 0, by: -8) {
            b.append(UInt8(truncatingIfNeeded: seq >> UInt64(shift)))
        }
        for shift in stride(from: 24, through: 0, by: -8) {
            b.append(UInt8(truncatingIfNeeded: text.count >> shift))
        }
        b.append(contentsOf: text)
        return b
    }

    /// The digest of the state (docs/export-format.md, "The digest"): SHA-256 of the state's
    /// snapshot bytes (MVS3, or MVS4 once a move made a key of more than one digit), then the SHA-256 of the keys, then, only when an event has an author
    /// (issue 46), the SHA-256 of the authors; as `sha256:` and hex. A log without authors has
    /// the digest it had before authors were kept.
    public var digest: String {
        var keysDone = keyHash
        var h = SHA256()
        h.update(state.snapshotBytes())
        h.update(keysDone.finish())
        if hasAuthors {
            var authorsDone = authorHash
            h.update(authorsDone.finish())
        }
        return "sha256:" + SHA256.hex(digest: h.finish())
    }
}

// A connection's own changes, for `undo` (protocol.md, "Ops on the shared state"). Recorded
// where a command's outcome comes back (`Session.commandAnswered`), so that every mutation this
// connection submits counts: its requests and the bound actions its gestures fire. The Session
// holds none until its first change: an idle connection pays for an empty optional.
//
// A ring of the last `capacity` changes: recording one is a store into the ring (no shifting
// of the other 99, no search): it runs for every durable toggle.
import Movies

struct UndoHistory {
    /// One change of this connection.
    struct Entry: Equatable {
        /// The seq of the event it wrote.
        var seq: UInt64
        var movie: String
        var compensation: Undo.Compensation
        var state: State
        /// Who made it (issue 46): this connection's person then (it may have signed in as
        /// another since).
        var by: String?

        enum State: Equatable {
            /// Not undone yet.
            case live
            /// Undone by the event `seq`.
            case undone(by: UInt64)
            /// Can no longer be undone (the movie changed since): `undo` walks past it.
            case dropped
        }
    }

    /// Who made the change at `seq`, if it is one of the kept.
    func author(of seq: UInt64) -> String? {
        index(of: seq).flatMap { ring[$0].by }
    }

    /// How many changes are kept: the oldest goes when a new one comes.
    static let capacity = 100

    /// The ring; `newest` is the index of the newest entry once it is full.
    private var ring: [Entry] = []
    private var newest = -1

    init() {
        ring.reserveCapacity(UndoHistory.capacity)
    }

    var count: Int { ring.count }

    /// Indices from the newest entry to the oldest.
    private var newestFirst: some Sequence<Int> {
        let n = ring.count
        let last = newest
        return (0..<n).lazy.map { (last - $0 + n) % n }
    }

    /// A change of this connection became durable. A key replayed (an older seq again) is not a
    /// second change: this connection's changes are answered in seq order, so a new one always
    /// has a seq above the newest recorded.
    mutating func record(_ event: CommittedEvent) {
        guard let compensation = Undo.Compensation(undoing: event) else { return }
        if newest >= 0, event.seq <= ring[newest].seq { return }
        let entry = Entry(
            seq: event.seq, movie: event.movie.id, compensation: compensation, state: .live, by: event.by)
        if ring.count < UndoHistory.capacity {
            ring.append(entry)
            newest = ring.count - 1
        } else {
            newest = (newest + 1) % UndoHistory.capacity
            ring[newest] = entry
        }
    }

    /// The undo of the newest change not yet undone, or nil when there is none. It expects the
    /// movie at the version this connection left it: the change itself, or the undo of a later
    /// change of the same movie (those are all undone: this is the newest that is not).
    func next() -> Undo? {
        var version: [String: UInt64] = [:]
        for i in newestFirst {
            let e = ring[i]
            switch e.state {
            case .live:
                let expected = max(e.seq, version[e.movie] ?? 0)
                return Undo(movie: e.movie, original: e.seq, compensation: e.compensation, version: expected)
            case .undone(let by):
                version[e.movie] = max(version[e.movie] ?? 0, by)
            case .dropped:
                break
            }
        }
        return nil
    }

    /// The change `original` was undone by the event `seq`.
    mutating func undone(_ original: UInt64, by seq: UInt64) {
        guard let i = index(of: original) else { return }
        ring[i].state = .undone(by: seq)
    }

    /// The change `original` can no longer be undone (the movie changed since: its version
    /// only grows, so it never will be): the next undo walks past it.
    mutating func drop(_ original: UInt64) {
        guard let i = index(of: original) else { return }
        ring[i].state = .dropped
    }

    private func index(of seq: UInt64) -> Int? {
        newestFirst.first { ring[$0].seq == seq }
    }
}

/// An `undo` of the change at `seq`, while the store reads that change (`Session.undoRead`).
struct UndoLookup: Equatable {
    var ticket: UInt64
    var key: String?
    var seq: UInt64
}

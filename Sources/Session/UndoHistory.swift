// A connection's own changes, for `undo` (protocol.md, "Ops on the shared state"). Recorded
// where a command's outcome comes back (`Session.commandAnswered`), so that every mutation this
// connection submits counts: its requests and the bound actions its gestures fire. The Session
// holds none until its first change: an idle connection pays for an empty optional.
import Movies

struct UndoHistory {
    /// One change of this connection, newest last.
    struct Entry: Equatable {
        /// The seq of the event it wrote.
        var seq: UInt64
        var movie: String
        var compensation: Undo.Compensation
        /// The seq of the event that undid it.
        var undoneBy: UInt64?
    }

    /// How many changes are kept: the oldest goes when a new one comes.
    static let capacity = 100

    private(set) var entries: [Entry] = []

    init() {
        entries.reserveCapacity(UndoHistory.capacity)
    }

    /// A change of this connection became durable. A key replayed (the same seq again) is not
    /// a second change.
    mutating func record(_ event: CommittedEvent) {
        guard let compensation = Undo.Compensation(undoing: event.kind),
            !entries.contains(where: { $0.seq == event.seq })
        else { return }
        if entries.count == UndoHistory.capacity { entries.removeFirst() }
        entries.append(Entry(seq: event.seq, movie: event.movie.id, compensation: compensation))
    }

    /// The undo of the newest change not yet undone, or nil when there is none. It expects the
    /// movie at the version this connection left it: the change itself, or the undo of a later
    /// change of the same movie (those are all undone: this is the newest that is not).
    func next() -> Undo? {
        guard let i = entries.lastIndex(where: { $0.undoneBy == nil }) else { return nil }
        let e = entries[i]
        var version = e.seq
        for later in entries[(i + 1)...] where later.movie == e.movie {
            version = max(version, later.undoneBy ?? later.seq)
        }
        return Undo(movie: e.movie, original: e.seq, compensation: e.compensation, version: version)
    }

    /// The change `original` was undone by the event `seq`.
    mutating func undone(_ original: UInt64, by seq: UInt64) {
        guard let i = entries.firstIndex(where: { $0.seq == original }) else { return }
        entries[i].undoneBy = seq
    }

    /// The change `original` can no longer be undone (the movie changed since: its version
    /// only grows, so it never will be): the next undo walks past it.
    mutating func drop(_ original: UInt64) {
        entries.removeAll { $0.seq == original }
    }
}

/// An event in the log, with the movie as it was right after it (for `removed`, its last state).
public struct CommittedEvent: Equatable, Hashable, Sendable {
    public var seq: UInt64
    public var kind: EventKind
    public var movie: Movie
    /// Microseconds since the Unix epoch (UTC).
    public var at: Int64
    /// The seq of the event this one compensates (an `undo`), else nil.
    public var undoes: UInt64?
    /// Who made it (issue 46): the person whose connection caused it; nil for an event made
    /// before authors were kept, or by an anonymous browser.
    public var by: String?
    /// Where a `moved` or `restored` event put its movie (issue 48; wire: `after`); nil for the
    /// other kinds and for a `restored` event written before moves existed.
    public var to: ListPlace?
    /// Where a `moved` event took its movie from (wire: `from`); nil for the other kinds.
    public var from: ListPlace?

    public init(
        seq: UInt64, kind: EventKind, movie: Movie, at: Int64, undoes: UInt64? = nil, by: String? = nil,
        to: ListPlace? = nil, from: ListPlace? = nil
    ) {
        self.seq = seq
        self.kind = kind
        self.movie = movie
        self.at = at
        self.undoes = undoes
        self.by = by
        self.to = to
        self.from = from
    }
}

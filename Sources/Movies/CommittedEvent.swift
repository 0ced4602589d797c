/// An event in the log, with the movie as it was right after it (for `removed`, its last state).
public struct CommittedEvent: Equatable, Hashable, Sendable {
    public var seq: UInt64
    public var kind: String
    public var movie: Movie
    /// Microseconds since the Unix epoch (UTC).
    public var at: Int64
    /// The seq of the event this one compensates (an `undo`), else nil.
    public var undoes: UInt64?
    /// Who made it (issue 46): the person whose connection caused it; nil for an event made
    /// before authors were kept, or by an anonymous browser.
    public var by: String?

    public init(seq: UInt64, kind: String, movie: Movie, at: Int64, undoes: UInt64? = nil, by: String? = nil)
    {
        self.seq = seq
        self.kind = kind
        self.movie = movie
        self.at = at
        self.undoes = undoes
        self.by = by
    }
}

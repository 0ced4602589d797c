/// An event in the log, with the movie as it was right after it (for `removed`, its last state).
public struct CommittedEvent: Equatable, Hashable, Sendable {
    public var seq: UInt64
    public var kind: String
    public var movie: Movie
    /// Microseconds since the Unix epoch (UTC).
    public var at: Int64

    public init(seq: UInt64, kind: String, movie: Movie, at: Int64) {
        self.seq = seq
        self.kind = kind
        self.movie = movie
        self.at = at
    }
}

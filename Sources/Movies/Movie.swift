/// One row of the shared catalogue, as clients see it.
public struct Movie: Equatable, Hashable, Sendable {
    /// Stable, unique, never reused: a slug of the title (`[a-z0-9_]+`).
    public var id: String
    public var title: String
    /// Image name; the seed catalogue uses the id, an `add` without image stores "".
    public var image: String
    public var watched: Bool
    public var watchedWithFriends: Bool
    /// Sequence number of the last event that touched this movie.
    public var version: UInt64

    public init(
        id: String, title: String, image: String, watched: Bool = false,
        watchedWithFriends: Bool = false, version: UInt64
    ) {
        self.id = id
        self.title = title
        self.image = image
        self.watched = watched
        self.watchedWithFriends = watchedWithFriends
        self.version = version
    }
}

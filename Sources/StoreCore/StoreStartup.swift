/// What opening a store did (the same for every store), for the start-up journal entry
/// (`startupFields`) and the notes (`startupNotes`).
public struct StoreStartup: Equatable, Sendable {
    /// The snapshot the state was loaded from (0: none).
    public var snapshotSeq: UInt64 = 0
    /// Events folded after it.
    public var replayed = 0
    /// The log was empty and got the seed catalogue.
    public var seeded = false
    /// Why the newest snapshot was not used, when it was not.
    public var snapshotIgnored: String?
    /// How long opening took, µs.
    public var micros: Int64 = 0

    public init() {}
}

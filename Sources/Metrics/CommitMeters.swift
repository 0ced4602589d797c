// What the store's writer thread measures of its own transactions, handed to the event loop
// without a lock or a message: the commit's duration (fsync included) and its events, each a
// SharedHistogram of relaxed atomics. The manager makes one, gives it to the store when it opens
// it, and reads `snapshot`s for `status` and `/metrics`; the writer calls `committed` once per
// transaction, with times from its own clock (one reading before and one after the commit, on
// its thread: the event loop's clock is not involved).
public final class CommitMeters: Sendable {
    public let duration = SharedHistogram(.latency)
    public let events = SharedHistogram(.events)

    public init() {}

    /// One transaction of `events` events took `nanoseconds`.
    @inline(__always)
    public func committed(nanoseconds: UInt64, events count: Int) {
        duration.record(nanoseconds)
        events.record(UInt64(count))
    }
}

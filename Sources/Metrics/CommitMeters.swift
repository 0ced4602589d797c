// What the store's writer thread measures of its own transactions, handed to the event loop
// without a lock or a message: the commit's duration (fsync included) and its events, each a
// SharedHistogram of relaxed atomics. The manager makes one, gives it to the store when it opens
// it, and reads `snapshot`s for `status` and `/metrics`; the writer calls `committed` once per
// transaction, with times from its own clock (one reading before and one after the commit, on
// its thread: the event loop's clock is not involved). PostgreSQL's store thread also says when
// it last read the shared log to its head (the other daemons' events included), and both stores
// say which snapshot they saved last (`status`'s latest snapshot).
import Synchronization

public final class CommitMeters: Sendable {
    public let duration = SharedHistogram(.latency)
    public let events = SharedHistogram(.events)
    /// CLOCK_MONOTONIC nanoseconds of the last read of the log to its head; 0: none yet.
    let lastRead = Atomic<UInt64>(0)
    /// The seq of the latest snapshot the store saved while serving; 0: none yet (the one it
    /// loaded at start is the store's own figure).
    let snapshotSaved = Atomic<UInt64>(0)

    public init() {}

    /// One transaction of `events` events took `nanoseconds`.
    @inline(__always)
    public func committed(nanoseconds: UInt64, events count: Int) {
        duration.record(nanoseconds)
        events.record(UInt64(count))
    }

    /// The store read the shared log to its head at `monotonicNanoseconds` (its thread's clock).
    public func readToHead(at monotonicNanoseconds: UInt64) {
        lastRead.store(monotonicNanoseconds, ordering: .relaxed)
    }

    /// The store saved a snapshot of the state at `seq` (on its thread, after the write).
    public func savedSnapshot(seq: UInt64) {
        snapshotSaved.store(seq, ordering: .relaxed)
    }

    /// The latest snapshot's seq: the one saved last while serving, else `loaded` (the one the
    /// store started from; 0: none).
    public func latestSnapshotSeq(loaded: UInt64) -> UInt64 {
        max(snapshotSaved.load(ordering: .relaxed), loaded)
    }

    /// Seconds from the last read to the head until `now` (CLOCK_MONOTONIC ns); nil: none yet.
    public func secondsSinceReadToHead(now: UInt64) -> Double? {
        let at = lastRead.load(ordering: .relaxed)
        guard at > 0 else { return nil }
        return now > at ? Double(now - at) / 1e9 : 0
    }
}

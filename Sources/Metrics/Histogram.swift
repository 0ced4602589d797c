// A histogram the event loop updates on its own thread: fixed storage inside the struct (no
// allocation, no lock), one bucket increment and one addition per value.
import Synchronization

public struct Histogram: Sendable {
    public let layout: BucketLayout
    @usableFromInline var counts = InlineArray<82, UInt64>(repeating: 0)
    @usableFromInline var sum: UInt64 = 0

    public init(_ layout: BucketLayout) {
        precondition(BucketLayout.capacity == 82, "the storage's size is BucketLayout.capacity")
        self.layout = layout
    }

    @inlinable @inline(__always)
    public mutating func record(_ value: UInt64) {
        counts[layout.index(value)] &+= 1
        sum &+= value
    }

    /// A copy of the counts, for `status` and `/metrics` (allocates: never on a hot path).
    public func snapshot() -> HistogramSnapshot {
        HistogramSnapshot(layout: layout, counts: (0..<layout.count).map { counts[$0] }, sum: sum)
    }
}

/// A histogram written by one thread (the store's writer: its commit durations and events per
/// transaction) and read by another (the event loop, for `status` and `/metrics`). Relaxed
/// atomics: each count is exact, and a snapshot taken during a write may see the bucket and
/// not yet the sum (or the reverse), which no reader of percentiles can notice.
public final class SharedHistogram: Sendable {
    public let layout: BucketLayout
    let counts: InlineArray<82, Atomic<UInt64>>
    let sum = Atomic<UInt64>(0)

    public init(_ layout: BucketLayout) {
        self.layout = layout
        counts = InlineArray { _ in Atomic(0) }
    }

    @inline(__always)
    public func record(_ value: UInt64) {
        counts[layout.index(value)].wrappingAdd(1, ordering: .relaxed)
        sum.wrappingAdd(value, ordering: .relaxed)
    }

    public func snapshot() -> HistogramSnapshot {
        HistogramSnapshot(
            layout: layout, counts: (0..<layout.count).map { counts[$0].load(ordering: .relaxed) },
            sum: sum.load(ordering: .relaxed))
    }
}

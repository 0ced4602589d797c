// Where a histogram's buckets end: a log-linear layout, as HdrHistogram and Prometheus' native
// histograms use, so that finding a value's bucket is a leading-zero count and a shift (no
// search, no table, no floating point) and every bucket is at most a fixed fraction wide.
//
// Bucket 0 holds values ≤ 2^minExponent; then each power of two up to 2^maxExponent is cut into
// 2^subBits equal buckets; the last bucket holds values > 2^maxExponent. Every bucket's upper
// bound is inclusive (Prometheus' `le`): a value equal to a bound counts in the bucket below it.
//
// The two layouts in use (protocol.md, "status"; docs/running.md, "Prometheus metrics and a health check"):
// - `latency`, in nanoseconds: ≤ 16.384 µs (2^14 ns), then 4 buckets per doubling up to
//   17.18 s (2^34 ns), then > 17.18 s: 82 buckets, each at most 25 % wide, so a percentile read
//   from them is within 25 % of the true value. Prometheus gets every doubling (21 bounds,
//   16.384 µs … 17.179869184 s, and +Inf), whose cumulative counts are exact.
// - `events`, a count: ≤ 1, then every power of two up to 65,536, then more: 18 buckets.
public struct BucketLayout: Equatable, Sendable {
    public let minExponent: Int
    public let maxExponent: Int
    public let subBits: Int

    /// The most buckets a layout may have: the size of a histogram's fixed storage.
    public static let capacity = 82

    public static let latency = BucketLayout(minExponent: 14, maxExponent: 34, subBits: 2)
    public static let events = BucketLayout(minExponent: 0, maxExponent: 16, subBits: 0)

    public init(minExponent: Int, maxExponent: Int, subBits: Int) {
        precondition(
            0 <= subBits && subBits <= minExponent && minExponent < maxExponent && maxExponent < 63,
            "bad bucket layout: \(minExponent) \(maxExponent) \(subBits)")
        self.minExponent = minExponent
        self.maxExponent = maxExponent
        self.subBits = subBits
        precondition(count <= BucketLayout.capacity, "\(count) buckets, more than \(BucketLayout.capacity)")
    }

    /// Buckets, the overflow bucket included.
    @inlinable public var count: Int { 2 &+ (maxExponent &- minExponent) &<< subBits }

    /// The bucket of `value`: a compare, a leading-zero count, a shift and a mask.
    @inlinable @inline(__always)
    public func index(_ value: UInt64) -> Int {
        if value <= 1 &<< UInt64(minExponent) { return 0 }
        // value - 1: a value equal to a bucket's upper bound stays in that bucket.
        let w = value &- 1
        let exponent = 63 &- w.leadingZeroBitCount
        if exponent >= maxExponent { return count &- 1 }
        let sub = Int(
            truncatingIfNeeded: (w &>> UInt64(exponent &- subBits)) & ((1 &<< UInt64(subBits)) &- 1))
        return 1 &+ ((exponent &- minExponent) &<< subBits) &+ sub
    }

    /// The inclusive upper bound of bucket `index`; nil for the overflow bucket.
    public func upperBound(_ index: Int) -> UInt64? {
        precondition(index >= 0 && index < count, "bucket \(index) of \(count)")
        if index == 0 { return 1 << UInt64(minExponent) }
        if index == count - 1 { return nil }
        let i = index - 1
        let exponent = minExponent + i >> subBits
        let sub = UInt64(i & ((1 << subBits) - 1))
        return (1 << UInt64(exponent)) + (sub + 1) << UInt64(exponent - subBits)
    }

    /// The exclusive lower bound of bucket `index` (0 for the first).
    public func lowerBound(_ index: Int) -> UInt64 {
        index == 0 ? 0 : upperBound(index - 1)!
    }

    /// Whether bucket `index` ends on a power of two (the bounds Prometheus gets).
    public func endsOnPowerOfTwo(_ index: Int) -> Bool {
        index == 0 || index == count - 1 || (index - 1) & ((1 << subBits) - 1) == (1 << subBits) - 1
    }
}

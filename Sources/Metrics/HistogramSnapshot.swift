// A histogram's counts at one moment, and the percentiles read from them (off the hot path:
// `status`, `/metrics`, `swipectl status`).

public struct HistogramSnapshot: Equatable, Sendable {
    public let layout: BucketLayout
    /// One count per bucket of `layout`, not cumulative.
    public let counts: [UInt64]
    /// The sum of every recorded value, in the layout's unit (nanoseconds, events).
    public let sum: UInt64

    public init(layout: BucketLayout, counts: [UInt64], sum: UInt64) {
        precondition(counts.count == layout.count, "\(counts.count) counts for \(layout.count) buckets")
        self.layout = layout
        self.counts = counts
        self.sum = sum
    }

    public static func empty(_ layout: BucketLayout) -> HistogramSnapshot {
        HistogramSnapshot(layout: layout, counts: Array(repeating: 0, count: layout.count), sum: 0)
    }

    public var count: UInt64 { counts.reduce(0, &+) }

    /// This with `n` more values of 0 (in the first bucket; the sum unchanged).
    public func addingZeros(_ n: UInt64) -> HistogramSnapshot {
        var more = counts
        more[0] &+= n
        return HistogramSnapshot(layout: layout, counts: more, sum: sum)
    }

    /// The buckets that hold a value, each with its bounds (upper nil: the overflow bucket).
    public var nonEmptyBuckets: [Bucket] {
        counts.indices.compactMap { i in
            counts[i] == 0
                ? nil
                : Bucket(
                    lower: Double(layout.lowerBound(i)), upper: layout.upperBound(i).map { Double($0) },
                    count: counts[i])
        }
    }

    /// The `q` quantile (0…1) in the layout's unit, nil when nothing was recorded.
    public func quantile(_ q: Double) -> Double? { Bucket.quantile(q, of: nonEmptyBuckets) }

    /// Cumulative counts at every power-of-two bound and at +Inf (upper nil), for Prometheus:
    /// a coarser view whose counts are exact, since the fine buckets nest in it.
    public var cumulativeAtPowersOfTwo: [(upper: UInt64?, cumulative: UInt64)] {
        var result: [(upper: UInt64?, cumulative: UInt64)] = []
        var running: UInt64 = 0
        for i in counts.indices {
            running &+= counts[i]
            if layout.endsOnPowerOfTwo(i) { result.append((layout.upperBound(i), running)) }
        }
        return result
    }
}

/// One bucket with its bounds, as the `status` reply carries it ([lower, upper, count]).
public struct Bucket: Equatable, Sendable {
    /// Exclusive.
    public let lower: Double
    /// Inclusive; nil: no upper bound (the overflow bucket).
    public let upper: Double?
    public let count: UInt64

    public init(lower: Double, upper: Double?, count: UInt64) {
        self.lower = lower
        self.upper = upper
        self.count = count
    }

    /// The `q` quantile (0…1) of values counted in `buckets` (in increasing order), assuming
    /// they are spread evenly inside each bucket. In the overflow bucket it is that bucket's
    /// lower bound: all that is known is "more than". Nil when the buckets hold nothing.
    public static func quantile(_ q: Double, of buckets: [Bucket]) -> Double? {
        let total = buckets.reduce(UInt64(0)) { $0 &+ $1.count }
        guard total > 0 else { return nil }
        let rank = min(max(q, 0), 1) * Double(total)
        var before: UInt64 = 0
        for bucket in buckets where bucket.count > 0 {
            let through = before + bucket.count
            if Double(through) >= rank {
                guard let upper = bucket.upper else { return bucket.lower }
                let fraction = (rank - Double(before)) / Double(bucket.count)
                return bucket.lower + (upper - bucket.lower) * max(fraction, 0)
            }
            before = through
        }
        // Rounding left the rank past the last bucket: the largest bound there is.
        let last = buckets.last { $0.count > 0 }!
        return last.upper ?? last.lower
    }
}

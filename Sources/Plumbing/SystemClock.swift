import Glibc

/// The process's two clocks, read in one place: the wall clock for what is stored and shown
/// (an event's `at`, start-up timing), the monotonic clock for intervals (retry delays).
public enum SystemClock {
    /// CLOCK_REALTIME in µs since the Unix epoch (UTC).
    public static func wallMicroseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
    }

    /// CLOCK_MONOTONIC in ns: never goes back, unrelated to the date.
    public static func monotonicNanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}

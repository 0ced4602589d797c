// Counting a drag path's allocator calls, and the verdict. Knows nothing of what the path does
// (DragPath.swift): it feeds reads, after a warm-up, between alloc_counter_start and _stop.
import CAllocCounter

/// What one run of drags asked of the C allocator, on this thread.
struct Measurement {
    var drags: Int
    var counts: alloc_counts

    var allocations: UInt64 { alloc_counter_allocations(counts) }

    /// "malloc 10000, realloc 3", naming only the functions that were called.
    var calls: String {
        let named: [(String, UInt64)] = [
            ("malloc", counts.malloc), ("calloc", counts.calloc), ("realloc", counts.realloc),
            ("reallocarray", counts.reallocarray), ("posix_memalign", counts.posix_memalign),
            ("aligned_alloc", counts.aligned_alloc), ("memalign", counts.memalign),
            ("valloc", counts.valloc), ("pvalloc", counts.pvalloc),
        ]
        let called = named.filter { $0.1 > 0 }.map { "\($0.0) \($0.1)" }
        return called.isEmpty ? "none" : called.joined(separator: ", ")
    }
}

/// Feeds the first `warmUp` reads to a fresh `P`, then counts the calls the rest make.
/// `@inline(never)` keeps the counted loop a loop of its own, as the daemon's would be.
@inline(never)
func measure<P: DragPath>(_: P.Type, _ reads: DragReads, warmUp: Int) -> Measurement {
    var path = P()
    var written = 0
    let counts = reads.bytes.withUnsafeBytes { raw in
        for read in reads.reads[..<warmUp] {
            written &+= path.receive(UnsafeRawBufferPointer(rebasing: raw[read]))
        }
        alloc_counter_start()
        for read in reads.reads[warmUp...] {
            written &+= path.receive(UnsafeRawBufferPointer(rebasing: raw[read]))
        }
        return alloc_counter_stop()
    }
    precondition(written > 0, "the drag path wrote no replies")
    return Measurement(drags: (reads.reads.count - warmUp) * reads.linesPerRead, counts: counts)
}

/// What a run's count means.
enum Expectation {
    /// The path under test: any call fails the guard.
    case none
    /// Reported only (a lane the daemon takes once per gesture, not per drag).
    case reported
    /// A control that allocates on every drag: fewer calls than drags means the counter is
    /// broken, and then the guard cannot be trusted to pass.
    case atLeastOnePerDrag
}

/// One run of the guard: its name, its lines, what it expects.
struct Run {
    var name: String
    var expect: Expectation
    var measurement: Measurement

    var passed: Bool {
        switch expect {
        case .none: measurement.allocations == 0
        case .reported: true
        case .atLeastOnePerDrag: measurement.allocations >= UInt64(measurement.drags)
        }
    }

    var line: String {
        let verdict: String
        switch expect {
        case .none, .atLeastOnePerDrag: verdict = passed ? "ok  " : "FAIL"
        case .reported: verdict = "info"
        }
        let m = measurement
        let padded = name + String(repeating: " ", count: max(0, 58 - name.count))
        return
            "  \(verdict)  \(padded) \(m.allocations) calls in \(m.drags) drags (\(m.calls); free \(m.counts.free))"
    }

    /// Why the guard failed, for the last line of its output.
    var failure: String? {
        guard !passed else { return nil }
        let m = measurement
        switch expect {
        case .none:
            return
                "\(name): \(m.drags) drags after warm-up made \(m.allocations) allocator calls (\(m.calls));"
                + " the drag path must make none; to see where: gdb -ex 'break alloc_counter_hit' -ex run -ex bt"
                + " --args \(CommandLine.arguments[0]) --only '\(name)'"
        case .atLeastOnePerDrag:
            return
                "\(name): counted \(m.allocations) allocator calls for \(m.drags) drags that each allocate;"
                + " the interposer does not see Swift's allocations, so a pass would prove nothing"
        case .reported:
            return nil
        }
    }
}

/// The drag path under test, made to allocate on every read, so on every drag when a read holds
/// one (the control and the self-test): each read's reply count goes into a fresh array, kept
/// until the next read.
struct Allocating<Inner: DragPath>: DragPath {
    private var inner = Inner()
    private var kept: [Int] = []

    init() {}

    mutating func receive(_ bytes: UnsafeRawBufferPointer) -> Int {
        let written = inner.receive(bytes)
        var fresh: [Int] = []
        fresh.append(written)
        kept = fresh
        return written + kept.count
    }
}

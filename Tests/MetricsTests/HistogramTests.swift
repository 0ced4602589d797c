import Dispatch
import Foundation
import Metrics
import XCTest

final class HistogramTests: XCTestCase {
    func testRecordsCountsAndSum() {
        var h = Histogram(.latency)
        h.record(1_000)  // bucket 0
        h.record(16_385)  // bucket 1
        h.record(20_480)  // bucket 1 (its bound)
        h.record(UInt64(1) << 40)  // overflow
        let s = h.snapshot()
        XCTAssertEqual(s.count, 4)
        XCTAssertEqual(s.sum, 1_000 + 16_385 + 20_480 + (UInt64(1) << 40))
        XCTAssertEqual(s.counts[0], 1)
        XCTAssertEqual(s.counts[1], 2)
        XCTAssertEqual(s.counts[81], 1)
        XCTAssertEqual(s.nonEmptyBuckets.map(\.count), [1, 2, 1])
        XCTAssertEqual(s.nonEmptyBuckets.last, Bucket(lower: Double(UInt64(1) << 34), upper: nil, count: 1))
    }

    func testQuantilesInterpolateInsideABucket() {
        var h = Histogram(.events)
        // 100 values in (4, 8]: the median is halfway through that bucket.
        for _ in 0..<100 { h.record(8) }
        let s = h.snapshot()
        XCTAssertEqual(s.quantile(0.5), 6)
        XCTAssertEqual(s.quantile(1), 8)
        XCTAssertEqual(s.quantile(0.99)!, 7.96, accuracy: 1e-9)
        XCTAssertNil(Histogram(.events).snapshot().quantile(0.5))
    }

    func testQuantilesPickTheRightBucket() {
        var h = Histogram(.latency)
        for _ in 0..<990 { h.record(10_000) }  // ≤ 16.384 µs
        for _ in 0..<9 { h.record(1_000_000) }  // (0.983 ms, 1.049 ms]
        h.record(5_000_000_000)  // 5 s
        let s = h.snapshot()
        XCTAssertLessThanOrEqual(s.quantile(0.5)!, 16_384)
        XCTAssertLessThanOrEqual(s.quantile(0.99)!, 16_384)
        let p999 = s.quantile(0.999)!
        XCTAssertTrue((983_040...1_048_576).contains(p999), "\(p999)")
        XCTAssertEqual(
            s.quantile(1)!,
            Double(BucketLayout.latency.upperBound(BucketLayout.latency.index(5_000_000_000))!))
    }

    func testTheOverflowBucketsQuantileIsItsLowerBound() {
        XCTAssertEqual(Bucket.quantile(0.5, of: [Bucket(lower: 10, upper: nil, count: 3)]), 10)
    }

    func testCumulativeCountsAtPowersOfTwo() {
        var h = Histogram(.latency)
        h.record(1)
        h.record(20_000)
        h.record(40_000)
        h.record(UInt64(1) << 50)
        let coarse = h.snapshot().cumulativeAtPowersOfTwo
        XCTAssertEqual(coarse.count, 22)
        XCTAssertEqual(coarse[0].upper, 16_384)
        XCTAssertEqual(coarse[0].cumulative, 1)
        XCTAssertEqual(coarse[1].upper, 32_768)
        XCTAssertEqual(coarse[1].cumulative, 2)
        XCTAssertEqual(coarse[2].cumulative, 3)
        XCTAssertEqual(coarse[20].upper, UInt64(1) << 34)
        XCTAssertEqual(coarse[20].cumulative, 3)
        XCTAssertNil(coarse[21].upper)
        XCTAssertEqual(coarse[21].cumulative, 4)
    }

    func testASharedHistogramCountsEveryValueFromAnotherThread() {
        let shared = SharedHistogram(.latency)
        let threads = 4
        let each = 10_000
        DispatchQueue.concurrentPerform(iterations: threads) { t in
            for i in 0..<each { shared.record(UInt64(t * 1_000_000 + i)) }
        }
        let s = shared.snapshot()
        XCTAssertEqual(s.count, UInt64(threads * each))
        var local = Histogram(.latency)
        for t in 0..<threads { for i in 0..<each { local.record(UInt64(t * 1_000_000 + i)) } }
        XCTAssertEqual(s, local.snapshot())
    }

    func testLoopMetricsCountByOrdinalAndClass() {
        var m = LoopMetrics()
        m.answered(op: 3, .drag, nanoseconds: 100)
        m.answered(op: 3, .mutation, nanoseconds: 2_000_000)
        m.answered(op: 31, .read, nanoseconds: 0)
        m.failed(code: 15)
        m.connected(3)
        m.connected(2)
        XCTAssertEqual(m.requests(3), 2)
        XCTAssertEqual(m.requests(31), 1)
        XCTAssertEqual(m.requests(0), 0)
        XCTAssertEqual(m.errors(15), 1)
        XCTAssertEqual(m.peakClients, 3)
        XCTAssertEqual(m.drag.snapshot().count, 1)
        XCTAssertEqual(m.mutation.snapshot().sum, 2_000_000)
        XCTAssertEqual(m.read.snapshot().count, 1)
    }

    func testZerosAddedToASnapshotAreWhatRecordingZeroGives() {
        var h = Histogram(.latency)
        h.record(5_000_000)
        var reference = h
        reference.record(0)
        reference.record(0)
        XCTAssertEqual(h.snapshot().addingZeros(2), reference.snapshot())
        XCTAssertEqual(h.snapshot().addingZeros(2).count, 3)
    }
}

final class CommitMetersTests: XCTestCase {
    func testATransactionCountsItsDurationAndEvents() {
        let meters = CommitMeters()
        let done = DispatchSemaphore(value: 0)
        // From another thread, as the store's writer does.
        Thread {
            meters.committed(nanoseconds: 1_200_000, events: 3)
            meters.committed(nanoseconds: 800_000, events: 1)
            done.signal()
        }.start()
        done.wait()
        XCTAssertEqual(meters.duration.snapshot().count, 2)
        XCTAssertEqual(meters.duration.snapshot().sum, 2_000_000)
        XCTAssertEqual(meters.events.snapshot().sum, 4)
        XCTAssertEqual(meters.events.snapshot().nonEmptyBuckets.map(\.upper), [1, 4])
    }
}

import Metrics
import XCTest

final class BucketLayoutTests: XCTestCase {
    let layouts = [BucketLayout.latency, .events]

    func testTheLatencyLayoutIsTheDocumentedOne() {
        let l = BucketLayout.latency
        XCTAssertEqual(l.count, 82)
        XCTAssertEqual(l.upperBound(0), 16_384)
        XCTAssertEqual(l.upperBound(1), 20_480)  // 16.384 µs × 1.25
        XCTAssertEqual(l.upperBound(4), 32_768)
        XCTAssertEqual(l.upperBound(80), 1 << 34)  // 17.18 s
        XCTAssertNil(l.upperBound(81))
        XCTAssertEqual(BucketLayout.events.count, 18)
        XCTAssertEqual((0..<17).map { BucketLayout.events.upperBound($0)! }, (0...16).map { UInt64(1) << $0 })
    }

    func testEveryBoundFallsInItsBucketAndTheNextValueInTheNext() {
        for layout in layouts {
            XCTAssertEqual(layout.index(0), 0)
            for i in 0..<(layout.count - 1) {
                let upper = layout.upperBound(i)!
                XCTAssertEqual(layout.index(upper), i, "\(layout) bound \(upper)")
                XCTAssertEqual(layout.index(upper + 1), i + 1, "\(layout) bound \(upper) + 1")
                XCTAssertEqual(layout.lowerBound(i + 1), upper)
                XCTAssertGreaterThan(upper, layout.lowerBound(i))
            }
            XCTAssertEqual(layout.index(.max), layout.count - 1)
        }
    }

    func testEveryLatencyBucketIsAtMostAQuarterWide() {
        let l = BucketLayout.latency
        for i in 1..<(l.count - 1) {
            let width = Double(l.upperBound(i)! - l.lowerBound(i))
            XCTAssertLessThanOrEqual(width / Double(l.lowerBound(i)), 0.25, "bucket \(i)")
        }
    }

    func testPowersOfTwoAreTheCoarseBounds() {
        let l = BucketLayout.latency
        let coarse = (0..<l.count).filter(l.endsOnPowerOfTwo)
        XCTAssertEqual(coarse.count, 22)
        for i in coarse.dropLast() { XCTAssertEqual(l.upperBound(i)!.nonzeroBitCount, 1, "bucket \(i)") }
    }
}

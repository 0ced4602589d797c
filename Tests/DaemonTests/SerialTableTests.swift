import XCTest

@testable import Daemon

/// The table the daemon keeps connections and pending tokens in behaves as a dictionary, and
/// its cheap hash spreads sequential numbers (and the numbers of a long-running daemon) well.
final class SerialTableTests: XCTestCase {
    func testBehavesAsADictionary() {
        var table = SerialTable<String>()
        var reference: [UInt64: String] = [:]
        let starts: [UInt64] = [1, 1 << 32, UInt64.max - 5_000]
        for start in starts {
            for k in 0..<3_000 as Range<UInt64> {
                table[start &+ k] = "\(start &+ k)"
                reference[start &+ k] = "\(start &+ k)"
            }
        }
        for start in starts {
            for k in stride(from: 0, to: 3_000 as UInt64, by: 3) {
                let key = start &+ k
                XCTAssertEqual(table.removeValue(forKey: key), reference.removeValue(forKey: key))
            }
        }
        XCTAssertNil(table.removeValue(forKey: 1))
        table[2] = nil
        reference[2] = nil
        XCTAssertEqual(table.count, reference.count)
        XCTAssertFalse(table.isEmpty)
        for start in starts {
            for k in 0..<3_100 as Range<UInt64> {
                XCTAssertEqual(table[start &+ k], reference[start &+ k])
            }
        }
        XCTAssertEqual(table.values.sorted(), reference.values.sorted())
    }

    /// Sequential numbers, wherever they start, land in distinct buckets of a table as large
    /// as they are many, or nearly: no clustering for linear probing to pay for.
    func testSpreadsSequentialNumbers() {
        for start: UInt64 in [0, 1, 1 << 20, 1 << 40] {
            for seed in [0, 1, -1, 0x1234_5678] {
                let mask = 1023
                var used = Set<Int>()
                for k in 0..<768 as Range<UInt64> {
                    used.insert(SerialKey(raw: start + k)._rawHashValue(seed: seed) & mask)
                }
                // Random placement would fill about 1024 * (1 - e^-0.75) ≈ 540 buckets.
                XCTAssertGreaterThan(used.count, 500, "start \(start), seed \(seed)")
            }
        }
    }
}

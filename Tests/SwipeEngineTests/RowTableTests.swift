import XCTest

@testable import SwipeEngine

/// The row table's cheap key hash must never change what the table holds: ids that fold to the
/// same word (same ends, same length) are still told apart, and equal ids always hash alike.
final class RowTableTests: XCTestCase {
    func testIdsThatShareEndsAndLengthStayApart() {
        var ids: [RowID] = []
        for i in 0..<500 { ids.append("movie_\(String(format: "%04d", i))_x") }  // differ mid-way
        for i in 0..<50 { ids.append(String(repeating: "a", count: i)) }  // every short length, ""
        ids += ["é", "e\u{301}", "ü", "same-prefix-A-same-suffix", "same-prefix-B-same-suffix"]
        ids += ["ab\u{e9}cdefghijklmnopqrstuvwxyz", "ab\u{e8}cdefghijklmnopqrstuvwxyz"]  // differ mid-way
        ids.append(String(repeating: "z", count: 3000))
        var table = RowTable()
        for (n, id) in ids.enumerated() {
            table[id] = RowState(offset: Double(n), restingOffset: 0, phase: .dragging)
        }
        XCTAssertEqual(table.keys.count, ids.count)
        for (n, id) in ids.enumerated() {
            XCTAssertEqual(table[id]?.offset, Double(n), "id \(id.prefix(40))")
            XCTAssertEqual(
                RowKey(id).hashValue, RowKey(String(decoding: Array(id.utf8), as: UTF8.self)).hashValue)
        }
        XCTAssertNil(table["movie_0000_y"])
        XCTAssertEqual(Set(table.keys.map { Array($0.utf8) }).count, ids.count)
        table.removeValue(forKey: ids[0])
        XCTAssertNil(table[ids[0]])
        XCTAssertEqual(Array(table).count, ids.count - 1)
    }

    /// Rows are told apart by their ids' bytes: two spellings of one text are two rows (the
    /// daemon hands the engine the store's spelling), and equal keys always hash alike.
    func testIdsAreComparedByTheirBytes() {
        let composed = "caf\u{e9}-a-long-id-past-sixteen-bytes"
        let decomposed = "cafe\u{301}-a-long-id-past-sixteen-bytes"
        XCTAssertEqual(composed, decomposed)  // String's == is canonical equivalence
        XCTAssertNotEqual(RowKey(composed), RowKey(decomposed))
        XCTAssertEqual(RowKey(composed), RowKey(String(decoding: Array(composed.utf8), as: UTF8.self)))
        XCTAssertEqual(
            RowKey(composed).hashValue,
            RowKey(String(decoding: Array(composed.utf8), as: UTF8.self)).hashValue)
        var table = RowTable()
        table[composed] = RowState(offset: 1, restingOffset: 0, phase: .dragging)
        table[decomposed] = RowState(offset: 2, restingOffset: 0, phase: .dragging)
        XCTAssertEqual(table[composed]?.offset, 1)
        XCTAssertEqual(table[decomposed]?.offset, 2)
        XCTAssertEqual(table.keys.count, 2)
    }
}

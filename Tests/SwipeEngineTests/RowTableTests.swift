// RowTable (the engine's rows by id) against a Dictionary doing the same operations: random
// sets, removals and clears that cross the size where it keeps a position index, both ways.
import TestSupport
import XCTest

@testable import SwipeEngine

final class RowTableTests: XCTestCase {
    private func assertSame(_ table: RowTable, _ model: [RowID: RowState], _ ids: [RowID], _ step: Int) {
        XCTAssertEqual(table.count, model.count, "count after step \(step)")
        XCTAssertEqual(table.isEmpty, model.isEmpty)
        XCTAssertEqual(table.dictionary, model, "rows after step \(step)")
        XCTAssertEqual(table.keys.sorted(), model.keys.sorted())
        for id in ids {
            XCTAssertEqual(table[id], model[id], "\(id) after step \(step)")
            if let i = table.index(forKey: id) {
                XCTAssertEqual(table[at: i], model[id])
            } else {
                XCTAssertNil(model[id])
            }
        }
    }

    func testRandomOperationsMatchADictionary() {
        var rng = SplitMix64(seed: 0x7AB1_E000)
        // Short ids (small strings), long ones (heap strings) and near misses of each other.
        let ids =
            (0..<40).map { "row-\($0)" } + (0..<10).map { "a-row-id-much-longer-than-fifteen-bytes-\($0)" }
        var table = RowTable()
        var model: [RowID: RowState] = [:]
        var largest = 0
        var sawIndexDropped = false
        for step in 0..<20_000 {
            let id = ids.randomElement(using: &rng)!
            // Grow for a while, then shrink, so the index is built and dropped many times.
            let growing = (step / 500) % 2 == 0
            switch Int.random(in: 0..<10, using: &rng) {
            case 0..<5 where growing, 0..<2:
                let state = RowState(
                    offset: Double(Int.random(in: -300...300, using: &rng)), restingOffset: 0,
                    phase: [.dragging, .open, .fired].randomElement(using: &rng)!)
                table[id] = state
                model[id] = state
            case 5..<9, 2..<9:
                XCTAssertEqual(table.removeValue(forKey: id), model.removeValue(forKey: id))
            default:
                if let i = table.index(forKey: id) {
                    table[at: i].offset += 1
                    model[id]!.offset += 1
                } else if Int.random(in: 0..<50, using: &rng) == 0 {
                    table.removeAll()
                    model.removeAll()
                } else {
                    table[id] = nil
                    model[id] = nil
                }
            }
            if largest > RowTable.indexedAbove && model.count <= RowTable.indexedAbove / 2 {
                sawIndexDropped = true
            }
            largest = max(largest, model.count)
            assertSame(table, model, ids, step)
        }
        XCTAssertGreaterThan(largest, RowTable.indexedAbove, "the index was never built")
        XCTAssertTrue(sawIndexDropped, "the table never shrank back below the index")
    }

    func testEqualityIgnoresOrder() {
        var a = RowTable()
        var b = RowTable()
        let s1 = RowState(offset: -60, restingOffset: 0, phase: .dragging)
        let s2 = RowState(offset: 80, restingOffset: 80, phase: .open)
        a["x"] = s1
        a["y"] = s2
        b["y"] = s2
        b["x"] = s1
        XCTAssertEqual(a, b)
        b["x"] = s2
        XCTAssertNotEqual(a, b)
        b["x"] = nil
        XCTAssertNotEqual(a, b)
    }
}

import SwipeEngine
import XCTest

/// An exhaustive harness in the spirit of TCA's TestStore: every `send` states exactly how the
/// tracked rows change (by mutating the previous rows) and exactly which effects come out.
/// Anything not asserted fails: a row that changed without being mentioned, an extra effect,
/// a changed layout or viewport, a change of the scrolling row (rule 13) not stated.
struct TestStore {
    var list: SwipeList

    init(_ layout: Layout, width: Double = 390, direction: Direction = .ltr, crossings: Bool = false) {
        list = SwipeList(layout: layout, viewport: Viewport(width: width, direction: direction))
        list.reportsCrossings = crossings
    }

    /// What becomes of the scrolling row (rule 13): unchanged, or now this one (nil: none).
    enum Scrolling: Equatable {
        case unchanged
        case now(RowID?)
    }

    mutating func send(
        _ input: Input, _ effects: [Effect] = [], scrolling: Scrolling = .unchanged,
        file: StaticString = #filePath, line: UInt = #line,
        _ update: (inout [RowID: RowState]) -> Void = { _ in }
    ) {
        var expected = list.trackedRows
        update(&expected)
        let before = list
        do {
            let actual = try list.send(input)
            XCTAssertEqual(actual, effects, "effects of \(input)", file: file, line: line)
        } catch {
            XCTFail("\(input) threw \(error)", file: file, line: line)
        }
        XCTAssertEqual(list.trackedRows, expected, "rows after \(input)", file: file, line: line)
        if case .now(let row) = scrolling {
            XCTAssertEqual(list.scrolling, row, "the scrolling row after \(input)", file: file, line: line)
        } else {
            XCTAssertEqual(
                list.scrolling, before.scrolling, "the scrolling row after \(input)", file: file, line: line)
        }
        XCTAssertEqual(list.reportsCrossings, before.reportsCrossings, file: file, line: line)
        XCTAssertEqual(list.layout, before.layout, file: file, line: line)
        XCTAssertEqual(list.viewport, before.viewport, file: file, line: line)
    }

    /// The input must throw exactly `error` and leave the list unchanged.
    mutating func fail(
        _ input: Input, _ error: SwipeError, file: StaticString = #filePath, line: UInt = #line
    ) {
        let before = list
        do {
            let effects = try list.send(input)
            XCTFail("\(input) did not throw; effects \(effects)", file: file, line: line)
        } catch let thrown {
            XCTAssertEqual(thrown, error, file: file, line: line)
        }
        XCTAssertEqual(list, before, "list changed by a refused \(input)", file: file, line: line)
    }
}

/// Shorthands for states in the tests.
func dragging(_ offset: Double, from resting: Double = 0) -> RowState {
    RowState(offset: offset, restingOffset: resting, phase: .dragging)
}
func open(_ offset: Double) -> RowState { RowState(offset: offset, restingOffset: offset, phase: .open) }
func fired(_ offset: Double) -> RowState { RowState(offset: offset, restingOffset: offset, phase: .fired) }
func peeking(_ offset: Double) -> RowState { RowState(offset: offset, restingOffset: 0, phase: .peeking) }
func dismissed(_ offset: Double) -> RowState {
    RowState(offset: offset, restingOffset: offset, phase: .dismissed)
}

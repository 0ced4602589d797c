import Terminal
import XCTest

final class DiffTests: XCTestCase {
    func grid(_ lines: [String], width: Int = 20) -> Grid {
        var g = Grid(width: width, height: lines.count)
        for (y, line) in lines.enumerated() { g.put(line, x: 0, y: y) }
        return g
    }

    func testAFrameWithOneChangedCellWritesAFewBytes() {
        let old = grid(["hello world", "second line", "third"])
        var new = old
        new[6, 1] = Cell("X")
        let bytes = FrameWriter.diff(from: old, to: new)
        XCTAssertEqual(String(decoding: bytes, as: UTF8.self), "\u{1B}[2;7HX")
        XCTAssertLessThanOrEqual(bytes.count, 10)
        // Synchronized output only wraps it.
        let synchronized = FrameWriter.diff(from: old, to: new, synchronized: true)
        XCTAssertEqual(synchronized.count, bytes.count + 16)
    }

    func testAnUnchangedFrameWritesNothing() {
        let g = grid(["same"])
        XCTAssertEqual(FrameWriter.diff(from: g, to: g), [])
    }

    func testAdjacentChangesShareOneCursorMoveAndStyleChangesAreReset() {
        let old = grid(["abcdef"])
        var new = old
        let red = Style(background: .indexed(203))
        new[1, 0] = Cell("B", red)
        new[2, 0] = Cell("C", red)
        let text = String(decoding: FrameWriter.diff(from: old, to: new), as: UTF8.self)
        XCTAssertEqual(text, "\u{1B}[1;2H\u{1B}[0;48;5;203mBC\u{1B}[0m")
    }

    func testAFullFrameClearsAndWritesOnlyWhatIsNotBlank() {
        let new = grid(["ab", "", "c"], width: 4)
        let text = String(decoding: FrameWriter.diff(from: nil, to: new), as: UTF8.self)
        XCTAssertEqual(text, "\u{1B}[0m\u{1B}[2J\u{1B}[1;1Hab\u{1B}[3;1Hc")
    }

    func testWideCharactersAreWrittenOnceAndRewrittenWhenHalfOfThemChanges() {
        let old = grid(["a日b"])
        XCTAssertEqual(old[1, 0].text, "日")
        XCTAssertTrue(old[2, 0].isContinuation)
        var new = old
        new.put("x", x: 2, y: 0)  // overwrites the right half: the lead becomes a space
        XCTAssertEqual(new[1, 0].text, " ")
        let text = String(decoding: FrameWriter.diff(from: old, to: new), as: UTF8.self)
        XCTAssertEqual(text, "\u{1B}[1;2H x")
        // A wide character replacing two narrow ones is written once, and the cursor knows it
        // moved two columns.
        var wide = grid(["abcd"])
        let before = wide
        wide.put("日", x: 1, y: 0)
        wide.put("Z", x: 3, y: 0)
        XCTAssertEqual(
            String(decoding: FrameWriter.diff(from: before, to: wide), as: UTF8.self), "\u{1B}[1;2H日Z")
    }

    func testSGRForEveryAttributeAndBothColourKinds() {
        let style = Style(
            foreground: .rgb(1, 2, 3), background: .indexed(9), bold: true, faint: true, inverse: true,
            underline: true)
        XCTAssertEqual(
            String(decoding: FrameWriter.sgr(style), as: UTF8.self), "\u{1B}[0;1;2;4;7;38;2;1;2;3;48;5;9m")
    }
}

import XCTest

@testable import swipectl

final class TerminalTextTests: XCTestCase {
    override class func setUp() { TerminalText.useLocale() }

    func testEscapedWritesWhatNoTitleNeedsAsCodePoints() {
        XCTAssertEqual(TerminalText.escaped("Evil\u{202E}txt.exe"), "Evil\\u{202E}txt.exe")
        XCTAssertEqual(
            TerminalText.escaped("one\u{2028}two\nthree\u{1B}[31m"), "one\\u{2028}two\\u{A}three\\u{1B}[31m")
        XCTAssertEqual(TerminalText.escaped("zero\u{200B}width\u{FEFF}"), "zero\\u{200B}width\\u{FEFF}")
        // What titles may hold is left alone.
        for title in ["The Godfather", "東京物語", "👨‍👩‍👧", "❤️", "🏴󠁧󠁢󠁳󠁣󠁴󠁿", "می‌خواهم", "Amélie"] {
            XCTAssertEqual(TerminalText.escaped(title), title)
        }
    }

    func testWidthCountsCells() {
        XCTAssertEqual(TerminalText.width("Heat"), 4)
        XCTAssertEqual(TerminalText.width("東京物語"), 8)
        XCTAssertEqual(TerminalText.width("한국"), 4)
        XCTAssertEqual(TerminalText.width("ＡＢ"), 4)  // fullwidth
        XCTAssertEqual(TerminalText.width("🎬🍿"), 4)
        XCTAssertEqual(TerminalText.width("Ame\u{301}lie"), 6)  // a combining mark takes none
        XCTAssertEqual(TerminalText.width("a\u{200D}b"), 2)
        XCTAssertEqual(TerminalText.width("👁 👥"), 4)  // U+1F441 is text by default: one cell
    }

    /// The fallback (a locale where wcwidth knows nothing) agrees with wcwidth on what titles
    /// are made of.
    func testFallbackWidthAgreesWithWcwidthOnCommonText() {
        let text = "The Matrix 東京物語 한국어 ＡＢ 🎬🍿 Amélie e\u{301} Ελληνικά Русский עברית 😀\u{200D}"
        for scalar in text.unicodeScalars {
            XCTAssertEqual(
                TerminalText.fallbackWidth(scalar), TerminalText.width(scalar),
                String(scalar.value, radix: 16))
        }
        XCTAssertEqual(TerminalText.fallbackWidth("\u{202E}"), 0)
        XCTAssertEqual(TerminalText.fallbackWidth("\u{1B}"), 0)
    }

    func testTruncatedCutsWholeCharactersToTheWidth() {
        XCTAssertEqual(TerminalText.truncated("The Godfather", toWidth: 20), "The Godfather")
        XCTAssertEqual(TerminalText.truncated("The Godfather", toWidth: 8), "The God…")
        XCTAssertEqual(TerminalText.truncated("東京物語", toWidth: 6), "東京…")
        XCTAssertEqual(TerminalText.truncated("東京物語", toWidth: 5), "東京…")  // 東京物 would be 7
        XCTAssertEqual(TerminalText.truncated("東京物語", toWidth: 4), "東…")
        XCTAssertEqual(TerminalText.truncated("Ame\u{301}lie Poulain", toWidth: 5), "Ame\u{301}l…")
        XCTAssertEqual(TerminalText.truncated("👨‍👩‍👧 family", toWidth: 3), "…")  // the family is 6 cells here
        for width in 1...12 {
            XCTAssertLessThanOrEqual(
                TerminalText.width(TerminalText.truncated("Tokyo 東京物語 🎬", toWidth: width)), width)
        }
    }
}

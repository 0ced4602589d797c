import XCTest

@testable import Movies

/// What a title may be (Title.swift, protocol.md's `add`).
final class TitleTests: XCTestCase {
    private func refusal(_ title: String, file: StaticString = #filePath, line: UInt = #line) -> String? {
        do {
            _ = try MovieState.checkedTitle(title)
            return nil
        } catch {
            XCTAssertEqual(error.code, "bad-request", file: file, line: line)
            return error.message
        }
    }

    func testTrimmedAndNFC() throws {
        XCTAssertEqual(try MovieState.checkedTitle("  Heat \u{3000}"), "Heat")
        XCTAssertEqual(try MovieState.checkedTitle("\u{A0}Ame\u{301}lie"), "Am\u{E9}lie")
        XCTAssertEqual(try MovieState.checkedTitle("Ame\u{301}lie").unicodeScalars.count, 6)
        XCTAssertEqual(try MovieState.checkedTitle("In  the   Mood"), "In  the   Mood")  // inside: kept
        // The length counts characters after trimming.
        XCTAssertNoThrow(try MovieState.checkedTitle("  " + String(repeating: "e\u{301}", count: 200) + "  "))
    }

    func testBidiControlsAndSeparatorsAreRefusedByName() {
        XCTAssertEqual(
            refusal("Evil\u{202E}txt.exe"),
            "title contains U+202E RIGHT-TO-LEFT OVERRIDE, which no title needs")
        for value: UInt32 in [0x202A, 0x202B, 0x202C, 0x202D, 0x2066, 0x2067, 0x2068, 0x2069, 0x200E, 0x200F]
        {
            XCTAssertNotNil(refusal("a\(Unicode.Scalar(value)!)b"), String(value, radix: 16))
        }
        XCTAssertEqual(
            refusal("one\u{2028}two"), "title contains U+2028 LINE SEPARATOR, which no title needs")
        XCTAssertEqual(
            refusal("one\u{2029}two"), "title contains U+2029 PARAGRAPH SEPARATOR, which no title needs")
    }

    func testInvisibleCharactersAreRefused() {
        XCTAssertEqual(
            refusal("Zero\u{200B}Width"), "title contains U+200B ZERO WIDTH SPACE, which no title needs")
        XCTAssertEqual(
            refusal("\u{FEFF}Heat"), "title contains U+FEFF ZERO WIDTH NO-BREAK SPACE, which no title needs")
        XCTAssertEqual(refusal("Soft\u{AD}hyphen"), "title contains U+00AD SOFT HYPHEN, which no title needs")
        XCTAssertEqual(refusal("a\u{2060}b"), "title contains U+2060 WORD JOINER, which no title needs")
        XCTAssertEqual(refusal("a\u{3164}b"), "title contains U+3164 HANGUL FILLER, which no title needs")
        // Tags outside an emoji tag sequence hide text.
        XCTAssertEqual(
            refusal("a\u{E0041}"), "title contains U+E0041 TAG LATIN CAPITAL LETTER A, which no title needs")
        XCTAssertNotNil(refusal("🏴\u{E0067}\u{E0062}"))  // not ended by CANCEL TAG
    }

    func testControlCharactersAreRefused() {
        XCTAssertEqual(refusal("a\nb"), "title contains U+000A (a control character), which no title needs")
        XCTAssertEqual(
            refusal("a\u{1B}[31m"), "title contains U+001B (a control character), which no title needs")
        XCTAssertNotNil(refusal("Heat\t"))
        XCTAssertNotNil(refusal("a\u{7F}"))
        XCTAssertNotNil(refusal("a\u{85}"))
    }

    func testWhatEmojiAndScriptsNeedIsKept() throws {
        for title in [
            "👨‍👩‍👧 Family",  // ZWJ sequence
            "می‌خواهم",  // ZWNJ in Persian
            "❤️ Love",  // U+FE0F, a default-ignorable mark
            "🏴󠁧󠁢󠁳󠁣󠁴󠁿 Braveheart",  // an emoji tag sequence
            "東京物語", "Amélie", "שלום עולם", "مرحبا",
        ] {
            XCTAssertEqual(try MovieState.checkedTitle(title), title.precomposedStringWithCanonicalMapping)
        }
    }

    func testBlankEmptyAndTooLong() {
        XCTAssertEqual(refusal(""), "title is empty; it needs 1 to 200 characters")
        XCTAssertEqual(refusal("   \t"), "title is blank")
        XCTAssertEqual(refusal("\u{200D}"), "title is blank")
        XCTAssertEqual(refusal("\u{3000} \u{A0}"), "title is blank")
        XCTAssertEqual(
            refusal(String(repeating: "é", count: 201)), "title has 201 characters; at most 200 are allowed")
    }

    func testAddStoresTheCheckedTitle() throws {
        let event = try MovieState().decide(MovieCommand(.add(title: "  Ame\u{301}lie ", image: nil)))
        XCTAssertEqual(event, .added(id: "amelie", title: "Am\u{E9}lie", image: "amelie"))
    }
}

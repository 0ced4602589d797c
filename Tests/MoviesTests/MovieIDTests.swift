import XCTest

@testable import Movies

/// The id `add` makes from a title (MovieID.swift, protocol.md's `add`).
final class MovieIDTests: XCTestCase {
    func testTheIssuesExamples() {
        XCTAssertEqual(MovieState.slug("Amélie — 東京物語 🎬"), "amelie_東京物語")
        XCTAssertEqual(MovieState.slug("Amélie"), "amelie")
        XCTAssertEqual(MovieState.slug("日本"), "日本")
        XCTAssertEqual(MovieState.slug("ééé…"), "eee")
    }

    func testASCIITitlesGiveTheIdsTheyGaveBefore() {
        XCTAssertEqual(MovieState.slug("The Dark Knight"), "the_dark_knight")
        XCTAssertEqual(MovieState.slug("  Schindler's List!! (1993) "), "schindlers_list_1993")
        XCTAssertEqual(MovieState.slug("Se7en"), "se7en")
        XCTAssertEqual(MovieState.slug("__a__b__"), "a_b")
        XCTAssertEqual(MovieState.slug("-1 Minute"), "1_minute")
    }

    func testLatinLettersLoseTheirMarksWhateverTheirForm() {
        // Precomposed and decomposed input give the same id (NFC first).
        XCTAssertEqual(MovieState.slug("Am\u{E9}lie"), "amelie")
        XCTAssertEqual(MovieState.slug("Ame\u{301}lie"), "amelie")
        XCTAssertEqual(MovieState.slug("İstanbul Çağ Straße"), "istanbul_cag_straße")
        XCTAssertEqual(MovieState.slug("Mädchen in Uniform"), "madchen_in_uniform")
        XCTAssertEqual(MovieState.slug("Ørsted’s Æon"), "ørsteds_æon")  // no decomposition: kept
        XCTAssertEqual(MovieState.slug("Tiếng Việt"), "tieng_viet")
    }

    func testOtherScriptsKeepTheirLettersMarksAndDigits() {
        XCTAssertEqual(MovieState.slug("ΣΟΦΙΑ"), "σοφια")
        XCTAssertEqual(MovieState.slug("Андрей Рублёв"), "андрей_рублёв")  // Cyrillic keeps ё
        XCTAssertEqual(MovieState.slug("がんばれ"), "がんばれ")  // kana voicing marks kept
        XCTAssertEqual(MovieState.slug("हिन्दी फ़िल्म"), "हिन्दी_फ़िल्म")
        XCTAssertEqual(MovieState.slug("기생충 (2019)"), "기생충_2019")
        XCTAssertEqual(MovieState.slug("七人の侍・1954"), "七人の侍_1954")
        XCTAssertEqual(MovieState.slug("٣ أيام"), "٣_أيام")
        // Mixed scripts, one separator between them.
        XCTAssertEqual(MovieState.slug("Crouching Tiger, 卧虎藏龙!"), "crouching_tiger_卧虎藏龙")
    }

    func testNothingLeftIsMovie() {
        XCTAssertEqual(MovieState.slug("🎬🍿"), "movie")
        XCTAssertEqual(MovieState.slug("👨‍👩‍👧"), "movie")
        XCTAssertEqual(MovieState.slug("…!?"), "movie")
        XCTAssertEqual(MovieState.slug("\u{301}"), "movie")
    }

    func testAtMost64BytesCutAtACharacterBoundary() {
        XCTAssertEqual(
            MovieState.slug(String(repeating: "ab", count: 100)), String(repeating: "ab", count: 32))
        // 21 three-byte characters are 63 bytes; the 22nd would make 66.
        let kanji = MovieState.slug(String(repeating: "東", count: 30))
        XCTAssertEqual(kanji, String(repeating: "東", count: 21))
        XCTAssertEqual(kanji.utf8.count, 63)
        // A character of several scalars (a letter and its mark) is not split.
        let hindi = MovieState.slug("a" + String(repeating: "कि", count: 20))
        XCTAssertLessThanOrEqual(hindi.utf8.count, 64)
        XCTAssertEqual(hindi, "a" + String(repeating: "कि", count: 10))
        // A cut right after a separator leaves no `_` at the end.
        XCTAssertEqual(
            MovieState.slug(String(repeating: "a", count: 63) + " b"), String(repeating: "a", count: 63))
    }

    func testCollisionsTakeASuffix() {
        var s = MovieState()
        s.apply(.added(id: "日本", title: "日本", image: "日本"), seq: 1)
        XCTAssertEqual(s.freshID(for: "日本!"), "日本_2")
        s.apply(.added(id: "日本_2", title: "日本!", image: ""), seq: 2)
        XCTAssertEqual(s.freshID(for: "日本"), "日本_3")
        s.apply(.added(id: "movie", title: "🎬", image: ""), seq: 3)
        XCTAssertEqual(s.freshID(for: "🍿"), "movie_2")
        XCTAssertEqual(s.freshID(for: "Amélie"), "amelie")
    }

    /// The byte lane of `isValidID` against the scalar rule: every ASCII byte alone, in pairs
    /// with a valid byte, mixed with non-ASCII scalars, and random strings of those.
    func testTheByteLaneAgreesWithTheScalarRule() {
        var cases: [String] = ["", String(repeating: "a", count: 128), String(repeating: "a", count: 129)]
        let ascii = (0..<128).map { String(UnicodeScalar(UInt8($0))) }
        for a in ascii { cases += [a, "a" + a, a + "_", a + "é", "é" + a, a + "東"] }
        let pool = ascii + ["é", "É", "東", "\u{301}", "\u{202E}", "🎬", "Σ", "σ", "٣", "Ⅻ"]
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            cases.append(
                (0..<Int.random(in: 1...12, using: &rng)).map { _ in pool.randomElement(using: &rng)! }
                    .joined())
        }
        for id in cases {
            XCTAssertEqual(
                MovieState.isValidID(id), MovieState.isValidIDByScalars(id), String(reflecting: id))
        }
    }

    func testEveryMadeIdIsValidAndOldIdsStayValid() throws {
        for title in ["Amélie — 東京物語 🎬", "ΣΟΦΙΑ", "हिन्दी", "🎬", String(repeating: "東", count: 40), "Ǆungla"] {
            let id = MovieState.slug(title)
            XCTAssertTrue(MovieState.isValidID(id), id)
            XCTAssertTrue(MovieState.isValidID(id + "_2"), id)
        }
        for id in ["godfather", "am_lie", "movie_2", "a", "_"] { XCTAssertTrue(MovieState.isValidID(id), id) }
        for id in ["", "Matrix", "ΣΟΦΙΑ", "a b", "a-b", "a\u{202E}", "🎬", String(repeating: "a", count: 129)]
        {
            XCTAssertFalse(MovieState.isValidID(id), id)
        }
        // A state with such ids survives a snapshot and an event round trip.
        var s = MovieState()
        s.apply(.added(id: "日本", title: "日本", image: "x"), seq: 1)
        XCTAssertEqual(try MovieState(snapshot: s.snapshotBytes()), s)
        let event = try MovieEvent(
            stream: "日本", kind: MovieEvent.Kind.added,
            payload: MovieEvent.added(id: "日本", title: "日本", image: "x").payload)
        XCTAssertEqual(event, .added(id: "日本", title: "日本", image: "x"))
    }
}

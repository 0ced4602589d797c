import Terminal
import TestSupport
import XCTest

/// The poster tile's definition (shared with the web page, docs/tui.md, "What a row shows"): known
/// vectors, and a tile that never carries anything a terminal would act on.
final class PosterTileTests: XCTestCase {
    func testKnownVectors() {
        let vectors: [(image: String, hash: UInt32, color: Int, letter: Unicode.Scalar)] = [
            ("matrix", 0x15C2_F8EC, 4, "M"),
            ("godfather", 0x0955_6A4B, 3, "G"),
            ("", 0x811C_9DC5, 5, "#"),
            ("42", 0x87E3_8583, 3, "4"),
            ("été", 0xFFB5_8817, 7, "É"),
            ("the_green_mile", 0xA9D0_09E8, 0, "T"),
            ("ß", 0x309E_0517, 7, "ß"),  // uppercase is "SS": kept as it is
            ("  !x", 0x0694_33F4, 4, "X"),
            ("東京", 0x68DE_A76F, 7, "東"),
        ]
        for v in vectors {
            XCTAssertEqual(PosterTile.fnv1a32(Array(v.image.utf8)), v.hash, v.image)
            XCTAssertEqual(
                PosterTile(image: v.image), PosterTile(letter: v.letter, colorIndex: v.color), v.image)
        }
        XCTAssertEqual(PosterTile.palette.map { [$0.red, $0.green, $0.blue] }[5], [0x15, 0x65, 0xC0])
        XCTAssertEqual(PosterTile.palette.count, 8)
    }

    /// Two cells, always: a wide letter fills both.
    func testTheTileIsTwoCellsWide() {
        XCTAssertEqual(PosterTile(image: "matrix").text, "M ")
        XCTAssertEqual(PosterTile(image: "東京").text, "東")
        XCTAssertEqual(PosterTile(image: "\u{1160}").text, "? ", "a letter of no width")
        for image in ["matrix", "東京", "", "\u{1160}x", "🎬 x"] {
            XCTAssertEqual(TextWidth.width(PosterTile(image: image).text), 2, image)
        }
    }

    /// Image names may hold any printable text (and, stored before any rule, anything): the
    /// letter is never a control, format or bidi character, whatever comes first.
    func testTheLetterIsALetterOrADigitOrHash() {
        XCTAssertEqual(PosterTile.letter("\u{1B}[31mred"), "3")
        XCTAssertEqual(PosterTile.letter("\u{202E}\u{200B}\u{0301}abc"), "A")
        XCTAssertEqual(PosterTile.letter("🎬 !"), "#")
        var random = SplitMix64(seed: 29)
        for _ in 0..<2000 {
            var image = ""
            for _ in 0..<Int(random.next() % 4) {
                let ranges: [ClosedRange<UInt32>] = [
                    0...0x7F, 0x80...0x36F, 0x2000...0x206F, 0x1100...0x11FF, 0x1F300...0x1F3FF,
                ]
                let range = ranges[Int(random.next() % UInt64(ranges.count))]
                if let s = Unicode.Scalar(range.lowerBound + UInt32(random.next() % UInt64(range.count))) {
                    image.unicodeScalars.append(s)
                }
            }
            let letter = PosterTile.letter(image)
            switch letter.properties.generalCategory {
            case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
                .decimalNumber:
                break
            default:
                XCTAssertEqual(letter, "#", "\(image.unicodeScalars.map { String($0.value, radix: 16) })")
            }
            XCTAssertLessThan(PosterTile(image: image).colorIndex, 8)
        }
    }
}

import Terminal
import XCTest

/// Every sequence the parser handles, fed whole, byte by byte, and split at every offset.
final class InputParserTests: XCTestCase {
    /// (bytes, the events they make)
    static let cases: [(String, [InputEvent])] = [
        ("a", [.key(.character("a"))]),
        ("Q~ ", [.key(.character("Q")), .key(.character("~")), .key(.character(" "))]),
        ("\r", [.key(.enter)]),
        ("\n", [.key(.enter)]),
        ("\t", [.key(.tab)]),
        ("\u{7F}", [.key(.backspace)]),
        ("\u{08}", [.key(.backspace)]),
        ("\u{03}", [.key(.control("c"))]),
        ("\u{15}", [.key(.control("u"))]),
        ("\u{1B}[A\u{1B}[B\u{1B}[C\u{1B}[D", [.key(.up), .key(.down), .key(.right), .key(.left)]),
        ("\u{1B}OA\u{1B}OB\u{1B}OC\u{1B}OD", [.key(.up), .key(.down), .key(.right), .key(.left)]),
        ("\u{1B}[1;5A", [.key(.up)]),
        // Shift with a cursor key (issue 48: Shift+↑ ↓ move a row); with Alt or Ctrl, the key.
        (
            "\u{1B}[1;2A\u{1B}[1;2B\u{1B}[1;2C\u{1B}[1;2D",
            [.shift(.up), .shift(.down), .shift(.right), .shift(.left)]
        ),
        ("\u{1B}[1;2H\u{1B}[1;2F", [.shift(.home), .shift(.end)]),
        ("\u{1B}[1;3A\u{1B}[1;6B\u{1B}[5;2~", [.key(.up), .key(.down), .key(.pageUp)]),
        ("\u{1B}[2A", [.key(.up)]),
        ("\u{1B}[H\u{1B}[F\u{1B}OH\u{1B}OF", [.key(.home), .key(.end), .key(.home), .key(.end)]),
        (
            "\u{1B}[5~\u{1B}[6~\u{1B}[3~\u{1B}[2~",
            [.key(.pageUp), .key(.pageDown), .key(.delete), .key(.insert)]
        ),
        ("\u{1B}[1~\u{1B}[4~", [.key(.home), .key(.end)]),
        ("\u{1B}OP\u{1B}[15~\u{1B}[24~", [.key(.function(1)), .key(.function(5)), .key(.function(12))]),
        ("\u{1B}[Z", [.key(.tab)]),
        ("é", [.key(.character("é"))]),
        ("日本", [.key(.character("日")), .key(.character("本"))]),
        ("🎬", [.key(.character("🎬"))]),
        ("\u{1B}x", [.alt(.character("x"))]),
        ("\u{1B}\u{1B}[A", [.key(.escape), .key(.up)]),
        ("\u{1B}[<0;13;4M", [.mouse(MouseEvent(.press(button: 0), column: 12, line: 3))]),
        ("\u{1B}[<32;20;4M", [.mouse(MouseEvent(.motion(button: 0), column: 19, line: 3))]),
        ("\u{1B}[<0;20;4m", [.mouse(MouseEvent(.release(button: 0), column: 19, line: 3))]),
        ("\u{1B}[<2;1;1M", [.mouse(MouseEvent(.press(button: 2), column: 0, line: 0))]),
        (
            "\u{1B}[<64;5;6M\u{1B}[<65;5;6M",
            [
                .mouse(MouseEvent(.wheelUp, column: 4, line: 5)),
                .mouse(MouseEvent(.wheelDown, column: 4, line: 5)),
            ]
        ),
        (
            "\u{1B}[<20;300;200M",
            [.mouse(MouseEvent(.press(button: 0), column: 299, line: 199, shift: true, control: true))]
        ),
        ("\u{1B}[<35;7;8M", [.mouse(MouseEvent(.motion(button: 3), column: 6, line: 7))]),
        ("\u{1B}[?1;2c", [.unknown(Array("\u{1B}[?1;2c".utf8))]),
        ("\u{1B}[?2026;2$y", [.modeReport(mode: 2026, value: 2)]),
        ("\u{1B}[?2026;0$y", [.modeReport(mode: 2026, value: 0)]),
        ("\u{1B}[<0;0;4M", [.unknown(Array("\u{1B}[<0;0;4M".utf8))]),
    ]

    func feedAll(_ chunks: [[UInt8]]) -> [InputEvent] {
        var parser = InputParser()
        var events: [InputEvent] = []
        for chunk in chunks { events += parser.feed(chunk) }
        XCTAssertFalse(parser.hasPending, "bytes left over")
        return events
    }

    func testEachSequenceWholeByteByByteAndSplitAtEveryOffset() {
        for (text, expected) in Self.cases {
            let bytes = Array(text.utf8)
            XCTAssertEqual(feedAll([bytes]), expected, "whole: \(text.debugDescription)")
            XCTAssertEqual(feedAll(bytes.map { [$0] }), expected, "byte by byte: \(text.debugDescription)")
            for split in 1..<max(1, bytes.count) {
                XCTAssertEqual(
                    feedAll([Array(bytes[..<split]), Array(bytes[split...])]), expected,
                    "split at \(split): \(text.debugDescription)")
            }
        }
    }

    func testEverySequenceInOneStreamSplitAtEveryOffset() {
        let bytes = Self.cases.flatMap { Array($0.0.utf8) }
        let expected = Self.cases.flatMap { $0.1 }
        XCTAssertEqual(feedAll([bytes]), expected)
        XCTAssertEqual(feedAll(bytes.map { [$0] }), expected)
        for split in 1..<bytes.count {
            XCTAssertEqual(
                feedAll([Array(bytes[..<split]), Array(bytes[split...])]), expected, "split at \(split)")
        }
    }

    func testALoneEscapeWaitsForFlush() {
        var parser = InputParser()
        XCTAssertEqual(parser.feed([0x1B]), [])
        XCTAssertTrue(parser.hasPending)
        XCTAssertEqual(parser.flush(), [.key(.escape)])
        XCTAssertFalse(parser.hasPending)
        // ESC [ without its end, flushed: Escape, then the "[" as typed.
        XCTAssertEqual(parser.feed(Array("\u{1B}[".utf8)), [])
        XCTAssertEqual(parser.flush(), [.key(.escape), .key(.character("["))])
    }

    func testAPartialUTF8CharacterWaitsAndInvalidBytesAreSkipped() {
        var parser = InputParser()
        let bytes = Array("日".utf8)
        XCTAssertEqual(parser.feed(bytes[..<2]), [])
        XCTAssertTrue(parser.hasPending)
        XCTAssertEqual(parser.feed(bytes[2...]), [.key(.character("日"))])
        XCTAssertEqual(
            parser.feed([0xFF, 0x61, 0xC0, 0x80, 0x62]), [.key(.character("a")), .key(.character("b"))])
    }
}

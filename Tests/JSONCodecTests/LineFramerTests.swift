import XCTest

@testable import JSONCodec

final class LineFramerTests: XCTestCase {
    enum Out: Equatable, CustomStringConvertible {
        case line(String)
        case tooLarge(Int)
        var description: String {
            switch self {
            case .line(let s): return "line(\(s.debugDescription))"
            case .tooLarge(let n): return "tooLarge(\(n))"
            }
        }
    }

    /// Feeds `input` in pieces, draining after each append, then finishes.
    func frames(_ input: [UInt8], splits: [Int], maxLine: Int = 16, finish: Bool = true) -> [Out] {
        var framer = LineFramer(maxLine: maxLine)
        var out: [Out] = []
        func drain() {
            while let frame = framer.next() {
                switch frame {
                case .line(let bytes): out.append(.line(String(decoding: bytes, as: UTF8.self)))
                case .tooLarge(let length): out.append(.tooLarge(length))
                }
            }
            // Memory stays bounded: one partial line within the limit plus one read.
            // (`- 1` on this side: `maxLine + 1` overflows for `.max`.)
            XCTAssertLessThanOrEqual(framer.buffered - 1, maxLine)
        }
        var from = 0
        for cut in splits + [input.count] where cut >= from {
            framer.append(input[from..<cut])
            drain()
            from = cut
        }
        if finish {
            framer.finish()
            drain()
            XCTAssertEqual(framer.buffered, 0)
            // However the input was split, each byte was looked at for a newline once.
            XCTAssertEqual(framer.bytesScanned, input.count, "bytes scanned, split at \(splits)")
        }
        return out
    }

    /// The same frames whether the input comes at once, a byte at a time, or split at any offset.
    func check(
        _ text: String, _ expected: [Out], maxLine: Int = 16,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        let input = Array(text.utf8)
        XCTAssertEqual(
            frames(input, splits: [], maxLine: maxLine), expected, "all at once",
            file: file, line: line)
        XCTAssertEqual(
            frames(input, splits: Array(0..<input.count), maxLine: maxLine), expected,
            "byte by byte", file: file, line: line)
        for cut in 0...input.count {
            XCTAssertEqual(
                frames(input, splits: [cut], maxLine: maxLine), expected, "split at \(cut)",
                file: file, line: line)
        }
        for a in stride(from: 0, through: input.count, by: 3) {
            for b in a...input.count {
                XCTAssertEqual(
                    frames(input, splits: [a, b], maxLine: maxLine), expected,
                    "split at \(a), \(b)", file: file, line: line)
            }
        }
    }

    func testLines() {
        check(
            "{\"op\":\"ping\"}\n{\"op\":\"list\"}\n",
            [.line("{\"op\":\"ping\"}"), .line("{\"op\":\"list\"}")])
        check("a\nb\nc\n", [.line("a"), .line("b"), .line("c")])
    }

    func testCRLF() {
        check("a\r\nb\r\n", [.line("a"), .line("b")])
        check("a\r\r\n", [.line("a\r")])  // only one CR is the terminator's
        check("a\rb\n", [.line("a\rb")])
    }

    func testBlankLinesAreSkipped() {
        check("\n\n a \n\r\n \t \r\n\t\nb\n \n", [.line(" a "), .line("b")])
        check("\n", [])
        check("", [])
    }

    func testLastLineWithoutNewlineIsALineAtEnd() {
        check("a\nb", [.line("a"), .line("b")])
        check("a\nb\r", [.line("a"), .line("b")])
        check("a\n  ", [.line("a")])
        XCTAssertEqual(frames(Array("a\nb".utf8), splits: [], finish: false), [.line("a")])
    }

    func testOversizedLinesAreReportedOnceAndDropped() {
        let big = String(repeating: "x", count: 40)
        check(big + "\n{\"ok\":1}\n", [.tooLarge(40), .line("{\"ok\":1}")])
        check(big + "\r\nnext\r\n", [.tooLarge(40), .line("next")])
        check("a\n" + big + "\n" + big + "\nb\n", [.line("a"), .tooLarge(40), .tooLarge(40), .line("b")])
        check(big, [.tooLarge(40)])  // at end of input
        check(big + "\r", [.tooLarge(40)])
    }

    func testTheLimitIsExact() {
        let limit = String(repeating: "y", count: 16)
        check(limit + "\n", [.line(limit)])
        check(limit + "\r\n", [.line(limit)])
        check(limit + "y\n", [.tooLarge(17)])
        check(limit + "y\r\n", [.tooLarge(17)])
        check(limit + "\r\r\n", [.tooLarge(17)])
        check(limit, [.line(limit)])
        check(limit + "y", [.tooLarge(17)])
    }

    func testLargeInputStaysBounded() {
        var framer = LineFramer(maxLine: 1024)
        let chunk = [UInt8](repeating: 0x41, count: 4096)
        for _ in 0..<1000 {
            framer.append(chunk)
            XCTAssertNil(framer.next())
            XCTAssertLessThanOrEqual(framer.buffered, 1025)
        }
        framer.append(Array("\nok\n".utf8))
        XCTAssertEqual(framer.next(), .tooLarge(length: 4_096_000))
        XCTAssertEqual(framer.next(), .line(Array("ok".utf8)[...]))
        XCTAssertNil(framer.next())
    }

    func testManyLinesInOneRead() {
        var input: [UInt8] = []
        for n in 0..<10_000 { input += Array("{\"id\":\(n)}\n".utf8) }
        var framer = LineFramer()
        input.withUnsafeBytes { framer.append($0) }
        var count = 0
        while case .line(let line)? = framer.next() {
            XCTAssertEqual(try JSONParser.parse(line), ["id": JSON.number(JSONNumber(count))])
            count += 1
        }
        XCTAssertEqual(count, 10_000)
        XCTAssertEqual(framer.buffered, 0)
    }

    func testDefaultLimitWith200KBLine() {
        var framer = LineFramer()
        XCTAssertEqual(framer.maxLine, 65_536)
        let big = [UInt8](repeating: 0x7B, count: 200_000) + [0x0A]
        let good = Array("{\"op\":\"ping\"}\r\n".utf8)
        var frames: [LineFramer.Frame] = []
        // In 4 KB reads, as a socket would give them.
        let stream = big + good
        var from = 0
        while from < stream.count {
            let to = min(from + 4096, stream.count)
            framer.append(stream[from..<to])
            while let frame = framer.next() { frames.append(frame) }
            XCTAssertLessThanOrEqual(framer.buffered, 65_537)
            from = to
        }
        XCTAssertEqual(frames.count, 2)
        XCTAssertEqual(frames.first, .tooLarge(length: 200_000))
        XCTAssertEqual(frames.last, .line(Array("{\"op\":\"ping\"}".utf8)[...]))
    }

    /// With no limit (swipectl's framing of the daemon's replies), a line of any length is a line.
    func testNoLimit() {
        let long = String(repeating: "z", count: 100)
        check("a\n" + long + "\r\nb\n", [.line("a"), .line(long), .line("b")], maxLine: .max)
        check(long, [.line(long)], maxLine: .max)
    }

    /// A line of 2 MB in 1,000-byte reads (2,000 of them), with no limit: one line, each byte
    /// scanned once, not once per read that came after it (a `list` of 100,000 movies is one
    /// line of about 18 MB).
    func testALongLineInSmallReadsIsScannedOnce() {
        let input = [UInt8](repeating: UInt8(ascii: "x"), count: 2_000_000) + Array("\nnext\n".utf8)
        var framer = LineFramer(maxLine: .max)
        var lengths: [Int] = []
        var offset = 0
        while offset < input.count {
            framer.append(input[offset..<min(input.count, offset + 1000)])
            while let frame = framer.next() {
                guard case .line(let line) = frame else { return XCTFail("\(frame)") }
                lengths.append(line.count)
            }
            offset += 1000
        }
        XCTAssertEqual(lengths, [2_000_000, 4])
        XCTAssertEqual(framer.bytesScanned, input.count)
        XCTAssertEqual(framer.buffered, 0)
    }
}

import CommandLineParsing
import XCTest

/// The conversions of values, each with its message.
final class ArgumentValuesTests: XCTestCase {
    private func integer(_ text: String, _ range: ClosedRange<Int>) -> Result<Int, ArgumentError> {
        Result { () throws(ArgumentError) in try ArgumentValues.integer("--n", text, in: range) }
    }

    func testWholeNumbersInARange() {
        let cases: [(String, ClosedRange<Int>, Int?)] = [
            ("5", 1...10, 5), ("1", 1...10, 1), ("10", 1...10, 10), ("0", 1...10, nil), ("11", 1...10, nil),
            ("-1", -5...5, -1), ("+3", 0...5, 3), ("007", 0...10, 7), ("", 0...10, nil), (" 5", 0...10, nil),
            ("5 ", 0...10, nil), ("1.0", 0...10, nil), ("x", 0...10, nil), ("1e3", 0...10_000, nil),
            ("99999999999999999999", 0...Int.max, nil), ("٣", 0...10, nil),
        ]
        for (text, range, expected) in cases {
            if let expected {
                XCTAssertEqual(integer(text, range), .success(expected), text)
            } else {
                XCTAssertEqual(
                    integer(text, range),
                    .failure(
                        .invalid(
                            "--n must be a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'"
                        )), text)
            }
        }
    }

    func testOneOfAFewNames() throws {
        let sizes = [("small", 1), ("medium", 2), ("large", 3)]
        XCTAssertEqual(try ArgumentValues.oneOf("--size", "medium", sizes), 2)
        for bad in ["Medium", "", "smal", "small "] {
            XCTAssertThrowsError(try ArgumentValues.oneOf("--size", bad, sizes)) {
                XCTAssertEqual(
                    $0 as? ArgumentError, .invalid("--size must be small, medium or large, not '\(bad)'"))
            }
        }
        XCTAssertThrowsError(try ArgumentValues.oneOf("--mode", "x", [("full", 1), ("normal", 2)])) {
            XCTAssertEqual("\($0)", "--mode must be full or normal, not 'x'")
        }
        XCTAssertEqual(ArgumentValues.list([]), "")
        XCTAssertEqual(ArgumentValues.list(["a"]), "a")
        XCTAssertEqual(ArgumentValues.list(["a", "b"]), "a or b")
        XCTAssertEqual(ArgumentValues.list(["a", "b", "c", "d"]), "a, b, c or d")
    }

    func testDurations() {
        let good: [(String, Int64)] = [
            ("0", 0), ("1", 1), ("3600s", 3600), ("90m", 5400), ("12h", 43_200), ("30d", 2_592_000),
            ("2w", 1_209_600), ("007d", 604_800), ("9223372036854775807", Int64.max),
            ("15250284452471w", 9_223_372_036_854_460_800),
        ]
        for (text, seconds) in good {
            XCTAssertEqual(
                Result { () throws(ArgumentValues.DurationError) in
                    try ArgumentValues.seconds(fromDuration: text)
                }, .success(seconds), text)
        }
        let bad: [(String, ArgumentValues.DurationError)] = [
            ("", .malformed), ("d", .malformed), ("1y", .malformed), ("1.5d", .malformed),
            ("-1d", .malformed), ("+3h", .malformed), ("1 d", .malformed), ("1D", .malformed),
            ("3h30m", .malformed), ("٣d", .malformed), ("1e3", .malformed), ("s1", .malformed),
            ("9223372036854775808", .tooLong), ("99999999999999999999", .tooLong),
            ("9999999999999999w", .tooLong), ("15250284452472w", .tooLong),
        ]
        for (text, error) in bad {
            XCTAssertEqual(
                Result { () throws(ArgumentValues.DurationError) in
                    try ArgumentValues.seconds(fromDuration: text)
                }, .failure(error), text)
        }
    }
}

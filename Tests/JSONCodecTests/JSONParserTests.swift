import TestSupport
import XCTest

@testable import JSONCodec

/// JSONTestSuite-style cases (y_: must parse, n_: must fail), written inline.
final class JSONParserTests: XCTestCase {
    func parse(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> JSON? {
        do {
            return try JSONParser.parse(text)
        } catch {
            XCTFail("\(text.debugDescription): \(error.message)", file: file, line: line)
            return nil
        }
    }

    /// The error for bytes that must not parse.
    @discardableResult
    func reject(_ bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line) -> JSONError? {
        do {
            let value = try JSONParser.parse(bytes)
            XCTFail(
                "accepted \(String(decoding: bytes, as: UTF8.self).debugDescription) as \(value)",
                file: file, line: line)
            return nil
        } catch {
            XCTAssertGreaterThanOrEqual(error.offset, 0, file: file, line: line)
            XCTAssertLessThanOrEqual(error.offset, bytes.count, file: file, line: line)
            return error
        }
    }

    @discardableResult
    func reject(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> JSONError? {
        reject(Array(text.utf8), file: file, line: line)
    }

    func reject(_ text: String, _ message: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(reject(text, file: file, line: line)?.message, message, file: file, line: line)
    }

    func reject(_ bytes: [UInt8], _ message: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(reject(bytes, file: file, line: line)?.message, message, file: file, line: line)
    }

    // MARK: y_

    func testAcceptsValidDocuments() {
        let valid = [
            "null", "true", "false", "0", "-0", "1", "-1", "123", "1.5", "-1.5e10", "1E5", "1e+5",
            "1e-5", "0.0", "0e0", "-0.0e-0", "1.0E+2", "\"\"", "\"abc\"", "[]", "{}", "[[]]",
            "[1,2,3]", "{\"a\":1}", "{\"a\":{\"b\":[null,true,false]}}", " \t\r\n1 \t\r\n",
            "[ ]", "{ }", "[ 1 , 2 ]", "{ \"a\" : 1 , \"b\" : 2 }", "\"\\u0000\"",
            "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", "\"\\u00e9\"", "\"\\uD83D\\uDE00\"", "\"é\"",
            "\"😀\"", "\"\u{7F}\"", "\"\u{10FFFF}\"", "\"\u{FFFF}\"", "\"\u{2028}\"",
            "{\"a\":1,\"a\":2}", "[1e-400]", "123456789012345678901234567890",
            "[\"a\",{\"b\":\"c\"},[1,[2,[3]]]]",
        ]
        for text in valid { _ = parse(text) }
    }

    func testValues() {
        XCTAssertEqual(parse("null"), .null)
        XCTAssertEqual(parse("[true,false]"), [true, false])
        XCTAssertEqual(parse("\"a\\nb\""), "a\nb")
        XCTAssertEqual(parse("\"\\u00e9\\u4e2d\""), "é中")
        XCTAssertEqual(parse("\"\\uD83D\\uDE00x\""), "😀x")
        XCTAssertEqual(parse("\"\\u0000\""), .string("\u{0}"))
        XCTAssertEqual(parse("\"caf\u{E9} \\\"q\\\" \u{1F600}\""), .string("café \"q\" 😀"))
        XCTAssertEqual(parse("{\"op\":\"drag\",\"dx\":-60.5}"), ["op": "drag", "dx": -60.5])
        XCTAssertEqual(parse("[1,[2,{}]]"), [1, [2, [:]]])
    }

    func testObjectsKeepOrderAndDuplicates() throws {
        let value = try XCTUnwrap(parse("{\"b\":1,\"a\":2,\"b\":3}")?.objectValue)
        XCTAssertEqual(value.keys, ["b", "a", "b"])
        XCTAssertEqual(value["b"], 1)
        XCTAssertEqual(value["a"], 2)
        XCTAssertNil(value["c"])
        XCTAssertNotEqual(JSON.object(value), ["a": 2, "b": 1, "b": 3])
    }

    // MARK: n_ structure

    func testRejectsStructuralErrors() {
        reject("", "unexpected end of input at byte 0")
        reject("   ", "unexpected end of input at byte 3")
        reject("[1,]", "trailing comma at byte 2")
        reject("[1 , ]", "trailing comma at byte 3")
        reject("{\"a\":1,}", "trailing comma at byte 6")
        reject("{\"a\" 1}", "expected ':' after member name at byte 5")
        reject("{\"a\":1 \"b\":2}", "expected ',' or '}' after object member at byte 7")
        reject("[1 2]", "expected ',' or ']' after array element at byte 3")
        reject("{a:1}", "expected a member name in double quotes at byte 1")
        reject("{1:1}", "expected a member name in double quotes at byte 1")
        reject("'single'", "unexpected character ''' at byte 0")
        reject("[1] [2]", "trailing characters after the value at byte 4")
        reject("1 2", "trailing characters after the value at byte 2")
        reject("{}x", "trailing characters after the value at byte 2")
        reject("[", "unexpected end of input at byte 1")
        reject("[1", "unexpected end of input at byte 2")
        reject("[1,", "unexpected end of input at byte 3")
        reject("{", "unexpected end of input at byte 1")
        reject("{\"a\"", "unexpected end of input at byte 4")
        reject("{\"a\":", "unexpected end of input at byte 5")
        reject("{\"a\":1", "unexpected end of input at byte 6")
        reject("]", "unexpected character ']' at byte 0")
        reject("}", "unexpected character '}' at byte 0")
        reject("[,1]", "unexpected character ',' at byte 1")
        reject("[1,,2]", "unexpected character ',' at byte 3")
        reject("{,}", "expected a member name in double quotes at byte 1")
        reject("{\"a\":1,,}", "expected a member name in double quotes at byte 7")
        reject("[1:2]", "expected ',' or ']' after array element at byte 2")
        reject("{\"a\"::1}", "unexpected character ':' at byte 5")
        reject("{\"a\":}", "unexpected character '}' at byte 5")
        reject("[}", "unexpected character '}' at byte 1")
        reject("{]", "expected a member name in double quotes at byte 1")
        reject("[1}", "expected ',' or ']' after array element at byte 2")
    }

    func testRejectsBadLiterals() {
        reject("tru", "unexpected end of input at byte 3")
        reject("trux", "invalid literal (expected 'true') at byte 0")
        reject("True", "unexpected character 'T' at byte 0")
        reject("nul", "unexpected end of input at byte 3")
        reject("NULL", "unexpected character 'N' at byte 0")
        reject("falsy", "invalid literal (expected 'false') at byte 0")
        reject("truefalse", "trailing characters after the value at byte 4")
        reject("NaN", "unexpected character 'N' at byte 0")
        reject("Infinity", "unexpected character 'I' at byte 0")
        reject("-Infinity", "expected a digit after '-' at byte 1")
        reject("undefined")
        reject("nil")
    }

    func testRejectsWhitespaceOutsideTheFour() {
        reject("\u{0C}1", "unexpected byte 0x0C at byte 0")  // form feed
        reject("1\u{0B}", "trailing characters after the value at byte 1")  // vertical tab
        reject([0xC2, 0xA0, 0x31], "unexpected byte 0xC2 at byte 0")  // no-break space
        reject("\u{0}", "unexpected byte 0x00 at byte 0")
        reject("1\u{0}", "trailing characters after the value at byte 1")
        reject("[1\u{0}]", "expected ',' or ']' after array element at byte 2")
    }

    func testRejectsByteOrderMark() {
        reject([0xEF, 0xBB, 0xBF, 0x31], "byte order mark (not allowed) at byte 0")
        reject([0xEF, 0xBB, 0xBF, 0x7B, 0x7D], "byte order mark (not allowed) at byte 0")
    }

    // MARK: n_ numbers

    func testRejectsBadNumbers() {
        reject("-", "unexpected end of input at byte 1")
        reject("-a", "expected a digit after '-' at byte 1")
        reject("- 1", "expected a digit after '-' at byte 1")
        reject("01", "leading zero in number at byte 0")
        reject("010", "leading zero in number at byte 0")
        reject("-01", "leading zero in number at byte 0")
        reject("[5,010]", "leading zero in number at byte 3")
        reject("00", "leading zero in number at byte 0")
        reject("+1", "unexpected character '+' at byte 0")
        reject(".5", "unexpected character '.' at byte 0")
        reject("1.", "unexpected end of input at byte 2")
        reject("1.e5", "expected a digit after the decimal point at byte 2")
        reject("[1.]", "expected a digit after the decimal point at byte 3")
        reject("1e", "unexpected end of input at byte 2")
        reject("1e+", "unexpected end of input at byte 3")
        reject("[1e]", "expected a digit in the exponent at byte 3")
        reject("1e+-1", "expected a digit in the exponent at byte 3")
        reject("1E--1")
        reject("0x1F", "trailing characters after the value at byte 1")
        reject("1.5.5", "trailing characters after the value at byte 3")
        reject("1e5e5")
        reject("1 000")
        reject("1_000")
        reject("1,5")
        reject("0.1e")
        reject("−1")  // U+2212 minus sign
        reject("１")  // fullwidth digit
    }

    func testRejectsNonFiniteNumbers() {
        reject("1e999", "number out of range at byte 0")
        reject("-1e999", "number out of range at byte 0")
        reject("[1.7976931348623159e308]", "number out of range at byte 1")
        reject("1" + String(repeating: "0", count: 400), "number out of range at byte 0")
        reject("1e1000000000000000000000000", "number out of range at byte 0")
        XCTAssertEqual(parse("1.7976931348623157e308")?.numberValue?.double, .greatestFiniteMagnitude)
        XCTAssertEqual(parse("1e-999")?.numberValue?.double, 0)
        XCTAssertEqual(parse("0e999999999")?.numberValue?.double, 0)
    }

    // MARK: n_ strings

    func testRejectsBadStrings() {
        reject("\"abc", "unexpected end of input in string starting at byte 0")
        reject("[\"abc", "unexpected end of input in string starting at byte 1")
        reject("\"\\", "unexpected end of input at byte 2")
        reject("\"\\u12", "unexpected end of input at byte 5")
        reject("\"\\x\"", "invalid escape '\\character 'x'' in string at byte 1")
        reject("\"\\a\"")
        reject("\"\\'\"")
        reject("\"\\U0041\"")
        reject("\"\\u00G0\"", "invalid hex digit character 'G' in \\u escape at byte 5")
        reject("\"\\u-123\"")
        reject("\"\\ \"")
    }

    func testRejectsRawControlCharactersInStrings() {
        for b in UInt8(0)..<0x20 {
            let error = reject([0x22, 0x61, b, 0x22])
            let hex = String(b, radix: 16, uppercase: true)
            let code = String(repeating: "0", count: 4 - hex.count) + hex
            XCTAssertEqual(error?.message, "raw control character U+\(code) in string at byte 2")
        }
        reject("\"a\nb\"", "raw control character U+000A in string at byte 2")
        reject("\"\té\"", "raw control character U+0009 in string at byte 1")
        reject("\"é\t\"", "raw control character U+0009 in string at byte 3")
        // DEL is not a control character for JSON.
        XCTAssertEqual(parse("\"\u{7F}\""), "\u{7F}")
    }

    func testRejectsLoneSurrogateEscapes() {
        reject("\"\\uD800\"", "lone surrogate \\uD800 in string at byte 1")
        reject("\"\\uDBFF\"", "lone surrogate \\uDBFF in string at byte 1")
        reject("\"\\uDC00\"", "lone surrogate \\uDC00 in string at byte 1")
        reject("\"\\uDFFF\\uD800\"", "lone surrogate \\uDFFF in string at byte 1")
        reject("\"\\uD800x\"", "lone surrogate \\uD800 in string at byte 1")
        reject("\"\\uD800\\n\"", "lone surrogate \\uD800 in string at byte 1")
        reject("\"\\uD800\\uD800\"", "lone surrogate \\uD800 in string at byte 1")
        reject("\"\\uD800\\u0041\"", "lone surrogate \\uD800 in string at byte 1")
        reject("\"ab\\uD83D\"", "lone surrogate \\uD83D in string at byte 3")
        reject("\"\\uD800", "lone surrogate \\uD800 in string at byte 1")
        XCTAssertEqual(parse("\"\\udbff\\udfff\""), "\u{10FFFF}")
        XCTAssertEqual(parse("\"\\ud800\\udc00\""), "\u{10000}")
    }

    func testRejectsInvalidUTF8() {
        let cases: [[UInt8]] = [
            [0x80],  // lone continuation
            [0xBF],
            [0xC0, 0x80],  // overlong NUL
            [0xC1, 0xBF],  // overlong
            [0xE0, 0x80, 0x80],  // overlong 3-byte
            [0xE0, 0x9F, 0xBF],
            [0xF0, 0x80, 0x80, 0x80],  // overlong 4-byte
            [0xF0, 0x8F, 0xBF, 0xBF],
            [0xED, 0xA0, 0x80],  // UTF-8 encoded surrogate U+D800
            [0xED, 0xBF, 0xBF],  // U+DFFF
            [0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x80],  // CESU-8 pair
            [0xF4, 0x90, 0x80, 0x80],  // U+110000
            [0xF5, 0x80, 0x80, 0x80],
            [0xF8, 0x88, 0x80, 0x80, 0x80],
            [0xFC, 0x84, 0x80, 0x80, 0x80, 0x80],
            [0xFE], [0xFF],
            [0xC3],  // truncated
            [0xE2, 0x82],
            [0xF0, 0x9F, 0x98],
            [0xC3, 0x41],  // bad continuation
            [0xE2, 0x41, 0xAC],
            [0xE2, 0x82, 0x41],
            [0xF0, 0x9F, 0x41, 0x80],
            [0xF0, 0x9F, 0x98, 0x41],
        ]
        for bad in cases {
            XCTAssertEqual(
                reject([0x22, 0x61] + bad + [0x22])?.message, "invalid UTF-8 at byte 2",
                "\(bad)")
            XCTAssertEqual(
                reject([0x22, 0x5C, 0x6E] + bad + [0x22])?.message, "invalid UTF-8 at byte 3",
                "after an escape: \(bad)")
            XCTAssertNotNil(reject([0x7B, 0x22] + bad + [0x22, 0x3A, 0x31, 0x7D]), "in a key: \(bad)")
            XCTAssertNotNil(reject(bad), "outside a string: \(bad)")
        }
        reject([0x22, 0xC3], "invalid UTF-8 at byte 1")  // truncated by the end of input
        // The boundaries that are valid.
        let valid: [[UInt8]] = [
            [0xC2, 0x80], [0xDF, 0xBF], [0xE0, 0xA0, 0x80], [0xED, 0x9F, 0xBF], [0xEE, 0x80, 0x80],
            [0xEF, 0xBF, 0xBF], [0xF0, 0x90, 0x80, 0x80], [0xF4, 0x8F, 0xBF, 0xBF],
        ]
        for good in valid {
            XCTAssertNoThrow(try JSONParser.parse([0x22] + good + [0x22]), "\(good)")
        }
    }

    // MARK: Depth

    func testNestingLimit() throws {
        let ok = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        XCTAssertNotNil(parse(ok))
        reject(
            String(repeating: "[", count: 65) + String(repeating: "]", count: 65),
            "nesting deeper than 64 at byte 64")
        let objects = String(repeating: "{\"a\":", count: 65) + "1" + String(repeating: "}", count: 65)
        XCTAssertEqual(reject(objects)?.offset, 5 * 64)
        XCTAssertNoThrow(try JSONParser.parse(String(repeating: "[", count: 3) + "]]]", maxDepth: 3))
        XCTAssertThrowsError(try JSONParser.parse(String(repeating: "[", count: 4) + "]]]]", maxDepth: 3))
    }

    func testDeepNestingFailsFastWithoutRecursing() {
        for opener in ["[", "{\"a\":", "[{\"a\":"] {
            let deep = String(repeating: opener, count: 10_000)
            let error = reject(deep)
            XCTAssertEqual(error?.message.hasPrefix("nesting deeper than 64"), true)
        }
        let closed = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        reject(closed, "nesting deeper than 64 at byte 64")
    }

    // MARK: Numbers

    func number(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> JSONNumber? {
        parse(text, file: file, line: line)?.numberValue
    }

    func testIntegersAreExact() {
        XCTAssertEqual(number("42"), JSONNumber(double: 42, int: 42))
        XCTAssertEqual(number("-0")?.int, 0)
        XCTAssertEqual(number("-0")?.double.sign, .minus)
        XCTAssertEqual(number("9223372036854775807")?.int, .max)
        XCTAssertEqual(number("-9223372036854775808")?.int, .min)
        XCTAssertEqual(number("9223372036854775808")?.int, nil)
        XCTAssertEqual(number("9223372036854775808")?.double, 9223372036854775808)
        XCTAssertEqual(number("-9223372036854775809")?.int, nil)
        XCTAssertEqual(number("9007199254740993")?.int, 9_007_199_254_740_993)
        XCTAssertEqual(number("9007199254740993")?.double, 9_007_199_254_740_992)
        XCTAssertEqual(number("18446744073709551615")?.int, nil)
        XCTAssertEqual(number("18446744073709551615")?.double, 18446744073709551615.0)
        XCTAssertEqual(number("123456789012345678901234567890")?.double, 1.2345678901234568e29)
    }

    func testIntegralDecimalsGetAnIntUpTo2to53() {
        XCTAssertEqual(number("1.0"), JSONNumber(double: 1, int: 1))
        XCTAssertEqual(number("1e2")?.int, 100)
        XCTAssertEqual(number("-2.50e1")?.int, -25)
        XCTAssertEqual(number("-0.0")?.int, 0)
        XCTAssertEqual(number("9007199254740992.0")?.int, 9_007_199_254_740_992)
        XCTAssertEqual(number("1e16")?.int, nil)
        XCTAssertEqual(number("1.5")?.int, nil)
        XCTAssertEqual(number("1e-400")?.int, 0)
    }

    func testDoublesAreCorrectlyRounded() {
        let cases = [
            "0.1", "0.2", "0.3", "-60.5", "3.141592653589793", "2.718281828459045", "1e22", "1e23",
            "9007199254740993.0", "0.30000000000000004", "2.2250738585072011e-308",
            "2.2250738585072014e-308", "4.9e-324", "5e-324", "2e-324", "1.7976931348623157e308",
            "123456.789e3", "0.000001", "1e-7", "7.2057594037927933e16",
            "1.00000000000000011102230246251565404236316680908203125",
            "1.00000000000000011102230246251565404236316680908203124",
            "0.1000000000000000055511151231257827021181583404541015625", "89255.0e-22",
            "8.98846567431158e307",
        ]
        for text in cases {
            XCTAssertEqual(number(text)?.double.bitPattern, Double(text)?.bitPattern, text)
            guard !text.hasPrefix("-") else { continue }
            XCTAssertEqual(number("-" + text)?.double.bitPattern, Double("-" + text)?.bitPattern, text)
        }
    }

    func testRandomDecimalsMatchTheStandardLibrary() {
        var rng = SplitMix64(seed: 7)
        for _ in 0..<20_000 {
            let digits = Int(rng.next() % 20) + 1
            var text = String(rng.next() % 9 + 1)
            for _ in 1..<digits { text += String(rng.next() % 10) }
            if digits > 1 && rng.next() % 4 != 0 {
                let point = Int(rng.next() % UInt64(digits - 1)) + 1
                text.insert(".", at: text.index(text.startIndex, offsetBy: point))
            }
            if rng.next() % 2 == 0 { text += "e" + String(Int(rng.next() % 80) - 40) }
            XCTAssertEqual(number(text)?.double.bitPattern, Double(text)?.bitPattern, text)
        }
    }

    // MARK: Raw members

    func testRawMemberRanges() throws {
        let line = #"{"op":"ping", "id" : {"n":[1, 2]} ,"x":-1.5e3,"s":"\u00e9"}"#
        let bytes = Array(line.utf8)
        let members = try JSONParser.parseObjectMembers(bytes)
        XCTAssertEqual(members.map(\.key), ["op", "id", "x", "s"])
        let texts = members.map { String(decoding: bytes[$0.range], as: UTF8.self) }
        XCTAssertEqual(texts, [#""ping""#, #"{"n":[1, 2]}"#, "-1.5e3", #""\u00e9""#])
        XCTAssertEqual(members[1].value, ["n": [1, 2]])
        XCTAssertEqual(members[3].value, "é")
    }

    func testRawMembersOfASliceAreRelativeToTheSlice() throws {
        let bytes = Array("xx{\"id\":17}".utf8)
        let members = try JSONParser.parseObjectMembers(bytes[2...])
        XCTAssertEqual(members, [JSONRawMember(key: "id", value: 17, range: 6..<8)])
    }

    func testRawMembersNeedAnObject() {
        for text in ["[]", "1", "\"op\"", "null", " [1,2] "] {
            XCTAssertThrowsError(try JSONParser.parseObjectMembers(text)) { error in
                let error = error as? JSONError
                XCTAssertEqual(error?.code, .notAnObject)
                XCTAssertEqual(error?.message.hasPrefix("expected a JSON object at byte"), true)
            }
        }
        // Bad JSON is reported as bad JSON even when it is not an object.
        XCTAssertThrowsError(try JSONParser.parseObjectMembers("[1,]")) { error in
            XCTAssertEqual(error as? JSONError, JSONError(offset: 2, message: "trailing comma at byte 2"))
        }
        for text in ["{\"a\":1,}", "{\"a\":1} x", "{", "", "{\"a\":[1,]}"] {
            XCTAssertThrowsError(try JSONParser.parseObjectMembers(text)) { error in
                XCTAssertEqual((error as? JSONError)?.code, .syntax, text)
            }
        }
        XCTAssertEqual(try JSONParser.parseObjectMembers("{}"), [])
        XCTAssertEqual(try JSONParser.parseObjectMembers(" {\"a\":1,\"a\":2} ").map(\.key), ["a", "a"])
        func nested(_ n: Int) -> String {
            "{\"a\":" + String(repeating: "[", count: n) + String(repeating: "]", count: n) + "}"
        }
        XCTAssertNoThrow(try JSONParser.parseObjectMembers(nested(63)))  // 64 levels
        XCTAssertThrowsError(try JSONParser.parseObjectMembers(nested(64)))
    }

    func testOverloadsAgree() throws {
        let text = #"{"op":"drag","movie":"godfather","dx":-60.5,"id":17}"#
        let bytes = Array(text.utf8)
        let a = try JSONParser.parse(text)
        XCTAssertEqual(try JSONParser.parse(bytes), a)
        XCTAssertEqual(try JSONParser.parse(bytes[...]), a)
        XCTAssertEqual(try bytes.withUnsafeBytes { try JSONParser.parse($0) }, a)
        XCTAssertEqual(a, ["op": "drag", "movie": "godfather", "dx": -60.5, "id": 17])
    }
}

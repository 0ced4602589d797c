import TestSupport
import XCTest

@testable import JSONCodec

final class JSONWriterTests: XCTestCase {
    func text(_ build: (inout JSONWriter) -> Void) -> String {
        var w = JSONWriter()
        build(&w)
        return String(decoding: w.bytes, as: UTF8.self)
    }

    func testObjectsPlaceCommas() {
        let reply = text { w in
            w.object { w in
                w.key("id"); w.int(17)
                w.field("ok", true)
                w.field(
                    "row",
                    object: { w in
                        w.field("movie", "godfather")
                        w.field("offset", -70.0)
                        w.field(
                            "buttons",
                            array: { w in
                                w.object { w in w.field("x", 0.5) }
                                w.object { _ in }
                                w.null()
                            })
                    })
                w.field("seq", UInt64.max)
            }
        }
        XCTAssertEqual(
            reply,
            #"{"id":17,"ok":true,"row":{"movie":"godfather","offset":-70,"buttons":[{"x":0.5},{},null]},"seq":18446744073709551615}"#
        )
    }

    func testBeginEndAPI() {
        XCTAssertEqual(
            text { w in
                w.beginArray(); w.int(1); w.beginArray(); w.endArray(); w.string("a"); w.bool(false);
                w.endArray()
            }, #"[1,[],"a",false]"#)
    }

    func testLinesDoNotGetCommasBetweenThem() {
        XCTAssertEqual(
            text { w in
                w.object { $0.field("a", 1) }
                w.newline()
                w.object { $0.field("b", 2) }
                w.newline()
            }, "{\"a\":1}\n{\"b\":2}\n")
    }

    func testRawEcho() throws {
        let request = Array(#"{"op":"ping","id":{"n":[1, 2.50]}}"#.utf8)
        let id = try XCTUnwrap(JSONParser.parseObjectMembers(request).first { $0.key == "id" })
        let reply = text { w in
            w.object { w in
                w.key("id"); w.raw(request[id.range])
                w.field("ok", true)
            }
        }
        XCTAssertEqual(reply, #"{"id":{"n":[1, 2.50]},"ok":true}"#)
    }

    func testIntegers() {
        XCTAssertEqual(text { $0.int(0) }, "0")
        XCTAssertEqual(text { $0.int(-7) }, "-7")
        XCTAssertEqual(text { $0.int64(.min) }, "-9223372036854775808")
        XCTAssertEqual(text { $0.int64(.max) }, "9223372036854775807")
        XCTAssertEqual(text { $0.uint64(0) }, "0")
        XCTAssertEqual(text { $0.uint64(1_000_000) }, "1000000")
    }

    /// Every digit count, both signs, the edges of each power of ten and of the integer types:
    /// the digits are exactly the standard library's.
    func testIntegerDigitsAtEveryLength() {
        var values: [Int64] = [0, Int64.max, Int64.min, Int64.min + 1]
        var power: Int64 = 1
        for _ in 0..<19 {
            values += [power - 1, power, power + 1, -power, -(power - 1), power / 10 * 9]
            power = power.multipliedReportingOverflow(by: 10).overflow ? power : power * 10
        }
        var rng = SplitMix64(seed: 5)
        for _ in 0..<2000 { values.append(Int64(bitPattern: rng.next()) >> (rng.next() % 63)) }
        for value in values {
            var w = JSONWriter()
            w.int64(value)
            XCTAssertEqual(String(decoding: w.bytes, as: UTF8.self), String(value))
        }
        var w = JSONWriter()
        w.uint64(UInt64.max)
        XCTAssertEqual(String(decoding: w.bytes, as: UTF8.self), String(UInt64.max))
    }

    func testDoubles() {
        XCTAssertEqual(text { $0.double(-70) }, "-70")
        XCTAssertEqual(text { $0.double(-0.0) }, "0")
        XCTAssertEqual(text { $0.double(9_007_199_254_740_992) }, "9007199254740992")
        XCTAssertEqual(text { $0.double(-60.5) }, "-60.5")
        XCTAssertEqual(text { $0.double(0.1) }, "0.1")
        XCTAssertEqual(text { $0.double(1e-5) }, "1e-05")
        XCTAssertEqual(text { $0.double(1e20) }, "1e+20")
        XCTAssertEqual(text { $0.double(.nan) }, "null")
        XCTAssertEqual(text { $0.double(.infinity) }, "null")
        XCTAssertEqual(
            text { w in
                w.beginArray(); w.double(-.infinity); w.double(1); w.endArray()
            }, "[null,1]")
        XCTAssertEqual(text { $0.double(-0.5) }, "-0.5")
        XCTAssertEqual(text { $0.double(-30.25) }, "-30.25")
        XCTAssertEqual(text { $0.double(0.125) }, "0.125")
        XCTAssertEqual(text { $0.double(0.001) }, "0.001")
        XCTAssertEqual(text { $0.double(123.1) }, "123.1")
        XCTAssertEqual(text { $0.double(0.3) }, "0.3")
        XCTAssertEqual(text { $0.double(0.1 + 0.2) }, "0.30000000000000004")
        XCTAssertEqual(text { $0.double(0.0625) }, "0.0625")
        XCTAssertEqual(text { $0.double(1e-4) }, "0.0001")
        // Short decimals: the shortest form, and it comes back exactly.
        var short = SplitMix64(seed: 2)
        for _ in 0..<20_000 {
            let k = Int(short.next() % 4)
            let scale = [1.0, 10, 100, 1000][k]
            let d = Double(Int64(short.next() % 2_000_000) - 1_000_000) / scale
            let written = text { $0.double(d) }
            XCTAssertEqual(try JSONParser.parse(written).numberValue?.double, d, written)
            // No longer than Swift's description (which writes 1.0 where we write 1).
            XCTAssertLessThanOrEqual(written.count, d.description.count + 1, written)
        }
        // Every double comes back exactly.
        var rng = SplitMix64(seed: 1)
        for _ in 0..<20_000 {
            let d = Double(bitPattern: rng.next())
            guard d.isFinite else { continue }
            let written = text { $0.double(d) }
            XCTAssertEqual(try JSONParser.parse(written).numberValue?.double, d, written)
        }
    }

    func testEscapesEveryControlCharacter() throws {
        let expected = [
            "\\u0000", "\\u0001", "\\u0002", "\\u0003", "\\u0004", "\\u0005", "\\u0006", "\\u0007",
            "\\b", "\\t", "\\n", "\\u000b", "\\f", "\\r", "\\u000e", "\\u000f",
            "\\u0010", "\\u0011", "\\u0012", "\\u0013", "\\u0014", "\\u0015", "\\u0016", "\\u0017",
            "\\u0018", "\\u0019", "\\u001a", "\\u001b", "\\u001c", "\\u001d", "\\u001e", "\\u001f",
        ]
        for b in 0..<0x20 {
            let s = "a" + String(Unicode.Scalar(UInt8(b))) + "b"
            let written = text { $0.string(s) }
            XCTAssertEqual(written, "\"a" + expected[b] + "b\"")
            XCTAssertEqual(try JSONParser.parse(written), .string(s))
        }
        XCTAssertEqual(text { $0.string("q\"b\\s/") }, #""q\"b\\s/""#)
        XCTAssertEqual(text { $0.string("é😀\u{2028}\u{7F}") }, "\"é😀\u{2028}\u{7F}\"")
        XCTAssertEqual(text { $0.key("a\nb") }, #""a\nb":"#)
    }

    func testOutputHasNoRawNewline() {
        var rng = SplitMix64(seed: 3)
        for _ in 0..<500 {
            var w = JSONWriter()
            w.value(randomJSON(&rng, depth: 0))
            XCTAssertFalse(w.bytes.contains(0x0A))
            XCTAssertFalse(w.bytes.contains(0x0D))
        }
    }

    func testRoundTripsRandomValues() throws {
        var rng = SplitMix64(seed: 42)
        for _ in 0..<2_000 {
            let value = randomJSON(&rng, depth: 0)
            var w = JSONWriter()
            w.value(value)
            let parsed = try JSONParser.parse(w.bytes)
            XCTAssertEqual(parsed, value, String(decoding: w.bytes, as: UTF8.self))
            // And the parsed value writes the same bytes.
            var again = JSONWriter()
            again.value(parsed)
            XCTAssertEqual(again.bytes, w.bytes)
        }
    }

    func testNumbersRoundTripExactly() throws {
        let literals = [
            "0", "-0", "1.0", "-0.0", "1e2", "9007199254740993", "9223372036854775807",
            "-9223372036854775808", "9223372036854775808", "-9223372036854775809",
            "1e16", "1.5", "1e-400", "1.00000000000000000001", "1000000000000000000.1",
            "123456789012345678901234567890", "4.9e-324", "1.7976931348623157e308",
        ]
        for literal in literals {
            let first = try JSONParser.parse(literal)
            var w = JSONWriter()
            w.value(first)
            XCTAssertEqual(
                try JSONParser.parse(w.bytes), first,
                "\(literal) -> \(String(decoding: w.bytes, as: UTF8.self))")
        }
    }

    func testResetKeepsCapacity() {
        var w = JSONWriter(capacity: 1024)
        w.string("x")
        let capacity = w.bytes.capacity
        w.reset()
        XCTAssertEqual(w.bytes, [])
        XCTAssertEqual(w.bytes.capacity, capacity)
        w.int(1)
        XCTAssertEqual(w.bytes, [0x31])
    }

    /// The eight-bytes-at-a-time check agrees with the byte rule for every byte value at every
    /// place of a word and of the tail, among plain ASCII and among UTF-8 continuation bytes.
    func testIsPlainAgreesWithTheByteRule() {
        for filler: UInt8 in [0x61, 0xC3, 0xA9, 0x7F, 0xFF, 0x20, 0x23, 0x5B, 0x5D, 0x21] {
            for length in [0, 1, 7, 8, 9, 15, 16, 17, 23] {
                for place in 0..<max(length, 1) {
                    for value in 0...UInt8.max {
                        var bytes = [UInt8](repeating: filler, count: length)
                        if length > 0 { bytes[place] = value }
                        let expected = !bytes.contains { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }
                        let plain = bytes.withUnsafeBufferPointer { JSONText.isPlain($0) }
                        if plain != expected {
                            return XCTFail("filler \(filler), length \(length), \(value) at \(place)")
                        }
                    }
                }
            }
        }
    }
}

/// Random JSON: every kind of value, strings with escapes, control and non-ASCII characters,
/// numbers of every shape.
func randomJSON<R: RandomNumberGenerator>(_ rng: inout R, depth: Int) -> JSON {
    let kinds: UInt64 = depth >= 5 ? 4 : 6
    switch rng.next() % kinds {
    case 0: return .null
    case 1: return .bool(rng.next() % 2 == 0)
    case 2:
        switch rng.next() % 4 {
        case 0: return .number(JSONNumber(Int64(bitPattern: rng.next())))
        case 1: return .number(JSONNumber(Int64(rng.next() % 2000) - 1000))
        case 2:
            let d = Double(bitPattern: rng.next())
            return .number(JSONNumber(d.isFinite ? d : 0.5))
        default: return .number(JSONNumber(Double(Int64(rng.next() % 20000) - 10000) / 8))
        }
    case 3: return .string(randomString(&rng))
    case 4:
        return .array((0..<Int(rng.next() % 5)).map { _ in randomJSON(&rng, depth: depth + 1) })
    default:
        var object = JSONObject()
        for _ in 0..<Int(rng.next() % 5) {
            object.append(randomString(&rng), randomJSON(&rng, depth: depth + 1))
        }
        return .object(object)
    }
}

func randomString<R: RandomNumberGenerator>(_ rng: inout R) -> String {
    let alphabet: [Unicode.Scalar] = [
        "a", "Z", "0", " ", "\"", "\\", "/", "\n", "\r", "\t", "\u{0}",
        "\u{1F}", "\u{7F}", "é", "中", "😀", "\u{2028}", "\u{FFFF}",
        "\u{10FFFF}",
    ]
    var s = String.UnicodeScalarView()
    for _ in 0..<Int(rng.next() % 12) {
        s.append(alphabet[Int(rng.next() % UInt64(alphabet.count))])
    }
    return String(s)
}

// The decoder's fast path (RequestFastPath.swift) against the full decoder: wherever the fast
// path answers, it must give exactly the full decoder's answer (id bytes, op, request or error);
// where it cannot be sure, it must step aside. Hand-picked lines cover each rule of both kinds,
// and a seeded generator covers the space between them.
import TestSupport
import XCTest

@testable import JSONCodec
@testable import Wire

final class RequestFastPathTests: XCTestCase {
    /// Asserts that the fast path answers `line`, and answers like the full decoder.
    func assertFast(_ line: String, file: StaticString = #filePath, line number: UInt = #line) {
        var text = line
        text.withUTF8 { bytes in
            let raw = UnsafeRawBufferPointer(bytes)
            guard let fast = RequestDecoder.decodeFast(raw) else {
                return XCTFail("the fast path stepped aside on \(line)", file: file, line: number)
            }
            assertSame(fast, RequestDecoder.decodeFull(raw), line, file: file, line: number)
        }
    }

    func assertFallsBack(_ line: String, file: StaticString = #filePath, line number: UInt = #line) {
        var text = line
        text.withUTF8 { bytes in
            XCTAssertNil(
                RequestDecoder.decodeFast(UnsafeRawBufferPointer(bytes)), "fast path answered \(line)",
                file: file, line: number)
        }
    }

    func assertSame(
        _ fast: DecodedRequest, _ full: DecodedRequest, _ what: String, file: StaticString = #filePath,
        line: UInt = #line
    ) {
        XCTAssertEqual(fast.id, full.id, "id of \(what)", file: file, line: line)
        XCTAssertEqual(fast.op, full.op, "op of \(what)", file: file, line: line)
        XCTAssertEqual(fast.result, full.result, "result of \(what)", file: file, line: line)
    }

    /// The fast path's key words, written out in its source, are the words of the names.
    func testEveryFastKeyIsFoundByItsName() {
        for key in FastKey.allCases {
            let name = Array("\(key)".utf8)
            XCTAssertEqual(FastKey(count: name.count, word: FlatWord.of(name)), key, "\(key)")
            XCTAssertNil(
                FastKey(count: name.count + 1, word: FlatWord.of(name)), "\(key) with another length")
        }
        XCTAssertNil(FastKey(count: 2, word: FlatWord.of(Array("xx".utf8))))
    }

    /// The fast path's op words, written out in its source, name the ops they return; every op
    /// it leaves to the full decoder is unknown to it.
    func testEveryFastOpIsFoundByItsName() {
        var taken = 0
        for op in Ops.all {
            let name = Array(op.name.utf8)
            let found = name.withUnsafeBufferPointer { RequestDecoder.fastOp($0, word: FlatWord.of(name)) }
            if let found {
                XCTAssertEqual(found, op.kind)
                taken += 1
            } else {
                XCTAssertTrue(Self.fullDecoderOnly.contains(op.kind), op.name)
            }
            var near = name
            near[near.count - 1] ^= 1
            XCTAssertNil(near.withUnsafeBufferPointer { RequestDecoder.fastOp($0, word: FlatWord.of(near)) })
        }
        XCTAssertEqual(taken, Ops.all.count - Self.fullDecoderOnly.count)
    }

    /// The ops the fast path leaves to the full decoder.
    static let fullDecoderOnly: Set<OpSpec.Kind> = [
        .options, .add, .restore, .move, .undo, .subscribe, .history, .viewport, .configure, .open, .perform,
        .peek,
        .status,
        .record, .recording, .share, .peers, .auth, .tokenCreate, .tokenList, .tokenRevoke, .role, .denials,
    ]

    func testValidHotRequestsTakeTheFastPathAndMeanTheSame() {
        for line in [
            #"{"op":"ping"}"#, #"  {"op":"ping"}  "#, "\t{ \"op\" : \"ping\" }\r",
            #"{"op":"ping","id":17}"#, #"{"id":"a b","op":"ping"}"#, #"{"op":"ping","id":null}"#,
            #"{"op":"ping","id":true}"#, #"{"op":"ping","id":-1.50e+3}"#, #"{"op":"ping","id":""}"#,
            #"{"op":"list"}"#, #"{"op":"rows"}"#, #"{"op":"help"}"#, #"{"op":"unsubscribe"}"#,
            #"{"op":"drag","movie":"matrix","dx":-60}"#, #"{"dx":30.25,"movie":"matrix","op":"drag"}"#,
            #"{"op":"drag","movie":"matrix","dx":-0}"#, #"{"op":"drag","movie":"matrix","dx":-0.0e-0}"#,
            #"{"op":"drag","movie":"matrix","dx":1e9}"#,
            #"{"op":"drag","movie":"matrix","dx":-1000000000.0}"#,
            #"{"op":"drag","movie":"matrix","dx":0.1234567890123456789012}"#,
            #"{"op":"drag","movie":"matrix","dx":999999999}"#, #"{"op":"drag","movie":"matrix","dx":1E2}"#,
            #"{"op":"drag","movie":"matrix","dx":-7e0}"#, #"{"op":"drag","movie":"matrix","dx":10.0}"#,
            #"{"op":"release","movie":"matrix","vx":-123456789}"#,
            "{\"op\":\"drag\",\"movie\":\"\(String(repeating: "m", count: 1024))\",\"dx\":1}",
            #"{"op":"release","movie":"matrix"}"#, #"{"op":"release","movie":"matrix","dx":-80,"vx":-900}"#,
            #"{"op":"release","vx":0.5,"movie":"matrix"}"#,
            #"{"op":"tap","movie":"matrix","action":"delete","id":3}"#,
            #"{"op":"toggle-watched","movie":"matrix","expect":6,"key":"k-123","id":3}"#,
            #"{"op":"toggle-watched","movie":"matrix","expect":0}"#,
            #"{"op":"toggle-watched","movie":"matrix","expect":9223372036854775807}"#,
            #"{"op":"toggle-watched","movie":"matrix","expect":2.0}"#,
            "{\"op\":\"remove\",\"movie\":\"m\",\"key\":\"\(String(repeating: "k", count: 128))\"}",
            #"{"op":"toggle-watched-with-friends","movie":"matrix"}"#, #"{"op":"remove","movie":"x"}"#,
            #"{"op":"close"}"#, #"{"op":"close","movie":"matrix"}"#,
        ] {
            assertFast(line)
        }
    }

    func testAnythingElseFallsBackToTheFullDecoder() {
        for line in [
            // Not flat requests the fast path reads.
            "", "   ", #"[]"#, #""op""#, #"{}"#, #"{"id":1}"#, #"{"op":1}"#, #"{"op":null}"#,
            #"{"op":"nope"}"#, #"{"op":"pingg"}"#, #"{"op":"pin"}"#, #"{"op":"ping","x":1}"#,
            #"{"op":"drag","movie":"matrix","dx":1,"vx":2}"#, #"{"op":"ping","op":"ping"}"#,
            #"{"op":"ping","id":1,"id":1}"#, #"{"op":"p\u0069ng"}"#, #"{"o\u0070":"ping"}"#,
            #"{"op":"drag","movie":"ma\"trix","dx":1}"#, #"{"op":"drag","movie":"a\\b","dx":1}"#,
            "{\"op\":\"drag\",\"movie\":\"Amélie\",\"dx\":1}",
            "{\"op\":\"drag\",\"movie\":\"a\u{01}\",\"dx\":1}", #"{"op":"ping","id":[1]}"#,
            #"{"op":"ping","id":{}}"#, #"{"op":"configure","leading":[]}"#, #"{"op":"ping",}"#,
            #"{"op":"ping"} x"#, #"{"op":"ping"}}"#, #"{"op":"ping""#, #"{"op":"ping" "id":1}"#,
            #"{"op" "ping"}"#, #"{op:"ping"}"#, #"{"op":'ping'}"#, #"{"op":"ping","id":01}"#,
            #"{"op":"ping","id":1.}"#, #"{"op":"ping","id":-}"#, #"{"op":"ping","id":1e}"#,
            #"{"op":"ping","id":tru}"#, #"{"op":"ping","id":nulll}"#, #"{"op":"ping","id":1e999}"#,
            "\u{FEFF}{\"op\":\"ping\"}", #"{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"op":"ping"}"#,
            #"{"op":"ping","id":1}{"op":"ping"}"#, #"{"op":"history","limit":1e400}"#,
            // Requests the full decoder refuses: it words the error.
            #"{"op":"drag","movie":"matrix","dx":1.0000001e9}"#,
            #"{"op":"drag","movie":"matrix","dx":12345678901234567890}"#,
            #"{"op":"drag","movie":"matrix","dx":123456789012345}"#,
            #"{"op":"drag","movie":"matrix","dx":-60x}"#,
            #"{"op":"drag","movie":"matrix","dx":1000000001}"#, #"{"op":"drag","movie":"matrix","dx":-01}"#,
            #"{"op":"drag","movie":"matrix","dx":"60"}"#, #"{"op":"drag","movie":"matrix","dx":null}"#,
            #"{"op":"drag","movie":"matrix"}"#, #"{"op":"drag","dx":1}"#, #"{"op":"drag","movie":"","dx":1}"#,
            #"{"op":"drag","movie":7,"dx":1}"#, #"{"op":"drag","movie":true,"dx":1}"#,
            "{\"op\":\"drag\",\"movie\":\"\(String(repeating: "m", count: 1025))\",\"dx\":1}",
            #"{"op":"release","movie":"matrix","vx":"fast"}"#, #"{"op":"tap","movie":"matrix"}"#,
            #"{"op":"toggle-watched","movie":"matrix","expect":-1}"#,
            #"{"op":"toggle-watched","movie":"matrix","expect":1.5}"#,
            #"{"op":"toggle-watched","movie":"matrix","key":""}"#, #"{"op":"close","movie":null}"#,
            "{\"op\":\"toggle-watched\",\"movie\":\"m\",\"key\":\"\(String(repeating: "k", count: 129))\"}",
            #"{"op":"ping","movie":"matrix"}"#, #"{"op":"list","dx":1}"#,
            // Ops left to the full decoder, valid or not.
            #"{"op":"add","title":"Alien","image":"alien"}"#, #"{"op":"add","title":""}"#,
            #"{"op":"history","from":0,"limit":1000}"#, #"{"op":"subscribe","from":2}"#,
            #"{"op":"subscribe"}"#, #"{"op":"viewport","width":390,"direction":"rtl"}"#,
            #"{"op":"configure","buttonWidth":70,"allowsFullSwipeLeading":false}"#, #"{"op":"configure"}"#,
        ] {
            assertFallsBack(line)
        }
    }

    /// Random lines near the requests clients send: every op name and argument name (and near
    /// misses), every kind of scalar, random whitespace, and single-byte damage. Wherever the fast
    /// path answers, it must answer like the full decoder.
    func testRandomLinesAgreeWithTheFullDecoder() {
        var rng = SplitMix64(seed: 0x5157_1FED)
        let ops = Ops.all.map(\.name) + ["pin", "dragg", "Drag", ""]
        let keys = [
            "op", "id", "movie", "dx", "vx", "action", "expect", "key", "from", "limit", "title",
            "image", "width", "direction", "buttonWidth", "allowsFullSwipeLeading", "allowsFullSwipeTrailing",
            "leading", "trailing", "o", "ids", "movies", "allowsFullSwipeLeadinG",
        ]
        let scalars = [
            "0", "-0", "1", "-60", "60.5", "1e9", "-1e9", "1e10", "1.5e-3", "9007199254740993",
            "1000", "1001", "20", "4000", "true", "false", "null", #""""#, #""matrix""#, #""a b c""#,
            #""ltr""#, #""rtl""#, #""delete""#, #""k-1""#, "0.1", "100", "99.99999",
        ]
        let spaces = ["", "", "", " ", "\t", "\r", "  "]
        var fastAnswers = 0
        for _ in 0..<40_000 {
            var members: [String] = []
            let op = ops.randomElement(using: &rng)!
            if Int.random(in: 0..<10, using: &rng) > 0 {
                members.append("\"op\":\"\(op)\"")
            }
            // Half the time, only the op's own arguments (and `id`): more lines the fast path takes.
            let own = (Ops.named(op)?.args.map(\.name) ?? []) + ["id"]
            for _ in 0..<Int.random(in: 0...4, using: &rng) {
                let key = (rng.next() % 2 == 0 ? own : keys).randomElement(using: &rng)!
                let value = scalars.randomElement(using: &rng)!
                members.append("\"\(key)\"\(spaces.randomElement(using: &rng)!):\(value)")
            }
            members.shuffle(using: &rng)
            let sep = spaces.randomElement(using: &rng)!
            var bytes = Array(("{" + sep + members.joined(separator: "," + sep) + sep + "}").utf8)
            if Int.random(in: 0..<4, using: &rng) == 0 { damageOneByte(&bytes, using: &rng) }
            bytes.withUnsafeBytes { raw in
                guard let fast = RequestDecoder.decodeFast(raw) else { return }
                fastAnswers += 1
                assertSame(fast, RequestDecoder.decodeFull(raw), String(decoding: bytes, as: UTF8.self))
            }
        }
        // The generator must exercise the fast path, not only the fallback.
        XCTAssertGreaterThan(fastAnswers, 1_000)
    }
}

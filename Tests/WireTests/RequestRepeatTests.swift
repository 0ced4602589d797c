// The repeat lane (RequestRepeat.swift) against the full decoder: a line read from a kept drag
// must mean exactly what the full decoder says it means, and only lines that are the kept drag
// with new values in its holes may be read that way.
import TestSupport
import XCTest

@testable import JSONCodec
@testable import Wire

final class RequestRepeatTests: XCTestCase {
    /// What the daemon does with `line`: the repeat lane, else the fast path, else the full
    /// decoder; and whether the repeat lane answered.
    private func decode(_ line: [UInt8], _ last: inout DragRepeat) -> (DecodedRequest, repeated: Bool) {
        line.withUnsafeBytes { raw in
            let repeated = last.match(raw.bindMemory(to: UInt8.self)) != nil
            var decoded: DecodedRequest?
            let fast = RequestDecoder.withFastRequest(raw, repeating: &last) {
                decoded = DecodedRequest(id: $1, op: $2.rawValue, result: .success($0))
            }
            XCTAssertEqual(fast, decoded != nil)
            return (decoded ?? RequestDecoder.decodeFull(raw), repeated)
        }
    }

    private func assertSameAsFull(
        _ line: String, _ last: inout DragRepeat, repeated expected: Bool?, file: StaticString = #filePath,
        line number: UInt = #line
    ) {
        let bytes = Array(line.utf8)
        let (got, repeated) = decode(bytes, &last)
        let full = bytes.withUnsafeBytes { RequestDecoder.decodeFull($0) }
        XCTAssertEqual(got.id, full.id, "id of \(line)", file: file, line: number)
        XCTAssertEqual(got.op, full.op, "op of \(line)", file: file, line: number)
        XCTAssertEqual(got.result, full.result, "result of \(line)", file: file, line: number)
        if let expected {
            XCTAssertEqual(repeated, expected, "read from the repeat: \(line)", file: file, line: number)
        }
    }

    func testDragsOfTheSameShapeAreReadFromTheRepeat() {
        var last = DragRepeat()
        XCTAssertTrue(last.isEmpty)
        assertSameAsFull(#"{"op":"drag","movie":"matrix","dx":-60}"#, &last, repeated: false)
        XCTAssertFalse(last.isEmpty)
        for dx in [
            "-61", "0", "-0", "12.5", "1e3", "-1.25E+2", "4000", "-4000", "1e9", "-999999999.5", "0.000001",
        ] {
            assertSameAsFull(#"{"op":"drag","movie":"matrix","dx":\#(dx)}"#, &last, repeated: true)
        }
        // With an id, before or after dx, of any scalar kind.
        assertSameAsFull(#"{"id":7,"op":"drag","movie":"matrix","dx":-60}"#, &last, repeated: false)
        for id in ["8", "123456", #""a-string""#, "true", "null", "-1.5"] {
            assertSameAsFull(#"{"id":\#(id),"op":"drag","movie":"matrix","dx":-2}"#, &last, repeated: true)
        }
        assertSameAsFull(#"{"op":"drag","dx":5,"movie":"seven","id":"x"}"#, &last, repeated: false)
        assertSameAsFull(#"{"op":"drag","dx":-5.5,"movie":"seven","id":"yy"}"#, &last, repeated: true)
        // Whitespace is kept as it came.
        assertSameAsFull(#" { "op" : "drag", "movie": "seven", "dx": 1 } "#, &last, repeated: false)
        assertSameAsFull(#" { "op" : "drag", "movie": "seven", "dx": 22 } "#, &last, repeated: true)
    }

    /// Issue 47: a drag with dy keeps a hole for it, wherever it and the id are in the line.
    func testDragsWithDyAreReadFromTheRepeatWithTheirDy() {
        var last = DragRepeat()
        for shape in [
            #"{"op":"drag","movie":"matrix","dx":DX,"dy":DY}"#,
            #"{"id":ID,"op":"drag","movie":"matrix","dx":DX,"dy":DY}"#,
            #"{"op":"drag","dy":DY,"movie":"matrix","id":ID,"dx":DX}"#,
            #"{"dy":DY,"op":"drag","dx":DX,"movie":"m","id":ID}"#,
        ] {
            func line(_ dx: String, _ dy: String, _ id: String) -> String {
                shape.replacingOccurrences(of: "DX", with: dx).replacingOccurrences(of: "DY", with: dy)
                    .replacingOccurrences(of: "ID", with: id)
            }
            assertSameAsFull(line("-60", "3", "1"), &last, repeated: false)
            for (dx, dy, id) in [
                ("-61", "-3.5", "2"), ("0", "0", "\"x\""), ("1e3", "-1e9", "300"), ("2", "400", "4"),
            ] {
                assertSameAsFull(line(dx, dy, id), &last, repeated: true)
            }
            // Without its dy, a line is another shape: decoded the usual way (and kept).
            assertSameAsFull(#"{"op":"drag","movie":"matrix","dx":5}"#, &last, repeated: false)
            assertSameAsFull(#"{"op":"drag","movie":"matrix","dx":5,"dy":"up"}"#, &last, repeated: false)
        }
    }

    func testAnythingElseMissesTheRepeatAndMeansWhatTheFullDecoderSays() {
        var last = DragRepeat()
        let kept = #"{"op":"drag","movie":"matrix","dx":-60}"#
        for line in [
            #"{"op":"drag","movie":"matrix2","dx":-60}"#,  // another row
            #"{"op":"drag","movie":"matrjx","dx":-60}"#,
            #"{"op":"drog","movie":"matrix","dx":-60}"#,  // another op
            #"{"op":"drag","movie":"matrix","dx":"-61"}"#,  // another kind of value
            #"{"op":"drag","movie":"matrix","dx":null}"#,
            #"{"op":"drag","movie":"matrix","dx":-6e}"#,  // not a number
            #"{"op":"drag","movie":"matrix","dx":-}"#,
            #"{"op":"drag","movie":"matrix","dx":01}"#,
            #"{"op":"drag","movie":"matrix","dx":1e400}"#,  // out of range
            #"{"op":"drag","movie":"matrix","dx":-1000000001}"#,
            #"{"op":"drag","movie":"matrix","dx":123456789012345}"#,
            #"{"op":"drag","movie":"matrix","dx":-61,"dx":3}"#,  // more after the hole
            #"{"op":"drag","movie":"matrix","dx":-61}x"#,
            #"{"op":"drag","movie":"matrix","dx":-61} "#,
            #"{"op":"drag","movie":"matrix","dx":-61"#,  // cut short
            #"{"op":"drag","movie":"matrix","dx":"#,
            #"{"op":"drag","movie":"matrix","dx": -61}"#,  // other spacing
            #"{"op":"drag","movie":"matrix","dx":-61,"id":1}"#,  // a new member
            #"{"id":1,"op":"drag","movie":"matrix","dx":-61}"#,
            #"{"op":"drag","movie":"matrix","dx":[-61]}"#,
            #"{"op":"drag","movie":"matrix","dx":-61.}"#,
            "",
        ] {
            assertSameAsFull(kept, &last, repeated: nil)
            assertSameAsFull(line, &last, repeated: false)
        }
        // A request of another op leaves the kept drag alone.
        assertSameAsFull(kept, &last, repeated: nil)
        assertSameAsFull(#"{"op":"ping"}"#, &last, repeated: false)
        assertSameAsFull(#"{"op":"release","movie":"matrix","dx":-60}"#, &last, repeated: false)
        assertSameAsFull(#"{"op":"drag","movie":"matrix","dx":-59}"#, &last, repeated: true)
    }

    /// The lane writes each id into storage it keeps (no allocation per drag): an id the caller
    /// kept from one drag must not change when the next drag's id is written.
    func testAnIdKeptFromOneDragIsNotOverwrittenByTheNext() {
        var last = DragRepeat()
        var kept: [[UInt8]?] = []
        for line in [
            #"{"id":1,"op":"drag","movie":"matrix","dx":-60}"#,  // fills the repeat (fast path)
            #"{"id":"first","op":"drag","movie":"matrix","dx":-61}"#,
            #"{"id":22,"op":"drag","movie":"matrix","dx":-62}"#,
            #"{"id":"longer than the 32 bytes reserved","op":"drag","movie":"matrix","dx":-63}"#,
            #"{"id":4,"op":"drag","movie":"matrix","dx":-64}"#,
        ] {
            let fast = Array(line.utf8).withUnsafeBytes { raw in
                RequestDecoder.withFastRequest(raw, repeating: &last) { _, id, _ in kept.append(id) }
            }
            XCTAssertTrue(fast, line)
        }
        XCTAssertEqual(
            kept.map { $0.map { String(decoding: $0, as: UTF8.self) } },
            ["1", #""first""#, "22", #""longer than the 32 bytes reserved""#, "4"])
    }

    /// Random drag-like lines in random order: whatever the lane answers, the full decoder says
    /// the same, and the lane answers often.
    func testRandomDragStreamsAgreeWithTheFullDecoder() {
        var rng = SplitMix64(seed: 0xD2A6_0001)
        let movies = ["matrix", "seven", "m", "a-b_c", "matrix "]
        let numbers = [
            "-60", "-61", "0", "-0", "1", "59.5", "1e2", "-1E-2", "4000", "-4000.0", "1e9", "1e10", "1e400",
            "01",
            "-", "1.", ".5", "1e", "--1", "2.5e+1", #""3""#, "null", "true",
        ]
        let ids = [nil, "1", "22", "333", #""req-1""#, #""r""#, "null", "false", "1.5", "[1]", #""a\"b""#]
        let spaces = ["", "", "", " ", "\t"]
        var last = DragRepeat()
        var repeats = 0
        for _ in 0..<20_000 {
            // Mostly the same row and shape, as a finger sends them.
            var members = [
                "\"op\":\"\(Int.random(in: 0..<20, using: &rng) == 0 ? "release" : "drag")\"",
                "\"movie\":\"\(Int.random(in: 0..<8, using: &rng) == 0 ? movies.randomElement(using: &rng)! : "matrix")\"",
                "\"dx\":\(numbers.randomElement(using: &rng)!)",
            ]
            if let id = Int.random(in: 0..<3, using: &rng) == 0 ? ids.randomElement(using: &rng)! : nil {
                members.insert("\"id\":\(id)", at: Int.random(in: 0...members.count, using: &rng))
            }
            if Int.random(in: 0..<10, using: &rng) == 0 { members.shuffle(using: &rng) }
            let sep = Int.random(in: 0..<10, using: &rng) == 0 ? spaces.randomElement(using: &rng)! : ""
            var bytes = Array(("{" + sep + members.joined(separator: "," + sep) + sep + "}").utf8)
            if Int.random(in: 0..<10, using: &rng) == 0 { damageOneByte(&bytes, using: &rng) }
            let (got, repeated) = decode(bytes, &last)
            if repeated { repeats += 1 }
            let full = bytes.withUnsafeBytes { RequestDecoder.decodeFull($0) }
            let what = String(decoding: bytes, as: UTF8.self)
            XCTAssertEqual(got.id, full.id, "id of \(what)")
            XCTAssertEqual(got.op, full.op, "op of \(what)")
            XCTAssertEqual(got.result, full.result, "result of \(what)")
        }
        XCTAssertGreaterThan(repeats, 2_500, "the generator must exercise the lane")
    }
}

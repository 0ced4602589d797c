// The invariants of the request fuzzer (Fuzz/RequestFuzz) as unit tests, on inputs chosen to
// sit on the edges it explores: framing does not depend on how bytes are split into reads,
// frames are never blank nor over the limit, and every reply (error or not) is one line of
// strict JSON that echoes the request's `id` bytes verbatim. Inputs that ever crash the fuzzer
// are added to `inputs` below.
import JSONCodec
import Wire
import XCTest

final class RequestFuzzRegressionTests: XCTestCase {
    static let inputs: [[UInt8]] = [
        Array(#"{"op":"ping","id":1}"#.utf8),
        Array("{\"op\":\"ping\",\"id\":[1,\r2,\t{\"a\":\"\\n\"}]}".utf8),  // whitespace inside an echoed id
        Array(#"{"id":"\u2028\u0000","op":"nope"}"#.utf8),
        Array(#"{"op":"ping","id":1,"id":2}"#.utf8),
        Array(#"{"op":"history","limit":1e400}"#.utf8),
        Array(#"{"op":"drag","movie":"x","dx":-0.0e-0}"#.utf8),
        Array(#"{"op":"configure","leading":[{"action":"a","role":"destructive"},{"action":"a"}]}"#.utf8),
        Array(String(repeating: "[", count: 10_000).utf8),
        Array(String(repeating: #"{"a":"#, count: 70).utf8) + [0x31]
            + Array(String(repeating: "}", count: 70).utf8),
        [0xEF, 0xBB, 0xBF] + Array(#"{"op":"ping"}"#.utf8),
        [0x7B, 0x22, 0xC0, 0xAF, 0x22, 0x3A, 0x31, 0x7D],
        Array("{\"op\":\"ping\"}\r\r\n \t\r\n{\"op\":\"list\"}\n\n{\"op\":\"x\"".utf8),
        Array("\r\n\r\n\r".utf8),
        Array(repeating: 0x61, count: 300) + [0x0D, 0x0A, 0x0D] + Array(repeating: 0x62, count: 10),
    ]

    func testFuzzerInvariantsHoldOnEdgeInputs() {
        for input in Self.inputs {
            for maxLine in [1, 7, 64, LineFramer.defaultMaxLine] {
                let whole = frames(input, maxLine: maxLine, piece: nil)
                for piece in [1, 2, 3, 5, 16] {
                    XCTAssertEqual(
                        frames(input, maxLine: maxLine, piece: piece), whole,
                        "split into \(piece)-byte reads, maxLine \(maxLine): \(input.prefix(40))")
                }
                for frame in whole {
                    switch frame {
                    case .line(let line):
                        XCTAssertFalse(line.contains(0x0A))
                        XCTAssertLessThanOrEqual(line.count, maxLine)
                        XCTAssertFalse(
                            line.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }, "a blank frame")
                        checkRequest(Array(line))
                    case .tooLarge(let length):
                        XCTAssertGreaterThan(length, maxLine)
                    }
                }
            }
            checkRequest(input)
        }
    }

    private func frames(_ bytes: [UInt8], maxLine: Int, piece: Int?) -> [LineFramer.Frame] {
        var framer = LineFramer(maxLine: maxLine)
        var result: [LineFramer.Frame] = []
        func drain() {
            while let frame = framer.next() {
                if case .line(let line) = frame {
                    result.append(.line(ArraySlice(Array(line))))
                } else {
                    result.append(frame)
                }
            }
        }
        let step = piece ?? max(bytes.count, 1)
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + step)
            framer.append(bytes[offset..<end])
            drain()
            offset = end
        }
        framer.finish()
        drain()
        return result
    }

    private func checkRequest(_ line: [UInt8], file: StaticString = #filePath, lineNumber: UInt = #line) {
        let decoded = line.withUnsafeBytes { RequestDecoder.decode($0) }
        var out = JSONWriter()
        switch decoded.result {
        case .failure(let error): Encode.error(&out, id: decoded.id, error)
        case .success: Encode.ok(&out, id: decoded.id)
        }
        let bytes = out.bytes
        XCTAssertEqual(bytes.last, 0x0A, file: file, line: lineNumber)
        let body = Array(bytes.dropLast())
        XCTAssertFalse(
            body.contains(0x0A), "a raw newline in \(String(decoding: body, as: UTF8.self))", file: file,
            line: lineNumber)
        do {
            let members = try body.withUnsafeBytes { try JSONParser.parseObjectMembers($0) }
            if let id = decoded.id {
                let echoed = members.first { $0.key == "id" }.map { Array(body[$0.range]) }
                XCTAssertEqual(echoed, id, "id not echoed verbatim", file: file, line: lineNumber)
            }
        } catch {
            XCTFail(
                "reply is not strict JSON (\(error)): \(String(decoding: body, as: UTF8.self))", file: file,
                line: lineNumber)
        }
    }
}

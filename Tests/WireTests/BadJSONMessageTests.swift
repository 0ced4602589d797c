import Wire
import XCTest

/// A line that is not a JSON object from its first byte is told what a request looks like; a
/// line that starts as an object keeps the parser's own message (issue 13).
final class BadJSONMessageTests: XCTestCase {
    private func message(_ line: String) -> String? {
        var bytes = Array(line.utf8)
        return bytes.withUnsafeMutableBytes { raw -> String? in
            guard case .failure(let error) = RequestDecoder.decodeFull(UnsafeRawBufferPointer(raw)).result
            else { return nil }
            XCTAssertEqual(error.code, .badJSON, line)
            return error.message
        }
    }

    private let intro =
        #"a request is one JSON object per line, such as {"op":"ping"} ({"op":"help"} lists the ops); this line is not one: "#

    func testALineThatIsNotAnObjectSaysWhatARequestLooksLike() {
        XCTAssertEqual(message("not json at all"), intro + "invalid literal (expected 'null') at byte 0")
        XCTAssertEqual(message("hello"), intro + "unexpected character 'h' at byte 0")
        XCTAssertEqual(message("  ping"), intro + "unexpected character 'p' at byte 2")
        XCTAssertEqual(message(#"["op","ping"]"#), intro + "expected a JSON object at byte 0")
        XCTAssertEqual(message(#""ping""#), intro + "expected a JSON object at byte 0")
    }

    func testALineThatStartsAsAnObjectKeepsTheParsersMessage() {
        XCTAssertEqual(message(#"{"op":"ping",}"#), "trailing comma at byte 12")
        XCTAssertEqual(message(#"{"op":"ping""#), "unexpected end of input at byte 12")
    }
}

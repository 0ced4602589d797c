// The client's framing (LineBuffer.swift): lines come out whole however the bytes are split, and
// each byte is scanned for a newline once, so that a line of megabytes arriving in thousands of
// reads costs what one read of it would.
import XCTest

@testable import SwipedClient

final class LineBufferTests: XCTestCase {
    func feed(_ buffer: inout LineBuffer, _ bytes: ArraySlice<UInt8>) -> [String] {
        bytes.withUnsafeBytes { buffer.append($0) }
        var lines: [String] = []
        while let line = buffer.next() { lines.append(String(decoding: line, as: UTF8.self)) }
        return lines
    }

    func testLinesComeOutWholeSplitAtEveryOffset() {
        let text = Array("{\"a\":1}\n\nlonger line here\nlast\n".utf8)
        let expected = [#"{"a":1}"#, "", "longer line here", "last"]
        for split in 0...text.count {
            var buffer = LineBuffer()
            let lines = feed(&buffer, text[..<split]) + feed(&buffer, text[split...])
            XCTAssertEqual(lines, expected, "split at \(split)")
            XCTAssertEqual(buffer.buffered, 0)
        }
        var buffer = LineBuffer()
        var lines: [String] = []
        for i in text.indices { lines += feed(&buffer, text[i...i]) }
        XCTAssertEqual(lines, expected, "one byte at a time")
        XCTAssertEqual(buffer.bytesScanned, text.count, "one byte at a time, each scanned once")
    }

    /// A line of 2 MB in 1,000-byte reads (2,000 of them): each byte is scanned once, not once
    /// per read that came after it.
    func testALongLineInSmallReadsIsScannedOnce() {
        let line = [UInt8](repeating: UInt8(ascii: "x"), count: 2_000_000) + Array("\nnext\n".utf8)
        var buffer = LineBuffer()
        var lines: [String] = []
        var offset = 0
        while offset < line.count {
            lines += feed(&buffer, line[offset..<min(line.count, offset + 1000)])
            offset += 1000
        }
        XCTAssertEqual(lines.map(\.count), [2_000_000, 4])
        XCTAssertEqual(buffer.bytesScanned, line.count)
        XCTAssertEqual(buffer.buffered, 0)
    }
}

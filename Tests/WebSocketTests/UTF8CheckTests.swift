import XCTest

@testable import WebSocket

/// UTF8Check against the standard library's own validation: every sequence of one to three
/// bytes, and every four-byte sequence from a lead byte F0…F7 whose other bytes are on either
/// side of each boundary that matters; each checked whole and cut at every offset.
final class UTF8CheckTests: XCTestCase {
    /// The checker's verdict on `bytes` given in two parts, cut at `cut`.
    private func check(_ bytes: [UInt8], cut: Int) -> Bool {
        var c = UTF8Check()
        let ok = bytes.withUnsafeBytes { raw in
            c.check(UnsafeRawBufferPointer(rebasing: raw[..<cut]))
                && c.check(UnsafeRawBufferPointer(rebasing: raw[cut...]))
        }
        return ok && c.complete
    }

    private func expect(_ bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line) {
        let valid = String(validating: bytes, as: UTF8.self) != nil
        for cut in 0...bytes.count where check(bytes, cut: cut) != valid {
            XCTFail(
                "\(bytes.map { String($0, radix: 16) }) cut at \(cut): not \(valid)", file: file, line: line)
            return
        }
    }

    func testEverySequenceOfUpToTwoBytes() {
        for a in 0...255 { expect([UInt8(a)]) }
        for a in 0...255 {
            for b in 0...255 { expect([UInt8(a), UInt8(b)]) }
        }
    }

    /// Every three-byte sequence whose first byte leads a longer one (the others are a shorter
    /// sequence and a byte, covered above, or ASCII).
    func testEveryThreeByteSequenceFromALeadByte() {
        for a in 0xC0...0xFF {
            for b in 0...255 {
                for c in 0...255 { expect([UInt8(a), UInt8(b), UInt8(c)]) }
            }
        }
    }

    /// Four-byte sequences: every second byte, and the third and fourth at each boundary.
    func testFourByteSequencesAroundEveryBoundary() {
        let edges: [UInt8] = [0x00, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xFF]
        for a in 0xF0...0xF7 {
            for b in 0...255 {
                for c in edges {
                    for d in edges { expect([UInt8(a), UInt8(b), c, d]) }
                }
            }
        }
    }

    /// Long runs: the eight-bytes-at-a-time pass over ASCII meets a character at every offset.
    func testACharacterAtEveryOffsetOfARun() {
        for prefix in 0..<20 {
            for char in ["é", "€", "😀"] {
                let text = Array((String(repeating: "a", count: prefix) + char + "bcdefghijk").utf8)
                expect(text)
                expect(Array(text.dropLast(11)))  // the character cut short: not valid
            }
            expect(Array(String(repeating: "a", count: prefix).utf8) + [0xED, 0xA0, 0x80] + Array("z".utf8))
        }
    }
}

// The rows of a binary COPY (PostgreSQL's "Binary Format" of COPY: a 16-bit field count, then
// each field as a 32-bit length, -1 for NULL, and its bytes), as start-up reads the log.
import XCTest

@testable import StorePostgres

final class CopyRowTests: XCTestCase {
    /// A row's bytes from its fields (nil: NULL).
    private func row(_ fields: [[UInt8]?]) -> [UInt8] {
        var out: [UInt8] = [UInt8(fields.count >> 8), UInt8(fields.count & 0xFF)]
        for f in fields {
            let n = Int32(f?.count ?? -1)
            out += withUnsafeBytes(of: n.bigEndian, Array.init)
            out += f ?? []
        }
        return out
    }

    func testFieldsNullsAndNumbers() throws {
        let seq: [UInt8] = withUnsafeBytes(of: Int64(1_000_000).bigEndian, Array.init)
        let bytes = row([seq, Array("matrix".utf8), nil, []])
        try bytes.withUnsafeBytes { raw in
            let r = try XCTUnwrap(CopyRow(raw))
            XCTAssertEqual(r.count, 4)
            XCTAssertEqual(r.int64(0), 1_000_000)
            XCTAssertEqual(r.text(1), "matrix")
            XCTAssertNil(r.field(2))
            XCTAssertEqual(r.field(3)?.count, 0)
            XCTAssertNil(r.field(4))
            XCTAssertNil(r.int64(1), "a field of 6 bytes is no bigint")
        }
    }

    func testWhatIsNotOneRowIsRefused() {
        let good = row([Array("a".utf8), Array("bc".utf8)])
        var cases: [[UInt8]] = [[], [0], good + [0], row(Array(repeating: [1], count: 9)), [0xFF, 0xFF]]
        for n in 0..<good.count { cases.append(Array(good[..<n])) }
        var longer = good
        longer[5] = 9  // the first field claims more bytes than the row has
        cases.append(longer)
        for c in cases {
            c.withUnsafeBytes { raw in XCTAssertNil(CopyRow(raw), "\(c)") }
        }
        good.withUnsafeBytes { raw in XCTAssertNotNil(CopyRow(raw)) }
    }
}

// The PostgreSQL store's parameters in binary form, written in place, against the plain
// construction they replaced (an array per element, joined), and its commit tokens against an
// interpolation.
import XCTest

@testable import StorePostgres

final class PGParamTests: XCTestCase {
    /// PostgreSQL's binary forms, built the obvious way.
    private func reference(_ p: PGParam) -> [UInt8] {
        func be<T: FixedWidthInteger>(_ v: T) -> [UInt8] { withUnsafeBytes(of: v.bigEndian) { Array($0) } }
        func array(_ oid: Int32, _ elements: [[UInt8]?]) -> [UInt8] {
            var out = be(Int32(1)) + be(Int32(elements.contains(nil) ? 1 : 0)) + be(oid)
            out += be(Int32(elements.count)) + be(Int32(1))
            for e in elements { out += e.map { be(Int32($0.count)) + $0 } ?? be(Int32(-1)) }
            return out
        }
        switch p {
        case .int64(let v): return be(v)
        case .text(let s): return Array(s.utf8)
        case .int64s(let a): return array(20, a.map { be($0) })
        case .texts(let a): return array(25, a.map { $0.map { Array($0.utf8) } })
        case .byteas(let a): return array(17, a)
        }
    }

    private func encoded(_ p: PGParam) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: p.encodedCount) { buffer, count in
            XCTAssertEqual(p.encode(to: UnsafeMutableRawPointer(buffer.baseAddress!)), p.encodedCount, "\(p)")
            count = p.encodedCount
        }
    }

    func testEveryParameterIsWrittenAsTheReferenceBuildsIt() {
        let cases: [PGParam] = [
            .int64(0), .int64(-1), .int64(Int64.max), .int64(0x0102_0304_0506_0708),
            .text(""), .text("alice"), .text("zoë@example.org"),
            .int64s([]), .int64s([1]), .int64s([Int64.min, -2, 0, 3, Int64.max]),
            .texts([]), .texts([nil]),
            .texts(["", "matrix", "Amélie", "🎬 a title longer than sixteen bytes", nil, "x"]),
            .byteas([]), .byteas([[]]), .byteas([[0, 1, 255], Array(repeating: 7, count: 300), []]),
        ]
        for p in cases {
            let want = reference(p)
            XCTAssertEqual(p.encodedCount, want.count, "\(p)")
            XCTAssertEqual(encoded(p), want, "\(p)")
        }
    }

    func testCommitTokensAreThePrefixAndTheCountInDecimal() {
        for count: UInt64 in [0, 1, 9, 10, 11, 99, 100, 101, 999_999, 1_000_000, 12_345_678_901, UInt64.max] {
            XCTAssertEqual(PostgresWorker.commitToken(prefix: "3fa2b:", count: count), "3fa2b:\(count)")
            XCTAssertEqual(PostgresWorker.commitToken(prefix: "", count: count), "\(count)")
        }
    }
}

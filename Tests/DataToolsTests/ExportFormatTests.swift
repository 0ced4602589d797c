import EventLog
import Foundation
import JSONCodec
import Movies
import TestSupport
import XCTest

@testable import DataTools

final class ExportFormatTests: XCTestCase {
    func event(_ seq: UInt64, title: String, key: String?, undoes: UInt64? = nil) -> ExportedEvent {
        ExportedEvent(
            event: CommittedEvent(
                seq: seq, kind: "watched-toggled",
                movie: Movie(id: "m_\(seq)", title: title, image: "i", watched: seq % 2 == 0, version: seq),
                at: 1_764_000_000_123_456 + Int64(seq), undoes: undoes),
            key: key)
    }

    /// The fast path reads what the writer writes as the general parser does, and on damaged
    /// lines either agrees with it or leaves the line to it.
    func testFastPathAgreesWithTheParser() throws {
        var rng = SplitMix64(seed: 3232)
        let titles = ["Alien", "Amélie \"q\"", "tab\there", "日本", "back\\slash", "", "x\u{1}y"]
        for seq in 1...2000 {
            let x = event(
                UInt64(seq), title: titles[seq % titles.count], key: seq % 3 == 0 ? "k-\(seq)" : nil,
                undoes: seq % 5 == 0 ? UInt64(seq - 1) : nil)
            var w = JSONWriter()
            ExportFormat.event(x, into: &w)
            var line = Array(w.bytes.dropLast())
            XCTAssertEqual(try ExportFormat.parse(line[...], first: false), .event(x))
            if let fast = ExportFormat.fastEvent(line[...]) { XCTAssertEqual(fast, x) }
            damageOneByte(&line, using: &rng)
            if let fast = ExportFormat.fastEvent(line[...]) {
                XCTAssertEqual(
                    try? ExportFormat.parse(line[...], first: false), .event(fast),
                    String(decoding: line, as: UTF8.self))
            }
        }
        var plain = JSONWriter()
        ExportFormat.event(event(7, title: "Alien", key: "k"), into: &plain)
        XCTAssertNotNil(ExportFormat.fastEvent(plain.bytes.dropLast()), "the common line takes the fast path")
    }
}

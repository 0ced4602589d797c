import EventLog
import Foundation
import JSONCodec
import Movies
import TestSupport
import XCTest

@testable import DataTools

final class ExportFormatTests: XCTestCase {
    func event(_ seq: UInt64, title: String, key: String?, undoes: UInt64? = nil, by: String? = nil)
        -> ExportedEvent
    {
        ExportedEvent(
            event: CommittedEvent(
                seq: seq, kind: .watchedToggled,
                movie: Movie(id: "m_\(seq)", title: title, image: "i", watched: seq % 2 == 0, version: seq),
                at: 1_764_000_000_123_456 + Int64(seq), undoes: undoes, by: by),
            key: key)
    }

    /// The fast path reads what the writer writes as the general parser does, and on damaged
    /// lines either agrees with it or leaves the line to it.
    func testFastPathAgreesWithTheParser() throws {
        var rng = SplitMix64(seed: 3232)
        let titles = ["Alien", "Amélie \"q\"", "tab\there", "日本", "back\\slash", "", "x\u{1}y"]
        let people = [nil, "alice", "zoë@example.org", "b\"q\\", nil, "日本"]
        for seq in 1...2000 {
            let x = event(
                UInt64(seq), title: titles[seq % titles.count], key: seq % 3 == 0 ? "k-\(seq)" : nil,
                undoes: seq % 5 == 0 ? UInt64(seq - 1) : nil, by: people[seq % people.count])
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
        var signed = JSONWriter()
        ExportFormat.event(event(7, title: "Alien", key: "k", undoes: 3, by: "alice"), into: &signed)
        XCTAssertEqual(
            String(decoding: signed.bytes, as: UTF8.self),
            #"{"seq":7,"kind":"watched-toggled","movie":{"id":"m_7","title":"Alien","image":"i","watched":false,"watchedWithFriends":false,"version":7},"at":"2025-11-24T16:00:00.123463Z","undoes":3,"by":"alice","key":"k"}"#
                + "\n")
        XCTAssertNotNil(
            ExportFormat.fastEvent(signed.bytes.dropLast()), "a signed line takes the fast path too")
    }
}

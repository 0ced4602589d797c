import JSONCodec
import People
import Session
import StoreCore
import StoreTestSupport
import TestSupport
import Wire
import XCTest

/// The fast lanes against the general path, at the Session's level: random gesture sequences
/// sent as request lines to a Session with its lanes (the repeat lane, the fast decoder, the
/// drag path with row templates) and to one without (the full decoder, the general gesture
/// path, rows rendered whole) give byte-identical output, replies and events alike, with rows
/// in either form (`options`: sequences start in either and switch now and then).
final class SessionLanesTests: XCTestCase {
    static let sequences = 10_000

    func testTheLanesAnswerByteForByteAsTheGeneralPath() {
        var lines = 0
        var dragLines = 0
        var parked = 0
        // Drags answered while the connection's rows were compact, and while they were full.
        var compactDrags = 0
        var fullDrags = 0
        // Replies that started a confirmation, and rows whose confirmation timed out.
        var pendings = 0
        var timeouts = 0
        var replayed = 0
        for seed in 1...UInt64(Self.sequences) {
            var rng = SplitMix64(seed: seed)
            let fast = SessionHarness(
                SessionConfig(client: 1, identity: .tester(seed % 5 != 0 ? .writer : .reader)))
            let slow = SessionHarness(
                SessionConfig(
                    client: 1, identity: .tester(seed % 5 != 0 ? .writer : .reader), fastLanes: false))
            XCTAssertEqual(fast.read(), slow.read())
            var compact = false
            // Every other sequence is recorded and shared: the lanes record and hand over the
            // same, and the recording replays to the rows the connection got.
            let recorded = seed % 2 == 0
            var rows: [String] = []
            if recorded {
                for h in [fast, slow] {
                    h.send(#"{"op":"record","on":true}"#)
                    h.send(#"{"op":"share","on":true}"#)
                }
            }
            if seed % 3 == 0 {
                for h in [fast, slow] { h.send(#"{"op":"options","rows":"compact"}"#) }
                compact = true
            }
            for step in 0..<Int.random(in: 4...24, using: &rng) {
                // Sometimes several lines before the store answers: replies then wait behind a
                // pending commit (a fired bound action) and are worded into parked slots.
                let batch = Int.random(in: 0..<3, using: &rng) == 0 ? Int.random(in: 2...4, using: &rng) : 1
                let sent = (0..<batch).map { Self.randomLine(&rng, step: step * 4 + $0) }
                for line in sent {
                    if line.contains(#""rows":"compact""#) { compact = true }
                    if line.contains(#""rows":"full""#) { compact = false }
                    if line.contains(#""drag""#) {
                        dragLines += 1
                        if compact { compactDrags += 1 } else { fullDrags += 1 }
                    }
                    lines += 1
                    // A reply is held in a slot when one waits before it.
                    if fast.session.backlog > fast.session.pendingOutput { parked += 1 }
                    for h in [fast, slow] { h.send(line) }
                }
                for h in [fast, slow] { h.settle() }
                let (a, b) = (fast.read(), slow.read())
                if recorded { rows += Self.rows(a) }
                pendings += a.filter { $0.contains(#","pending":{"#) }.count
                if a != b {
                    XCTFail("seed \(seed) step \(step): \(sent)\nlanes:   \(a)\ngeneral: \(b)")
                    return
                }
                if Int.random(in: 0..<8, using: &rng) == 0 {
                    // Past a fired row's close, and now and then past a confirmation's timeout.
                    let wait: UInt64 = Bool.random(using: &rng) ? 600_000 : 3_000_000
                    for h in [fast, slow] { h.advance(microseconds: wait) }
                    let (a, b) = (fast.read(), slow.read())
                    if recorded { rows += Self.rows(a) }
                    XCTAssertEqual(a, b, "seed \(seed): after the timers")
                    timeouts += a.filter { $0.contains(#""cancelled":"timeout""#) }.count
                }
            }
            guard recorded else { continue }
            let recording = fast.exchange(#"{"op":"recording"}"#)
            XCTAssertEqual(recording, slow.exchange(#"{"op":"recording"}"#), "seed \(seed): the recordings")
            XCTAssertEqual(
                fast.takePeerRows(),
                slow.takePeerRows(), "seed \(seed): the shared rows")
            replayed += 1
            XCTAssertEqual(Self.replay(recording.last ?? ""), rows, "seed \(seed): the replay")
        }
        XCTAssertGreaterThan(replayed, Self.sequences / 3)
        XCTAssertGreaterThan(dragLines, lines / 2)
        XCTAssertGreaterThan(compactDrags, dragLines / 4, "compact rows were compared")
        XCTAssertGreaterThan(fullDrags, dragLines / 4, "full rows were compared")
        XCTAssertGreaterThan(pendings, 200, "confirmations were compared")
        XCTAssertGreaterThan(timeouts, 20, "timed-out confirmations were compared")
        XCTAssertGreaterThan(parked, 1000, "replies worded behind a pending commit were compared")
    }

    /// The Row objects of `lines` (replies' and `row` events'), as sent.
    static func rows(_ lines: [String]) -> [String] {
        lines.compactMap { line in
            let bytes = Array(line.utf8)
            guard let members = try? bytes.withUnsafeBytes({ try JSONParser.parseObjectMembers($0) }) else {
                return nil
            }
            return members.first { $0.key == "row" }.map { String(decoding: bytes[$0.range], as: UTF8.self) }
        }
    }

    /// The Row objects a replay of the `recording` reply gives, worded as the connection's were.
    static func replay(_ reply: String) -> [String] {
        guard let json = try? JSONParser.parse(Array(reply.utf8)), let recording = try? Recording(json: json)
        else {
            XCTFail("not a recording: \(reply)")
            return []
        }
        return Replay.run(recording).compactMap { step in
            guard let row = step.row else { return nil }
            var out = JSONWriter()
            Encode.row(&out, row, form: step.form)
            return String(decoding: out.bytes, as: UTF8.self)
        }
    }

    /// Seed movies (a delete makes later gestures on them not-found, which is compared too).
    static let movies = ["matrix", "seven", "inception"]

    /// Mostly drags (as a finger sends them, with and without ids, spaced as clients do), then
    /// releases, taps, performs, opens, closes, layout changes (one whose actions ask to
    /// confirm) and switches of the rows' form.
    static func randomLine(_ rng: inout SplitMix64, step: Int) -> String {
        let movie = movies.randomElement(using: &rng)!
        let dx = Double(Int.random(in: -1600...1600, using: &rng)) / 4
        let id = Bool.random(using: &rng) ? #","id":\#(step)"# : ""
        switch Int.random(in: 0..<100, using: &rng) {
        case 0..<57:
            if Int.random(in: 0..<10, using: &rng) == 0 {
                return #"{ "op": "drag", "movie": "\#(movie)", "dx": \#(dx) }"#
            }
            return #"{"op":"drag","movie":"\#(movie)","dx":\#(dx)\#(id)}"#
        case 57..<60:
            return [
                #"{"op":"options","rows":"compact"\#(id)}"#, #"{"op":"options","rows":"full"\#(id)}"#,
                #"{"op":"options"\#(id)}"#,
            ].randomElement(using: &rng)!
        case 60..<75:
            let vx = Bool.random(using: &rng) ? #","vx":\#(Int.random(in: -900...900, using: &rng))"# : ""
            let final = Bool.random(using: &rng) ? #","dx":\#(dx)"# : ""
            return #"{"op":"release","movie":"\#(movie)"\#(final)\#(vx)\#(id)}"#
        case 75..<85:
            let action = ["watched", "watched-with-friends", "delete", "flag", "bogus"].randomElement(
                using: &rng)!
            switch Int.random(in: 0..<10, using: &rng) {
            case 0..<5: return #"{"op":"tap","movie":"\#(movie)","action":"\#(action)"\#(id)}"#
            case 5..<8: return #"{"op":"perform","movie":"\#(movie)","action":"\#(action)"\#(id)}"#
            default:
                let edge = Bool.random(using: &rng) ? "leading" : "trailing"
                return #"{"op":"open","movie":"\#(movie)","edge":"\#(edge)"\#(id)}"#
            }
        case 85..<90:
            return Bool.random(using: &rng) ? #"{"op":"close"}"# : #"{"op":"close","movie":"\#(movie)"}"#
        case 90..<94:
            let width = [320, 390, 430].randomElement(using: &rng)!
            let direction = Bool.random(using: &rng) ? "rtl" : "ltr"
            return #"{"op":"viewport","width":\#(width),"direction":"\#(direction)"}"#
        case 94..<97:
            switch Int.random(in: 0..<3, using: &rng) {
            case 0: return #"{"op":"configure"}"#
            case 1: return SessionSwipeCommandsTests.configure
            default:
                return
                    #"{"op":"configure","buttonWidth":\#(Int.random(in: 40...200, using: &rng)),"allowsFullSwipeTrailing":\#(Bool.random(using: &rng))}"#
            }
        default:
            return #"{"op":"rows"}"#
        }
    }
}

import Foundation
import JSONCodec
import People
import Session
import SwipeEngine
import TestSupport
import Wire
import XCTest

/// Issue 47 on one connection: `crossed` in replies (options `crossings`, rule 12), `dy` and
/// `"scroll":true` (rule 13), `peek` and its timer (rule 14), full-swipe styles (rule 15); and
/// the fast lanes against the general path with all of them, the recording of format 2 replaying
/// to the same rows, crossings and scrolls.
final class SessionIssue47Tests: XCTestCase {
    private func harness(_ config: SessionConfig = SessionConfig(client: 7, identity: .tester(.writer)))
        -> SessionHarness
    {
        let h = SessionHarness(config)
        XCTAssertEqual(h.read().count, 1)  // hello
        XCTAssertEqual(
            h.exchange(#"{"op":"options","rows":"compact"}"#), [#"{"ok":true,"options":{"rows":"compact"}}"#])
        return h
    }

    static let open60 =
        #"{"movie":"seven","offset":-60,"phase":"dragging","edge":"trailing","fullSwipe":false,"buttons":[{"action":"delete","label":"Delete","icon":"trash","tint":"red","role":"destructive","x":330,"width":60}]}"#

    func testCrossingsAreSaidOnlyToAConnectionThatAsked() {
        let h = harness()
        XCTAssertEqual(
            h.exchange(#"{"op":"drag","movie":"seven","dx":-60,"id":1}"#),
            [#"{"id":1,"ok":true,"row":\#(Self.open60)}"#])
        _ = h.exchange(#"{"op":"close"}"#)
        XCTAssertEqual(
            h.exchange(#"{"op":"options","crossings":true}"#),
            [#"{"ok":true,"options":{"rows":"compact","crossings":true}}"#])
        // The first drag of a gesture (the fast path), then drags of the repeat lane.
        XCTAssertEqual(
            h.exchange(#"{"op":"drag","movie":"seven","dx":-60,"id":2}"#),
            [#"{"id":2,"ok":true,"row":\#(Self.open60),"crossed":[{"threshold":"open","direction":"out"}]}"#])
        XCTAssertEqual(
            h.exchange(#"{"op":"drag","movie":"seven","dx":-60,"id":3}"#),
            [#"{"id":3,"ok":true,"row":\#(Self.open60)}"#])
        let back = h.exchange(#"{"op":"drag","movie":"seven","dx":300,"id":4}"#)
        XCTAssertEqual(back.count, 1)
        XCTAssertTrue(
            back[0].hasSuffix(
                #""crossed":[{"threshold":"open","direction":"back"},{"threshold":"open","direction":"out"},{"threshold":"full","direction":"out"}]}"#
            ), back[0])
        // A release's dx crosses too, with what fired after it (a bound action: once committed).
        let fired = h.exchange(#"{"op":"release","movie":"seven","dx":-300,"id":5}"#)
        XCTAssertEqual(fired.count, 2)  // the reply, then the removed row's event
        XCTAssertTrue(
            fired[0].contains(
                #""crossed":[{"threshold":"full","direction":"back"},{"threshold":"open","direction":"back"},{"threshold":"open","direction":"out"},{"threshold":"full","direction":"out"}],"fired":{"action":"delete","seq":11}}"#
            ), fired[0])
        XCTAssertEqual(
            h.exchange(#"{"op":"options","crossings":false}"#), [#"{"ok":true,"options":{"rows":"compact"}}"#]
        )
        XCTAssertFalse(h.exchange(#"{"op":"drag","movie":"matrix","dx":-300}"#)[0].contains("crossed"))
    }

    func testAMostlyVerticalTouchScrollsUntilItsRelease() {
        let h = harness()
        XCTAssertEqual(h.exchange(#"{"op":"open","movie":"matrix","edge":"leading"}"#).count, 1)
        let closed =
            #"{"movie":"seven","offset":0,"phase":"closed","edge":null,"fullSwipe":false,"buttons":[]}"#
        XCTAssertEqual(
            h.exchange(#"{"op":"drag","movie":"seven","dx":-4,"dy":6}"#), [#"{"ok":true,"row":\#(closed)}"#])
        // Vertical wins: the open row closes (a row event before the reply), the reply scrolls.
        let lines = h.exchange(#"{"op":"drag","movie":"seven","dx":-6,"dy":14,"id":8}"#)
        XCTAssertEqual(lines.count, 2)
        XCTAssertEqual(h.json(lines[0])["event"] as? String, "row")
        XCTAssertEqual(lines[1], #"{"id":8,"ok":true,"row":\#(closed),"scroll":true}"#)
        // The rest of the touch, by the repeat lane: still a scroll, whatever dx does.
        XCTAssertEqual(
            h.exchange(#"{"op":"drag","movie":"seven","dx":-200,"dy":30,"id":9}"#),
            [#"{"id":9,"ok":true,"row":\#(closed),"scroll":true}"#])
        XCTAssertEqual(
            h.exchange(#"{"op":"release","movie":"seven","dx":-200}"#),
            [#"{"ok":true,"row":\#(closed),"scroll":true}"#])
        XCTAssertEqual(h.exchange(#"{"op":"rows"}"#), [#"{"ok":true,"rows":[]}"#])
        // The next touch is a swipe.
        XCTAssertEqual(
            h.exchange(#"{"op":"drag","movie":"seven","dx":-60,"dy":20}"#),
            [#"{"ok":true,"row":\#(Self.open60)}"#])
        XCTAssertEqual(h.takeActions(), [])
    }

    func testAPeekShowsTheButtonsHalfWayAndItsTimerClosesTheRow() {
        let h = harness()
        h.send(#"{"op":"peek","movie":"seven"}"#)
        XCTAssertEqual(h.takeActions(), [.arm(.closeRow("seven"), microseconds: 600_000)])
        h.settle()
        XCTAssertEqual(
            h.read(),
            [
                #"{"ok":true,"row":{"movie":"seven","offset":-35,"phase":"peeking","edge":"trailing","fullSwipe":false,"buttons":[{"action":"delete","label":"Delete","icon":"trash","tint":"red","role":"destructive","x":355,"width":35}]}}"#
            ])
        h.advance(microseconds: 600_000)
        XCTAssertEqual(
            h.read(),
            [
                #"{"event":"row","row":{"movie":"seven","offset":0,"phase":"closed","edge":null,"fullSwipe":false,"buttons":[]}}"#
            ])
        // A peek of another row closes this one (a row event) and cancels its timer.
        XCTAssertEqual(h.exchange(#"{"op":"peek","movie":"seven","edge":"leading"}"#).count, 1)
        let lines = h.exchange(#"{"op":"peek","movie":"matrix"}"#)
        XCTAssertEqual(lines.count, 2)
        XCTAssertEqual(h.json(lines[0])["event"] as? String, "row")
        XCTAssertNil(h.timers[.closeRow("seven")])
        XCTAssertNotNil(h.timers[.closeRow("matrix")])
        func code(_ line: String) -> String? { (h.json(line)["error"] as? [String: Any])?["code"] as? String }
        XCTAssertEqual(code(h.exchange(#"{"op":"peek","movie":"alien"}"#)[0]), "not-found")
        XCTAssertEqual(code(h.exchange(#"{"op":"peek","movie":"seven","edge":"top"}"#)[0]), "bad-request")
        _ = h.exchange(#"{"op":"configure","trailing":[{"action":"delete"}]}"#)
        XCTAssertEqual(
            h.exchange(#"{"op":"peek","movie":"seven","edge":"leading"}"#),
            [
                #"{"ok":false,"error":{"code":"bad-request","message":"this client's layout has no leading actions; that edge cannot open"}}"#
            ])
        // A reader may peek: it fires nothing.
        let reader = harness(SessionConfig(client: 8, identity: .tester(.reader), writersGroup: "w"))
        XCTAssertTrue(reader.exchange(#"{"op":"peek","movie":"seven"}"#)[0].contains(#""phase":"peeking""#))
    }

    func testFullSwipeStylesCloseAndDismiss() {
        let h = harness()
        let layout =
            h.json(
                h.exchange(
                    #"{"op":"configure","leading":[{"action":"watched","label":"Watched"}],"trailing":[{"action":"delete","label":"Delete"}],"fullSwipeStyleLeading":"close","fullSwipeStyleTrailing":"dismiss"}"#
                )[0])["layout"] as? [String: Any]
        XCTAssertEqual(layout?["fullSwipeStyleLeading"] as? String, "close")
        XCTAssertEqual(layout?["fullSwipeStyleTrailing"] as? String, "dismiss")
        // close: the row closes as the action fires; no timer.
        XCTAssertEqual(
            h.exchange(#"{"op":"release","movie":"matrix","dx":300}"#),
            [
                #"{"ok":true,"row":{"movie":"matrix","offset":0,"phase":"closed","edge":null,"fullSwipe":false,"buttons":[]},"fired":{"action":"watched","seq":11}}"#
            ])
        XCTAssertEqual(h.timers, [:])
        // dismiss: the row slides out; the removal drops it (a row event) and cancels its timer.
        let lines = h.exchange(#"{"op":"release","movie":"seven","dx":-300}"#)
        XCTAssertEqual(lines.count, 2, "\(lines)")
        XCTAssertEqual(
            lines[0],
            #"{"ok":true,"row":{"movie":"seven","offset":-390,"phase":"dismissed","edge":"trailing","fullSwipe":true,"buttons":[{"action":"delete","label":"Delete","tint":"gray","x":0,"width":390}]},"fired":{"action":"delete","seq":12}}"#
        )
        XCTAssertEqual(
            lines[1],
            #"{"event":"row","row":{"movie":"seven","offset":0,"phase":"closed","edge":null,"fullSwipe":false,"buttons":[]},"removed":true}"#
        )
        XCTAssertEqual(h.timers, [:])
        // Back to the movie layout: every style is fill again, and the reply says none.
        XCTAssertFalse(h.exchange(#"{"op":"configure"}"#)[0].contains("fullSwipeStyle"))
        let refused = h.json(h.exchange(#"{"op":"configure","fullSwipeStyleLeading":"slide"}"#)[0])
        XCTAssertEqual(
            (refused["error"] as? [String: Any])?["message"] as? String,
            #""fullSwipeStyleLeading" must be "fill" or "close" or "dismiss", not "slide""#)
    }
}

/// The lanes against the general path, as SessionLanesTests does, with issue 47's requests among
/// the others; every other sequence is recorded (format 2) and replayed, which must give the
/// rows the connection got and, reply by reply, the same `crossed` and `scroll`.
final class SessionLanesIssue47Tests: XCTestCase {
    static let sequences = 3_000

    func testTheLanesAndTheReplayAgreeWithIssue47sRequests() {
        var (crossed, scrolls, peeks, replayed) = (0, 0, 0, 0)
        for seed in 1...UInt64(Self.sequences) {
            var rng = SplitMix64(seed: seed)
            let fast = SessionHarness(
                SessionConfig(client: 1, identity: .tester(seed % 5 != 0 ? .writer : .reader)))
            let slow = SessionHarness(
                SessionConfig(
                    client: 1, identity: .tester(seed % 5 != 0 ? .writer : .reader), fastLanes: false))
            XCTAssertEqual(fast.read(), slow.read())
            let recorded = seed % 2 == 0
            var notes: [String] = []
            // The option before the recording starts (its head says so) or after (an entry does).
            for h in [fast, slow] {
                if seed % 4 == 1 { h.send(#"{"op":"options","crossings":true}"#) }
                if recorded { h.send(#"{"op":"record","on":true}"#) }
                if seed % 4 == 2 { h.send(#"{"op":"options","crossings":true}"#) }
            }
            for step in 0..<Int.random(in: 4...24, using: &rng) {
                let line = Self.randomLine(&rng, step: step)
                for h in [fast, slow] {
                    h.send(line)
                    h.settle()
                }
                var (a, b) = (fast.read(), slow.read())
                if Int.random(in: 0..<6, using: &rng) == 0 {
                    // Past a peek's or a full swipe's close, now and then past a dismissal's.
                    let wait: UInt64 = Bool.random(using: &rng) ? 700_000 : 3_000_000
                    for h in [fast, slow] { h.advance(microseconds: wait) }
                    a += fast.read()
                    b += slow.read()
                }
                guard a == b else {
                    return XCTFail("seed \(seed) step \(step): \(line)\nlanes:   \(a)\ngeneral: \(b)")
                }
                crossed += a.filter { $0.contains(#""crossed":["#) }.count
                scrolls += a.filter { $0.contains(#""scroll":true"#) }.count
                peeks += a.filter { $0.contains(#""phase":"peeking""#) }.count
                if recorded { notes += Self.notes(a) }
            }
            guard recorded else { continue }
            let recording = fast.exchange(#"{"op":"recording"}"#)
            XCTAssertEqual(recording, slow.exchange(#"{"op":"recording"}"#), "seed \(seed): the recordings")
            XCTAssertTrue(recording.last?.contains(#""recording":{"recording":2,"#) ?? false)
            XCTAssertEqual(
                recording.last?.contains(#""rows":"full","crossings":true,"#), seed % 4 == 1,
                "seed \(seed): the head says whether crossings were on at the start")
            XCTAssertEqual(Self.replayNotes(recording.last ?? ""), notes, "seed \(seed): the replay")
            replayed += 1
        }
        XCTAssertGreaterThan(replayed, Self.sequences / 3)
        XCTAssertGreaterThan(crossed, 1_000, "crossings were compared")
        XCTAssertGreaterThan(scrolls, 1_000, "scrolls were compared")
        XCTAssertGreaterThan(peeks, 500, "peeks were compared")
    }

    /// Each line with a Row: the row, and the reply's `crossed` and `scroll`, as sent.
    static func notes(_ lines: [String]) -> [String] {
        lines.compactMap { line in
            let bytes = Array(line.utf8)
            guard let members = try? bytes.withUnsafeBytes({ try JSONParser.parseObjectMembers($0) }),
                members.contains(where: { $0.key == "row" })
            else { return nil }
            func text(_ key: String) -> String {
                members.first { $0.key == key }.map { String(decoding: bytes[$0.range], as: UTF8.self) }
                    ?? "-"
            }
            return "\(text("row")) crossed \(text("crossed")) scroll \(text("scroll"))"
        }
    }

    /// The same of a replay of the `recording` reply (`swipectl replay`'s lines).
    static func replayNotes(_ reply: String) -> [String] {
        guard let json = try? JSONParser.parse(Array(reply.utf8)), let recording = try? Recording(json: json)
        else {
            XCTFail("not a recording: \(reply)")
            return []
        }
        return notes(
            Replay.run(recording).map { step in
                var out = JSONWriter()
                Encode.replayStep(&out, step)
                return String(decoding: out.bytes.dropLast(), as: UTF8.self)
            })
    }

    /// Drags with and without dy (diagonal, vertical, horizontal; the repeat lane's spellings),
    /// releases, peeks, the crossings option, layouts with every full-swipe style, and a few of
    /// the other gestures.
    static func randomLine(_ rng: inout SplitMix64, step: Int) -> String {
        let movie = ["matrix", "seven", "inception"].randomElement(using: &rng)!
        let dx = Double(Int.random(in: -1600...1600, using: &rng)) / 4
        let dy = Double(Int.random(in: -400...400, using: &rng)) / 4
        let id = Bool.random(using: &rng) ? #","id":\#(step)"# : ""
        switch Int.random(in: 0..<100, using: &rng) {
        case 0..<30: return #"{"op":"drag","movie":"\#(movie)","dx":\#(dx),"dy":\#(dy)\#(id)}"#
        case 30..<40: return #"{"id":\#(step),"op":"drag","movie":"\#(movie)","dy":\#(dy),"dx":\#(dx / 8)}"#
        case 40..<55: return #"{"op":"drag","movie":"\#(movie)","dx":\#(dx)\#(id)}"#
        case 55..<70:
            let final = Bool.random(using: &rng) ? #","dx":\#(dx)"# : ""
            return #"{"op":"release","movie":"\#(movie)"\#(final)\#(id)}"#
        case 70..<78:
            let edge = ["", #","edge":"leading""#, #","edge":"trailing""#].randomElement(using: &rng)!
            return #"{"op":"peek","movie":"\#(movie)"\#(edge)\#(id)}"#
        case 78..<81: return #"{"op":"options","crossings":\#(Bool.random(using: &rng))}"#
        case 81..<86:
            let styles = ["fill", "close", "dismiss"]
            let leading = styles.randomElement(using: &rng)!
            let trailing = styles.randomElement(using: &rng)!
            return Bool.random(using: &rng)
                ? #"{"op":"configure"}"#
                : #"{"op":"configure","leading":[{"action":"watched"},{"action":"flag"}],"trailing":[{"action":"delete","confirm":\#(Bool.random(using: &rng))}],"fullSwipeStyleLeading":"\#(leading)","fullSwipeStyleTrailing":"\#(trailing)"}"#
        case 86..<92:
            let action = ["watched", "flag", "delete"].randomElement(using: &rng)!
            return #"{"op":"tap","movie":"\#(movie)","action":"\#(action)"}"#
        case 92..<96: return #"{"op":"open","movie":"\#(movie)","edge":"leading"}"#
        default: return Bool.random(using: &rng) ? #"{"op":"close"}"# : #"{"op":"close","movie":"\#(movie)"}"#
        }
    }
}

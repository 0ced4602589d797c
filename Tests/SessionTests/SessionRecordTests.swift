import Foundation
import JSONCodec
import Movies
import People
import Session
import SwipeEngine
import Wire
import XCTest

/// Issue 18, section 1 on one connection: `record` and `recording`, what a recording holds
/// (the start, every input with its time, timers, movie changes and the flags rows render),
/// its cap, and a replay of it giving the rows the connection received.
final class SessionRecordTests: XCTestCase {
    private func harness(mayWrite: Bool = true) -> SessionHarness {
        let h = SessionHarness(
            SessionConfig(
                client: 7, identity: .tester(mayWrite ? .writer : .reader), writersGroup: "swiped-writers"))
        h.now = 5_000_000
        XCTAssertEqual(h.read().count, 1)  // hello
        return h
    }

    private func recording(_ h: SessionHarness) throws -> Recording {
        let line = try XCTUnwrap(h.exchange(#"{"op":"recording"}"#).last)
        return try Recording(json: try JSONParser.parse(Array(line.utf8)))
    }

    /// The entries' kinds, and their times in ms.
    private func kinds(_ r: Recording) -> [String] { r.entries.map(\.input.kind) }

    func testNothingIsRecordedUntilRecordOnAndRecordingWithoutOneIsABadRequest() {
        let h = harness()
        _ = h.exchange(#"{"op":"drag","movie":"seven","dx":-30}"#)
        XCTAssertNil(h.session.lastRecording)
        XCTAssertFalse(h.session.isRecording)
        let reply = h.json(h.exchange(#"{"op":"recording","id":1}"#)[0])
        XCTAssertEqual((reply["error"] as? [String: Any])?["code"] as? String, "bad-request")
        XCTAssertEqual(
            (reply["error"] as? [String: Any])?["message"] as? String,
            #"this connection has no recording; start one with {"op":"record","on":true}"#)
        XCTAssertEqual(h.logs.last?.message, "request failed")
    }

    func testRecordOnClosesEveryRowAndStartsFromTheLayoutViewportFormAndFlags() throws {
        let h = harness()
        _ = h.exchange(#"{"op":"viewport","width":500,"direction":"rtl"}"#)
        _ = h.exchange(#"{"op":"options","rows":"compact"}"#)
        _ = h.exchange(#"{"op":"drag","movie":"seven","dx":-30}"#)
        h.send(#"{"op":"drag","movie":"matrix","dx":-400}"#)  // rtl: a full swipe of watched
        h.send(#"{"op":"release","movie":"matrix"}"#)
        h.settle()
        _ = h.read()
        XCTAssertNotNil(h.timers[.closeRow("matrix")])
        h.send(#"{"op":"record","on":true}"#)
        XCTAssertEqual(h.takeActions(), [.cancel(.closeRow("matrix"))])
        XCTAssertEqual(
            h.read(), [#"{"ok":true,"record":{"on":true,"inputs":0,"cut":false},"closed":["matrix"]}"#])
        XCTAssertFalse(h.session.hasOpenRows)
        XCTAssertTrue(h.session.isRecording)
        let r = try recording(h)
        XCTAssertEqual(r.viewport, Viewport(width: 500, direction: .rtl))
        XCTAssertEqual(r.layout, MovieLayout.standard)
        XCTAssertEqual(r.rows, .compact)
        XCTAssertEqual(r.entries, [])
        // No copy of the list (which may hold 100,000 movies): a movie's flags are recorded
        // before its first row renders them.
        XCTAssertEqual(r.movies, [])
        _ = h.exchange(#"{"op":"drag","movie":"seven","dx":30}"#)
        _ = h.exchange(#"{"op":"drag","movie":"matrix","dx":30}"#)
        XCTAssertEqual(
            try recording(h).entries.map(\.input),
            [
                .drag(movie: "seven", dx: 30),
                .flags(MovieFlags(movie: "matrix", watched: true, watchedWithFriends: false)),
                .drag(movie: "matrix", dx: 30),
            ])
    }

    func testEveryInputIsRecordedWithItsMillisecondsSinceTheStart() throws {
        let h = harness()
        _ = h.exchange(#"{"op":"record","on":true}"#)
        let lines = [
            #"{"op":"drag","movie":"seven","dx":-30.5}"#,
            #"{"op":"release","movie":"seven","dx":-40,"vx":-12}"#,
            #"{"op":"release","movie":"seven"}"#, #"{"op":"tap","movie":"seven","action":"delete"}"#,
            #"{"op":"open","movie":"matrix","edge":"leading"}"#,
            #"{"op":"perform","movie":"matrix","action":"watched-with-friends"}"#,
            #"{"op":"close","movie":"matrix"}"#, #"{"op":"close"}"#,
            #"{"op":"viewport","direction":"rtl"}"#, #"{"op":"viewport","direction":"rtl"}"#,
            #"{"op":"configure","trailing":[{"action":"pin"}]}"#, #"{"op":"options","rows":"compact"}"#,
            #"{"op":"rows"}"#, #"{"op":"ping"}"#, #"{"op":"list"}"#,
        ]
        for line in lines {
            h.now += 7_250
            _ = h.exchange(line)
        }
        let r = try recording(h)
        // An unchanged viewport changes nothing: not recorded. Nor are rows, ping and list. The
        // rows that fired closed: their movies' changes re-render no row. The flags of matrix
        // changed since the start: recorded before the row is rendered again.
        XCTAssertEqual(
            kinds(r),
            [
                "drag", "release", "release", "tap", "open", "perform", "flags", "close", "close", "viewport",
                "configure", "options",
            ], "\(r.entries)")
        XCTAssertEqual(r.entries[0], RecordedEntry(t: 7, .drag(movie: "seven", dx: -30.5)))
        XCTAssertEqual(r.entries[1], RecordedEntry(t: 14, .release(movie: "seven", dx: -40, vx: -12)))
        XCTAssertEqual(r.entries[2].input, .release(movie: "seven", dx: nil, vx: nil))
        XCTAssertEqual(r.entries[3], RecordedEntry(t: 29, .tap(movie: "seven", action: "delete")))
        XCTAssertEqual(r.entries[4], RecordedEntry(t: 36, .open(movie: "matrix", edge: .leading)))
        XCTAssertEqual(
            r.entries[5], RecordedEntry(t: 43, .perform(movie: "matrix", action: "watched-with-friends")))
        XCTAssertEqual(
            r.entries[6],
            RecordedEntry(
                t: 50, .flags(MovieFlags(movie: "matrix", watched: false, watchedWithFriends: true))))
        XCTAssertEqual(r.entries[7], RecordedEntry(t: 50, .close(movie: "matrix")))
        XCTAssertEqual(r.entries[8], RecordedEntry(t: 58, .close(movie: nil)))
        XCTAssertEqual(r.entries[9], RecordedEntry(t: 65, .viewport(Viewport(width: 390, direction: .rtl))))
        // The layout as written: every action's tint is named.
        XCTAssertEqual(
            r.entries[10],
            RecordedEntry(t: 79, .configure(Layout(trailing: [ActionSpec(action: "pin", tint: "gray")]))))
        XCTAssertEqual(r.entries[11], RecordedEntry(t: 87, .options(.compact)))
        XCTAssertEqual(r.inputs, 11)
    }

    func testRefusedInputsAreRecordedButForbiddenOnesAndMissingMoviesAreNot() throws {
        let h = harness(mayWrite: false)
        _ = h.exchange(#"{"op":"record","on":true}"#)
        _ = h.exchange(#"{"op":"tap","movie":"seven","action":"delete"}"#)  // not revealed
        _ = h.exchange(#"{"op":"drag","movie":"nope","dx":-30}"#)  // not found
        _ = h.exchange(#"{"op":"perform","movie":"seven","action":"delete"}"#)  // forbidden
        _ = h.exchange(#"{"op":"open","movie":"seven","edge":"trailing"}"#)
        XCTAssertEqual(kinds(try recording(h)), ["tap", "open"])
    }

    func testTimersAnotherClientsChangesAndTheFlagsRowsRenderAreRecorded() throws {
        let h = harness()
        _ = h.exchange(#"{"op":"record","on":true}"#)
        _ = h.exchange(#"{"op":"drag","movie":"seven","dx":300}"#)
        _ = h.exchange(#"{"op":"release","movie":"seven"}"#)  // fires watched
        h.advance(microseconds: 600_000)
        _ = h.read()
        _ = h.exchange(#"{"op":"open","movie":"inception","edge":"trailing"}"#)
        // Two changes in one batch: the row re-renders twice, both times from the state after both.
        let driver = InMemoryStoreDriver(h.store)
        let first = driver.toggle("inception")
        let second = driver.toggle("inception")
        h.hear(.moviesChanged([first, second]))
        let removal = driver.remove("inception")
        h.hear(.moviesChanged([removal]))
        _ = h.read()
        let r = try recording(h)
        XCTAssertEqual(
            kinds(r),
            [
                "drag", "release", "flags", "movie-changed", "close-timer", "open", "movie-changed",
                "movie-changed",
                "movie-removed",
            ])
        XCTAssertEqual(
            r.entries[2].input, .flags(MovieFlags(movie: "seven", watched: true, watchedWithFriends: false)))
        XCTAssertEqual(r.entries[4].t, 600)
        XCTAssertEqual(r.entries[4].input, .closeTimer(movie: "seven"))
    }

    func testAConfirmationTimingOutIsRecorded() throws {
        let h = harness()
        _ = h.exchange(#"{"op":"configure","trailing":[{"action":"pin","confirm":true}]}"#)
        _ = h.exchange(#"{"op":"record","on":true}"#)
        _ = h.exchange(#"{"op":"perform","movie":"seven","action":"pin"}"#)
        h.advance(microseconds: 3_000_000)
        XCTAssertEqual(kinds(try recording(h)), ["perform", "confirm-timer"])
        XCTAssertEqual(try recording(h).entries[1].t, 3000)
    }

    func testRecordOffKeepsTheRecordingAndRecordOnStartsANewOne() throws {
        let h = harness()
        _ = h.exchange(#"{"op":"record","on":true}"#)
        _ = h.exchange(#"{"op":"drag","movie":"seven","dx":-30}"#)
        XCTAssertEqual(
            h.exchange(#"{"op":"record","on":false}"#),
            [#"{"ok":true,"record":{"on":false,"inputs":1,"cut":false},"closed":[]}"#])
        _ = h.exchange(#"{"op":"drag","movie":"seven","dx":-40}"#)
        XCTAssertEqual(kinds(try recording(h)), ["drag"])
        XCTAssertEqual(
            h.exchange(#"{"op":"record","on":true}"#),
            [#"{"ok":true,"record":{"on":true,"inputs":0,"cut":false},"closed":["seven"]}"#])
        XCTAssertEqual(kinds(try recording(h)), [])
    }

    func testTheCapCutsTheRecordingAndRecordingStops() throws {
        let h = harness()
        _ = h.exchange(#"{"op":"record","on":true}"#)
        for i in 0...Recording.cap {
            h.send(#"{"op":"drag","movie":"seven","dx":-\#(i % 300)}"#)
            _ = h.read()
        }
        XCTAssertFalse(h.session.isRecording)
        h.perform()
        XCTAssertEqual(h.logs.map(\.message), ["recording cut at its cap, stopped recording"])
        let r = try recording(h)
        XCTAssertTrue(r.cut)
        XCTAssertEqual(r.inputs, Recording.cap)
        XCTAssertEqual(r.entries.count, Recording.cap)
        XCTAssertEqual(
            h.exchange(#"{"op":"record","on":false}"#),
            [#"{"ok":true,"record":{"on":false,"inputs":10000,"cut":true},"closed":[]}"#])
    }

    /// The worst input for a recording's size: `configure` with the largest layout a request
    /// line of `--max-line`'s default carries (eight actions whose six free strings are 200
    /// control characters, six bytes each to write), alternating with another so that each
    /// changes the layout and is recorded. The recording is cut at `Recording.maxBytes` and
    /// stops, and the `recording` reply is at most that and its head, however many more come.
    func testConfiguresOfTheLargestLayoutsAreCutAtTheBytesCap() throws {
        let h = harness()
        _ = h.exchange(#"{"op":"record","on":true}"#)
        func configure(_ c: String) -> String {
            let text = String(repeating: "\\u000\(c)", count: 200)
            let fields = ["label", "icon", "tint", "activeLabel", "activeIcon", "confirmLabel"].map {
                #""\#($0)":"\#(text)""#
            }.joined(separator: ",")
            let actions = { (edge: String) in
                (0..<4).map { #"{"action":"\#(edge)\#($0)",\#(fields)}"# }.joined(separator: ",")
            }
            return #"{"op":"configure","leading":[\#(actions("l"))],"trailing":[\#(actions("t"))]}"#
        }
        let lines = [configure("1"), configure("2")]
        XCTAssertLessThanOrEqual(lines[0].utf8.count, 65_536, "within --max-line's default")
        var sent = 0
        while h.session.isRecording && sent < 100 {
            let reply = h.exchange(lines[sent % 2])[0]
            guard h.json(reply)["ok"] as? Bool == true else { return XCTFail(String(reply.prefix(300))) }
            sent += 1
        }
        for _ in 0..<10 { _ = h.exchange(lines[sent % 2]) }
        let r = try recording(h)
        XCTAssertTrue(r.cut)
        XCTAssertEqual(r.inputs, sent - 1, "every configure until the one that did not fit")
        let size = r.bytes / r.inputs
        XCTAssertEqual(r.bytes, r.inputs * size, "entries of one size")
        XCTAssertGreaterThan(size, 8 * 6 * 1200, "each writes its layout whole")
        XCTAssertEqual(r.inputs, Recording.maxBytes / size, "cut only when the next would not fit")
        XCTAssertLessThanOrEqual(r.bytes, Recording.maxBytes)
        var head = JSONWriter()
        Encode.recording(&head, Recording(layout: r.layout, viewport: r.viewport, rows: r.rows, movies: []))
        let reply = try XCTUnwrap(h.exchange(#"{"op":"recording"}"#).last)
        XCTAssertLessThanOrEqual(reply.utf8.count, head.bytes.count + Recording.maxBytes + 40)
        h.perform()
        XCTAssertEqual(h.logs.map(\.message), ["recording cut at its cap, stopped recording"])
        XCTAssertEqual(
            h.logs.first?.fields.map(\.value),
            ["7", "10000", "1048576", "\(r.inputs)", "\(r.bytes)", "\(h.session.lastRecording?.held ?? -1)"])
    }

    /// The property on one connection: the rows it received, byte for byte, are the replay's.
    func testAReplayGivesTheRowsTheConnectionReceived() throws {
        let h = harness()
        _ = h.exchange(#"{"op":"viewport","direction":"rtl"}"#)
        _ = h.exchange(#"{"op":"record","on":true}"#)
        var lines: [String] = []
        for line in [
            #"{"op":"drag","movie":"seven","dx":-30}"#, #"{"op":"drag","movie":"seven","dx":-90}"#,
            #"{"op":"release","movie":"seven","vx":-800}"#, #"{"op":"drag","movie":"matrix","dx":120}"#,
            #"{"op":"release","movie":"matrix","vx":2000}"#,
            #"{"op":"tap","movie":"matrix","action":"nope"}"#,
            #"{"op":"options","rows":"compact"}"#, #"{"op":"open","movie":"inception","edge":"leading"}"#,
            #"{"op":"tap","movie":"inception","action":"watched-with-friends"}"#,
            #"{"op":"configure","leading":[{"action":"pin","confirm":true}],"trailing":[{"action":"delete"}]}"#,
            #"{"op":"perform","movie":"seven","action":"pin"}"#, #"{"op":"drag","movie":"seven","dx":-500}"#,
            #"{"op":"release","movie":"seven"}"#,
        ] {
            h.now += 16_000
            lines += h.exchange(line)
            h.advance(microseconds: 200_000)
            lines += h.read()
        }
        h.advance(microseconds: 4_000_000)
        lines += h.read()
        let live = lines.compactMap { line -> String? in
            let bytes = Array(line.utf8)
            let members = bytes.withUnsafeBytes { try? JSONParser.parseObjectMembers($0) } ?? []
            return members.first { $0.key == "row" }.map { String(decoding: bytes[$0.range], as: UTF8.self) }
        }
        let replayed = Replay.run(try recording(h)).compactMap { step -> String? in
            guard let row = step.row else { return nil }
            var out = JSONWriter()
            Encode.row(&out, row, form: step.form)
            return String(decoding: out.bytes, as: UTF8.self)
        }
        XCTAssertGreaterThanOrEqual(live.count, 12)
        XCTAssertEqual(replayed, live)
    }
}

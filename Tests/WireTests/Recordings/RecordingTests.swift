// Issue 18 on the wire: the ops record, recording, share and peers decode from the op table;
// a Recording is written and read back as the same value (format 1), bad recordings are refused
// saying what is wrong, and the replay's lines and the peer-row event are exactly as documented.
import JSONCodec
import Movies
import SwipeEngine
import XCTest

@testable import Wire

final class RecordingTests: XCTestCase {
    private func decode(_ line: String) -> Result<Request, WireError> {
        var text = line
        return text.withUTF8 { RequestDecoder.decodeFull(UnsafeRawBufferPointer($0)).result }
    }

    private func message(_ line: String) -> String? {
        if case .failure(let error) = decode(line) { return error.message }
        return nil
    }

    func testTheOpsDecodeAndTheirArgumentsAreChecked() {
        XCTAssertEqual(try decode(#"{"op":"record","on":true}"#).get(), .record(on: true))
        XCTAssertEqual(try decode(#"{"op":"record","on":false}"#).get(), .record(on: false))
        XCTAssertEqual(try decode(#"{"op":"recording"}"#).get(), .recording)
        XCTAssertEqual(try decode(#"{"op":"share","on":true}"#).get(), .share(on: true))
        XCTAssertEqual(try decode(#"{"op":"peers","watch":false}"#).get(), .peers(watch: false))
        XCTAssertEqual(message(#"{"op":"record"}"#), #"op "record" needs "on" (boolean)"#)
        XCTAssertEqual(message(#"{"op":"share","on":1}"#), #""on" must be true or false, not a number"#)
        XCTAssertEqual(message(#"{"op":"peers"}"#), #"op "peers" needs "watch" (boolean)"#)
        XCTAssertEqual(
            message(#"{"op":"recording","all":true}"#),
            #"unknown argument "all" for op "recording"; it takes none"#)
        for name in ["record", "recording", "share", "peers"] {
            XCTAssertEqual(Ops.named(name)?.scope, .swipe)
            XCTAssertEqual(Ops.named(name)?.mutates, false)
        }
    }

    static let layout = Layout(
        leading: [ActionSpec(action: "pin", label: "Pin", confirm: true, confirmLabel: "Sure?")],
        trailing: [ActionSpec(action: "delete", label: "Delete", tint: "red", role: .destructive)],
        allowsFullSwipeLeading: false, buttonWidth: 80.5)

    static func sample() -> Recording {
        var r = Recording(
            layout: layout, viewport: Viewport(width: 500, direction: .rtl), rows: .compact,
            movies: [MovieFlags(movie: "seven", watched: true, watchedWithFriends: false)],
            startedAt: 1_000_000)
        let inputs: [RecordedInput] = [
            .drag(movie: "seven", dx: -0.1), .release(movie: "seven", dx: nil, vx: -1e3),
            .release(movie: "seven", dx: 12.5, vx: nil), .tap(movie: "seven", action: "delete"),
            .open(movie: "é", edge: .leading), .perform(movie: "seven", action: "pin"), .close(movie: nil),
            .close(movie: "seven"), .closeTimer(movie: "seven"), .confirmTimer(movie: "seven"),
            .movieChanged(movie: "seven"), .movieRemoved(movie: "seven"),
            .flags(MovieFlags(movie: "seven", watched: false, watchedWithFriends: true)),
            .viewport(Viewport(width: 390, direction: .ltr)), .configure(MovieLayout.standard),
            .options(.full),
        ]
        for (i, input) in inputs.enumerated() { r.append(input, now: 1_000_000 + UInt64(i) * 1_500) }
        return r
    }

    func testARecordingReadsBackAsTheSameValue() throws {
        let r = Self.sample()
        var out = JSONWriter()
        Encode.recording(&out, id: Array("4".utf8), r)
        let reply = try JSONParser.parse(out.bytes)
        var back = try Recording(json: reply)
        back.startedAt = r.startedAt
        XCTAssertEqual(back.entries, r.entries)
        XCTAssertEqual(back.inputs, 15)
        XCTAssertEqual(back.layout.leading.map(\.action), ["pin"])
        XCTAssertEqual(back.layout.leading[0].confirmLabel, "Sure?")
        XCTAssertEqual(back.layout.allowsFullSwipeLeading, false)
        XCTAssertEqual(back.layout.buttonWidth, 80.5)
        XCTAssertEqual(back.viewport, r.viewport)
        XCTAssertEqual(back.rows, .compact)
        XCTAssertEqual(back.movies, r.movies)
        XCTAssertEqual(r.entries.map(\.t), (0..<16).map { UInt64($0) * 3 / 2 })
        let text = String(decoding: out.bytes, as: UTF8.self)
        XCTAssertTrue(
            text.hasPrefix(
                #"{"id":4,"ok":true,"recording":{"recording":2,"cap":10000,"inputs":15,"cut":false,"layout":{"leading":[{"action":"pin","label":"Pin","confirmLabel":"Sure?","tint":"gray","confirm":true}]"#
            ), text)
        XCTAssertTrue(
            text.contains(
                #""entries":[{"t":0,"kind":"drag","movie":"seven","dx":-0.1},{"t":1,"kind":"release","movie":"seven","vx":-1000},{"t":3,"kind":"release","movie":"seven","dx":12.5}"#
            ), text)
        XCTAssertTrue(
            text.contains(
                #"{"t":18,"kind":"flags","movie":"seven","watched":false,"watchedWithFriends":true}"#), text)
    }

    func testTheCapCutsAndFlagsCountNothing() {
        var r = Recording(layout: Layout(), viewport: Viewport(), rows: .full, movies: [])
        for i in 0..<Recording.cap {
            XCTAssertTrue(r.append(.drag(movie: "m", dx: Double(i)), now: 0))
            r.observe(MovieFlags(movie: "m", watched: i % 8 < 4, watchedWithFriends: false), now: 0)
        }
        XCTAssertEqual(r.inputs, Recording.cap)
        XCTAssertFalse(r.cut)
        XCTAssertFalse(r.append(.close(movie: nil), now: 0))
        XCTAssertTrue(r.cut)
        XCTAssertFalse(
            r.append(.flags(MovieFlags(movie: "m", watched: true, watchedWithFriends: true)), now: 0))
        XCTAssertEqual(r.inputs, Recording.cap)
        XCTAssertEqual(r.entries.count, Recording.cap + Recording.cap / 4)
    }

    /// The worst entries: a movie id of 1,024 bytes that each take six to write (`\u0001`).
    /// The recording is cut at `maxBytes` of entries, whatever their number, and `bytes` is what
    /// the entries take in the Recording object.
    func testTheBytesCapCutsWhateverTheEntriesAre() throws {
        /// What the entries take in the Recording object: between `"entries":[` and `]}`.
        func encodedEntries(_ r: Recording) -> Int {
            var out = JSONWriter()
            Encode.recording(&out, r)
            let text = String(decoding: out.bytes, as: UTF8.self)
            return text.utf8.count
                - text.utf8.distance(from: text.startIndex, to: text.range(of: #""entries":["#)!.upperBound)
                - 2
        }
        let empty = Recording(layout: MovieLayout.standard, viewport: Viewport(), rows: .full, movies: [])
        var r = empty
        let id = String(repeating: "\u{1}", count: 1024)
        var taken = 0
        // Bounded loops: a broken cap fails the test rather than filling memory.
        while taken < 1_000, r.append(.drag(movie: id, dx: -Double(taken) - 0.5), now: UInt64(taken) * 16_000)
        {
            taken += 1
        }
        XCTAssertTrue(r.cut)
        XCTAssertEqual(r.inputs, taken)
        XCTAssertEqual(taken, Recording.maxBytes / (6 * 1024 + 50), "about 170 of 6 KB each")
        XCTAssertLessThanOrEqual(r.bytes, Recording.maxBytes)
        XCTAssertGreaterThan(
            r.bytes, Recording.maxBytes - 6 * 1024 - 60, "cut only when the next would not fit")
        XCTAssertEqual(encodedEntries(r), r.bytes - 1, "entries and their commas, less one")
        XCTAssertEqual(encodedEntries(empty), 0)
        XCTAssertFalse(r.append(.close(movie: nil), now: 0), "cut: nothing more, however small")
        // A flags entry that would go past the cap cuts the recording too.
        var flags = empty
        var n = 0
        while n < 1_000,
            flags.append(
                .flags(MovieFlags(movie: id + "\(n)", watched: true, watchedWithFriends: false)), now: 0)
        {
            n += 1
        }
        XCTAssertTrue(flags.cut)
        XCTAssertEqual(flags.inputs, 0)
        XCTAssertLessThanOrEqual(flags.bytes, Recording.maxBytes)
    }

    /// Layouts of plain text take more in memory than written (each string a heap block with a
    /// 32-byte header): 1 MiB of them as JSON held 1.4 MB. What the entries hold in memory is
    /// capped too, so a recording of them is cut before its JSON reaches the cap.
    func testWhatTheEntriesHoldInMemoryIsCappedToo() {
        /// 16 actions of 7 strings of 200 bytes, each string made anew (as each request decodes
        /// its own): about 24 KB as JSON.
        func layout(_ n: Int) -> Layout {
            func text(_ field: Int) -> String {
                String(repeating: "\(field)", count: 190) + String(repeating: "-", count: 10 - "\(n)".count)
                    + "\(n)"
            }
            func action(_ name: String) -> ActionSpec {
                ActionSpec(
                    action: String(repeating: name, count: 200 / name.count), label: text(1), icon: text(2),
                    tint: text(3), activeLabel: text(4), activeIcon: text(5), confirmLabel: text(6))
            }
            return Layout(
                leading: (0..<8).map { action("l\($0)") }, trailing: (0..<8).map { action("t\($0)") })
        }
        var r = Recording(layout: Layout(), viewport: Viewport(), rows: .full, movies: [])
        var taken = 0
        while taken < 100, r.append(.configure(layout(taken)), now: 0) { taken += 1 }
        XCTAssertTrue(r.cut)
        XCTAssertEqual(r.inputs, taken)
        XCTAssertLessThanOrEqual(r.held, Recording.maxBytes)
        XCTAssertLessThan(r.bytes, Recording.maxBytes - 200 * 1024, "cut by what it holds, not by its JSON")
        // What the strings alone take, each its bytes, a NUL and a 32-byte header: within the cap.
        let strings = taken * 16 * 7 * (200 + 1 + 32)
        XCTAssertLessThanOrEqual(strings, Recording.maxBytes)
        XCTAssertGreaterThan(r.held, strings, "the arrays and the allocator's rounding on top")
        XCTAssertGreaterThan(
            r.held, Recording.maxBytes - 2 * r.held / taken, "cut only when the next would not fit")
    }

    func testObserveRecordsOnlyChanges() {
        var r = Recording(
            layout: Layout(), viewport: Viewport(), rows: .full,
            movies: [MovieFlags(movie: "a", watched: true, watchedWithFriends: false)])
        r.observe(MovieFlags(movie: "a", watched: true, watchedWithFriends: false), now: 0)
        // A movie not seen before and not flagged renders as a movie the recording does not know.
        r.observe(MovieFlags(movie: "b", watched: false, watchedWithFriends: false), now: 0)
        XCTAssertEqual(r.entries, [])
        r.observe(MovieFlags(movie: "a", watched: false, watchedWithFriends: false), now: 2_000)
        r.observe(MovieFlags(movie: "a", watched: false, watchedWithFriends: false), now: 3_000)
        XCTAssertEqual(
            r.entries,
            [RecordedEntry(t: 2, .flags(MovieFlags(movie: "a", watched: false, watchedWithFriends: false)))])
    }

    func testABadRecordingIsRefusedSayingWhatIsWrong() throws {
        func refusal(_ text: String) -> String? {
            do {
                _ = try Recording(json: try JSONParser.parse(Array(text.utf8)))
                return nil
            } catch let error as RecordingError {
                return error.message
            } catch {
                return "\(error)"
            }
        }
        let head =
            #"{"recording":1,"layout":{},"viewport":{"width":390,"direction":"ltr"},"rows":"full","movies":[],"#
        XCTAssertNil(refusal(head + #""entries":[]}"#))
        XCTAssertEqual(refusal("[]"), "a recording is a JSON object")
        XCTAssertEqual(
            refusal(#"{"recording":3}"#), #"not a recording of format 1 or 2 (its "recording" is 3)"#)
        XCTAssertEqual(
            refusal(head + #""entries":[{"t":-1,"kind":"drag"}]}"#),
            #"entries[0] must be an object with "t", a whole number of milliseconds ≥ 0"#)
        XCTAssertEqual(
            refusal(head + #""entries":[{"t":1,"kind":"drag","movie":"m"}]}"#),
            #"entries[0] (drag) needs "dx""#)
        XCTAssertEqual(
            refusal(head + #""entries":[{"t":1,"kind":"wave"}]}"#), #"entries[0] has an unknown kind "wave""#)
        XCTAssertEqual(
            refusal(head + #""entries":[{"t":1,"kind":"configure","layout":{"buttonWidth":1}}]}"#),
            #"entries[0].layout: "buttonWidth" must be from 20 to 400"#)
        XCTAssertEqual(
            refusal(
                head.replacingOccurrences(of: #""rows":"full""#, with: #""rows":"tiny""#) + #""entries":[]}"#),
            #""rows" must be "full" or "compact""#)
    }

    func testReplayLinesAndThePeerRowEventAreAsDocumented() {
        var r = Recording(layout: MovieLayout.standard, viewport: Viewport(), rows: .compact, movies: [])
        for input: RecordedInput in [
            .drag(movie: "seven", dx: -300), .release(movie: "seven", dx: nil, vx: nil),
            .closeTimer(movie: "seven"),
            .tap(movie: "seven", action: "delete"), .open(movie: "seven", edge: .leading),
            .flags(MovieFlags(movie: "seven", watched: true, watchedWithFriends: false)),
            .movieChanged(movie: "seven"),
            .viewport(Viewport(width: 390, direction: .rtl)),
        ] { r.append(input, now: 0) }
        let lines = Replay.run(r).map { step -> String in
            var out = JSONWriter()
            Encode.replayStep(&out, step)
            return String(decoding: out.bytes, as: UTF8.self)
        }
        XCTAssertEqual(lines.count, 7)
        XCTAssertTrue(
            lines[1].hasPrefix(
                #"{"t":0,"kind":"release","row":{"movie":"seven","offset":-390,"phase":"fired""#), lines[1])
        XCTAssertTrue(lines[1].hasSuffix(#"]},"fired":{"action":"delete","bound":true}}"# + "\n"), lines[1])
        XCTAssertTrue(
            lines[2].hasPrefix(
                #"{"t":0,"kind":"close-timer","event":"row","row":{"movie":"seven","offset":0,"phase":"closed""#
            ), lines[2])
        XCTAssertEqual(
            lines[3],
            #"{"t":0,"kind":"tap","refused":{"code":"not-revealed","message":"the \"delete\" button is not showing on row \"seven\"; swipe to reveal it first"}}"#
                + "\n")
        XCTAssertTrue(
            lines[5].contains(#""activeIcon""#) == false && lines[5].contains(#""icon":"eye.slash""#),
            lines[5])
        XCTAssertEqual(lines[6], #"{"t":0,"kind":"viewport","closed":["seven"]}"# + "\n")
        var out = JSONWriter()
        Encode.peerRow(
            &out, client: 3, viewport: Viewport(width: 500, direction: .rtl),
            row: SwipeList().render("m", flags: []), form: .compact)
        XCTAssertEqual(
            String(decoding: out.bytes, as: UTF8.self),
            #"{"event":"peer-row","client":3,"viewport":{"width":500,"direction":"rtl"},"row":{"movie":"m","offset":0,"phase":"closed","edge":null,"fullSwipe":false,"buttons":[]}}"#
                + "\n")
    }
}

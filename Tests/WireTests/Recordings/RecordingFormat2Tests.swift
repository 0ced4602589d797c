// Issue 47 on the wire: recording format 2 (a drag's dy, peeks, crossings, full-swipe styles)
// written and read back, format 1 still read (and held to what it could hold), and replays of
// both giving what the connection got: the rows, and the crossings and scrolls of its replies.
import JSONCodec
import Movies
import SwipeEngine
import XCTest

@testable import Wire

final class RecordingFormat2Tests: XCTestCase {
    static let layout: Layout = {
        var layout = MovieLayout.standard
        layout.fullSwipeStyleLeading = .close
        layout.fullSwipeStyleTrailing = .dismiss
        return layout
    }()

    static func sample() -> Recording {
        var r = Recording(
            layout: layout, viewport: Viewport(), rows: .compact, movies: [], startedAt: 0, crossings: true)
        let inputs: [RecordedInput] = [
            .drag(movie: "seven", dx: -60, dy: 2.5), .drag(movie: "seven", dx: -250),
            .release(movie: "seven", dx: nil, vx: nil), .peek(movie: "matrix", edge: nil),
            .closeTimer(movie: "matrix"), .peek(movie: "matrix", edge: .leading), .crossings(false),
            .drag(movie: "matrix", dx: 100, dy: -300), .release(movie: "matrix", dx: nil, vx: nil),
        ]
        for (i, input) in inputs.enumerated() { r.append(input, now: UInt64(i) * 1_000) }
        return r
    }

    func text(_ r: Recording) -> String {
        var out = JSONWriter()
        Encode.recording(&out, r)
        return String(decoding: out.bytes, as: UTF8.self)
    }

    func testFormat2IsWrittenAndReadBackAsTheSameValue() throws {
        let r = Self.sample()
        let written = text(r)
        XCTAssertTrue(
            written.hasPrefix(
                #"{"recording":2,"cap":10000,"inputs":9,"cut":false,"layout":{"leading":[{"action":"watched","#
            ),
            written)
        XCTAssertTrue(
            written.contains(
                #""buttonWidth":70,"fullSwipeStyleLeading":"close","fullSwipeStyleTrailing":"dismiss"},"viewport":{"width":390,"direction":"ltr"},"rows":"compact","crossings":true,"movies":[]"#
            ), written)
        XCTAssertTrue(
            written.contains(
                #"{"t":0,"kind":"drag","movie":"seven","dx":-60,"dy":2.5},{"t":1,"kind":"drag","movie":"seven","dx":-250}"#
            ), written)
        XCTAssertTrue(
            written.contains(
                #"{"t":3,"kind":"peek","movie":"matrix"},{"t":4,"kind":"close-timer","movie":"matrix"},{"t":5,"kind":"peek","movie":"matrix","edge":"leading"},{"t":6,"kind":"crossings","on":false}"#
            ), written)
        var back = try Recording(json: try JSONParser.parse(Array(written.utf8)))
        back.startedAt = r.startedAt
        XCTAssertEqual(back.version, 2)
        XCTAssertEqual(back.entries, r.entries)
        XCTAssertEqual(back.layout, r.layout)
        XCTAssertTrue(back.crossings)
        XCTAssertEqual(text(back), written)
    }

    /// The replay gives each reply's crossings (while the connection asked for them) and scroll.
    func testTheReplayGivesTheCrossingsAndTheScrolls() {
        let steps = Replay.run(Self.sample())
        var out: [String] = []
        for step in steps {
            var line = JSONWriter()
            Encode.replayStep(&line, step)
            out.append(String(decoding: line.bytes.dropLast(), as: UTF8.self))
        }
        XCTAssertEqual(
            steps.map(\.kind), ["drag", "drag", "release", "peek", "close-timer", "peek", "drag", "release"])
        XCTAssertTrue(out[0].hasSuffix(#","crossed":[{"threshold":"open","direction":"out"}]}"#), out[0])
        XCTAssertTrue(out[1].hasSuffix(#","crossed":[{"threshold":"full","direction":"out"}]}"#), out[1])
        XCTAssertTrue(out[2].contains(#""phase":"dismissed""#), out[2])
        XCTAssertTrue(out[2].hasSuffix(#","fired":{"action":"delete","bound":true}}"#), out[2])
        XCTAssertTrue(out[3].contains(#""movie":"matrix","offset":-35,"phase":"peeking""#), out[3])
        XCTAssertTrue(
            out[4].contains(#""event":"row","row":{"movie":"matrix","offset":0,"phase":"closed""#), out[4])
        XCTAssertTrue(out[5].contains(#""offset":70,"phase":"peeking""#), out[5])
        // Crossings off now; a mostly vertical touch on the peeking row scrolls (the row closes).
        XCTAssertTrue(
            out[6].hasPrefix(#"{"t":7,"kind":"drag","row":{"movie":"matrix","offset":0,"phase":"closed""#),
            out[6])
        XCTAssertTrue(out[6].hasSuffix(#""buttons":[]},"scroll":true}"#), out[6])
        XCTAssertTrue(out[7].hasSuffix(#""buttons":[]},"scroll":true}"#), out[7])
        XCTAssertEqual(out.count, 8)
    }

    func testFormat1IsStillReadAndCannotHoldWhatFormat2Added() throws {
        func read(_ text: String) -> Result<Recording, RecordingError> {
            Result { () throws(RecordingError) in try Recording(json: try! JSONParser.parse(Array(text.utf8)))
            }
        }
        let head =
            #"{"recording":1,"layout":{},"viewport":{"width":390,"direction":"ltr"},"rows":"full","movies":[],"#
        let one = try read(
            head.replacingOccurrences(
                of: #""layout":{}"#, with: #""layout":{"trailing":[{"action":"delete"}]}"#)
                + #""entries":[{"t":0,"kind":"drag","movie":"seven","dx":-300},{"t":1,"kind":"release","movie":"seven"}]}"#
        ).get()
        XCTAssertEqual(one.version, 1)
        XCTAssertFalse(one.crossings)
        let steps = Replay.run(one)
        XCTAssertEqual(steps.map(\.crossed), [Crossings(), Crossings()])
        XCTAssertEqual(steps.last?.note, .fired(action: "delete", bound: true))
        func refusal(_ text: String) -> String? {
            if case .failure(let error) = read(text) { return error.message }
            return nil
        }
        XCTAssertEqual(
            refusal(head + #""entries":[{"t":0,"kind":"drag","movie":"seven","dx":-3,"dy":40}]}"#),
            #"entries[0]: "dy" needs format 2"#)
        XCTAssertEqual(
            refusal(head + #""entries":[{"t":0,"kind":"peek","movie":"seven"}]}"#),
            "entries[0]: a peek needs format 2")
        XCTAssertEqual(
            refusal(head + #""entries":[{"t":0,"kind":"crossings","on":true}]}"#),
            #"entries[0]: "crossings" needs format 2"#)
        XCTAssertEqual(
            refusal(
                head.replacingOccurrences(of: #""rows":"full""#, with: #""rows":"full","crossings":true"#)
                    + #""entries":[]}"#),
            #""crossings" needs format 2"#)
        XCTAssertEqual(
            refusal(
                head.replacingOccurrences(
                    of: #""layout":{}"#, with: #""layout":{"fullSwipeStyleLeading":"close"}"#)
                    + #""entries":[]}"#),
            "layout.fullSwipeStyleLeading needs format 2")
        let two = head.replacingOccurrences(of: #""recording":1"#, with: #""recording":2"#)
        XCTAssertEqual(
            refusal(two + #""entries":[{"t":0,"kind":"peek","movie":"seven","edge":"top"}]}"#),
            #"entries[0].edge must be "leading" or "trailing""#)
        XCTAssertEqual(
            refusal(two + #""entries":[{"t":0,"kind":"crossings"}]}"#),
            #"entries[0] (crossings) needs "on" (true or false)"#)
        XCTAssertEqual(
            refusal(
                two.replacingOccurrences(
                    of: #""layout":{}"#, with: #""layout":{"fullSwipeStyleLeading":"fade"}"#)
                    + #""entries":[]}"#),
            #"layout: "fullSwipeStyleLeading" must be "fill" or "close" or "dismiss", not "fade""#)
        XCTAssertNil(refusal(two + #""entries":[]}"#))
    }
}

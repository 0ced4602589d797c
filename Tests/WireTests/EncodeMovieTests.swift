import JSONCodec
import Movies
import TestSupport
import XCTest

@testable import Wire

/// The one-reservation lane of a movie and of a mutation reply writes byte for byte what the
/// part-at-a-time encoder writes, for movies whose strings need escapes (which take that lane)
/// or not, whatever the flags, the numbers and the request's id.
final class EncodeMovieTests: XCTestCase {
    private let strings = [
        "", "godfather", "The Silence of the Lambs", "Amélie", "日本の映画", "a\"quote", "back\\slash",
        "tab\there", "nul\u{0}", "\u{1f}", "\u{7f}del", "line\u{2028}sep", "exactly8", "sixteen_bytes_ok",
        "seventeen bytes\"!", String(repeating: "x", count: 1024), String(repeating: "é", count: 200) + "\n",
    ]

    private func movies() -> [Movie] {
        var rng = SplitMix64(seed: 29)
        var out: [Movie] = []
        for id in strings {
            for _ in 0..<6 {
                out.append(
                    Movie(
                        id: id, title: strings[Int(rng.next() % UInt64(strings.count))],
                        image: strings[Int(rng.next() % UInt64(strings.count))],
                        watched: rng.next() % 2 == 0, watchedWithFriends: rng.next() % 2 == 0,
                        version: [0, 1, 9, 10, 12_345, UInt64.max][Int(rng.next() % 6)]))
            }
        }
        return out
    }

    func testMovieIsThePlainEncoding() {
        for movie in movies() {
            var fast = JSONWriter()
            fast.bytes = Array("[1,".utf8)  // after other bytes, as in a list or an event
            Encode.movie(&fast, movie)
            var plain = JSONWriter()
            plain.bytes = Array("[1,".utf8)
            Encode.plainMovie(&plain, movie)
            XCTAssertEqual(fast.bytes, plain.bytes, String(decoding: plain.bytes, as: UTF8.self))
        }
    }

    func testMutationIsThePlainEncoding() throws {
        for movie in movies() {
            for id in [nil, Array("7".utf8), Array(#""req-\"x\"""#.utf8)] {
                for (seq, undoes) in [(UInt64(1), UInt64?.none), (UInt64.max, UInt64.max), (42, 7)] {
                    var fast = JSONWriter()
                    Encode.mutation(&fast, id: id, seq: seq, movie: movie, undoes: undoes)
                    var plain = JSONWriter()
                    Encode.plainMutation(&plain, id: id, seq: seq, movie: movie, undoes: undoes)
                    XCTAssertEqual(fast.bytes, plain.bytes)
                    // Each is one line of valid JSON.
                    XCTAssertEqual(fast.bytes.last, 0x0A)
                    XCTAssertEqual(fast.bytes.filter { $0 == 0x0A }.count, 1)
                    _ = try JSONParser.parse(Array(fast.bytes.dropLast()))
                }
            }
        }
    }

    /// A movie whose title or image changes (or that is removed and restored) is written as it
    /// now is: nothing of an earlier encoding is kept.
    func testChangedMoviesAreWrittenAsTheyAre() {
        var state = MovieState()
        for e in MovieState.seedCatalogue { state.apply(e, seq: state.lastSeq + 1) }
        state.apply(.added(id: "a_quote", title: "A \"Quote\"", image: "q\\img"), seq: state.lastSeq + 1)
        let events: [MovieEvent] = [
            .watchedToggled(id: "matrix"), .removed(id: "matrix"), .restored(id: "matrix", to: nil),
            .watchedWithFriendsToggled(id: "a_quote"), .removed(id: "a_quote"),
            .restored(id: "a_quote", to: nil),
        ]
        for event in events {
            let seq = state.lastSeq + 1
            guard let movie = state.apply(event, seq: seq) else { return XCTFail("\(event) did not apply") }
            var fast = JSONWriter()
            Encode.mutation(&fast, id: nil, seq: seq, movie: movie)
            var plain = JSONWriter()
            Encode.plainMutation(&plain, id: nil, seq: seq, movie: movie, undoes: nil)
            XCTAssertEqual(fast.bytes, plain.bytes, "\(event)")
        }
    }
}

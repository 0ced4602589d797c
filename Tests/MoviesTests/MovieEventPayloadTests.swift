import Movies
import XCTest

/// The movie's state after an event, stored with the event so that history needs no fold.
final class MovieEventPayloadTests: XCTestCase {
    func testStateAfterRoundTripsForEveryKind() throws {
        let movie = Movie(
            id: "matrix", title: "The Matrix", image: "matrix", watched: true,
            watchedWithFriends: false, version: 11)
        let events: [MovieEvent] = [
            .watchedToggled(id: "matrix"), .watchedWithFriendsToggled(id: "matrix"), .removed(id: "matrix"),
        ]
        for event in events {
            let payload = event.payload(after: movie)
            XCTAssertFalse(payload.isEmpty)
            // The fold still reads it as the same event…
            XCTAssertEqual(try MovieEvent(stream: "matrix", kind: event.kind, payload: payload), event)
            // …and history reads the movie from it, at the event's seq.
            XCTAssertEqual(
                try MovieEvent.movieAfter(stream: "matrix", kind: event.kind, payload: payload, seq: 11),
                movie)
        }
    }

    /// The bytes on disk: title and image each as a 4-byte big-endian length and UTF-8, then the
    /// two flags. Pinned: logs written by earlier builds must still read the same.
    func testStateAfterBytesArePinned() {
        let movie = Movie(
            id: "amelie", title: "Amélie", image: "", watched: false, watchedWithFriends: true, version: 5)
        XCTAssertEqual(
            MovieEvent.watchedToggled(id: "amelie").payload(after: movie),
            [0, 0, 0, 7] + Array("Amélie".utf8) + [0, 0, 0, 0] + [0, 1])
        let long = Movie(
            id: "x", title: String(repeating: "t", count: 300), image: "img", watched: true,
            watchedWithFriends: false, version: 9)
        XCTAssertEqual(
            MovieEvent.removed(id: "x").payload(after: long),
            [0, 0, 1, 44] + Array(repeating: UInt8(ascii: "t"), count: 300) + [0, 0, 0, 3] + Array("img".utf8)
                + [1, 0])
    }

    func testAddedCarriesItsMovieAndOldEmptyPayloadsCarryNone() throws {
        let added = MovieEvent.added(id: "alien", title: "Alien", image: "")
        XCTAssertEqual(
            try MovieEvent.movieAfter(stream: "alien", kind: added.kind, payload: added.payload, seq: 3),
            Movie(id: "alien", title: "Alien", image: "", version: 3))
        XCTAssertNil(try MovieEvent.movieAfter(stream: "alien", kind: "watched-toggled", payload: [], seq: 4))
    }

    func testGarbageStateIsRefused() {
        var payload = MovieEvent.watchedToggled(id: "x").payload(
            after: Movie(id: "x", title: "X", image: "", version: 1))
        payload[payload.count - 1] = 7  // a flag that is neither 0 nor 1
        XCTAssertThrowsError(try MovieEvent(stream: "x", kind: "watched-toggled", payload: payload))
        XCTAssertThrowsError(try MovieEvent(stream: "x", kind: "removed", payload: [0, 0, 0, 9]))
    }
}

import XCTest

@testable import Movies

final class MovieStateTests: XCTestCase {
    private func seeded() -> MovieState {
        var s = MovieState()
        for (i, e) in MovieState.seedCatalogue.enumerated() { s.apply(e, seq: UInt64(i + 1)) }
        return s
    }

    private func expectError(
        _ s: MovieState, _ c: MovieCommand, _ want: CommandError,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        do {
            let e = try s.decide(c)
            XCTFail("decided \(e), wanted \(want)", file: file, line: line)
        } catch {
            XCTAssertEqual(error.code, want.code, "\(error)", file: file, line: line)
            if !want.message.isEmpty { XCTAssertEqual(error, want, file: file, line: line) }
        }
    }

    func testSeedCatalogueOrderAndIDs() {
        let s = seeded()
        XCTAssertEqual(
            s.movies.map(\.id),
            [
                "godfather", "dark_knight", "pulp_fiction", "forrest_gump", "inception",
                "matrix", "seven", "silence_of_lambs", "saving_private_ryan", "the_green_mile",
            ])
        XCTAssertEqual(s.movies.map(\.title).first, "The Godfather")
        XCTAssertEqual(s.movie("seven"), Movie(id: "seven", title: "Se7en", image: "seven", version: 7))
        XCTAssertEqual(s.lastSeq, 10)
    }

    func testFoldEveryEvent() {
        var s = seeded()
        XCTAssertEqual(s.apply(.watchedToggled(id: "matrix"), seq: 11)?.watched, true)
        XCTAssertEqual(s.apply(.watchedWithFriendsToggled(id: "matrix"), seq: 12)?.watchedWithFriends, true)
        XCTAssertEqual(s.apply(.watchedToggled(id: "matrix"), seq: 13)?.watched, false)
        XCTAssertEqual(
            s.movie("matrix"),
            Movie(
                id: "matrix", title: "The Matrix", image: "matrix",
                watched: false, watchedWithFriends: true, version: 13))
        let removed = s.apply(.removed(id: "inception"), seq: 14)
        XCTAssertEqual(removed?.version, 14)
        XCTAssertNil(s.movie("inception"))
        XCTAssertEqual(s.movies.count, 9)
        XCTAssertEqual(s.movie("matrix"), s.movies[4])  // index rebuilt after removal
        XCTAssertEqual(s.apply(.added(id: "alien", title: "Alien", image: ""), seq: 15)?.version, 15)
        XCTAssertEqual(s.movies.last?.id, "alien")
        // Events that do not fit change nothing but lastSeq.
        let before = s.movies
        XCTAssertNil(s.apply(.watchedToggled(id: "nope"), seq: 16))
        XCTAssertNil(s.apply(.added(id: "alien", title: "Other", image: ""), seq: 17))
        XCTAssertEqual(s.movies, before)
        XCTAssertEqual(s.lastSeq, 17)
    }

    func testDecideEveryCommand() throws {
        let s = seeded()
        XCTAssertEqual(
            try s.decide(MovieCommand(.toggleWatched(movie: "matrix"))), .watchedToggled(id: "matrix"))
        XCTAssertEqual(
            try s.decide(MovieCommand(.toggleWatchedWithFriends(movie: "seven"), expect: 7)),
            .watchedWithFriendsToggled(id: "seven"))
        XCTAssertEqual(
            try s.decide(MovieCommand(.remove(movie: "godfather"), expect: 1)), .removed(id: "godfather"))
        XCTAssertEqual(
            try s.decide(MovieCommand(.add(title: "Alien", image: "alien.png"))),
            .added(id: "alien", title: "Alien", image: "alien.png"))
        XCTAssertEqual(
            try s.decide(MovieCommand(.add(title: "Alien", image: nil))),
            .added(id: "alien", title: "Alien", image: "alien"))
    }

    func testErrors() {
        var s = seeded()
        expectError(s, MovieCommand(.toggleWatched(movie: "nope")), .notFound("no movie with id \"nope\""))
        expectError(s, MovieCommand(.toggleWatchedWithFriends(movie: "nope")), .notFound(""))
        expectError(s, MovieCommand(.remove(movie: "nope")), .notFound(""))
        expectError(
            s, MovieCommand(.toggleWatched(movie: "matrix"), expect: 5),
            .conflict("movie \"matrix\" is at version 6, not 5 as expected"))
        expectError(s, MovieCommand(.remove(movie: "matrix"), expect: 0), .conflict(""))
        expectError(s, MovieCommand(.toggleWatchedWithFriends(movie: "matrix"), expect: 7), .conflict(""))
        expectError(s, MovieCommand(.add(title: "", image: nil)), .badRequest(""))
        expectError(s, MovieCommand(.add(title: "   \t", image: nil)), .badRequest("title is blank"))
        expectError(
            s, MovieCommand(.add(title: String(repeating: "é", count: 201), image: nil)),
            .badRequest("title has 201 characters; at most 200 are allowed"))
        expectError(s, MovieCommand(.add(title: "a\nb", image: nil)), .badRequest(""))
        expectError(s, MovieCommand(.add(title: "Alien", image: nil), expect: 1), .badRequest(""))
        expectError(
            s, MovieCommand(.add(title: "Alien", image: String(repeating: "x", count: 1025))), .badRequest("")
        )
        XCTAssertNoThrow(
            try s.decide(MovieCommand(.add(title: String(repeating: "é", count: 200), image: nil))))
        s.apply(.removed(id: "matrix"), seq: 11)
        expectError(
            s, MovieCommand(.toggleWatched(movie: "matrix")), .notFound("movie \"matrix\" was removed"))
    }

    func testSlugAndUniqueIDsNeverReused() throws {
        XCTAssertEqual(MovieState.slug("The Dark Knight"), "the_dark_knight")
        XCTAssertEqual(MovieState.slug("  Schindler's List!! (1993) "), "schindlers_list_1993")
        XCTAssertEqual(MovieState.slug("日本"), "日本")  // MovieIDTests has the rest of the rule
        XCTAssertEqual(MovieState.slug(String(repeating: "ab", count: 100)).utf8.count, 64)
        var s = seeded()
        XCTAssertEqual(s.freshID(for: "The Matrix"), "the_matrix")
        XCTAssertEqual(s.freshID(for: "Matrix"), "matrix_2")
        s.apply(.added(id: "matrix_2", title: "Matrix", image: ""), seq: 11)
        s.apply(.removed(id: "matrix_2"), seq: 12)
        s.apply(.removed(id: "matrix"), seq: 13)
        XCTAssertEqual(try s.decide(MovieCommand(.add(title: "MATRIX", image: nil))).movieID, "matrix_3")
        // The same after a snapshot round trip.
        let r = try MovieState(snapshot: s.snapshotBytes())
        XCTAssertEqual(r.freshID(for: "matrix"), "matrix_3")
        XCTAssertEqual(r, s)
    }

    func testEventEncodingRoundTripAndGarbage() throws {
        let events: [MovieEvent] = [
            .added(id: "a_1", title: "Ünïcode 🎬", image: "img"), .added(id: "b", title: "B", image: ""),
            .watchedToggled(id: "a_1"), .watchedWithFriendsToggled(id: "a_1"), .removed(id: "a_1"),
        ]
        for e in events {
            XCTAssertEqual(try MovieEvent(stream: e.movieID, kind: e.kind, payload: e.payload), e)
        }
        XCTAssertEqual(
            events.map(\.kind),
            ["added", "added", "watched-toggled", "watched-with-friends-toggled", "removed"])
        let bad: [(String, String, [UInt8])] = [
            ("a", "exploded", []), ("A B", "removed", []), ("", "removed", []), ("a", "removed", [1]),
            ("a", "added", []), ("a", "added", [0, 0, 0, 9, 65]),
            ("a", "added", [0, 0, 0, 1, 0xFF, 0, 0, 0, 0]),
            ("a", "added", MovieEvent.added(id: "a", title: "t", image: "").payload + [0]),
        ]
        for (stream, kind, payload) in bad {
            XCTAssertThrowsError(
                try MovieEvent(stream: stream, kind: kind, payload: payload), "\(stream) \(kind) \(payload)"
            ) {
                XCTAssertTrue($0 is MovieDecodingError)
            }
        }
    }

    func testSnapshotRoundTripAndGarbage() throws {
        var s = seeded()
        s.apply(.watchedToggled(id: "seven"), seq: 11)
        s.apply(.watchedWithFriendsToggled(id: "godfather"), seq: 12)
        s.apply(.removed(id: "matrix"), seq: 13)
        let bytes = s.snapshotBytes()
        let r = try MovieState(snapshot: bytes)
        XCTAssertEqual(r, s)
        XCTAssertEqual(r.movies, s.movies)
        XCTAssertTrue(r.usedIDs.contains("matrix"))
        XCTAssertEqual(r.lastSeq, 13)
        XCTAssertEqual(try MovieState(snapshot: MovieState().snapshotBytes()), MovieState())
        for cut in [0, 3, 4, 11, bytes.count - 1] {
            XCTAssertThrowsError(try MovieState(snapshot: Array(bytes[..<cut])))
        }
        XCTAssertThrowsError(try MovieState(snapshot: bytes + [0]))
        XCTAssertThrowsError(try MovieState(snapshot: Array("XXXX".utf8) + bytes.dropFirst(4)))
    }
}

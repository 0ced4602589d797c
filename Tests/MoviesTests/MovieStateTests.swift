import XCTest

@testable import Movies

extension ByteWriter {
    static func u64(_ v: UInt64) -> [UInt8] {
        var w = ByteWriter()
        w.u64(v)
        return w.bytes
    }
}

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
            .conflict(.version, "movie \"matrix\" is at version 6, not 5 as expected"))
        expectError(s, MovieCommand(.remove(movie: "matrix"), expect: 0), .conflict(.version, ""))
        expectError(
            s, MovieCommand(.toggleWatchedWithFriends(movie: "matrix"), expect: 7), .conflict(.version, ""))
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
            s, MovieCommand(.toggleWatched(movie: "matrix")),
            .notFound("movie \"matrix\" was removed at seq 11"))
    }

    func testTheFoldKeepsTheSeqOfEveryRemovalAndEveryCommandSaysIt() throws {
        var s = seeded()
        s.apply(.removed(id: "matrix"), seq: 11)
        s.apply(.watchedToggled(id: "seven"), seq: 12)
        s.apply(.removed(id: "seven"), seq: 13)
        s.apply(.removed(id: "nope"), seq: 14)  // does not fit: changes nothing but lastSeq
        XCTAssertEqual(s.removedAt, ["matrix": 11, "seven": 13])
        XCTAssertTrue(s.isUsed("matrix"))
        XCTAssertTrue(s.isUsed("godfather"))
        XCTAssertFalse(s.isUsed("nope"))
        for op: MovieCommand.Op in [
            .toggleWatched(movie: "seven"), .toggleWatchedWithFriends(movie: "seven"),
            .remove(movie: "seven"),
        ] {
            expectError(s, MovieCommand(op), .notFound("movie \"seven\" was removed at seq 13"))
            expectError(s, MovieCommand(op, expect: 12), .notFound("movie \"seven\" was removed at seq 13"))
        }
        XCTAssertEqual(s.notFound("matrix"), .notFound("movie \"matrix\" was removed at seq 11"))
        XCTAssertEqual(s.notFound("alien"), .notFound("no movie with id \"alien\""))
        // Long ids are cut as every echo of client text is (`MessageText`).
        let long = String(repeating: "a", count: 65)
        XCTAssertEqual(
            s.notFound(long), .notFound("no movie with id \"\(String(repeating: "a", count: 60))…\""))
        XCTAssertEqual(
            s.notFound(String(long.dropLast())).message.utf8.count, "no movie with id \"\"".utf8.count + 64)
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
            events.map(\.kind.rawValue),
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
        XCTAssertEqual(Array(bytes.prefix(4)), Array("MVS3".utf8))
        XCTAssertEqual(r.removedAt, ["matrix": 13], "the seq of the removal survives a snapshot")
        XCTAssertEqual(r.notFound("matrix"), .notFound("movie \"matrix\" was removed at seq 13"))
        XCTAssertEqual(r.lastSeq, 13)
        XCTAssertEqual(try MovieState(snapshot: MovieState().snapshotBytes()), MovieState())
        for cut in [0, 3, 4, 11, bytes.count - 1] {
            XCTAssertThrowsError(try MovieState(snapshot: Array(bytes[..<cut])))
        }
        XCTAssertThrowsError(try MovieState(snapshot: bytes + [0]))
        XCTAssertThrowsError(try MovieState(snapshot: Array("XXXX".utf8) + bytes.dropFirst(4)))
        // The removed movie's added seq: 0, or after its removal, is refused.
        for seq: UInt64 in [0, 14] {
            XCTAssertThrowsError(try MovieState(snapshot: Array(bytes.dropLast(8)) + ByteWriter.u64(seq)))
        }
    }

    /// A snapshot written by a build from before issue 13 has the removed ids but not when they
    /// were removed: it is refused, for the store to replay the log instead (SQLiteStoreTests).
    func testAnMVS1SnapshotFromAnEarlierBuildIsRefused() {
        var w = ByteWriter()  // MVS1: magic, lastSeq, the movies, the removed ids without seqs
        w.bytes.append(contentsOf: Array("MVS1".utf8))
        w.u64(11)
        w.u32(1)
        for text in ["seven", "Se7en", "seven"] { w.string(text) }
        w.u8(1)
        w.u64(7)
        w.u32(1)
        w.string("matrix")
        XCTAssertThrowsError(try MovieState(snapshot: w.bytes)) { error in
            XCTAssertTrue(
                (error as? MovieDecodingError)?.message.hasPrefix("an MVS1 snapshot") == true, "\(error)")
        }
    }

    // MARK: - Restore and undo (issue 14)

    func testRestoreBringsTheMovieBackAsItWasAtItsPlace() throws {
        var s = seeded()
        s.apply(.watchedToggled(id: "matrix"), seq: 11)
        s.apply(.removed(id: "matrix"), seq: 12)
        s.apply(.removed(id: "inception"), seq: 13)
        s.apply(.added(id: "alien", title: "Alien", image: "alien"), seq: 14)
        XCTAssertEqual(s.removed["matrix"]?.key, OrderKey(added: 6))
        XCTAssertEqual(s.removed["matrix"]?.movie.watched, true)
        XCTAssertEqual(
            try s.decide(MovieCommand(.restore(movie: "matrix"), expect: 12)),
            .restored(id: "matrix", to: .after("forrest_gump")))
        let back = s.apply(.restored(id: "matrix", to: .after("forrest_gump")), seq: 15)
        XCTAssertEqual(
            back, Movie(id: "matrix", title: "The Matrix", image: "matrix", watched: true, version: 15))
        XCTAssertEqual(
            s.movies.map(\.id),
            [
                "godfather", "dark_knight", "pulp_fiction", "forrest_gump", "matrix", "seven",
                "silence_of_lambs", "saving_private_ryan", "the_green_mile", "alien",
            ])
        XCTAssertEqual(s.movie("matrix")?.version, 15)
        XCTAssertNil(s.removed["matrix"])
        XCTAssertEqual(s.removedAt, ["inception": 13])
        s.apply(.restored(id: "inception", to: nil), seq: 16)
        XCTAssertEqual(s.movies[4].id, "inception", "before matrix, as it was added before it")
        XCTAssertEqual(s.movies[5].id, "matrix")
        XCTAssertNil(
            s.apply(.restored(id: "inception", to: nil), seq: 17), "a live movie is not restored twice")
        XCTAssertEqual(s.movies.count, 11)
        // The fold after a restore is the fold of a snapshot of it.
        XCTAssertEqual(try MovieState(snapshot: s.snapshotBytes()), s)
    }

    func testRestoreIsRefusedForALiveMovieAnUnknownIdAndAnotherVersion() {
        var s = seeded()
        s.apply(.removed(id: "matrix"), seq: 11)
        expectError(
            s, MovieCommand(.restore(movie: "seven")),
            .conflict(.notRemoved, "movie \"seven\" is not removed"))
        expectError(s, MovieCommand(.restore(movie: "alien")), .notFound("no movie with id \"alien\""))
        expectError(
            s, MovieCommand(.restore(movie: "matrix"), expect: 6),
            .conflict(.version, "movie \"matrix\" was removed at seq 11, not 6 as expected"))
    }

    func testUndoWritesTheCompensationWhileTheMovieIsWhereTheUndoerLeftIt() throws {
        var s = seeded()
        func undo(_ movie: String, _ original: UInt64, _ c: Undo.Compensation, at version: UInt64)
            -> MovieCommand
        {
            MovieCommand(.undo(Undo(movie: movie, original: original, compensation: c, version: version)))
        }
        s.apply(.watchedToggled(id: "matrix"), seq: 11)
        XCTAssertEqual(
            try s.decide(undo("matrix", 11, .toggleWatched, at: 11)), .watchedToggled(id: "matrix"))
        XCTAssertEqual(
            try s.decide(undo("matrix", 11, .toggleWatchedWithFriends, at: 11)),
            .watchedWithFriendsToggled(id: "matrix"))
        expectError(
            s, undo("matrix", 6, .remove, at: 6),
            .conflict(
                .changedSince,
                "movie \"matrix\" was changed by someone else since (at seq 11); seq 6 is not undone"))
        expectError(s, undo("matrix", 11, .restore, at: 11), .conflict(.changedSince, ""))
        s.apply(.removed(id: "seven"), seq: 12)
        XCTAssertEqual(
            try s.decide(undo("seven", 12, .restore, at: 12)), .restored(id: "seven", to: .after("matrix")))
        expectError(s, undo("seven", 7, .toggleWatched, at: 12), .conflict(.changedSince, ""))
        expectError(s, undo("seven", 12, .restore, at: 11), .conflict(.changedSince, ""))
        expectError(s, undo("alien", 12, .remove, at: 12), .notFound("no movie with id \"alien\""))
        XCTAssertEqual(try s.decide(undo("godfather", 1, .remove, at: 1)), .removed(id: "godfather"))
        XCTAssertEqual(undo("x", 3, .remove, at: 4).undoes, 3)
        XCTAssertEqual(undo("x", 3, .restore, at: 4).kind, .restored)
        func of(_ kind: String, from: ListPlace? = nil) -> CommittedEvent {
            CommittedEvent(seq: 3, kind: EventKind(kind), movie: s.movies[0], at: 0, from: from)
        }
        XCTAssertEqual(Undo.Compensation(undoing: of("added")), .remove)
        XCTAssertEqual(Undo.Compensation(undoing: of("restored")), .remove)
        XCTAssertEqual(Undo.Compensation(undoing: of("removed")), .restore)
        XCTAssertEqual(Undo.Compensation(undoing: of("watched-toggled")), .toggleWatched)
        XCTAssertEqual(Undo.Compensation(undoing: of("moved", from: .first)), .reorder(to: .first))
        XCTAssertNil(Undo.Compensation(undoing: of("moved")), "a move that does not say where it was from")
        XCTAssertNil(Undo.Compensation(undoing: of("renamed")))
    }

    func testARestoredEventAndAnUndoRecordTheMovieAndTheSeqUndone() throws {
        let movie = Movie(id: "matrix", title: "The Matrix", image: "matrix", watched: true, version: 15)
        let payload = MovieEvent.restored(id: "matrix", to: nil).payload(after: movie, undoes: 12)
        XCTAssertEqual(payload.count, 4 + 10 + 4 + 6 + 2 + 8)
        XCTAssertEqual(
            try MovieEvent(stream: "matrix", kind: "restored", payload: payload),
            .restored(id: "matrix", to: nil))
        let r = try XCTUnwrap(
            MovieEvent.recorded(stream: "matrix", kind: "restored", payload: payload, seq: 15))
        XCTAssertEqual(r.movie, movie)
        XCTAssertEqual(r.undoes, 12)
        let plain = MovieEvent.watchedToggled(id: "matrix").payload(after: movie)
        XCTAssertNil(
            try MovieEvent.recorded(stream: "matrix", kind: "watched-toggled", payload: plain, seq: 15)?
                .undoes)
        XCTAssertThrowsError(try MovieEvent(stream: "matrix", kind: "restored", payload: payload.dropLast(1)))
    }

    /// A snapshot written by a build from before issue 14 (MVS2) has when movies were removed
    /// but not what they were nor where: refused, for the store to replay the log instead.
    func testAnMVS2SnapshotFromAnEarlierBuildIsRefused() {
        var w = ByteWriter()
        w.bytes.append(contentsOf: Array("MVS2".utf8))
        w.u64(11)
        w.u32(0)
        w.u32(1)
        w.string("matrix")
        w.u64(11)
        XCTAssertThrowsError(try MovieState(snapshot: w.bytes)) { error in
            XCTAssertTrue(
                (error as? MovieDecodingError)?.message.hasPrefix("an MVS2 snapshot") == true, "\(error)")
        }
    }
}

// Reordering (issue 48): order keys, `move` and its event, where a restored movie goes, the undo
// of a move, and the array surgery that keeps `movies` in key order, checked against the slow
// path (every live movie sorted by its key) after every event of long random runs.
import TestSupport
import XCTest

@testable import Movies

final class OrderKeyTests: XCTestCase {
    func testAKeyBetweenTwoIsStrictlyBetweenThemAndEndsInNoZeroDigit() {
        var rng = SplitMix64(seed: 48)
        var keys: [OrderKey] = [OrderKey(added: 1), OrderKey(added: 2), OrderKey(added: 9)]
        for _ in 0..<5_000 {
            let i = Int.random(in: -1..<keys.count, using: &rng)
            let low = i < 0 ? nil : keys[i]
            let high = i + 1 < keys.count ? keys[i + 1] : nil
            let k = OrderKey.between(low, high)
            if let low { XCTAssertLessThan(low, k) }
            if let high { XCTAssertLessThan(k, high) }
            XCTAssertNotEqual(k.tail.last, 0)
            keys.insert(k, at: i + 1)
        }
        XCTAssertEqual(keys, keys.sorted())
        XCTAssertEqual(Set(keys).count, keys.count)
    }

    func testMovesIntoOneGapGrowAKeyByADigitPerSixtyFourAtWorst() {
        var low = OrderKey(added: 5)
        let high = OrderKey(added: 6)
        for _ in 0..<640 { low = OrderKey.between(low, high) }
        XCTAssertLessThan(low, high)
        XCTAssertLessThanOrEqual(low.tail.count, 10)
        var first = OrderKey(added: 1)
        for _ in 0..<640 { first = OrderKey.between(nil, first) }
        XCTAssertLessThanOrEqual(first.tail.count, 11)
        XCTAssertLessThan(OrderKey(added: 0), first)
    }

    func testTheEdgesAndTheWholeNumbers() {
        XCTAssertEqual(OrderKey.between(nil, nil), OrderKey(added: 1))
        XCTAssertEqual(OrderKey.between(OrderKey(added: 7), nil), OrderKey(added: 8))
        XCTAssertEqual(OrderKey.between(nil, OrderKey(added: 8)), OrderKey(added: 4))
        XCTAssertEqual(OrderKey.between(OrderKey(added: 2), OrderKey(added: 8)), OrderKey(added: 5))
        XCTAssertEqual(
            OrderKey.between(OrderKey(added: 2), OrderKey(added: 3)), OrderKey(head: 2, tail: [1 << 63]))
        XCTAssertEqual(
            OrderKey.between(OrderKey(head: 2, tail: [UInt64.max])!, OrderKey(added: 3)),
            OrderKey(head: 2, tail: [UInt64.max, 1 << 63]))
        XCTAssertNil(OrderKey(head: 2, tail: [1, 0]), "not normalised")
        XCTAssertLessThan(OrderKey(added: 2), OrderKey(head: 2, tail: [1])!)
        XCTAssertLessThan(OrderKey(head: 2, tail: [1])!, OrderKey(head: 2, tail: [2])!)
        XCTAssertLessThan(OrderKey(head: 2, tail: [1])!, OrderKey(head: 2, tail: [1, 1])!)
    }
}

final class ReorderTests: XCTestCase {
    private func seeded() -> MovieState {
        var s = MovieState()
        for (i, e) in MovieState.seedCatalogue.enumerated() { s.apply(e, seq: UInt64(i + 1)) }
        return s
    }

    /// Decides and applies, as a store does; returns the event.
    @discardableResult
    private func run(_ s: inout MovieState, _ op: MovieCommand.Op, expect: UInt64? = nil) throws -> MovieEvent
    {
        let (event, _) = try s.decideAndApply(MovieCommand(op, expect: expect))
        return event
    }

    private func ids(_ s: MovieState) -> [String] { s.movies.map(\.id) }

    func testAMoveGoesRightAfterItsMovieOrFirstAndSaysWhereItWas() throws {
        var s = seeded()
        let e = try run(&s, .move(movie: "the_green_mile", to: .after("godfather")))
        XCTAssertEqual(
            e, .moved(id: "the_green_mile", to: .after("godfather"), from: .after("saving_private_ryan")))
        XCTAssertEqual(Array(ids(s).prefix(3)), ["godfather", "the_green_mile", "dark_knight"])
        XCTAssertEqual(s.movie("the_green_mile")?.version, 11, "a move bumps the version")
        try run(&s, .move(movie: "seven", to: .first))
        XCTAssertEqual(Array(ids(s).prefix(3)), ["seven", "godfather", "the_green_mile"])
        try run(&s, .move(movie: "seven", to: .after("saving_private_ryan")))
        XCTAssertEqual(ids(s).last, "seven", "after the last movie is the end")
        // Down the list: it goes after the movie named, wherever that is.
        try run(&s, .move(movie: "godfather", to: .after("matrix")))
        XCTAssertEqual(
            ids(s),
            [
                "the_green_mile", "dark_knight", "pulp_fiction", "forrest_gump", "inception", "matrix",
                "godfather",
                "silence_of_lambs", "saving_private_ryan", "seven",
            ])
        // To where it already is: a move all the same (a new version, the same place).
        let before = ids(s)
        XCTAssertEqual(
            try run(&s, .move(movie: "godfather", to: .after("matrix"))),
            .moved(id: "godfather", to: .after("matrix"), from: .after("matrix")))
        XCTAssertEqual(ids(s), before)
        XCTAssertEqual(try MovieState(snapshot: s.snapshotBytes()), s)
    }

    func testAMoveIsRefusedForAnUnknownOrRemovedMovieItselfAndAnotherVersion() throws {
        var s = seeded()
        try run(&s, .remove(movie: "seven"))
        func refused(_ op: MovieCommand.Op, expect: UInt64? = nil, _ code: String, _ message: String) {
            XCTAssertThrowsError(try s.decide(MovieCommand(op, expect: expect))) { error in
                let e = error as! CommandError
                XCTAssertEqual(e.code, code, "\(e)")
                XCTAssertEqual(e.message, message)
            }
        }
        refused(.move(movie: "alien", to: .first), "not-found", "no movie with id \"alien\"")
        refused(.move(movie: "seven", to: .first), "not-found", "movie \"seven\" was removed at seq 11")
        refused(
            .move(movie: "matrix", to: .after("matrix")), "bad-request",
            "a movie cannot go after itself (\"matrix\")")
        refused(
            .move(movie: "matrix", to: .after("seven")), "not-found",
            "after: movie \"seven\" was removed at seq 11")
        refused(.move(movie: "matrix", to: .after("alien")), "not-found", "after: no movie with id \"alien\"")
        refused(
            .move(movie: "matrix", to: .first), expect: 5, "conflict",
            "movie \"matrix\" is at version 6, not 5 as expected")
        XCTAssertNoThrow(try s.decide(MovieCommand(.move(movie: "matrix", to: .first), expect: 6)))
    }

    func testARestoredMovieComesBackBetweenTheMoviesAroundItsKey() throws {
        var s = seeded()
        try run(&s, .remove(movie: "matrix"))  // between inception and seven
        try run(&s, .move(movie: "seven", to: .first))
        // inception is still where it was: matrix comes back after it.
        XCTAssertEqual(
            try run(&s, .restore(movie: "matrix")), .restored(id: "matrix", to: .after("inception")))
        XCTAssertEqual(ids(s)[6], "matrix", "seven went first")
        // Its neighbour moved away and another movie moved into exactly its key's place: after it.
        try run(&s, .remove(movie: "matrix"))
        try run(&s, .move(movie: "godfather", to: .after("inception")))
        let e = try run(&s, .restore(movie: "matrix"))
        XCTAssertEqual(e, .restored(id: "matrix", to: .after("godfather")))
        XCTAssertEqual(Array(ids(s)[4...6]), ["inception", "godfather", "matrix"])
        XCTAssertEqual(s.orderKeys, s.orderKeys.sorted())
        XCTAssertEqual(Set(s.orderKeys).count, s.movies.count, "keys stay distinct")
    }

    func testTheUndoOfAMoveTakesItBackAndWhereItsNeighbourWouldComeBack() throws {
        var s = seeded()
        func undo(_ e: MovieEvent, seq: UInt64) -> MovieCommand.Op {
            let c = CommittedEvent(
                seq: seq, kind: e.kind, movie: s.movie(e.movieID)!, at: 0, to: e.to, from: e.from)
            let comp = Undo.Compensation(undoing: c)!
            return .undo(Undo(movie: e.movieID, original: seq, compensation: comp, version: seq))
        }
        let m = try run(&s, .move(movie: "matrix", to: .first))  // seq 11, from after inception
        XCTAssertEqual(
            try run(&s, undo(m, seq: 11)), .moved(id: "matrix", to: .after("inception"), from: .first))
        XCTAssertEqual(ids(s), ids(seeded()))
        // Its old neighbour went since: it goes where that one would come back.
        let m2 = try run(&s, .move(movie: "matrix", to: .first))  // seq 13
        try run(&s, .remove(movie: "inception"))
        XCTAssertEqual(
            try s.decide(MovieCommand(undo(m2, seq: 13))),
            .moved(id: "matrix", to: .after("forrest_gump"), from: .first))
        // Moved again by someone: changed since.
        try run(&s, .move(movie: "matrix", to: .after("godfather")))
        XCTAssertThrowsError(try s.decide(MovieCommand(undo(m2, seq: 13)))) { error in
            XCTAssertEqual((error as! CommandError).code, "conflict")
        }
        // From first: back to first.
        let m3 = try run(&s, .move(movie: "godfather", to: .after("seven")))
        let back = try s.decide(MovieCommand(undo(m3, seq: s.lastSeq)))
        XCTAssertEqual(back, .moved(id: "godfather", to: .first, from: .after("seven")))
    }

    /// Every event of a long random run: `movies` equals the live movies sorted by key (the slow
    /// path), every offset is right, a move lands right after its movie, the fold of the events
    /// from nothing and the snapshot both give the same state.
    func testRandomRunsKeepTheArraysInKeyOrder() throws {
        for seed in 1...6 as ClosedRange<UInt64> {
            var rng = SplitMix64(seed: seed)
            var s = MovieState()
            var events: [(MovieEvent, UInt64)] = []
            var keyOf: [String: OrderKey] = [:]
            for step in 0..<1_500 {
                let live = s.movies
                let op: MovieCommand.Op
                switch Int.random(in: 0..<10, using: &rng) {
                case 0 where live.count < 40, 1 where live.count < 5:
                    op = .add(title: "Film \(step)", image: nil)
                case 2 where !live.isEmpty:
                    op = .remove(movie: live.randomElement(using: &rng)!.id)
                case 3 where !s.removed.isEmpty:
                    op = .restore(movie: s.removed.keys.sorted().randomElement(using: &rng)!)
                case 4 where !live.isEmpty:
                    op = .toggleWatched(movie: live.randomElement(using: &rng)!.id)
                default:
                    guard live.count > 1 else { continue }
                    let m = live.randomElement(using: &rng)!.id
                    let others = live.filter { $0.id != m }
                    op = .move(
                        movie: m,
                        to: Bool.random(using: &rng) && step % 7 == 0
                            ? .first : .after(others.randomElement(using: &rng)!.id))
                }
                let event = try run(&s, op)
                events.append((event, s.lastSeq))
                // The slow path: every live movie, sorted by its key.
                for (m, k) in zip(s.movies, s.orderKeys) { keyOf[m.id] = k }
                let slow = s.movies.map(\.id).sorted { keyOf[$0]! < keyOf[$1]! }
                XCTAssertEqual(ids(s), slow)
                XCTAssertEqual(s.orderKeys, s.orderKeys.sorted())
                for (i, m) in s.movies.enumerated() { XCTAssertEqual(s.offset(of: m.id), i) }
                if case .moved(let id, let to, _) = event {
                    let i = s.offset(of: id)!
                    XCTAssertEqual(s.place(at: i), to)
                }
                if case .restored(let id, let to) = event {
                    XCTAssertEqual(s.place(at: s.offset(of: id)!), to)
                }
            }
            var again = MovieState()
            for (e, seq) in events { again.apply(e, seq: seq) }
            XCTAssertEqual(again, s)
            XCTAssertEqual(ids(again), ids(s))
            XCTAssertEqual(try MovieState(snapshot: s.snapshotBytes()), s)
            // A removed id's place for list's `after` is where it would come back.
            for (id, gone) in s.removed { XCTAssertEqual(s.position(after: id), s.slot(for: gone.key)) }
        }
    }

    /// Without moves, the order is the order of the adds, restored movies included, as before
    /// issue 48, and the snapshot is the MVS3 it was; a move that makes a longer key makes MVS4.
    func testWithoutMovesTheOrderAndTheSnapshotAreThoseOfBefore() throws {
        var rng = SplitMix64(seed: 9)
        var s = seeded()
        var addedAt: [String: UInt64] = [:]
        for (i, m) in s.movies.enumerated() { addedAt[m.id] = UInt64(i + 1) }
        for step in 0..<600 {
            switch Int.random(in: 0..<3, using: &rng) {
            case 0:
                if case .added(let id, _, _) = try run(&s, .add(title: "Film \(step)", image: nil)) {
                    addedAt[id] = s.lastSeq
                }
            case 1 where s.movies.count > 1:
                try run(&s, .remove(movie: s.movies.randomElement(using: &rng)!.id))
            default:
                guard let id = s.removed.keys.sorted().randomElement(using: &rng) else { continue }
                try run(&s, .restore(movie: id))
            }
            XCTAssertEqual(ids(s), ids(s).sorted { addedAt[$0]! < addedAt[$1]! })
        }
        XCTAssertEqual(Array(s.snapshotBytes().prefix(4)), Array("MVS3".utf8))
        try run(&s, .move(movie: s.movies[0].id, to: .after(s.movies[s.movies.count - 1].id)))
        XCTAssertEqual(Array(s.snapshotBytes().prefix(4)), Array("MVS3".utf8), "to the end: a whole number")
        try run(&s, .move(movie: s.movies[0].id, to: .after(s.movies[1].id)))
        XCTAssertEqual(Array(s.snapshotBytes().prefix(4)), Array("MVS4".utf8))
        XCTAssertEqual(try MovieState(snapshot: s.snapshotBytes()), s)
    }

    func testAMovedAndARestoredEventKeepTheirPlacesInTheLog() throws {
        let movie = Movie(id: "matrix", title: "The Matrix", image: "matrix", watched: true, version: 15)
        for event in [
            MovieEvent.moved(id: "matrix", to: .after("seven"), from: .first),
            .moved(id: "matrix", to: .first, from: .after("a_b")),
            .restored(id: "matrix", to: .after("seven")), .restored(id: "matrix", to: .first),
        ] {
            for undoes: UInt64? in [nil, 12] {
                let payload = event.payload(after: movie, undoes: undoes)
                XCTAssertGreaterThan(payload.count, 4 + 10 + 4 + 6 + 2 + 8, "longer than a tail of before")
                XCTAssertEqual(try MovieEvent(stream: "matrix", kind: event.kind, payload: payload), event)
                let r = try XCTUnwrap(
                    MovieEvent.recorded(stream: "matrix", kind: event.kind, payload: payload, seq: 15))
                XCTAssertEqual(r.movie, movie)
                XCTAssertEqual(r.undoes, undoes)
                XCTAssertEqual(r.to, event.to)
                XCTAssertEqual(r.from, event.from)
                XCTAssertNoThrow(try MovieEvent.checkRecorded(kind: event.kind, payload: payload))
                let cut = Array(payload.dropLast(1))
                if event == .restored(id: "matrix", to: .first) {
                    // Without its last byte (the tag of first), the tail is 8 bytes: a restore's
                    // payload of before, which says no place.
                    XCTAssertEqual(
                        try MovieEvent(stream: "matrix", kind: event.kind, payload: cut),
                        .restored(id: "matrix", to: nil))
                } else {
                    XCTAssertThrowsError(try MovieEvent(stream: "matrix", kind: event.kind, payload: cut))
                }
            }
        }
        XCTAssertThrowsError(try MovieEvent(stream: "matrix", kind: "moved", payload: [])) { error in
            XCTAssertEqual((error as? MovieDecodingError)?.message, "a moved event without its places")
        }
        // A move after a bad id is refused as the log's damage.
        var bad = MovieEvent.moved(id: "matrix", to: .after("x"), from: .first).payload(after: movie)
        let at = bad.count - 3  // "x" then the from tag
        bad[at] = UInt8(ascii: "X")
        XCTAssertThrowsError(try MovieEvent(stream: "matrix", kind: "moved", payload: bad))
    }
}

final class EventKindTests: XCTestCase {
    /// Every kind this build makes is spelled and read back as itself; any other word is kept,
    /// as it was spelled, in `unknown` (protocol 1 takes kinds it does not know).
    func testEveryKindRoundTripsAndAnUnknownOneIsKept() {
        XCTAssertEqual(
            EventKind.known.map(\.rawValue),
            ["added", "watched-toggled", "watched-with-friends-toggled", "removed", "restored", "moved"])
        for kind in EventKind.known { XCTAssertEqual(EventKind(kind.rawValue), kind) }
        XCTAssertEqual(EventKind("renamed"), .unknown("renamed"))
        XCTAssertEqual(EventKind("renamed").rawValue, "renamed")
        XCTAssertEqual(EventKind("Added"), .unknown("Added"), "spelled exactly")
        let events: [MovieEvent] = [
            .added(id: "a", title: "A", image: ""), .watchedToggled(id: "a"),
            .watchedWithFriendsToggled(id: "a"),
            .removed(id: "a"), .restored(id: "a", to: nil), .moved(id: "a", to: .first, from: .first),
        ]
        XCTAssertEqual(events.map(\.kind), EventKind.known, "one event of each kind, in order")
        XCTAssertThrowsError(try MovieEvent(stream: "a", kind: "renamed", payload: [])) { error in
            XCTAssertEqual((error as? MovieDecodingError)?.message, #"unknown event kind "renamed""#)
        }
    }
}

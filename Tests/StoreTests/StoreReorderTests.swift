// Reordering (issue 48) in every Store: a move goes through the log with its places, a key
// replays it, its undo takes the movie back, a restore says where, and the order is there again
// after a restart. Each test runs once per implementation (StoreContractTests.implementations).
import Movies
import StoreCore
import StorePostgres
import StoreSQLite
import StoreTestSupport
import TestSupport
import XCTest

final class StoreReorderTests: EveryStoreCase {
    private let seed = MovieState.seedCatalogue.map(\.movieID)

    func testAMoveGoesThroughTheLogWithItsPlacesAndAKeyReplaysIt() throws {
        try forEachStore { store in
            let mv = try XCTUnwrap(store.submitOK(MovieCommand(.move(movie: "seven", to: .first), key: "m")))
            XCTAssertEqual(mv.kind, .moved)
            XCTAssertEqual(mv.seq, 11)
            XCTAssertEqual(mv.movie.version, 11)
            XCTAssertEqual(mv.to, .first)
            XCTAssertEqual(mv.from, .after("matrix"))
            XCTAssertEqual(store.stateCopy.movies.map(\.id), ["seven"] + seed.filter { $0 != "seven" })
            XCTAssertEqual(try store.events(after: 10, limit: 10), [mv])
            // The same key and move again: the original; another move under it: a conflict.
            let again = store.outcome(MovieCommand(.move(movie: "seven", to: .first), key: "m"))
            XCTAssertEqual(again?.replayed, true)
            XCTAssertEqual(try again?.result.get(), mv)
            XCTAssertEqual(
                store.refusal(MovieCommand(.move(movie: "seven", to: .after("godfather")), key: "m"))?.reason,
                .key)
            XCTAssertEqual(
                store.refusal(MovieCommand(.move(movie: "seven", to: .after("alien"))))?.code, .notFound)
            XCTAssertEqual(
                store.refusal(MovieCommand(.move(movie: "seven", to: .after("seven"))))?.code, .badRequest)
            XCTAssertEqual(
                store.refusal(MovieCommand(.move(movie: "seven", to: .first), expect: 7))?.reason, .version)
            // Its undo: back after matrix, linked to the move.
            let undo = Undo(
                movie: "seven", original: 11, compensation: .reorder(to: .after("matrix")), version: 11)
            let back = try XCTUnwrap(store.submitOK(MovieCommand(.undo(undo))))
            XCTAssertEqual(back.kind, .moved)
            XCTAssertEqual(back.undoes, 11)
            XCTAssertEqual(back.to, .after("matrix"))
            XCTAssertEqual(back.from, .first)
            XCTAssertEqual(store.stateCopy.movies.map(\.id), seed)
            // A restore says where the movie went back.
            _ = store.submitOK(MovieCommand(.remove(movie: "inception")))
            _ = store.submitOK(MovieCommand(.move(movie: "godfather", to: .after("the_green_mile"))))
            let restored = try XCTUnwrap(store.submitOK(MovieCommand(.restore(movie: "inception"))))
            XCTAssertEqual(restored.to, .after("forrest_gump"))
            XCTAssertEqual(
                try store.events(after: 10, limit: 10).map(\.to),
                [.first, .after("matrix"), nil, .after("the_green_mile"), .after("forrest_gump")])
            XCTAssertEqual(
                try store.events(after: 10, limit: 10).map(\.from),
                [.after("matrix"), .first, nil, .first, nil])
        }
    }

    func testTheOrderAndThePlacesAreThereAfterARestart() throws {
        for (name, place, open) in StoreContractTests.durable {
            implementation = name
            let location = try place(self)
            let first = try open(location)
            var rng = SplitMix64(seed: 48)
            for _ in 0..<200 {
                let ids = first.stateCopy.movies.map(\.id)
                let m = ids.randomElement(using: &rng)!
                let other = ids.filter { $0 != m }.randomElement(using: &rng)!
                _ = first.submitOK(
                    MovieCommand(.move(movie: m, to: Bool.random(using: &rng) ? .first : .after(other))))
            }
            let order = first.stateCopy.movies.map(\.id)
            let written = try first.events(after: 10, limit: 1000)
            XCTAssertEqual(written.count, 200)
            first.close()
            let store = try open(location)
            defer { store.close() }
            XCTAssertEqual(store.stateCopy.movies.map(\.id), order)
            XCTAssertEqual(try store.events(after: 10, limit: 1000), written)
        }
        implementation = ""
    }
}

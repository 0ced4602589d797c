// What every Store must do, whatever keeps its log: each test runs once per implementation.
//
// Not a base class with one subclass per implementation: on Linux, XCTest runs the tests that
// `swift test` discovers, and discovery lists the test methods a class declares, not those it
// inherits (a subclass that only says how to make a store would run nothing). A failure names
// the implementation it happened with.
import Movies
import StoreCore
import StorePostgres
import StoreSQLite
import StoreTestSupport
import TestSupport
import XCTest

final class StoreContractTests: XCTestCase {
    /// Every implementation of `Store`, and how a test makes a new one: the seed catalogue, seq 10.
    static let implementations: [(name: String, make: @Sendable (XCTestCase) throws -> any Store)] = [
        ("SQLiteStore", { try SQLiteStore.open(directory: makeStateDirectory($0)) }),
        ("InMemoryStore", { _ in InMemoryStore() }),
        // A database of its own per test, on one cluster for the class (PostgresStoreTests.swift).
        ("PostgresStore", { try PostgresStore.open(conninfo: SharedCluster.newDatabase($0)) }),
    ]

    override class func tearDown() {
        SharedCluster.destroy()
        super.tearDown()
    }

    private var implementation = ""

    /// Runs `body` with a new store of each implementation, closed afterwards.
    private func forEachStore(_ body: (any Store) throws -> Void) throws {
        for (name, make) in StoreContractTests.implementations {
            implementation = name
            let store = try make(self)
            defer { store.close() }
            try body(store)
        }
        implementation = ""
    }

    override func recordFailure(
        withDescription description: String, inFile filePath: String, atLine lineNumber: Int, expected: Bool
    ) {
        super.recordFailure(
            withDescription: "[\(implementation)] \(description)", inFile: filePath, atLine: lineNumber,
            expected: expected)
    }

    // MARK: -

    func testANewStoreHoldsTheSeedCatalogue() throws {
        try forEachStore { store in
            XCTAssertEqual(store.latestSeq, 10)
            XCTAssertEqual(store.pendingCount, 0)
            XCTAssertEqual(store.stateCopy.movies.map(\.id), MovieState.seedCatalogue.map(\.movieID))
            XCTAssertEqual(store.movie("godfather")?.title, "The Godfather")
            XCTAssertEqual(store.movie("godfather")?.image, "godfather")
            let log = try store.events(after: 0, limit: 100)
            XCTAssertEqual(log.map(\.seq), Array(1...10))
            XCTAssertEqual(Set(log.map(\.kind)), ["added"])
            XCTAssertEqual(log.map(\.movie), store.stateCopy.movies)
            XCTAssertTrue(store.startupFields.contains { $0 == ("SEQ", "10") })
            XCTAssertTrue(store.startupFields.contains { $0 == ("MOVIES", "10") })
        }
    }

    func testEachCommandsOutcomeComesBackUnderItsToken() throws {
        try forEachStore { store in
            let w = store.submitOK(MovieCommand(.toggleWatched(movie: "matrix"), expect: 6))
            XCTAssertEqual(w?.seq, 11)
            XCTAssertEqual(w?.kind, "watched-toggled")
            XCTAssertEqual(
                w?.movie,
                Movie(id: "matrix", title: "The Matrix", image: "matrix", watched: true, version: 11))
            XCTAssertGreaterThan(w?.at ?? 0, 1_700_000_000_000_000)
            let f = store.submitOK(MovieCommand(.toggleWatchedWithFriends(movie: "matrix")))
            XCTAssertEqual(f?.movie.watchedWithFriends, true)
            XCTAssertEqual(f?.movie.version, 12)
            let a = store.submitOK(MovieCommand(.add(title: "The Matrix", image: nil)))
            XCTAssertEqual(
                a?.movie, Movie(id: "the_matrix", title: "The Matrix", image: "the_matrix", version: 13))
            XCTAssertEqual(store.stateCopy.movies.last?.id, "the_matrix")
            let r = store.submitOK(MovieCommand(.remove(movie: "matrix"), expect: 12))
            XCTAssertEqual(r?.kind, "removed")
            XCTAssertEqual(r?.movie.version, 14)
            XCTAssertEqual(r?.movie.watched, true, "a removed movie's last state")
            XCTAssertNil(store.movie("matrix"))
            XCTAssertGreaterThanOrEqual(r?.at ?? 0, w?.at ?? .max)

            store.submit(MovieCommand(.toggleWatched(movie: "seven")), token: 40)
            store.submit(MovieCommand(.toggleWatched(movie: "heat")), token: 41)
            store.submit(MovieCommand(.toggleWatched(movie: "alien")), token: 42)
            let c = store.settle(results: 3)
            XCTAssertEqual(Set(c.commands.map(\.token)), [40, 41, 42])
            let seven = c.commands.first { $0.token == 40 }
            XCTAssertEqual(try seven?.result.get().movie.id, "seven")
            XCTAssertEqual(try seven?.result.get().seq, 15)
        }
    }

    func testRefusalsComeBackFromTheNextCompletionsWithNothingWritten() throws {
        try forEachStore { store in
            store.submit(MovieCommand(.remove(movie: "nope")), token: 5)
            XCTAssertEqual(store.pendingCount, 1, "reported by completions() only")
            // Decided at commit by a shared store: nothing written all the same.
            let c = store.refusesAtSubmit ? store.completions() : store.settle(results: 1)
            XCTAssertEqual(c.committed, [])
            XCTAssertEqual(c.commands.map(\.token), [5])
            XCTAssertEqual(store.pendingCount, 0)
            guard case .failure(let e) = c.commands.first?.result else { return XCTFail("\(c)") }
            XCTAssertEqual(e.code, .notFound)
            XCTAssertFalse(e.fatal)

            XCTAssertEqual(store.refusal(MovieCommand(.toggleWatched(movie: "nope")))?.code, .notFound)
            XCTAssertEqual(store.refusal(MovieCommand(.add(title: " ", image: nil)))?.code, .badRequest)
            XCTAssertEqual(
                store.refusal(MovieCommand(.add(title: String(repeating: "x", count: 201), image: nil)))?
                    .code,
                .badRequest)
            let conflict = store.refusal(MovieCommand(.toggleWatched(movie: "seven"), expect: 3))
            XCTAssertEqual(conflict?.code, .conflict)
            XCTAssertEqual(conflict?.message, "movie \"seven\" is at version 7, not 3 as expected")
            XCTAssertEqual(store.latestSeq, 10, "a refused command wrote something")
            XCTAssertEqual(try store.events(after: 0, limit: 100).count, 10)
            XCTAssertEqual(store.pendingCount, 0)
        }
    }

    func testAKeyAnswersWithItsOriginalOutcomeAndWritesOnce() throws {
        try forEachStore { store in
            let cmd = MovieCommand(.toggleWatched(movie: "seven"), key: "k1")
            store.submit(cmd, token: 1)
            store.submit(cmd, token: 2)  // the same key while pending: waits for the first
            // A pending key reused for another command. Its refusal and the first commit may
            // come in one batch (a slow machine): all three outcomes are collected together.
            store.submit(MovieCommand(.remove(movie: "seven"), key: "k1"), token: 3)
            let c = store.settle(results: 3)
            guard case .failure(let reused) = c.resultByToken[3] else {
                return XCTFail("a pending key reused for another command was not refused: \(c.commands)")
            }
            XCTAssertEqual(reused.code, .conflict, "a pending key reused for another command")
            XCTAssertEqual(c.committed.count, 1, "the key wrote twice, or the refusal wrote")
            let original = try XCTUnwrap(try c.commands.first { $0.token == 1 }?.result.get())
            XCTAssertEqual(c.commands.first { $0.token == 1 }?.replayed, false)
            XCTAssertEqual(c.commands.first { $0.token == 2 }?.replayed, true)
            XCTAssertEqual(try c.commands.first { $0.token == 2 }?.result.get(), original)
            // More changes, then the same key again: the original seq and the movie as it was then.
            _ = store.submitOK(MovieCommand(.toggleWatched(movie: "seven")))
            let replay = store.immediate(cmd)
            XCTAssertEqual(replay?.replayed, true)
            XCTAssertEqual(try replay?.result.get(), original)
            XCTAssertEqual(original.movie.watched, true)
            XCTAssertEqual(store.movie("seven")?.watched, false)
            XCTAssertEqual(
                store.refusal(MovieCommand(.toggleWatched(movie: "matrix"), key: "k1"))?.code, .conflict)
            XCTAssertEqual(
                store.refusal(MovieCommand(.toggleWatchedWithFriends(movie: "seven"), key: "k1"))?.code,
                .conflict)
            let add = store.submitOK(MovieCommand(.add(title: "Heat", image: nil), key: "add-heat"))
            XCTAssertEqual(
                try store.immediate(MovieCommand(.add(title: "Heat", image: nil), key: "add-heat"))?.result
                    .get(), add)
            XCTAssertEqual(
                store.refusal(MovieCommand(.add(title: "Heat 2", image: nil), key: "add-heat"))?.code,
                .conflict)
            // A removed movie's key replays its last state.
            let rm = store.submitOK(MovieCommand(.remove(movie: "heat"), key: "rm"))
            XCTAssertEqual(
                try store.immediate(MovieCommand(.remove(movie: "heat"), key: "rm"))?.result.get(), rm)
            // A keyed command refused writes nothing: its key is free for the next command.
            XCTAssertEqual(
                store.refusal(MovieCommand(.toggleWatched(movie: "matrix"), expect: 3, key: "free"))?.code,
                .conflict)
            let freed = store.submitOK(MovieCommand(.toggleWatched(movie: "matrix"), key: "free"))
            XCTAssertEqual(freed?.seq, 15)
            XCTAssertEqual(
                try store.immediate(MovieCommand(.toggleWatched(movie: "matrix"), key: "free"))?.result.get(),
                freed)
            XCTAssertEqual(store.latestSeq, 15)
            XCTAssertEqual(store.pendingCount, 0)
        }
    }

    /// An undo's key follows the rules of every other op's (issue 40): sent again, it answers
    /// the original undo whichever change the retry would pick, or none; a key of another op is
    /// a conflict for an undo, and an undo's key a conflict for another op.
    func testAnUndoKeyAnswersItsOriginalUndoAndNeverAnotherOps() throws {
        try forEachStore { store in
            let toggle = try XCTUnwrap(
                store.submitOK(MovieCommand(.toggleWatched(movie: "seven"), key: "k1")))
            let undoToggle = Undo(
                movie: "seven", original: toggle.seq, compensation: .toggleWatched, version: toggle.seq)
            // The toggle's key used by an undo: a conflict, not the toggle's reply (it wrote the
            // kind an undo of it would write, on the same movie).
            let reused = store.refusal(MovieCommand(.undo(undoToggle), key: "k1"))
            XCTAssertEqual(reused?.code, .conflict)
            XCTAssertEqual(reused?.reason, .key)
            XCTAssertEqual(store.movie("seven")?.watched, true, "the undo with a toggle's key undid it")
            let undone = try XCTUnwrap(store.submitOK(MovieCommand(.undo(undoToggle), key: "u1")))
            XCTAssertEqual(undone.undoes, toggle.seq)
            XCTAssertEqual(store.movie("seven")?.watched, false)
            let seq = store.latestSeq
            // Sent again: as it was, as a connection with nothing left would send it, as one
            // that picked another change would.
            let other = Undo(movie: "matrix", original: 3, compensation: .toggleWatched, version: 3)
            for again in [
                MovieCommand(.undo(undoToggle), key: "u1"), MovieCommand(.undoNothing, key: "u1"),
                MovieCommand(.undo(other), key: "u1"),
            ] {
                let r = store.immediate(again)
                XCTAssertEqual(r?.replayed, true, "\(again)")
                XCTAssertEqual(try r?.result.get(), undone, "\(again)")
            }
            XCTAssertEqual(store.latestSeq, seq, "a key's replay wrote")
            XCTAssertEqual(store.movie("matrix")?.watched, false)
            // An undo's key used by a toggle of the same movie: a conflict.
            let toggleAgain = store.refusal(MovieCommand(.toggleWatched(movie: "seven"), key: "u1"))
            XCTAssertEqual(toggleAgain?.reason, .key)
            // A new key with nothing to undo: nothing-to-undo, and the key stays free.
            let nothing = store.refusal(MovieCommand(.undoNothing, key: "fresh"))
            XCTAssertEqual(nothing?.code, .conflict)
            XCTAssertEqual(nothing?.reason, .nothingToUndo)
            XCTAssertNotNil(store.submitOK(MovieCommand(.toggleWatched(movie: "seven"), key: "fresh")))
            // The same undo twice while pending: one write, the second its replay.
            let last = store.latestSeq
            let undoLast = Undo(movie: "seven", original: last, compensation: .toggleWatched, version: last)
            store.submit(MovieCommand(.undo(undoLast), key: "u2"), token: 1)
            store.submit(MovieCommand(.undoNothing, key: "u2"), token: 2)
            let c = store.settle(results: 2)
            XCTAssertEqual(c.committed.count, 1, "a pending undo key wrote twice")
            XCTAssertEqual(c.commands.first { $0.token == 2 }?.replayed, true)
            XCTAssertEqual(
                try c.commands.first { $0.token == 2 }?.result.get(),
                try c.commands.first { $0.token == 1 }?.result.get())
            XCTAssertEqual(store.pendingCount, 0)
        }
    }

    func testAGroupCommitsInOrderDecidedAgainstTheProjectedState() throws {
        try forEachStore { store in
            // Decided against the projected state: the remove is pending, the toggle after it is not-found.
            store.submit(MovieCommand(.add(title: "Alien", image: "alien")), token: 1)
            store.submit(MovieCommand(.toggleWatched(movie: "alien"), expect: 11), token: 2)
            store.submit(MovieCommand(.remove(movie: "alien"), expect: 12), token: 3)
            store.submit(MovieCommand(.toggleWatched(movie: "alien")), token: 4)
            store.submit(MovieCommand(.add(title: "Alien", image: nil)), token: 5)
            store.flush()
            for t in 6...40 as ClosedRange<UInt64> {
                store.submit(MovieCommand(.toggleWatchedWithFriends(movie: "seven")), token: t)
                if t % 8 == 0 { store.flush() }  // several batches
            }
            XCTAssertEqual(store.latestSeq, 10, "the committed state moved before the commit")
            XCTAssertEqual(store.pendingCount, 40)
            var c = store.settle(results: 40)
            if store.refusesAtSubmit {
                XCTAssertEqual(
                    c.commands.map(\.token), [4, 1, 2, 3] + Array(5...40), "refusals first, then seq order")
            } else {
                // Refused at commit, in its place among the commits (which order answers come
                // in does not matter to a caller: each has its token).
                XCTAssertEqual(Set(c.commands.map(\.token)), Set(1...40))
                let refused = c.commands.firstIndex { $0.token == 4 }!
                c.commands.insert(c.commands.remove(at: refused), at: 0)
                XCTAssertEqual(c.commands.map(\.token), [4, 1, 2, 3] + Array(5...40), "seq order")
            }
            guard case .failure(let e) = c.commands[0].result else { return XCTFail("\(c.commands[0])") }
            XCTAssertEqual(e.code, .notFound)
            XCTAssertEqual(c.committed.map(\.seq), Array(11...49))
            XCTAssertEqual(c.committed[3].movie.id, "alien_2")
            XCTAssertEqual(try c.commands.dropFirst().map { try $0.result.get() }, c.committed)
            XCTAssertEqual(store.movie("seven")?.watchedWithFriends, true)  // 35 toggles
            XCTAssertEqual(store.latestSeq, 49)
            XCTAssertEqual(store.pendingCount, 0)
            XCTAssertEqual(try store.events(after: 10, limit: 100), c.committed)
        }
    }

    func testReadsPageTheLogWithEachEventsMovie() throws {
        try forEachStore { store in
            var written: [CommittedEvent] = []
            for cmd in [
                MovieCommand(.toggleWatched(movie: "seven")), MovieCommand(.toggleWatched(movie: "seven")),
                MovieCommand(.toggleWatchedWithFriends(movie: "seven")),
                MovieCommand(.remove(movie: "seven")),
                MovieCommand(.add(title: "Seven", image: nil)),
            ] {
                written += store.submitOK(cmd).map { [$0] } ?? []
            }
            XCTAssertEqual(try store.events(after: 10, limit: 100), written)
            XCTAssertEqual(try store.events(after: 10, limit: 2), Array(written.prefix(2)))
            XCTAssertEqual(try store.events(after: 12, limit: 2), Array(written[2...3]))
            XCTAssertEqual(try store.events(after: 14, limit: 100), [written[4]])
            XCTAssertEqual(try store.events(after: 15, limit: 100), [])
            XCTAssertEqual(try store.events(after: 1000, limit: 100), [])
            XCTAssertEqual(try store.events(after: 0, limit: 0), [])
            // Old versions, and the removed movie's last state.
            let page = try store.events(after: 10, limit: 100)
            XCTAssertEqual(page.map(\.movie.watched), [true, false, false, false, false])
            XCTAssertEqual(page.map(\.movie.watchedWithFriends), [false, false, true, true, false])
            XCTAssertEqual(page.map(\.movie.version), Array(11...15))
            XCTAssertEqual(page[3].kind, "removed")
            XCTAssertEqual(page[3].movie.id, "seven")
            XCTAssertEqual(page[4].movie.id, "seven_2", "a removed id is not given again")
            XCTAssertEqual(page[4].movie.watchedWithFriends, false)
        }
    }

    func testAReadAfterAnOutcomeIncludesIt() throws {
        try forEachStore { store in
            for n in 0..<20 {
                store.submit(MovieCommand(.toggleWatched(movie: "seven")), token: 1)
                let c = store.settle(results: 1)
                store.read(.events(after: 10, limit: 1000), token: 2)
                let r = store.settle(results: 0, reads: 1)
                XCTAssertEqual(
                    try r.reads.first?.result.get().last?.seq, try c.commands.first?.result.get().seq)
                XCTAssertEqual(try r.reads.first?.result.get().count, n + 1)
            }
        }
    }

    func testCloseAnswersWhatIsInFlight() throws {
        try forEachStore { store in
            store.submit(MovieCommand(.toggleWatched(movie: "seven")), token: 1)
            store.submit(MovieCommand(.toggleWatched(movie: "nope")), token: 2)
            store.flush()
            store.submit(MovieCommand(.toggleWatched(movie: "matrix")), token: 3)
            store.read(.events(after: 5, limit: 3), token: 4)
            let c = store.close()
            XCTAssertEqual(Set(c.commands.map(\.token)), [1, 2, 3])
            XCTAssertEqual(c.committed.map(\.seq), [11, 12])
            XCTAssertEqual(c.reads.map(\.token), [4])
            XCTAssertEqual(try c.reads.first?.result.get().map(\.seq), [6, 7, 8])
            XCTAssertEqual(store.pendingCount, 0)
            XCTAssertEqual(store.close(), Completions(), "close is idempotent")
            store.submit(MovieCommand(.toggleWatched(movie: "seven")), token: 5)
            store.read(.events(after: 0, limit: 3), token: 6)
            let after = store.completions()
            XCTAssertEqual(after.commands.map(\.token), [5])
            XCTAssertEqual(after.reads.map(\.token), [6])
            XCTAssertThrowsError(try after.commands[0].result.get())
            XCTAssertThrowsError(try after.reads[0].result.get())
        }
    }

    // MARK: - Restore and undo (issue 14)

    func testRestoreBringsARemovedMovieBackThroughTheLog() throws {
        try forEachStore { store in
            _ = store.submitOK(MovieCommand(.toggleWatched(movie: "matrix")))
            let rm = try XCTUnwrap(store.submitOK(MovieCommand(.remove(movie: "matrix"))))
            XCTAssertEqual(rm.seq, 12)
            let refused = store.refusal(MovieCommand(.restore(movie: "matrix"), expect: 11))
            XCTAssertEqual(refused?.code, .conflict)
            XCTAssertEqual(refused?.reason, .version)
            let back = try XCTUnwrap(
                store.submitOK(MovieCommand(.restore(movie: "matrix"), expect: 12, key: "r")))
            XCTAssertEqual(back.kind, "restored")
            XCTAssertNil(back.undoes)
            XCTAssertEqual(
                back.movie,
                Movie(id: "matrix", title: "The Matrix", image: "matrix", watched: true, version: 13))
            XCTAssertEqual(store.stateCopy.movies.map(\.id), MovieState.seedCatalogue.map(\.movieID))
            XCTAssertEqual(
                try store.immediate(MovieCommand(.restore(movie: "matrix"), key: "r"))?.result.get(), back)
            let live = store.refusal(MovieCommand(.restore(movie: "matrix")))
            XCTAssertEqual(live?.code, .conflict)
            XCTAssertEqual(live?.reason, .notRemoved)
            XCTAssertEqual(store.refusal(MovieCommand(.restore(movie: "alien")))?.code, .notFound)
            XCTAssertEqual(store.refusal(MovieCommand(.remove(movie: "seven"), key: "r"))?.reason, .key)
            XCTAssertEqual(try store.events(after: 12, limit: 10), [back])
            XCTAssertEqual(store.latestSeq, 13)
        }
    }

    func testAnUndoAppendsTheCompensationLinkedToTheOriginal() throws {
        try forEachStore { store in
            func undo(_ movie: String, _ original: UInt64, _ c: Undo.Compensation, at version: UInt64)
                -> MovieCommand
            {
                MovieCommand(.undo(Undo(movie: movie, original: original, compensation: c, version: version)))
            }
            let add = try XCTUnwrap(store.submitOK(MovieCommand(.add(title: "Alien", image: nil))))
            let rm = try XCTUnwrap(store.submitOK(MovieCommand(.remove(movie: "seven"))))
            let back = try XCTUnwrap(store.submitOK(undo("seven", rm.seq, .restore, at: rm.seq)))
            XCTAssertEqual(back.kind, "restored")
            XCTAssertEqual(back.undoes, 12)
            XCTAssertEqual(back.movie.id, "seven")
            let gone = try XCTUnwrap(store.submitOK(undo("alien", add.seq, .remove, at: add.seq)))
            XCTAssertEqual(gone.kind, "removed")
            XCTAssertEqual(gone.undoes, 11)
            XCTAssertNil(store.movie("alien"))
            // Decided against the projected state: a pending toggle by someone else changes it.
            store.submit(MovieCommand(.toggleWatched(movie: "matrix")), token: 1)
            store.submit(undo("matrix", 6, .remove, at: 6), token: 2)
            let c = store.settle(results: 2)
            guard case .failure(let e) = c.resultByToken[2] else { return XCTFail("\(c)") }
            XCTAssertEqual(e.code, .conflict)
            XCTAssertEqual(e.reason, .changedSince)
            XCTAssertEqual(c.committed.count, 1, "nothing written for the refused undo")
            // The log keeps the link: a page read from it says what each event undoes.
            let page = try store.events(after: 10, limit: 10)
            XCTAssertEqual(page.map(\.undoes), [nil, nil, 12, 11, nil])
            XCTAssertEqual(page[2], back)
            XCTAssertEqual(page[3], gone)
        }
    }
}

// What every Store must do, whatever keeps its log: each test runs once per implementation.
//
// Not a base class with one subclass per implementation: on Linux, XCTest runs the tests that
// `swift test` discovers, and discovery lists the test methods a class declares, not those it
// inherits (a subclass that only says how to make a store would run nothing). What the classes
// that run per implementation share, helpers only, is EveryStoreCase: a failure names the
// implementation it happened with.
import Movies
import StoreCore
import StorePostgres
import StoreSQLite
import StoreTestSupport
import TestSupport
import XCTest

final class StoreContractTests: EveryStoreCase {
    /// Every implementation of `Store`, and how a test makes a new one: the seed catalogue, seq 10.
    static let implementations: [(name: String, make: @Sendable (XCTestCase) throws -> any Store)] = [
        ("SQLiteStore", { try SQLiteStore.open(directory: makeStateDirectory($0)) }),
        ("InMemoryStore", { _ in InMemoryStore() }),
        // A database of its own per test, on one cluster for the class (PostgresStoreTests.swift).
        ("PostgresStore", { try PostgresStore.open(conninfo: SharedCluster.newDatabase($0)) }),
    ]

    /// The implementations that keep their log beyond the process: where a new log is (a state
    /// directory, a database's connection string), and how a daemon opens it, again and again.
    static let durable:
        [(
            name: String, place: @Sendable (XCTestCase) throws -> String,
            open: @Sendable (String) throws -> any Store
        )] =
            [
                ("SQLiteStore", { makeStateDirectory($0) }, { try SQLiteStore.open(directory: $0) }),
                (
                    "PostgresStore", { try SharedCluster.newDatabase($0) },
                    { try PostgresStore.open(conninfo: $0) }
                ),
            ]

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
            XCTAssertEqual(Set(log.map(\.kind)), [.added])
            XCTAssertEqual(log.map(\.movie), store.stateCopy.movies)
            XCTAssertTrue(store.startupFields.contains { $0 == ("SEQ", "10") })
            XCTAssertTrue(store.startupFields.contains { $0 == ("MOVIES", "10") })
        }
    }

    func testEachCommandsOutcomeComesBackUnderItsToken() throws {
        try forEachStore { store in
            let w = store.submitOK(MovieCommand(.toggleWatched(movie: "matrix"), expect: 6))
            XCTAssertEqual(w?.seq, 11)
            XCTAssertEqual(w?.kind, .watchedToggled)
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
            XCTAssertEqual(r?.kind, .removed)
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
            XCTAssertEqual(page[3].kind, .removed)
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
            XCTAssertEqual(back.kind, .restored)
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
            XCTAssertEqual(back.kind, .restored)
            XCTAssertEqual(back.undoes, 12)
            XCTAssertEqual(back.movie.id, "seven")
            let gone = try XCTUnwrap(store.submitOK(undo("alien", add.seq, .remove, at: add.seq)))
            XCTAssertEqual(gone.kind, .removed)
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

    // MARK: - Authors (issue 46)

    /// `by` goes from the command to its event and comes back from every way an event is read:
    /// the outcome, the committed events fanned out, pages of the log, and a key replayed (the
    /// original event with its original author, whoever sends the key again).
    func testAnEventKeepsItsAuthorThroughCommitsReadsAndKeyReplays() throws {
        try forEachStore { store in
            let toggle = MovieCommand(.toggleWatched(movie: "seven"), key: "k1", by: "alice")
            let alice = try XCTUnwrap(store.submitOK(toggle))
            XCTAssertEqual(alice.by, "alice")
            let anonymous = try XCTUnwrap(store.submitOK(MovieCommand(.toggleWatched(movie: "matrix"))))
            XCTAssertNil(anonymous.by)
            // The same key from another person while the first is pending: the first's event.
            store.submit(
                MovieCommand(.add(title: "Alien", image: nil), key: "k2", by: "zoë@example.org"), token: 1)
            store.submit(MovieCommand(.add(title: "Alien", image: nil), key: "k2", by: "bob"), token: 2)
            let c = store.settle(results: 2)
            XCTAssertEqual(c.committed.map(\.by), ["zoë@example.org"])
            let added = try XCTUnwrap(c.committed.first)
            XCTAssertEqual(try c.resultByToken[1]?.get(), added)
            XCTAssertEqual(try c.resultByToken[2]?.get(), added)
            // An undo is whoever undid's.
            let undo = try XCTUnwrap(
                store.submitOK(
                    MovieCommand(
                        .undo(
                            Undo(
                                movie: "seven", original: alice.seq, compensation: .toggleWatched, version: 11
                            )),
                        by: "bob")))
            XCTAssertEqual(undo.by, "bob")
            XCTAssertEqual(undo.undoes, alice.seq)
            let written = [alice, anonymous, added, undo]
            XCTAssertEqual(written.map(\.by), ["alice", nil, "zoë@example.org", "bob"])
            XCTAssertEqual(try store.events(after: 10, limit: 100), written)
            XCTAssertEqual(try store.events(after: 11, limit: 2), Array(written[1...2]))
            XCTAssertEqual(try store.events(after: 0, limit: 10).map(\.by), Array(repeating: nil, count: 10))
            // Sent again later, by anyone or nobody: the original event, with its author.
            for by in ["alice", "bob", nil] as [String?] {
                let again = store.immediate(MovieCommand(.toggleWatched(movie: "seven"), key: "k1", by: by))
                XCTAssertEqual(again?.replayed, true)
                XCTAssertEqual(try again?.result.get(), alice)
            }
            let addAgain = store.immediate(MovieCommand(.add(title: "Alien", image: nil), key: "k2"))
            XCTAssertEqual(try addAgain?.result.get().by, "zoë@example.org")
        }
    }

    /// `.eventsBy`: one person's changes, in seq order, paged as `.events` is; an event nobody is
    /// known to have made is nobody's.
    func testEventsByPagesOnePersonsChanges() throws {
        try forEachStore { store in
            let people: [String?] = ["alice", "bob", nil, "alice", "alice", "bob", nil, "alice"]
            var written: [CommittedEvent] = []
            for (i, by) in people.enumerated() {
                let movie = i % 2 == 0 ? "seven" : "inception"
                written +=
                    store.submitOK(MovieCommand(.toggleWatched(movie: movie), by: by)).map { [$0] } ?? []
            }
            let alices = written.filter { $0.by == "alice" }
            XCTAssertEqual(alices.map(\.seq), [11, 14, 15, 18])
            XCTAssertEqual(try store.events(by: "alice", after: 0, limit: 100), alices)
            // The next page starts after the last seq of the one before.
            let first = try store.events(by: "alice", after: 0, limit: 3)
            XCTAssertEqual(first, Array(alices.prefix(3)))
            XCTAssertEqual(try store.events(by: "alice", after: first.last!.seq, limit: 3), [alices[3]])
            XCTAssertEqual(try store.events(by: "alice", after: 11, limit: 1), [alices[1]])
            XCTAssertEqual(try store.events(by: "alice", after: 12, limit: 100), Array(alices[1...]))
            XCTAssertEqual(try store.events(by: "alice", after: 18, limit: 100), [])
            XCTAssertEqual(try store.events(by: "alice", after: 1000, limit: 100), [])
            XCTAssertEqual(try store.events(by: "alice", after: 0, limit: 0), [])
            XCTAssertEqual(try store.events(by: "bob", after: 0, limit: 100).map(\.seq), [12, 16])
            XCTAssertEqual(
                try store.events(by: "bob", after: 0, limit: 100).map(\.movie.id), ["inception", "inception"])
            // Someone who changed nothing, another spelling, and names that might stand for
            // "nobody": none finds a thing.
            for name in ["carol", "Alice", "alice ", "", "nil", "null", "NULL"] {
                XCTAssertEqual(try store.events(by: name, after: 0, limit: 100), [], name)
            }
            // A read after an outcome includes it, and never goes past the committed state.
            for n in 1...5 {
                store.submit(MovieCommand(.toggleWatched(movie: "matrix"), by: "carol"), token: 1)
                store.flush()
                store.read(.eventsBy(person: "carol", after: 10, limit: 100), token: 2)
                var page: [CommittedEvent]?
                var outcome: CommittedEvent?
                let deadline = Date().addingTimeInterval(5)
                while page == nil || outcome == nil, Date() < deadline {
                    let c = store.completions()
                    if let r = c.reads.first {
                        page = try r.result.get()
                        XCTAssertLessThanOrEqual(
                            page?.last?.seq ?? 0, store.latestSeq, "a read past the state")
                    }
                    if let o = c.commands.first { outcome = try o.result.get() }
                    var p = pollfd(fd: store.completionFD, events: Int16(POLLIN), revents: 0)
                    _ = poll(&p, 1, 20)
                }
                XCTAssertEqual(outcome?.by, "carol")
                XCTAssertGreaterThanOrEqual(page?.count ?? 0, n - 1)
                XCTAssertEqual(try store.events(by: "carol", after: 10, limit: 100).count, n)
                XCTAssertEqual(try store.events(by: "carol", after: 10, limit: 100).last, outcome)
            }
        }
    }

    /// What a log keeps of its authors is there after a restart: in pages, in one person's
    /// pages, and in a key's replay found in the log (not in what the store remembered).
    func testAuthorsAreThereAfterARestart() throws {
        for (name, place, open) in StoreContractTests.durable {
            implementation = name
            let location = try place(self)
            let toggle = MovieCommand(.toggleWatched(movie: "seven"), key: "k1", by: "alice")
            let first = try open(location)
            let written = [
                first.submitOK(toggle), first.submitOK(MovieCommand(.remove(movie: "inception"))),
                first.submitOK(MovieCommand(.add(title: "Alien", image: nil), by: "bob")),
            ].compactMap { $0 }
            XCTAssertEqual(written.map(\.by), ["alice", nil, "bob"])
            first.close()
            let store = try open(location)
            defer { store.close() }
            XCTAssertEqual(try store.events(after: 10, limit: 10), written)
            XCTAssertEqual(try store.events(by: "bob", after: 0, limit: 10), [written[2]])
            let again = store.outcome(MovieCommand(.toggleWatched(movie: "seven"), key: "k1", by: "carol"))
            XCTAssertEqual(again?.replayed, true)
            XCTAssertEqual(try again?.result.get(), written[0])
            let more = try XCTUnwrap(
                store.submitOK(MovieCommand(.toggleWatched(movie: "seven"), by: "alice")))
            XCTAssertEqual(try store.events(by: "alice", after: 0, limit: 10), [written[0], more])
        }
        implementation = ""
    }
}

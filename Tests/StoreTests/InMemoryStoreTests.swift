import Movies
import StoreCore
import StoreTestSupport
import XCTest

/// The in-memory store's test hooks: what a fake store must be able to make happen, with the
/// outcomes the SQLite store has in the same case (SQLiteStoreTests' fault injection).
final class InMemoryStoreTests: XCTestCase {
    func testAFailedCommitFailsWhatWasInItAndDecidesAgainWhatWasBehind() throws {
        let store = InMemoryStore()
        let before = store.stateCopy
        store.failNextCommit()
        store.submit(MovieCommand(.add(title: "Alien", image: nil)), token: 1)
        store.flush()
        store.submit(MovieCommand(.toggleWatched(movie: "alien")), token: 2)
        store.submit(MovieCommand(.toggleWatched(movie: "seven")), token: 3)
        // The add's commit fails before the two behind it are flushed.
        var c = store.completions()
        XCTAssertEqual(c.commands.map(\.token), [1, 2])
        c.append(store.settle(results: 1))
        let byToken = c.resultByToken
        guard case .failure(let e1) = byToken[1], case .failure(let e2) = byToken[2],
            case .success(let ok3) = byToken[3]
        else {
            return XCTFail("unexpected results: \(c.commands)")
        }
        XCTAssertEqual(e1.code, .storage)
        XCTAssertFalse(e1.fatal)
        XCTAssertEqual(e2.code, .notFound, "decided again: there is no alien")
        XCTAssertEqual(ok3.seq, 11)
        XCTAssertEqual(ok3.movie.watched, !before.movie("seven")!.watched)
        XCTAssertNil(c.fatal)
        XCTAssertEqual(store.pendingCount, 0)
    }

    func testAFatalCommitStopsTheStore() throws {
        let store = InMemoryStore()
        store.failNextCommit(StoreError(.storage, "I/O error", fatal: true))
        store.submit(MovieCommand(.toggleWatched(movie: "matrix")), token: 1)
        store.flush()
        store.submit(MovieCommand(.remove(movie: "inception")), token: 2)
        let c = store.settle(results: 2)
        XCTAssertEqual(c.fatal?.fatal, true)
        XCTAssertTrue(c.commands.allSatisfy { (try? $0.result.get()) == nil })
        XCTAssertEqual(store.latestSeq, 10)
        XCTAssertEqual(store.refusal(MovieCommand(.toggleWatched(movie: "godfather")))?.fatal, true)
    }

    func testACommandRefusedAtCommitWritesNothingAndThoseBehindAreDecidedAgain() throws {
        let store = InMemoryStore()
        store.refuseAtCommit()
        store.submit(MovieCommand(.add(title: "Alien", image: nil)), token: 1)
        store.submit(MovieCommand(.toggleWatched(movie: "alien")), token: 2)
        store.submit(MovieCommand(.toggleWatched(movie: "seven"), key: "k"), token: 3)
        let c = store.settle(results: 3)
        XCTAssertEqual(c.commands.map(\.token), [1, 2, 3])
        XCTAssertEqual((try? c.commands[0].result.get()) == nil, true)
        if case .failure(let e) = c.commands[0].result { XCTAssertEqual(e.code, .conflict) }
        if case .failure(let e) = c.commands[1].result {
            XCTAssertEqual(e.code, .notFound)
        } else {
            XCTFail()
        }
        XCTAssertEqual(try c.commands[2].result.get().seq, 11)
        XCTAssertEqual(c.committed.map(\.seq), [11])
        XCTAssertEqual(
            store.immediate(MovieCommand(.toggleWatched(movie: "seven"), key: "k"))?.replayed, true)
    }

    func testHeldCommitsWaitUntilReleased() throws {
        let store = InMemoryStore()
        store.holdsCommits = true
        store.submit(MovieCommand(.toggleWatched(movie: "seven")), token: 1)
        store.submit(MovieCommand(.toggleWatched(movie: "seven"), expect: 7), token: 2)
        store.flush()
        XCTAssertEqual(store.completions().commands.map(\.token), [2], "a conflict on the projected state")
        XCTAssertEqual(store.completions(), Completions())
        XCTAssertEqual(store.pendingCount, 1)
        XCTAssertEqual(store.latestSeq, 10)
        store.holdsCommits = false
        var p = pollfd(fd: store.completionFD, events: Int16(POLLIN), revents: 0)
        XCTAssertEqual(poll(&p, 1, 0), 1, "a release wakes the loop")
        let c = store.completions()
        XCTAssertEqual(c.committed.map(\.seq), [11])
        XCTAssertEqual(store.pendingCount, 0)
    }
}

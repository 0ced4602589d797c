// The stores decide commands at different moments: SQLiteStore and InMemoryStore at submit,
// against their projected state; PostgresStore again at commit, under the appends' lock, against
// the state caught up with what other daemons wrote. Both decisions are CommandDecision.decide
// (StoreCore); this suite holds them to it from the outside: one script of commands (accepted,
// refused for every reason, replayed from a key, moved, undone), alone and several in one batch,
// gives the same outcomes, in the same words, and the same log, in every store, and in two
// PostgreSQL daemons taking turns on one database, where each decision of the one is made at
// commit on what the other wrote.
import Movies
import StoreCore
import StorePostgres
import StoreSQLite
import StoreTestSupport
import XCTest

final class StoreDecisionParityTests: XCTestCase {
    override class func tearDown() {
        SharedCluster.destroy()
        super.tearDown()
    }

    /// A step of the script: the commands to submit together (one batch), made from the outcomes
    /// of the steps before it (their first command's), to undo what one of them did.
    typealias Step = @Sendable ([CommandResult]) -> [MovieCommand]

    static func toggle(_ movie: String, expect: UInt64? = nil, key: String? = nil) -> MovieCommand {
        MovieCommand(.toggleWatched(movie: movie), expect: expect, key: key, by: "alice")
    }

    /// The undo of what step `n`'s first command committed, expecting the movie as it left it.
    static func undo(_ n: Int, key: String? = nil) -> Step {
        { results in
            guard case .success(let e) = results[n].result, let c = Undo.Compensation(undoing: e) else {
                return [MovieCommand(.undoNothing, key: key)]
            }
            let undo = Undo(movie: e.movie.id, original: e.seq, compensation: c, version: e.movie.version)
            return [MovieCommand(.undo(undo), key: key, by: "bob")]
        }
    }

    static let script: [Step] = [
        // 0-2: an add, its key again (a replay), the key for another command (a conflict).
        { _ in [MovieCommand(.add(title: "Heat", image: nil), key: "k-add", by: "alice")] },
        { _ in [MovieCommand(.add(title: "Heat", image: nil), key: "k-add", by: "alice")] },
        { _ in [toggle("heat", key: "k-add")] },
        // 3-6: refusals: not found, an old version, a blank title, `expect` on an add.
        { _ in [toggle("no_such_movie")] },
        { _ in [toggle("godfather", expect: 2)] },
        { _ in [MovieCommand(.add(title: "   ", image: nil))] },
        { _ in [MovieCommand(.add(title: "Ronin", image: nil), expect: 3)] },
        // 7-9: a toggle at its version, a remove, a restore, a restore of a movie not removed.
        { _ in [toggle("seven", expect: 7, key: "k-seven")] },
        { _ in [MovieCommand(.remove(movie: "matrix"), by: "bob")] },
        { _ in [MovieCommand(.restore(movie: "matrix"), key: "k-restore")] },
        { _ in [MovieCommand(.restore(movie: "matrix"))] },
        // 11-13: moves: after a movie, first, after a movie that is not there.
        { _ in [MovieCommand(.move(movie: "seven", to: .after("inception")), key: "k-move", by: "carol")] },
        { _ in [MovieCommand(.move(movie: "godfather", to: .first))] },
        { _ in [MovieCommand(.move(movie: "seven", to: .after("no_such_movie")))] },
        // 14-17: undos: of the move, of the remove (changed since: restored), the move's undo
        // again by its key, and an undo with nothing to undo.
        undo(11, key: "k-undo"),
        undo(8),
        undo(11, key: "k-undo"),
        { _ in [MovieCommand(.undoNothing, key: "k-nothing")] },
        // 18: one batch: a key and the same key again (it waits for the first, then replays),
        // a command decided after them on what the first did (an old version), a new movie
        // and a toggle of it, a key reused by another command, a restore of a live movie.
        { _ in
            [
                toggle("inception", key: "k-batch"), toggle("inception", key: "k-batch"),
                toggle("inception", expect: 5), MovieCommand(.add(title: "Ronin", image: "r")),
                toggle("ronin"), MovieCommand(.remove(movie: "inception"), key: "k-batch"),
                MovieCommand(.restore(movie: "seven")),
            ]
        },
        // 19-20: keys in the log, long after: replayed, and a conflict.
        { _ in [toggle("seven", expect: 7, key: "k-seven")] },
        { _ in [MovieCommand(.remove(movie: "seven"), key: "k-move")] },
    ]

    /// Runs the script on `stores`, step `i` on `stores[i % count]`; every outcome in token
    /// order, the words of each, and the log after.
    func run(_ stores: [any Store]) throws -> (outcomes: [String], log: [String]) {
        var firsts: [CommandResult] = []
        var outcomes: [String] = []
        var token: UInt64 = 0
        for (i, step) in StoreDecisionParityTests.script.enumerated() {
            let store = stores[i % stores.count]
            let commands = step(firsts)
            let first = token + 1
            for c in commands {
                token += 1
                store.submit(c, token: token)
            }
            let results = store.settle(results: commands.count).commands.sorted { $0.token < $1.token }
            XCTAssertEqual(results.map(\.token), Array(first...token), "step \(i)")
            guard let r = results.first else { throw CancellationError() }
            firsts.append(r)
            outcomes += results.map { "\(i) \(StoreDecisionParityTests.words($0))" }
        }
        // Every store in turn has seen the whole log (the last commit of each settled there).
        let log = try stores[0].events(after: 0, limit: 1000).map(StoreDecisionParityTests.words)
        return (outcomes, log)
    }

    /// An outcome in words, without its time (each store stamps its own).
    static func words(_ r: CommandResult) -> String {
        switch r.result {
        case .success(let e): "\(r.replayed ? "replayed" : "committed") \(words(e))"
        case .failure(let error):
            "refused \(error.code.rawValue) \(error.reason.map { "\($0)" } ?? "-"): \(error.message)"
        }
    }

    static func words(_ e: CommittedEvent) -> String {
        "\(e.seq) \(e.kind) \(e.movie) undoes \(e.undoes.map(String.init) ?? "-") by \(e.by ?? "-") "
            + "to \(e.to.map { "\($0)" } ?? "-") from \(e.from.map { "\($0)" } ?? "-")"
    }

    /// `got` is `expected`, or the first line where they part is the failure.
    func assertSame(
        _ got: [String], _ expected: [String], _ name: String, file: StaticString = #filePath,
        line: UInt = #line
    ) {
        guard let i = zip(got, expected).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset
        else {
            return XCTAssertEqual(got.count, expected.count, "\(name): lines", file: file, line: line)
        }
        XCTFail(
            "\(name), line \(i):\n  got      \(got[i])\n  expected \(expected[i])", file: file, line: line)
    }

    func testEveryStoreDecidesTheScriptAlike() throws {
        let sqlite = try SQLiteStore.open(directory: makeStateDirectory(self))
        defer { sqlite.close() }
        let expected = try run([sqlite])
        // The script means what it says: every kind of outcome is in it.
        let all = expected.outcomes.joined(separator: "\n")
        for words in [
            "committed", "replayed", "not-found", "bad-request", "conflict version", "conflict key",
            "conflict notRemoved", "conflict changedSince", "conflict nothingToUndo",
        ] {
            XCTAssertTrue(all.contains(words), "no \(words) in:\n\(all)")
        }

        let memory = InMemoryStore()
        defer { memory.close() }
        let inMemory = try run([memory])
        assertSame(inMemory.outcomes, expected.outcomes, "InMemoryStore")
        assertSame(inMemory.log, expected.log, "InMemoryStore")

        let conninfo = try SharedCluster.newDatabase(self)
        let postgres = try PostgresStore.open(conninfo: conninfo)
        defer { postgres.close() }
        let one = try run([postgres])
        assertSame(one.outcomes, expected.outcomes, "PostgresStore")
        assertSame(one.log, expected.log, "PostgresStore")

        // Two daemons on one database, taking turns: each decides at commit on the other's events.
        let shared = try SharedCluster.newDatabase(self)
        let a = try PostgresStore.open(conninfo: shared)
        defer { a.close() }
        let b = try PostgresStore.open(conninfo: shared)
        defer { b.close() }
        let two = try run([a, b])
        assertSame(two.outcomes, expected.outcomes, "two PostgresStores")
        assertSame(two.log, expected.log, "two PostgresStores")
    }
}

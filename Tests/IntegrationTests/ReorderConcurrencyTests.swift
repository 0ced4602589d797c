// Issue 48, point 4: 16 people moving rows at once. Each is a writer sending random moves (some
// with an `expect` taken from its own, possibly stale, view: conflicts are part of the test) and
// a front end following the daemon's movie events from its first `list`, applying each as the
// page and the TUI do (a moved movie goes right after `after`, or first). When the writers are
// done, every front end's list must be a fresh `list`: the same movies, none lost, none twice,
// in the same order; and a restart must fold the log to that order again. On SQLite, and on
// PostgreSQL with two daemons sharing the database.
import Foundation
import Glibc
import JSONCodec
import Movies
import SwipedClient
import TestSupport
import XCTest

/// A front end's list, kept by applying movie events in seq order (protocol.md, "Over a
/// WebSocket": what the page does; the TUI does the same).
struct FollowedList {
    var ids: [String]
    var seq: UInt64

    mutating func apply(_ e: CommittedEvent) -> String? {
        guard e.seq == seq + 1 else { return "event \(e.seq) after \(seq): a gap or a repeat" }
        seq = e.seq
        switch e.kind {
        case MovieEvent.Kind.moved:
            guard let i = ids.firstIndex(of: e.movie.id), let to = e.to else {
                return "seq \(e.seq): moved \(e.movie.id), which this list does not hold, or without after"
            }
            ids.remove(at: i)
            switch to {
            case .first: ids.insert(e.movie.id, at: 0)
            case .after(let other):
                guard let j = ids.firstIndex(of: other) else {
                    return "seq \(e.seq): moved after \(other), which this list does not hold"
                }
                ids.insert(e.movie.id, at: j + 1)
            }
        case MovieEvent.Kind.added:
            ids.append(e.movie.id)
        default:
            break  // toggles change no order; this test removes nothing
        }
        return nil
    }
}

/// What a run of movers did.
struct MoveTally: Sendable {
    var moved = 0
    var conflicts = 0
    var failures: [String] = []
    var head: UInt64 = 0
}

/// Runs `clients` movers, client i on `sockets[i % count]`, `moves` moves in all, each mover
/// followed by a front end of its own; then checks every front end against a fresh `list` of its
/// daemon. Returns the final order.
func runMovers(sockets: [String], clients: Int, moves: Int, seed: UInt64) throws -> [String] {
    let tally = Locked(MoveTally())
    let lists = Locked<[Int: FollowedList]>([:])
    let started = Locked(0)
    let done = Locked(false)
    let following = DispatchGroup()
    following.enter()
    // The front ends: each lists, subscribes from that seq, and applies events until the head.
    Thread.detachNewThread {
        runThreads(clients) { i in
            do throws(ClientError) {
                let c = try SwipedClient(socketPath: sockets[i % sockets.count], timeout: 60)
                let (seq, movies) = try c.list()
                var list = FollowedList(ids: movies.map(\.id), seq: seq)
                _ = try c.subscribe(from: seq)
                started.with { $0 += 1 }
                // Bounded: at most 2 minutes after the movers are done.
                var deadline = Double.infinity
                while list.seq < (done.get ? tally.get.head : .max) {
                    if done.get && deadline == .infinity { deadline = monotonicSeconds() + 120 }
                    if monotonicSeconds() > deadline {
                        tally.with { $0.failures.append("front end \(i): stuck at seq \(list.seq)") }
                        break
                    }
                    let event: ServerEvent?
                    do throws(ClientError) {
                        event = try c.nextEvent(timeout: 0.2)
                    } catch {
                        if error.kind == .timeout { continue }
                        throw error
                    }
                    guard let event else {
                        tally.with { $0.failures.append("front end \(i): the daemon ended the stream") }
                        break
                    }
                    if case .movie(let e, _) = event, let problem = list.apply(e) {
                        tally.with { $0.failures.append("front end \(i): \(problem)") }
                        break
                    }
                }
                lists.with { $0[i] = list }
            } catch {
                tally.with { $0.failures.append("front end \(i): \(error)") }
            }
        }
        following.leave()
    }
    while started.get < clients { usleep(5_000) }
    // The movers, all at once.
    runThreads(clients) { i in
        var rng = SplitMix64(seed: seed &+ UInt64(i))
        do throws(ClientError) {
            let c = try SwipedClient(socketPath: sockets[i % sockets.count], timeout: 60)
            var view: [Movie] = []
            let mine = moves / clients + (i < moves % clients ? 1 : 0)
            for n in 0..<mine {
                if n % 50 == 0 { view = try c.list().movies }
                let movie = view.randomElement(using: &rng)!
                var args: [(String, JSON)] = [("movie", .string(movie.id))]
                if Int.random(in: 0..<20, using: &rng) == 0 {
                    args.append(("after", .null))
                } else {
                    var other = view.randomElement(using: &rng)!
                    while other.id == movie.id { other = view.randomElement(using: &rng)! }
                    args.append(("after", .string(other.id)))
                }
                if n % 4 == 0 { args.append(("expect", .number(JSONNumber(Int64(movie.version))))) }
                let reply = try c.exchange("move", args)
                if reply.isOK {
                    let seq = reply.object.uint("seq") ?? 0
                    tally.with {
                        $0.moved += 1
                        $0.head = max($0.head, seq)
                    }
                } else if reply.error?.code == "conflict" {
                    tally.with { $0.conflicts += 1 }
                } else {
                    tally.with { $0.failures.append("mover \(i): \(reply.line)") }
                }
            }
        } catch {
            tally.with { $0.failures.append("mover \(i): \(error)") }
        }
    }
    // Every daemon at the same head (another daemon's events arrive a little later).
    let head = tally.get.head
    for socket in sockets {
        let deadline = monotonicSeconds() + 30
        while try SwipedClient(socketPath: socket).list().seq < head && monotonicSeconds() < deadline {
            usleep(10_000)
        }
    }
    done.with { $0 = true }
    XCTAssertEqual(following.wait(timeout: .now() + 120), .success, "the front ends did not reach the head")
    let t = tally.get
    for failure in t.failures.prefix(20) { XCTFail(failure) }
    XCTAssertEqual(t.moved + t.conflicts, moves)
    XCTAssertGreaterThan(t.moved, moves / 2)
    var order: [String] = []
    for (n, socket) in sockets.enumerated() {
        let (seq, movies) = try SwipedClient(socketPath: socket).list()
        let ids = movies.map(\.id)
        XCTAssertEqual(Set(ids).count, ids.count, "\(socket): a movie twice")
        if n == 0 { order = ids } else { XCTAssertEqual(ids, order, "\(socket): another order") }
        XCTAssertGreaterThanOrEqual(seq, head)
    }
    let followed = lists.get
    XCTAssertEqual(followed.count, clients)
    for (i, list) in followed.sorted(by: { $0.key < $1.key }) {
        XCTAssertEqual(list.ids, order, "front end \(i) ends with another list")
    }
    print(
        "reorder: \(sockets.count) daemon(s), \(clients) movers, \(t.moved) moves and \(t.conflicts) conflicts, "
            + "\(clients) front ends equal to list")
    return order
}

final class ReorderConcurrencyTests: XCTestCase {
    /// Adds movies until the list holds `count`.
    private func fill(_ socket: String, to count: Int) throws {
        let c = try SwipedClient(socketPath: socket)
        for n in try c.list().movies.count..<count {
            XCTAssertTrue(try c.exchange("add", [("title", .string("Film \(n)"))]).isOK)
        }
    }

    func testSixteenMoversOnSQLiteEndWithEveryListEqualAndARestartFoldsTheSameOrder() throws {
        let daemon = try SwipedDaemon(prefix: "swiped-reorder")
        try fill(daemon.socketPath, to: 100)
        let order = try runMovers(sockets: [daemon.socketPath], clients: 16, moves: 10_000, seed: 48)
        XCTAssertEqual(order.count, 100)
        // Started again from the snapshot written on stop: the same order; and `verify` folds
        // the log from nothing and finds every snapshot equal to its fold.
        let again = try daemon.restart()
        XCTAssertEqual(try SwipedClient(socketPath: again.socketPath).list().movies.map(\.id), order)
        XCTAssertEqual(try again.stop(), .exited(0))
        let verify = try SwipedDaemon.run(["verify", "--state", again.stateDirectory])
        XCTAssertEqual(verify.status, .exited(0), verify.standardError)
        XCTAssertTrue(verify.standardOutput.hasPrefix("ok: "), verify.standardOutput)
    }
}

final class PostgresReorderTests: PostgresTestCase {
    func testSixteenMoversOnTwoDaemonsOfOneDatabaseEndWithEveryListEqual() throws {
        try startDaemons(2)
        try fill(sockets[0], to: 100)
        let order = try runMovers(sockets: sockets, clients: 16, moves: 10_000, seed: 4848)
        // The log's fold, from nothing, is that order; and so is a daemon started again.
        let (state, problems) = checkFold(try wholeHistory(sockets[1]))
        for problem in problems { XCTFail(problem) }
        XCTAssertEqual(state.movies.map(\.id), order)
        XCTAssertEqual(try daemons[0].stop(), .exited(0))
        try restartDaemon(0)
        XCTAssertEqual(try SwipedClient(socketPath: sockets[0]).list().movies.map(\.id), order)
    }

    private func fill(_ socket: String, to count: Int) throws {
        let c = try SwipedClient(socketPath: socket)
        for n in try c.list().movies.count..<count {
            XCTAssertTrue(try c.exchange("add", [("title", .string("Film \(n)"))]).isOK)
        }
    }
}

// What the Postgres* tests share: a PostgreSQL cluster of the test's own (TestSupport's
// PostgresCluster) with several real `swiped --postgres` daemons on it, writers that send random
// commands with idempotency keys and retry them until answered, subscribers that follow a
// daemon's `movie` events across its restarts, and the checks: one gapless sequence, every
// event's movie the fold of the events before it, every acknowledged write once at its seq.

import Foundation
import Glibc
import JSONCodec
import Movies
import SwipedClient
import TestSupport
import XCTest

/// A cluster and the daemons on it, for one test; everything is stopped and reaped after it
/// (each daemon must then exit 0).
class PostgresTestCase: XCTestCase {
    var cluster: PostgresCluster!
    /// The daemons, by index; a slot is replaced when the test restarts that daemon.
    var daemons: [SwipedDaemon] = []

    override func setUpWithError() throws {
        cluster = try PostgresCluster(prefix: "swiped-pg")
    }

    override func tearDownWithError() throws {
        defer {
            daemons = []
            cluster = nil
        }
        for daemon in daemons where daemon.process.isRunning {
            XCTAssertEqual(try daemon.stop(grace: .seconds(10)), .exited(0), daemon.process.standardError)
        }
    }

    /// The arguments of every daemon of the test.
    var daemonArguments: [String] { ["--postgres", cluster.conninfo] }

    /// Starts `count` daemons on the cluster, all at once (so that they create the schema
    /// together, as daemons started by one deployment would), and waits until each is ready.
    func startDaemons(_ count: Int) throws {
        let started = Locked<[Int: Result<SwipedDaemon, Error>]>([:])
        let arguments = daemonArguments
        runThreads(count) { i in
            let result = Result {
                try SwipedDaemon(arguments: arguments, prefix: "swiped-pgd", timeout: .seconds(30))
            }
            started.with { $0[i] = result }
        }
        daemons = try (0..<count).map { try started.get[$0]!.get() }
    }

    /// Starts daemon `index` again on its socket after it died (SIGKILL), and waits for READY=1.
    func restartDaemon(_ index: Int) throws {
        let old = daemons[index]
        _ = try old.process.wait(timeout: .seconds(10))
        daemons[index] = try SwipedDaemon(
            arguments: old.arguments, directory: old.directory, socketPath: old.socketPath,
            stateDirectory: old.stateDirectory, timeout: .seconds(30))
    }

    /// The daemons' sockets (they do not change across restarts).
    var sockets: [String] { daemons.map(\.socketPath) }

    /// Runs `writers` writers on each daemon and two subscribers per daemon (each following it
    /// from seq 0) while `during` runs on the test's thread (nothing, or the faults), for at least
    /// `seconds`; then stops the writers, waits for every subscriber to reach the last
    /// acknowledged seq, and checks everything: the log through each daemon's `history`, its
    /// fold, each daemon's `list`, the acks, each subscriber's events. Returns the log and what
    /// the writers met.
    @discardableResult
    func runLoad(
        writers: Int, seconds: Double, seed: UInt64,
        during: () throws -> Void = {}
    ) throws -> (log: [CommittedEvent], tally: WriterTally) {
        let sockets = self.sockets
        let stop = Locked(false)
        let acks = Locked<[PgAck]>([])
        let tally = Locked(WriterTally())
        let target = Locked<FollowTarget?>(nil)
        let problems = Locked<[String]>([])
        let streams = Locked<[String: [CommittedEvent]]>([:])
        let subscribersPerDaemon = 2
        let writing = DispatchGroup()
        writing.enter()
        Thread.detachNewThread {
            runThreads(sockets.count * writers) { i in
                let daemon = i % sockets.count
                PgWriter.run(
                    name: "d\(daemon)w\(i / sockets.count)", seed: seed &+ UInt64(i),
                    socket: { sockets[daemon] },
                    stop: stop, acks: acks, tally: tally)
            }
            writing.leave()
        }
        let following = DispatchGroup()
        following.enter()
        Thread.detachNewThread {
            runThreads(sockets.count * subscribersPerDaemon) { i in
                let daemon = i % sockets.count
                let name = "d\(daemon)s\(i / sockets.count)"
                let seen = followEvents(
                    socket: { sockets[daemon] }, target: target, problems: problems, name: name)
                streams.with { $0[name] = seen }
            }
            following.leave()
        }
        let load = monotonicSeconds()
        try during()
        while monotonicSeconds() - load < seconds && !stop.get { usleep(20_000) }
        stop.with { $0 = true }
        // Each writer stops once its current command is answered: then the last acknowledged
        // seq is the head, which every subscriber must reach.
        XCTAssertEqual(writing.wait(timeout: .now() + 120), .success, "the writers did not stop")
        let head = acks.get.map(\.seq).max() ?? 0
        target.with { $0 = FollowTarget(seq: head, deadline: monotonicSeconds() + 120) }
        XCTAssertEqual(following.wait(timeout: .now() + 120), .success, "the subscribers did not finish")
        let elapsed = monotonicSeconds() - load
        let t = tally.get
        for failure in t.failures.prefix(20) { XCTFail(failure) }
        for problem in problems.get { XCTFail(problem) }

        // One log, the same through every daemon, the fold of itself, holding each ack once.
        let log = try wholeHistory(sockets[0])
        XCTAssertEqual(log.last?.seq, head, "the log does not end at the last acknowledged seq")
        for socket in sockets.dropFirst() {
            if let difference = sameEvents(try wholeHistory(socket), log) {
                XCTFail("\(socket)'s history differs from \(sockets[0])'s: \(difference)")
            }
        }
        let (state, foldProblems) = checkFold(log)
        for problem in foldProblems { XCTFail(problem) }
        for problem in checkAcks(acks.get, against: log) { XCTFail(problem) }
        for socket in sockets {
            let (seq, movies) = try SwipedClient(socketPath: socket).list()
            XCTAssertEqual(seq, head, "\(socket): list is not at the head")
            XCTAssertEqual(movies, state.movies, "\(socket): list is not the fold of the log")
        }

        // Every subscriber of every daemon: that same sequence, from 1 to the head.
        let all = streams.get
        XCTAssertEqual(all.count, sockets.count * subscribersPerDaemon)
        for (name, seen) in all.sorted(by: { $0.key < $1.key }) {
            if let difference = sameEvents(seen, log) {
                XCTFail("subscriber \(name) did not receive the log: \(difference)")
            }
        }
        print(
            "postgres: \(sockets.count) daemons × \(writers) writers, \(acks.get.count) acknowledged writes "
                + "(\(Int(Double(acks.get.count) / elapsed))/s), \(t.refused) refused, \(t.unavailable) unavailable, "
                + "\(t.reconnects) reconnects, \(all.count) subscribers, \(Int(elapsed)) s")
        return (log, t)
    }

    /// Every event of the log through `daemon`'s `history`, in pages of 1,000, once every
    /// daemon of the test is at the same seq: across daemons a change shows once its event
    /// arrived (protocol.md, "Several daemons on one database"), so a daemon that answered a
    /// racing command first may not hold the other daemon's event yet.
    func wholeHistory(_ socket: String) throws -> [CommittedEvent] {
        let deadline = monotonicSeconds() + 10
        while monotonicSeconds() < deadline {
            let seqs = try Set(sockets.map { try SwipedClient(socketPath: $0, timeout: 30).list().seq })
            if seqs.count <= 1 { break }
            usleep(10_000)
        }
        let client = try SwipedClient(socketPath: socket, timeout: 30)
        var events: [CommittedEvent] = []
        while true {
            let page = try client.history(from: events.last?.seq ?? 0, limit: 1000).events
            if page.isEmpty { return events }
            events += page
        }
    }
}

// MARK: - The checks

/// The fold of `events` checked as it goes: the positions are 1, 2, 3… without a gap or a
/// duplicate, and each event's movie is what folding it onto the events before it gives (its
/// "movie after", which the daemon stored when it decided the command). Returns the state and
/// the problems found (at most `limit`).
func checkFold(_ events: [CommittedEvent], limit: Int = 10) -> (state: MovieState, problems: [String]) {
    var state = MovieState()
    var problems: [String] = []
    func problem(_ text: String) { if problems.count < limit { problems.append(text) } }
    for (index, event) in events.enumerated() {
        if event.seq != UInt64(index + 1) {
            problem("position \(index + 1) holds seq \(event.seq): a gap or a duplicate")
        }
        let id = event.movie.id
        let folded: MovieEvent
        switch event.kind {
        case MovieEvent.Kind.added:
            folded = .added(id: id, title: event.movie.title, image: event.movie.image)
        case MovieEvent.Kind.watchedToggled: folded = .watchedToggled(id: id)
        case MovieEvent.Kind.watchedWithFriendsToggled: folded = .watchedWithFriendsToggled(id: id)
        case MovieEvent.Kind.removed: folded = .removed(id: id)
        case MovieEvent.Kind.restored: folded = .restored(id: id, to: event.to)
        case MovieEvent.Kind.moved:
            guard let to = event.to, let from = event.from else {
                problem("seq \(event.seq): a move without its places")
                continue
            }
            folded = .moved(id: id, to: to, from: from)
        default:
            problem("seq \(event.seq): unknown kind \(event.kind)")
            continue
        }
        let after = state.apply(folded, seq: event.seq)
        if after != event.movie {
            problem(
                "seq \(event.seq) \(event.kind): its movie is \(event.movie), the fold of the log before it gives "
                    + "\(after.map { "\($0)" } ?? "no such movie")")
        }
    }
    return (state, problems)
}

/// Whether two events are the same (position, kind, movie after, time, undoes).
func sameEvents(_ a: [CommittedEvent], _ b: [CommittedEvent]) -> String? {
    if a == b { return nil }
    for i in 0..<min(a.count, b.count) where a[i] != b[i] {
        return "they first differ at index \(i): \(a[i]) / \(b[i])"
    }
    return "one is a prefix of the other: \(a.count) / \(b.count) events"
}

// MARK: - Writers

/// A mutation a daemon acknowledged (`ok`), with what must be in the log at its seq.
struct PgAck: Sendable {
    var key: String
    var op: String
    var seq: UInt64
    var kind: EventKind
    var movie: Movie
}

/// What the writers of a test saw, besides their acks.
struct WriterTally: Sendable {
    /// Commands refused by the state (`not-found`, `conflict`): normal under random commands.
    var refused = 0
    /// `unavailable` replies (the database was unreachable): the command was sent again.
    var unavailable = 0
    /// Connections lost (the daemon was killed): the command was sent again, with its key.
    var reconnects = 0
    /// Anything else: test failures.
    var failures: [String] = []
}

enum PgWriter {
    /// The kind of event each op appends.
    static let kinds = [
        "add": MovieEvent.Kind.added, "toggle-watched": MovieEvent.Kind.watchedToggled,
        "toggle-watched-with-friends": MovieEvent.Kind.watchedWithFriendsToggled,
        "remove": MovieEvent.Kind.removed, "restore": MovieEvent.Kind.restored,
    ]

    /// One writer: random toggles (most), adds, removes and restores on `socket()` (asked again
    /// after each lost connection, so a test may move it), one at a time (window 1), each with a
    /// key of its own, until `stop` is set. A command whose connection broke, or that was answered
    /// `unavailable`, is sent again with the same key until it is answered: so every command ends
    /// acknowledged once or refused, and nothing is written that no one acknowledged.
    static func run(
        name: String, seed: UInt64, socket: @Sendable () -> String, stop: Locked<Bool>,
        acks: Locked<[PgAck]>, tally: Locked<WriterTally>, patience: Double = 60
    ) {
        var rng = SplitMix64(seed: seed)
        var client: SwipedClient?
        var live: [String] = []
        var gone: [String] = []
        var n = 0
        while !stop.get {
            n += 1
            let key = "\(name)-\(n)"
            if n % 16 == 1 || live.isEmpty {
                // Pick targets from the daemon's list now and then (others change it meanwhile).
                if let c = client ?? connect(socket(), patience: patience, tally: tally, name: name) {
                    client = c
                    if let movies = try? c.list().movies { live = movies.map(\.id) }
                }
            }
            let roll = Int.random(in: 0..<20, using: &rng)
            var arguments: [(String, JSON)]
            let op: String
            if roll < 2 || live.isEmpty {
                op = "add"
                arguments = [("title", .string("Film \(name) \(n)"))]
            } else if roll < 4 {
                op = "remove"
                let id = live.remove(at: Int.random(in: 0..<live.count, using: &rng))
                gone.append(id)
                arguments = [("movie", .string(id))]
            } else if roll < 5, !gone.isEmpty {
                op = "restore"
                let id = gone.remove(at: Int.random(in: 0..<gone.count, using: &rng))
                live.append(id)
                arguments = [("movie", .string(id))]
            } else {
                op = Bool.random(using: &rng) ? "toggle-watched" : "toggle-watched-with-friends"
                arguments = [("movie", .string(live.randomElement(using: &rng)!))]
            }
            arguments.append(("key", .string(key)))

            // Until answered: reconnect after a lost connection, wait after `unavailable`.
            let began = monotonicSeconds()
            while true {
                if monotonicSeconds() - began > patience {
                    tally.with {
                        $0.failures.append("\(name): \(op) \(key) not answered within \(patience) s")
                    }
                    stop.with { $0 = true }
                    return
                }
                guard let c = client ?? connect(socket(), patience: patience, tally: tally, name: name) else {
                    stop.with { $0 = true }
                    return
                }
                client = c
                let reply: Reply
                do {
                    reply = try c.exchange(op, arguments)
                } catch {
                    client = nil
                    tally.with { $0.reconnects += 1 }
                    usleep(20_000)
                    continue
                }
                if reply.isOK {
                    guard let seq = reply.object.uint("seq"), let value = reply.object["movie"],
                        let movie = try? SwipedClient.movie(value)
                    else {
                        tally.with {
                            $0.failures.append("\(name): ok reply without seq and movie: \(reply.line)")
                        }
                        break
                    }
                    if op == "add" { live.append(movie.id) }
                    acks.with { $0.append(PgAck(key: key, op: op, seq: seq, kind: kinds[op]!, movie: movie)) }
                    break
                }
                switch reply.error?.code {
                case "unavailable":
                    tally.with { $0.unavailable += 1 }
                    usleep(50_000)
                    continue
                case "not-found", "conflict":
                    tally.with { $0.refused += 1 }
                case let code:
                    tally.with { $0.failures.append("\(name): \(op) answered \(code ?? "?"): \(reply.line)") }
                }
                break
            }
        }
    }

    /// Connects, retrying while the daemon is down (restarting), for at most `patience` seconds.
    static func connect(
        _ socket: String, patience: Double, tally: Locked<WriterTally>, name: String
    ) -> SwipedClient? {
        let began = monotonicSeconds()
        while true {
            do {
                return try SwipedClient(socketPath: socket, timeout: 30)
            } catch {
                if monotonicSeconds() - began > patience {
                    tally.with {
                        $0.failures.append("\(name): cannot connect to \(socket) for \(patience) s: \(error)")
                    }
                    return nil
                }
                usleep(20_000)
            }
        }
    }
}

/// Checks the acks against the log: each acknowledged write is at its seq, with its kind and
/// its movie as the reply gave it; no seq is acknowledged twice (by different keys); each
/// writer's acks are in increasing seq order (a writer waits for each reply); and the log holds
/// nothing but the seed and acknowledged writes (so nothing was written twice, or unasked).
func checkAcks(_ acks: [PgAck], against log: [CommittedEvent], seeds: Int = 10) -> [String] {
    var problems: [String] = []
    var keyAt: [UInt64: String] = [:]
    var lastOfWriter: [String: UInt64] = [:]
    for ack in acks {
        if let other = keyAt.updateValue(ack.key, forKey: ack.seq), other != ack.key {
            problems.append("seq \(ack.seq) acknowledged to both \(other) and \(ack.key)")
        }
        let writer = String(ack.key[..<ack.key.lastIndex(of: "-")!])
        if let last = lastOfWriter[writer], last >= ack.seq {
            problems.append("\(writer)'s acks go backwards: \(last) then \(ack.seq) (\(ack.key))")
        }
        lastOfWriter[writer] = ack.seq
        guard ack.seq >= 1, ack.seq <= UInt64(log.count) else {
            problems.append(
                "acknowledged \(ack.key) at seq \(ack.seq) is missing (the log ends at \(log.count))")
            continue
        }
        let event = log[Int(ack.seq) - 1]
        if event.kind != ack.kind || event.movie != ack.movie {
            problems.append(
                "\(ack.key) (\(ack.op)) was acknowledged as \(ack.kind) \(ack.movie) at seq \(ack.seq); the log has \(event.kind) \(event.movie)"
            )
        }
    }
    if log.count != seeds + keyAt.count {
        problems.append(
            "the log has \(log.count) events: \(seeds) seeds and \(log.count - seeds) writes, but \(keyAt.count) were acknowledged"
        )
    }
    return Array(problems.prefix(20))
}

// MARK: - Subscribers

/// The last seq a subscriber must see, and by when (set by the test once the writers are done).
struct FollowTarget: Sendable {
    var seq: UInt64
    var deadline: Double
}

/// Follows `socket()`'s `movie` events from seq 0 (the whole log), subscribing again from the
/// last one seen after a lost connection (a restarted daemon), until it has seen the target's
/// seq or the target's deadline passes. Returns what it saw, in the order it arrived,
/// duplicates and gaps included (the test checks them).
func followEvents(
    socket: @Sendable () -> String, target: Locked<FollowTarget?>, problems: Locked<[String]>, name: String
) -> [CommittedEvent] {
    var seen: [CommittedEvent] = []
    var client: SwipedClient?
    while target.get.map({ monotonicSeconds() < $0.deadline }) ?? true {
        if let target = target.get, (seen.last?.seq ?? 0) >= target.seq { return seen }
        do throws(ClientError) {
            if client == nil {
                let c = try SwipedClient(socketPath: socket(), timeout: 30)
                _ = try c.subscribe(from: seen.last?.seq ?? 0)
                client = c
            }
            guard let event = try client!.nextEvent(timeout: 0.2) else {
                client = nil  // end of stream: the daemon went away
                continue
            }
            if case .movie(let committed, _) = event { seen.append(committed) }
        } catch {
            if error.kind == .timeout { continue }
            client = nil
            usleep(20_000)
        }
    }
    problems.with {
        $0.append(
            "\(name): saw up to seq \(seen.last?.seq ?? 0), not \(target.get?.seq ?? 0) within 120 s of the last write"
        )
    }
    return seen
}

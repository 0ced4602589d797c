// Reliability: nothing acknowledged is lost when the daemon is killed (SIGKILL at random
// moments) or stopped (SIGTERM) while clients mutate; the state equals the fold of the log.
// `SWIPED_SOAK=1` (make soak) runs 100 kill cycles instead of 20.

import Foundation
import Glibc
import XCTest

final class ReliabilityCrashTests: XCTestCase {
    /// A mutation the daemon acknowledged (`ok`), with what it must be in the log.
    struct Ack: Sendable {
        var client: Int
        var key: String
        var request: [String: String]
        var seq: Int
        var kind: String
        var movie: String
        /// For an `undo`: the seq it undid (its kind is the compensation of that event's).
        var undoes: Int? = nil
    }

    /// The kind of the event that undoes an event of `kind` (protocol.md, `undo`).
    static func compensation(of kind: String) -> String {
        switch kind {
        case "added", "restored": "removed"
        case "removed": "restored"
        default: kind
        }
    }

    static let seeds = [
        "godfather", "dark_knight", "pulp_fiction", "forrest_gump", "inception",
        "matrix", "seven", "silence_of_lambs", "saving_private_ryan", "the_green_mile",
    ]

    /// One client: mutates with a window of `window` requests in flight, every one with a key,
    /// until the connection fails (the daemon died) or `stop` is set. Returns its acks in order.
    static func mutate(
        _ daemon: String, cycle: Int, client: Int, window: Int, stop: Locked<Bool>,
        acks: Locked<[Ack]>, failures: Locked<[String]>
    ) -> [Ack] {
        var mine: [Ack] = []
        guard let connection = try? LineClient(path: daemon, timeout: .seconds(5)),
            (try? connection.readJSON())?["event"] as? String == "hello"
        else { return mine }
        var generator = SystemRandomNumberGenerator()
        var added: [String] = []  // ids this client added (acked), not removed yet
        var n = 0
        while !stop.get {
            var batch: [(key: String, request: [String: String], kind: String)] = []
            for _ in 0..<window {
                n += 1
                let key = "k\(cycle)-\(client)-\(n)"
                let roll = Int.random(in: 0..<10, using: &generator)
                var request: [String: String]
                var kind: String
                if roll == 3 {
                    // A keyed undo of this client's newest change: last in its batch, so that
                    // what it undoes is known before the next batch picks a movie to remove.
                    batch.append((key, ["op": "undo", "key": key], "undo"))
                    break
                }
                if roll < 2 {
                    request = ["op": "add", "title": "Film \(cycle) \(client) \(n)"]
                    kind = "added"
                } else if roll == 2, let id = added.popLast() {
                    request = ["op": "remove", "movie": id]
                    kind = "removed"
                } else {
                    let movie = seeds.randomElement(using: &generator)!
                    let friends = Bool.random(using: &generator)
                    request = [
                        "op": friends ? "toggle-watched-with-friends" : "toggle-watched", "movie": movie,
                    ]
                    kind = friends ? "watched-with-friends-toggled" : "watched-toggled"
                }
                request["key"] = key
                batch.append((key, request, kind))
            }
            do {
                for item in batch {
                    var object: [String: Any] = item.request
                    object["id"] = item.key
                    try connection.send(json: object)
                }
                for item in batch {
                    let reply = try connection.readReply(timeout: .seconds(10))
                    guard reply["id"] as? String == item.key else {
                        failures.with { $0.append("reply out of order: \(reply) for \(item.key)") }
                        return mine
                    }
                    guard reply["ok"] as? Bool == true, let seq = reply["seq"] as? Int,
                        let movie = (reply["movie"] as? [String: Any])?["id"] as? String
                    else {
                        // An undo of a movie another client changed since is refused, as is one
                        // with nothing left to undo (each cycle's connection starts empty).
                        let reason = (reply["error"] as? [String: Any])?["reason"] as? String
                        if item.kind == "undo", reason == "changed-since" || reason == "nothing-to-undo" {
                            continue
                        }
                        failures.with { $0.append("mutation refused: \(reply) for \(item.request)") }
                        continue
                    }
                    var ack = Ack(
                        client: client, key: item.key, request: item.request, seq: seq, kind: item.kind,
                        movie: movie)
                    if item.kind == "undo" {
                        guard let undoes = reply["undoes"] as? Int else {
                            failures.with { $0.append("an undo's reply without undoes: \(reply)") }
                            continue
                        }
                        ack.undoes = undoes
                        added.removeAll { $0 == movie }  // an undone add is gone
                    }
                    mine.append(ack)
                    acks.with { $0.append(ack) }
                    if item.kind == "added" { added.append(movie) }
                }
            } catch {
                return mine  // the daemon is gone: what was not answered is undecided
            }
        }
        return mine
    }

    /// Restarted daemon: every acknowledged mutation is in the history exactly once at its seq,
    /// in each client's order; the list is the fold of the history; the keys replay.
    func verify(
        _ daemon: AbuseDaemon, acks: [Ack], perClient: [[Ack]], retry: [Ack],
        file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let client = try daemon.connect()
        let history = try client.wholeHistory()
        let folded = foldHistory(history, file: file, line: line)
        let (seq, movies) = try client.listMovies()
        XCTAssertEqual(
            seq, history.count, "list's seq is not the last seq of the history", file: file, line: line)
        XCTAssertEqual(movies, folded, "list differs from the fold of the history", file: file, line: line)
        var seen: [Int: String] = [:]
        for ack in acks {
            if let other = seen.updateValue(ack.key, forKey: ack.seq) {
                XCTFail(
                    "seq \(ack.seq) acknowledged for both \(other) and \(ack.key)", file: file, line: line)
            }
            guard ack.seq >= 1 && ack.seq <= history.count else {
                XCTFail(
                    "acknowledged \(ack.key) at seq \(ack.seq) is missing (history ends at \(history.count))",
                    file: file, line: line)
                continue
            }
            let event = history[ack.seq - 1]
            var kind = ack.kind
            if let undoes = ack.undoes {
                guard undoes >= 1 && undoes < ack.seq else {
                    XCTFail("\(ack.key) at seq \(ack.seq) undoes seq \(undoes)", file: file, line: line)
                    continue
                }
                kind = Self.compensation(of: history[undoes - 1].kind)
            }
            XCTAssertEqual(event.kind, kind, "seq \(ack.seq) (\(ack.key))", file: file, line: line)
            XCTAssertEqual(event.movie.id, ack.movie, "seq \(ack.seq) (\(ack.key))", file: file, line: line)
        }
        for mine in perClient {
            XCTAssertEqual(
                mine.map(\.seq), mine.map(\.seq).sorted(), "a client's acks are out of order",
                file: file, line: line)
        }
        // Exactly once: the same key again replays the same seq and writes nothing. An undo's
        // too, on a connection of its own that has nothing to undo (the replays of the others'
        // keys would give this one changes of its own).
        let undoer = try daemon.connect()
        for ack in retry {
            var object: [String: Any] = ack.request
            object["id"] = ack.key
            let reply = try (ack.undoes == nil ? client : undoer).request(object)
            XCTAssertEqual(
                reply["ok"] as? Bool, true, "retry of \(ack.key): \(reply)", file: file, line: line)
            XCTAssertEqual(
                reply["seq"] as? Int, ack.seq, "retry of \(ack.key) after the restart", file: file, line: line
            )
            if let undoes = ack.undoes {
                XCTAssertEqual(reply["undoes"] as? Int, undoes, "retry of \(ack.key)", file: file, line: line)
            }
        }
        XCTAssertEqual(
            try client.listMovies().seq, seq, "retries with known keys wrote events", file: file, line: line)
    }

    func testSIGKILLAtRandomMomentsLosesNoAcknowledgedMutation() throws {
        let cycles = soak ? 100 : 20
        let clients = 4
        let dir = try TemporaryDirectory("swiped-crash")
        let daemon = try AbuseDaemon(state: dir.file("state"), socket: dir.file("s.sock"))
        let all = Locked<[Ack]>([])
        var perClient: [[Ack]] = []
        let began = monotonicSeconds()
        for cycle in 0..<cycles {
            let stop = Locked(false)
            let failures = Locked<[String]>([])
            defer { for failure in failures.get { XCTFail(failure) } }
            let cycleAcks = Locked<[Ack]>([])
            let results = Locked<[[Ack]]>([])
            let pid = daemon.pid
            let socket = daemon.socket
            runThreads(clients + 1) { i in
                if i == clients {
                    // The killer: once something was acknowledged, at a random moment.
                    let start = monotonicSeconds()
                    while cycleAcks.get.isEmpty && monotonicSeconds() - start < 5 { usleep(1_000) }
                    usleep(UInt32.random(in: 0..<150_000))
                    Glibc.kill(pid, SIGKILL)
                    stop.with { $0 = true }
                    return
                }
                let mine = Self.mutate(
                    socket, cycle: cycle, client: i, window: 1 + i % 4, stop: stop,
                    acks: cycleAcks, failures: failures)
                results.with { $0.append(mine) }
            }
            XCTAssertEqual(try daemon.wait(), .signaled(SIGKILL))
            XCTAssertFalse(cycleAcks.get.isEmpty, "cycle \(cycle): nothing was acknowledged before the kill")
            all.with { $0 += cycleAcks.get }
            if ProcessInfo.processInfo.environment["SWIPED_VERBOSE"] == "1" {
                print("cycle \(cycle): \(cycleAcks.get.count) acks, t=\(monotonicSeconds() - began)")
            }
            perClient += results.get
            try daemon.start()
            try verify(daemon, acks: all.get, perClient: perClient, retry: cycleAcks.get)
            if (testRun?.totalFailureCount ?? 0) > 0 { break }
        }
        let undos = all.get.filter { $0.undoes != nil }.count
        XCTAssertGreaterThan(undos, 0, "no keyed undo was acknowledged: the retries checked none")
        print(
            "crash: \(cycles) SIGKILL cycles, \(all.get.count) acknowledged mutations (\(undos) undos), "
                + "all present exactly once, \(Int(monotonicSeconds() - began)) s")
        daemon.kill(SIGTERM)
        XCTAssertEqual(try daemon.wait(), .exited(0))
    }

    func testSIGTERMUnderLoadKeepsEveryAcknowledgedWriteAndExitsQuickly() throws {
        let clients = 6
        let dir = try TemporaryDirectory("swiped-term")
        let daemon = try AbuseDaemon(state: dir.file("state"), socket: dir.file("s.sock"))
        let rounds = soak ? 10 : 2
        var allAcks: [Ack] = []
        var perClient: [[Ack]] = []
        for round in 0..<rounds {
            let stop = Locked(false)
            let failures = Locked<[String]>([])
            defer { for failure in failures.get { XCTFail(failure) } }
            let acks = Locked<[Ack]>([])
            let results = Locked<[[Ack]]>([])
            let exit = Locked<(Termination?, Double)>((nil, 0))
            let socket = daemon.socket
            let process = UncheckedBox(daemon)
            runThreads(clients + 1) { i in
                if i == clients {
                    let start = monotonicSeconds()
                    while acks.get.count < 50 && monotonicSeconds() - start < 5 { usleep(1_000) }
                    usleep(UInt32.random(in: 0..<100_000))
                    let t0 = monotonicSeconds()
                    process.value.kill(SIGTERM)
                    let status = try? process.value.wait(timeout: .seconds(5))
                    exit.with { $0 = (status, monotonicSeconds() - t0) }
                    stop.with { $0 = true }
                    return
                }
                let mine = Self.mutate(
                    socket, cycle: 1000 + round, client: i, window: 4, stop: stop, acks: acks,
                    failures: failures)
                results.with { $0.append(mine) }
            }
            let (status, seconds) = exit.get
            XCTAssertEqual(status, .exited(0), daemon.standardError.suffix(2000).description)
            // 1 s; a sanitizer build (TSan: 5-15 times slower) gets 3 s.
            XCTAssertLessThan(seconds, sanitizerBuild ? 3.0 : 1.0, "SIGTERM to exit took \(seconds) s")
            print(
                "sigterm: round \(round): \(acks.get.count) acknowledged, exit \(String(describing: status)) "
                    + "in \(Int(seconds * 1000)) ms")
            if seconds > 0.5 {
                print(
                    "sigterm: slow exit; the daemon's last lines:\n"
                        + daemon.standardError.split(separator: "\n").suffix(15).joined(separator: "\n"))
            }
            allAcks += acks.get
            perClient += results.get
            try daemon.start()
            try verify(daemon, acks: allAcks, perClient: perClient, retry: acks.get)
        }
    }
}

/// Hands a non-Sendable object to one other thread, when the test guarantees there is no race.
final class UncheckedBox<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}

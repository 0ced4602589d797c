// PostgreSQL itself stopped with an immediate shutdown (SIGQUIT, as `pg_ctl stop -m immediate`)
// and started again while daemons write (issue 17): no acknowledged write is lost, mutations
// meanwhile are answered `unavailable`, reads go on, and the daemons recover by themselves.

import Foundation
import Glibc
import SwipedClient
import XCTest

final class PostgresFaultTests: PostgresTestCase {
    /// A toggle that can never write: `expect` 0 is no movie's version. With the database
    /// reachable it is decided, and refused (`conflict`); without, it is `unavailable`.
    static let probe = #"{"op":"toggle-watched","movie":"matrix","expect":0}"#

    /// The probe's error code on a new connection to `socket`; nil when no reply came within
    /// 2 s (a probe that shared a group commit with a commit in doubt waits for the database).
    func probe(_ socket: String) throws -> String? {
        let client = try LineClient(path: socket, timeout: .seconds(30))
        _ = try client.readJSON()
        do {
            return try client.errorCode(Self.probe, timeout: .seconds(2))
        } catch is TimeoutError {
            return nil
        }
    }

    func testImmediateShutdownUnderLoadLosesNoAcknowledgedWriteAndTheDaemonsRecover() throws {
        try startDaemons(2)
        let cycles = soak ? 5 : 2
        let (_, tally) = try runLoad(writers: 8, seconds: 1, seed: 0x5157_0010) {
            for cycle in 0..<cycles {
                usleep(500_000)
                try cluster.stopImmediate()
                for (i, daemon) in daemons.enumerated() {
                    // Down: a mutation is refused with `unavailable` (once the daemon noticed),
                    // a read is answered from the state the daemon has.
                    let code = try poll(until: .seconds(10), "daemon \(i) to answer unavailable") {
                        let code = try probe(daemon.socketPath)
                        return code == "unavailable" ? code : nil
                    }
                    XCTAssertEqual(code, "unavailable")
                    let reader = try SwipedClient(socketPath: daemon.socketPath)
                    XCTAssertFalse(
                        try reader.list().movies.isEmpty, "cycle \(cycle): list while the database is down")
                    _ = try poll(until: .seconds(5), "STATUS= saying the database is unreachable") {
                        daemon.notify.assignments.contains {
                            $0.hasPrefix("STATUS=Serving ")
                                && $0.contains("; store unavailable (postgres, seq ")
                                && $0.contains("): PostgreSQL unreachable since ")
                        } ? true : nil
                    }
                }
                usleep(300_000)
                try cluster.start()
                // Up: each daemon decides mutations again, by itself.
                for (i, daemon) in daemons.enumerated() {
                    var last: String?? = .none
                    do {
                        _ = try poll(until: .seconds(20), "daemon \(i) to reconnect") {
                            last = .some(try probe(daemon.socketPath))
                            // The load may have removed matrix: `not-found` is decided at
                            // commit too (a PostgreSQL daemon refuses only `bad-request` at
                            // once), so either code says the daemon decides again.
                            return last == "conflict" || last == "not-found" ? true : nil
                        }
                    } catch {
                        XCTFail(
                            "cycle \(cycle): daemon \(i) did not decide again within 20 s of the restart; the last "
                                + "probe got \(last.map { $0 ?? "no reply within 2 s" } ?? "nothing"); STATUS: "
                                + "\(daemon.notify.assignments.filter { $0.hasPrefix("STATUS=") }.suffix(3)); "
                                + "stderr:\n\(daemon.process.standardError.suffix(3000))")
                        throw error
                    }
                    XCTAssertTrue(
                        daemon.process.isRunning, "daemon \(i) exited: \(daemon.process.standardError)")
                }
            }
        }
        XCTAssertGreaterThan(tally.unavailable, 0, "no writer met the outage")
        // What a person running the daemon in a terminal sees (its stderr, a pipe here).
        for daemon in daemons {
            let text = daemon.process.standardError
            XCTAssertTrue(
                text.contains(
                    " warning PostgreSQL connection lost, reconnecting with backoff; writes are refused meanwhile reason="
                ), text.suffix(3000).description)
            XCTAssertTrue(
                text.contains(
                    " info PostgreSQL connection restored, catching up reason=\"unreachable since "),
                text.suffix(3000).description)
        }
    }

    /// A daemon that cannot reach its database at start does not serve a state it cannot
    /// write: it exits with status 1 (systemd's Restart= tries again), saying why; once the
    /// database is back, it starts.
    func testADaemonStartedWhileTheDatabaseIsDownExitsOneAndStartsOnceItIsBack() throws {
        try cluster.stopImmediate()
        XCTAssertThrowsError(try SwipedDaemon(arguments: daemonArguments, prefix: "swiped-pgd")) { error in
            guard let failure = error as? SubprocessFailure else { return XCTFail("\(error)") }
            XCTAssertEqual(failure.status, .exited(1), failure.standardError)
            XCTAssertTrue(failure.standardError.contains("cannot start"), failure.standardError)
            XCTAssertTrue(failure.standardError.contains("PostgreSQL"), failure.standardError)
        }
        try cluster.start()
        try startDaemons(1)
        try daemons[0].connect().ok(["op": "toggle-watched", "movie": "matrix"])
    }
}

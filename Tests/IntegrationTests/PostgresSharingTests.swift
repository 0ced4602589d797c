// Several daemons on one PostgreSQL database (issue 17): every subscriber of every daemon gets
// the same events in the same order with no gap and no duplicate, each event's movie is the fold
// of the log before it, and every acknowledged write is in the log once, also when daemons are
// killed (SIGKILL) and restarted at random moments (20 cycles; 100 with SWIPED_SOAK=1).

import Foundation
import Glibc
import Movies
import SwipedClient
import TestSupport
import XCTest

final class PostgresSharingTests: PostgresTestCase {
    func testThreeDaemonsSixteenWritersEachGiveEverySubscriberTheSameSequence() throws {
        try startDaemons(3)
        try runLoad(writers: 16, seconds: 4, seed: 0x5157_0001)
    }

    func testDaemonsKilledAndRestartedAtRandomMomentsLoseNoAcknowledgedWrite() throws {
        let cycles = soak ? 100 : 20
        try startDaemons(3)
        var rng = SplitMix64(seed: 0x5157_0002)
        var kills = 0
        try runLoad(writers: 16, seconds: 1, seed: 0x5157_0003) {
            for cycle in 0..<cycles {
                usleep(UInt32.random(in: 20_000..<300_000, using: &rng))
                let victim = Int.random(in: 0..<daemons.count, using: &rng)
                daemons[victim].process.kill(SIGKILL)
                XCTAssertEqual(try daemons[victim].process.wait(timeout: .seconds(10)), .signaled(SIGKILL))
                kills += 1
                usleep(UInt32.random(in: 0..<100_000, using: &rng))
                do {
                    try restartDaemon(victim)
                } catch {
                    XCTFail("cycle \(cycle): daemon \(victim) did not start again: \(error)")
                    throw error
                }
            }
        }
        XCTAssertEqual(kills, cycles)
    }

    /// A daemon never trusts the notification alone: an event appended the way the daemons do
    /// it (under swiped_head's lock) but without NOTIFY, as if the notification were lost,
    /// still reaches every subscriber (the safety-net read, every second).
    func testAnEventWhoseNotificationIsLostStillArrives() throws {
        try startDaemons(2)
        let subscribers = try daemons.map { daemon in
            let client = try SwipedClient(socketPath: daemon.socketPath)
            XCTAssertEqual(try client.subscribe(), 10)
            return client
        }
        try cluster.psql(
            """
            BEGIN;
            WITH head AS (SELECT seq FROM swiped_head WHERE id = 1 FOR UPDATE)
            INSERT INTO swiped_events (seq, stream, kind, payload, at)
            SELECT head.seq + 1, 'matrix', 'watched-toggled',
                   (SELECT payload FROM swiped_events WHERE stream = 'matrix' AND kind = 'added') || '\\x0100'::bytea,
                   (extract(epoch FROM now()) * 1000000)::bigint
            FROM head;
            UPDATE swiped_head SET seq = seq + 1 WHERE id = 1;
            COMMIT;
            """)
        for (i, client) in subscribers.enumerated() {
            let began = monotonicSeconds()
            guard case .movie(let event, _)? = try client.nextEvent(timeout: 10) else {
                XCTFail("daemon \(i): no movie event")
                continue
            }
            XCTAssertEqual(event.seq, 11)
            XCTAssertEqual(event.kind, .watchedToggled)
            XCTAssertEqual(event.movie.id, "matrix")
            XCTAssertTrue(event.movie.watched)
            XCTAssertLessThan(monotonicSeconds() - began, 5, "daemon \(i): the safety net took too long")
        }
        // And the daemons decide on top of it: the next toggle unwatches.
        let (seq, movie) = try SwipedClient(socketPath: daemons[1].socketPath).toggleWatched("matrix")
        XCTAssertEqual(seq, 12)
        XCTAssertFalse(movie.watched)
    }

    /// The checks above can fail: a log with a gap, a duplicate, a wrong movie after, a write no
    /// one acknowledged, or one acknowledged and missing, is reported.
    func testTheChecksFindGapsDuplicatesWrongMoviesAndUnacknowledgedWrites() {
        var state = MovieState()
        var log: [CommittedEvent] = []
        for (i, event) in (MovieState.seedCatalogue + [.watchedToggled(id: "matrix"), .removed(id: "seven")])
            .enumerated()
        {
            let movie = state.apply(event, seq: UInt64(i + 1))!
            log.append(CommittedEvent(seq: UInt64(i + 1), kind: event.kind, movie: movie, at: 0))
        }
        XCTAssertEqual(checkFold(log).problems, [])
        let acks = log.suffix(2).enumerated().map {
            PgAck(
                key: "w-\($0.offset)", op: "?", seq: $0.element.seq, kind: $0.element.kind,
                movie: $0.element.movie)
        }
        XCTAssertEqual(checkAcks(acks, against: log), [])

        var gap = log
        gap.remove(at: 10)
        XCTAssertFalse(checkFold(gap).problems.isEmpty, "a gap")
        XCTAssertFalse(checkAcks(acks, against: gap).isEmpty, "an acknowledged write missing")
        var duplicate = log
        duplicate.insert(log[10], at: 11)
        XCTAssertFalse(checkFold(duplicate).problems.isEmpty, "a duplicate")
        XCTAssertNotNil(sameEvents(duplicate, log))
        var wrong = log
        wrong[10].movie.watched = false
        XCTAssertFalse(checkFold(wrong).problems.isEmpty, "a movie after that is not the fold")
        XCTAssertFalse(checkAcks(Array(acks.prefix(1)), against: log).isEmpty, "a write no one acknowledged")
        XCTAssertFalse(checkAcks(acks.reversed(), against: log).isEmpty, "a writer's acks going backwards")
    }
}

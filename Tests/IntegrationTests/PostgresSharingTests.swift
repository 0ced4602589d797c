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

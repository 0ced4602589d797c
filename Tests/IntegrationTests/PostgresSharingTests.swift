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
}

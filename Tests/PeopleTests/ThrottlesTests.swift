import People
import XCTest

final class AuthThrottleTests: XCTestCase {
    func testEachFailureDoublesTheWaitUpToFiveSecondsAndAQuietMinuteForgets() {
        var t = AuthThrottle()
        XCTAssertTrue(t.delay(for: "10.0.0.1", now: 0) == 0)
        var expected: [UInt64] = []
        for n in 1...8 {
            t.failed("10.0.0.1", now: UInt64(n))
            expected.append(min(100_000 << UInt64(n - 1), 5_000_000))
            XCTAssertTrue(t.delay(for: "10.0.0.1", now: UInt64(n)) == expected.last!)
        }
        XCTAssertTrue(
            expected == [100_000, 200_000, 400_000, 800_000, 1_600_000, 3_200_000, 5_000_000, 5_000_000])
        // The wait runs from the last failure: time gone since counts.
        XCTAssertTrue(t.delay(for: "10.0.0.1", now: 8 + 4_000_000) == 1_000_000)
        XCTAssertTrue(t.delay(for: "10.0.0.1", now: 8 + 5_000_000) == 0)
        // Another address is not slowed: one guesser slows only its own address.
        XCTAssertTrue(t.delay(for: "10.0.0.2", now: 8) == 0)
        // A minute after the last failure the address is forgotten.
        XCTAssertTrue(t.delay(for: "10.0.0.1", now: 8 + AuthThrottle.forgetAfter) == 0)
        t.failed("10.0.0.1", now: 8 + AuthThrottle.forgetAfter)
        XCTAssertTrue(t.delay(for: "10.0.0.1", now: 8 + AuthThrottle.forgetAfter) == 100_000)
    }

    func testASuccessForgetsTheAddress() {
        var t = AuthThrottle()
        t.failed("a", now: 0)
        t.failed("a", now: 0)
        t.succeeded("a")
        XCTAssertTrue(t.delay(for: "a", now: 0) == 0)
        XCTAssertTrue(t.remembered == 0)
    }

    func testAFloodOfAddressesIsCappedForgettingTheOldest() {
        var t = AuthThrottle(capacity: 3)
        for (i, a) in ["a", "b", "c", "d"].enumerated() { t.failed(a, now: UInt64(i)) }
        XCTAssertTrue(t.remembered == 3)
        XCTAssertTrue(t.delay(for: "a", now: 4) == 0)
        XCTAssertTrue(t.delay(for: "d", now: 3) == 100_000)
    }
}

final class RateLimiterTests: XCTestCase {
    func testABurstGoesThenOneEveryPeriod() {
        var r = RateLimiter(.init(perSecond: 10, burst: 3))
        XCTAssertTrue(r.take("alice", now: 0) == nil)
        XCTAssertTrue(r.take("alice", now: 0) == nil)
        XCTAssertTrue(r.take("alice", now: 0) == nil)
        XCTAssertTrue(r.take("alice", now: 0) == 100_000, "the fourth waits a tenth of a second")
        XCTAssertTrue(r.take("bob", now: 0) == nil, "one bucket per person")
        XCTAssertTrue(r.take("alice", now: 50_000) == 50_000)
        XCTAssertTrue(r.take("alice", now: 100_000) == nil)
        XCTAssertTrue(r.take("alice", now: 100_000) != nil)
        // Idle long enough, the bucket is full again, and swept away.
        r.sweep(now: 1_000_000)
        XCTAssertTrue(r.people == 0)
        XCTAssertTrue(r.take("alice", now: 1_000_000) == nil)
    }

    func testLimitsParse() {
        XCTAssertTrue(RateLimiter.Limit.parse("20/s") == .init(perSecond: 20, burst: 20))
        XCTAssertTrue(RateLimiter.Limit.parse("20/s,60") == .init(perSecond: 20, burst: 60))
        XCTAssertTrue(RateLimiter.Limit.parse("0.5/s,2") == .init(perSecond: 0.5, burst: 2))
        for bad in ["", "20", "20/m", "0/s", "-1/s", "20/s,0", "20/s,", "x/s", "20/s,60,1", "0.5/s", "inf/s"]
        {
            XCTAssertTrue(RateLimiter.Limit.parse(bad) == nil, "\(bad)")
        }
    }
}

final class DenialLogTests: XCTestCase {
    func denial(_ n: UInt64, _ reason: DenialReason = .forbidden) -> Denial {
        Denial(at: n, user: nil, client: n, transport: "web", address: "a", op: "remove", reason: reason)
    }

    func testKeepsTheLatestInOrderAndCountsAll() {
        var log = DenialLog(capacity: 3)
        XCTAssertTrue(log.latest.isEmpty)
        for n in 1...5 { log.append(denial(UInt64(n), n == 5 ? .badToken : .forbidden)) }
        XCTAssertTrue(log.latest.map(\.at) == [3, 4, 5])
        XCTAssertTrue(log.count(.forbidden) == 4)
        XCTAssertTrue(log.count(.badToken) == 1)
        XCTAssertTrue(log.count(.rateLimited) == 0)
        log.append(denial(6))
        XCTAssertTrue(log.latest.map(\.at) == [4, 5, 6])
    }

    func testSameRightsIgnoresOnlyWhenATokenWasLastUsed() {
        let t = TokenRecord(id: "a", name: "alice", role: .writer, hash: [1], created: 1)
        var used = t
        used.lastUsed = 5
        XCTAssertTrue(PeopleTables(tokens: [t]).sameRights(as: PeopleTables(tokens: [used])))
        var other = t
        other.role = .reader
        XCTAssertTrue(!PeopleTables(tokens: [t]).sameRights(as: PeopleTables(tokens: [other])))
        XCTAssertTrue(
            !PeopleTables(tokens: [t]).sameRights(as: PeopleTables(tokens: [t], grants: ["x": .reader])))
        XCTAssertTrue(!PeopleTables(tokens: [t]).sameRights(as: PeopleTables()))
    }
}

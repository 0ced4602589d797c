// The hold after a slow commit (Sources/EventLog/CommitHold.swift): the rule, then the writer
// thread following it on a disk made slow on purpose (FaultInjection).
import EventLog
import Foundation
import StoreTestSupport
import TestSupport
import XCTest

final class CommitHoldTests: XCTestCase {
    func testAQuickCommitOrOneThatWroteNothingHoldsNothing() {
        XCTAssertNil(CommitHold.after(duration: 1_499_999, committed: 16, queued: 0, now: 10))
        XCTAssertNil(CommitHold.after(duration: 0, committed: 16, queued: 4, now: 10))
        XCTAssertNil(CommitHold.after(duration: 9_000_000, committed: 0, queued: 3, now: 10))
        XCTAssertNil(CommitHold.after(duration: .max, committed: 1, queued: 0, now: 0, policy: .never))
    }

    func testASlowCommitWaitsForAsManyEventsAsItCommittedAQuarterOfItsTimeAndAtMost1ms() {
        XCTAssertEqual(
            CommitHold.after(duration: 1_500_000, committed: 16, queued: 0, now: 100),
            CommitHold(events: 16, deadline: 100 + 375_000))
        XCTAssertEqual(
            CommitHold.after(duration: 2_000_000, committed: 8, queued: 8, now: 0),
            CommitHold(events: 16, deadline: 500_000))
        XCTAssertEqual(
            CommitHold.after(duration: 15_000_000, committed: 3, queued: 1, now: 7),
            CommitHold(events: 4, deadline: 1_000_007))
        let policy = CommitHold.Policy(slowNanos: 10, share: 2, maxNanos: 30)
        XCTAssertEqual(
            CommitHold.after(duration: 10, committed: 1, queued: 0, now: 0, policy: policy),
            CommitHold(events: 1, deadline: 5))
        XCTAssertEqual(
            CommitHold.after(duration: 100, committed: 1, queued: 2, now: 1, policy: policy),
            CommitHold(events: 3, deadline: 31))
    }

    private func ev(_ stream: String) -> NewEvent { NewEvent(stream: stream, kind: "k", payload: [1]) }

    /// A slow transaction of one event with three more queued behind it (a held write, then
    /// every fsync 5 ms slower): returns the committer once that first completion is drained.
    private func afterASlowCommit(_ policy: CommitHold.Policy) throws -> GroupCommitter {
        FaultInjection.install()
        FaultInjection.syncDelayMicros = 5_000
        let c = try GroupCommitter(
            path: makeTempDir(self) + "/events.sqlite3", durability: .full, hold: policy)
        FaultInjection.holdNextWrite()
        c.submit([ev("a")], token: 1)
        XCTAssertTrue(FaultInjection.waitForHeldWrite())
        for t in 2...4 as ClosedRange<UInt64> { c.submit([ev("s\(t)")], token: t) }
        Thread.sleep(forTimeInterval: 0.3)
        FaultInjection.releaseHeldWrite(failing: false)
        XCTAssertTrue(c.wait(timeoutMs: 10_000))
        XCTAssertEqual(c.drain().map(\.token), [1])
        return c
    }

    /// The hold in this test is the whole slow commit (≈ 0.3 s), so that a busy machine's
    /// scheduling cannot end it early.
    private let patient = CommitHold.Policy(slowNanos: 1_000_000, share: 1, maxNanos: 60_000_000_000)

    func testAfterASlowCommitTheWriterWaitsForTheClientsItAnsweredAndCommitsThemTogether() throws {
        defer { FaultInjection.uninstall() }
        let c = try afterASlowCommit(patient)
        defer { c.close() }
        // Three events wait; the hold wants four (the three and the one just answered).
        XCTAssertFalse(c.wait(timeoutMs: 50), "the writer did not hold: \(c.drain().map(\.token))")
        c.submit([ev("back")], token: 5)
        var got: [UInt64] = []
        while got.count < 4 && c.wait(timeoutMs: 10_000) { got += c.drain().map(\.token) }
        XCTAssertEqual(got, [2, 3, 4, 5])
        XCTAssertEqual(c.stats.transactions, 2, "the four went in one transaction")
        XCTAssertEqual(c.stats.events, 5)
    }

    func testTheHoldEndsAtItsDeadlineWhenTheClientsDoNotComeBack() throws {
        defer { FaultInjection.uninstall() }
        let c = try afterASlowCommit(patient)
        defer { c.close() }
        var got: [UInt64] = []
        while got.count < 3 && c.wait(timeoutMs: 10_000) { got += c.drain().map(\.token) }
        XCTAssertEqual(got, [2, 3, 4])
        XCTAssertEqual(c.stats.transactions, 2)
    }

    func testWithoutAHoldTheQueuedCommandsGoAtOnce() throws {
        defer { FaultInjection.uninstall() }
        let c = try afterASlowCommit(.never)
        defer { c.close() }
        var got: [UInt64] = []
        while got.count < 3 && c.wait(timeoutMs: 10_000) { got += c.drain().map(\.token) }
        XCTAssertEqual(got, [2, 3, 4])
        c.submit([ev("back")], token: 5)
        XCTAssertTrue(c.wait(timeoutMs: 10_000))
        XCTAssertEqual(c.drain().map(\.token), [5])
        XCTAssertEqual(c.stats.transactions, 3)
    }
}

import XCTest

@testable import Daemon

/// A flood of one warning: the first logged, the rest of its interval counted, the count logged
/// when the interval ends; kinds apart; the next entry after a flush logged at once.
final class LogFoldsTests: XCTestCase {
    let s: UInt64 = 1_000_000_000
    let failed = LogFolds.Kind(message: "command failed", fold: "unavailable")

    private func admit(
        _ folds: inout LogFolds, _ kind: LogFolds.Kind, at now: UInt64, client: Int
    ) -> (logged: Bool, ended: LogFolds.Summary?) {
        var ended: LogFolds.Summary?
        let logged = folds.admit(kind, .warning, now: now, fields: [("CLIENT", "\(client)")], ended: &ended)
        return (logged, ended)
    }

    func testTheFirstIsLoggedTheRestCountedAndTheCountLoggedWhenTheIntervalEnds() {
        var folds = LogFolds(interval: 5 * s)
        XCTAssertNil(folds.nextDeadline)
        XCTAssertEqual(admit(&folds, failed, at: 10 * s, client: 1).logged, true)
        XCTAssertEqual(folds.nextDeadline, 15 * s)
        for i in 0..<999 {
            let r = admit(&folds, failed, at: 10 * s + UInt64(i) * 1_000_000, client: i + 2)
            XCTAssertEqual(r.logged, false)
            XCTAssertNil(r.ended)
        }
        XCTAssertEqual(folds.flush(now: 15 * s - 1).count, 0, "flushed before the interval ended")
        let summaries = folds.flush(now: 15 * s)
        XCTAssertEqual(summaries.count, 1)
        XCTAssertEqual(summaries.first?.message, "command failed (repeated)")
        XCTAssertEqual(summaries.first?.repeated, 999)
        XCTAssertEqual(summaries.first?.priority, .warning)
        XCTAssertEqual(
            summaries.first?.fields.map { "\($0.0)=\($0.1)" },
            ["CLIENT=1000", "REPEATED=999", "INTERVAL=5s"],
            "the last one's fields, and the count")
        XCTAssertNil(folds.nextDeadline, "an ended interval is forgotten")
        // The flood goes on: the next one is logged at once, and starts an interval of its own.
        XCTAssertEqual(admit(&folds, failed, at: 16 * s, client: 1).logged, true)
        XCTAssertEqual(folds.nextDeadline, 21 * s)
    }

    func testAnIntervalWithNothingFoldedEndsWithoutAnEntry() {
        var folds = LogFolds(interval: 5 * s)
        XCTAssertTrue(admit(&folds, failed, at: 0, client: 1).logged)
        XCTAssertEqual(folds.flush(now: 5 * s).count, 0)
        XCTAssertNil(folds.nextDeadline)
    }

    func testAnIntervalEndedWithoutTheTimerIsSummedUpByTheNextEntry() {
        var folds = LogFolds(interval: 5 * s)
        XCTAssertTrue(admit(&folds, failed, at: 0, client: 1).logged)
        XCTAssertFalse(admit(&folds, failed, at: 1 * s, client: 2).logged)
        XCTAssertFalse(admit(&folds, failed, at: 2 * s, client: 3).logged)
        let late = admit(&folds, failed, at: 7 * s, client: 4)
        XCTAssertTrue(late.logged)
        XCTAssertEqual(late.ended?.repeated, 2)
        XCTAssertEqual(folds.nextDeadline, 12 * s, "a new interval from the entry that ended the last")
    }

    func testKindsAreFoldedApart() {
        var folds = LogFolds(interval: 5 * s)
        let refused = LogFolds.Kind(message: "connection refused", fold: "too-many-clients")
        let otherCode = LogFolds.Kind(message: "command failed", fold: "storage")
        XCTAssertTrue(admit(&folds, failed, at: 0, client: 1).logged)
        XCTAssertTrue(admit(&folds, refused, at: 1 * s, client: 2).logged)
        XCTAssertTrue(admit(&folds, otherCode, at: 2 * s, client: 3).logged)
        XCTAssertFalse(admit(&folds, failed, at: 3 * s, client: 4).logged)
        XCTAssertFalse(admit(&folds, refused, at: 3 * s, client: 5).logged)
        XCTAssertEqual(folds.nextDeadline, 5 * s)
        let first = folds.flush(now: 5 * s)
        XCTAssertEqual(first.map(\.message), ["command failed (repeated)"])
        XCTAssertEqual(folds.nextDeadline, 6 * s)
        XCTAssertEqual(folds.flush(now: 7 * s).map(\.message), ["connection refused (repeated)"])
        XCTAssertNil(folds.nextDeadline)
    }

    func testPastItsKindsAnEntryIsLoggedUnfolded() {
        var folds = LogFolds(interval: 5 * s)
        for i in 0..<LogFolds.maxKinds {
            XCTAssertTrue(admit(&folds, .init(message: "m", fold: "\(i)"), at: 0, client: i).logged)
        }
        for _ in 0..<3 {
            XCTAssertTrue(admit(&folds, .init(message: "m", fold: "new"), at: 1, client: 0).logged)
        }
        XCTAssertEqual(folds.windows.count, LogFolds.maxKinds)
    }
}

import Session
import XCTest

@testable import Daemon

/// The daemon-wide cap on subscribers catching up (issue 40, point 4): past it pages wait their
/// turn, in the order asked, and are read as shares free up; none is refused or lost.
final class CatchUpsTests: XCTestCase {
    private func page(_ client: UInt64, ticket: UInt64) -> CatchUps.Page {
        CatchUps.Page(client: client, ticket: ticket, after: 0, limit: 256)
    }

    func testTheDefaultCapIs64MiBOfWindows() {
        XCTAssertEqual(CatchUps().cap, 64 << 20)
        XCTAssertEqual(CatchUps.share, Session.catchUpWindow)
        XCTAssertEqual(CatchUps().cap / CatchUps.share, 1_024, "catch-ups at a time")
    }

    func testPastTheCapPagesWaitInOrderAndAreReadAsSharesFreeUp() {
        var catchUps = CatchUps(cap: 2 * CatchUps.share)
        XCTAssertTrue(catchUps.admit(1))
        XCTAssertTrue(catchUps.admit(2))
        XCTAssertTrue(catchUps.admit(1), "a holder's next page is read at once")
        XCTAssertEqual(catchUps.held, 2 * CatchUps.share)
        XCTAssertFalse(catchUps.admit(3))
        XCTAssertTrue(catchUps.wait(page(3, ticket: 30)), "the first page held back is logged")
        XCTAssertFalse(catchUps.admit(4))
        XCTAssertFalse(catchUps.wait(page(4, ticket: 40)), "and no other until the cap is half free")
        XCTAssertNil(catchUps.next(), "no share is free")
        catchUps.release(2)
        let third = catchUps.next()
        XCTAssertEqual(third?.client, 3)
        XCTAssertEqual(third?.ticket, 30)
        XCTAssertNil(catchUps.next())
        XCTAssertTrue(catchUps.admit(3), "it holds a share now")
        catchUps.release(1)
        XCTAssertEqual(catchUps.next()?.ticket, 40)
        XCTAssertEqual(catchUps.waiting, [:])
        catchUps.release(3)
        catchUps.release(4)
        XCTAssertEqual(catchUps.held, 0)
        XCTAssertTrue(catchUps.admit(5))
    }

    func testANewCatchUpDoesNotOvertakeThoseWaiting() {
        var catchUps = CatchUps(cap: CatchUps.share)
        XCTAssertTrue(catchUps.admit(1))
        XCTAssertFalse(catchUps.admit(2))
        _ = catchUps.wait(page(2, ticket: 20))
        catchUps.release(1)
        // A share is free, but client 2 waits for it: client 3 queues behind.
        XCTAssertFalse(catchUps.admit(3))
        _ = catchUps.wait(page(3, ticket: 30))
        XCTAssertEqual(catchUps.next()?.client, 2)
        XCTAssertNil(catchUps.next())
    }

    func testAPageWhoseCatchUpEndedWhileWaitingIsSkipped() {
        var catchUps = CatchUps(cap: CatchUps.share)
        XCTAssertTrue(catchUps.admit(1))
        for client: UInt64 in 2...4 {
            XCTAssertFalse(catchUps.admit(client))
            _ = catchUps.wait(page(client, ticket: client * 10))
        }
        // Client 2 went (or unsubscribed) while waiting; client 3 subscribed again, asking anew.
        catchUps.release(2)
        catchUps.release(3)
        _ = catchUps.wait(page(3, ticket: 31))
        catchUps.release(1)
        XCTAssertEqual(catchUps.next()?.ticket, 40)
        catchUps.release(4)
        XCTAssertEqual(catchUps.next()?.ticket, 31)
        catchUps.release(3)
        XCTAssertNil(catchUps.next())
        XCTAssertEqual(catchUps.waiting, [:])
    }

    func testTheWarningComesBackOnceTheSharesFellToHalfTheCap() {
        var catchUps = CatchUps(cap: 4 * CatchUps.share)
        for client: UInt64 in 1...4 { XCTAssertTrue(catchUps.admit(client)) }
        XCTAssertTrue(catchUps.wait(page(5, ticket: 50)))
        catchUps.release(1)
        XCTAssertEqual(catchUps.next()?.client, 5)
        XCTAssertFalse(catchUps.admit(6))
        XCTAssertFalse(catchUps.wait(page(6, ticket: 60)), "three quarters held: still the same episode")
        catchUps.release(2)
        catchUps.release(3)
        XCTAssertEqual(catchUps.next()?.client, 6)
        catchUps.release(4)
        catchUps.release(5)
        XCTAssertFalse(catchUps.admit(7) && catchUps.admit(8) && catchUps.admit(9) && catchUps.admit(10))
        XCTAssertTrue(catchUps.wait(page(10, ticket: 100)), "a new episode is logged")
    }
}

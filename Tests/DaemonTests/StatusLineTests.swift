import XCTest

@testable import Daemon

/// STATUS=: what it says, and that it goes at most once a second and only when it changed.
final class StatusLineTests: XCTestCase {
    func testTheLineSaysTheClientsAndTheStoresState() {
        XCTAssertEqual(
            StatusLine.text(clients: 3, movies: 10, store: "sqlite", seq: 1234, problem: nil),
            "Serving 3 clients; 10 movies; store ok (sqlite, seq 1234)")
        XCTAssertEqual(
            StatusLine.text(clients: 1, movies: 1, store: "sqlite", seq: 0, problem: nil),
            "Serving 1 client; 1 movie; store ok (sqlite, seq 0)")
        XCTAssertEqual(
            StatusLine.text(
                clients: 0, movies: 10, store: "postgres", seq: 12,
                problem: "PostgreSQL unreachable since 11:40:02 UTC, retrying; writes refused."),
            "Serving 0 clients; 10 movies; store unavailable (postgres, seq 12): "
                + "PostgreSQL unreachable since 11:40:02 UTC, retrying; writes refused.")
    }

    private let second: UInt64 = 1_000_000_000

    func testAChangeAfterAQuietSecondGoesAtOnceAndOneWithinTheSecondWaitsForItsEnd() {
        var pacing = StatusPacing()
        XCTAssertEqual(pacing.delay(now: 5 * second), 0, "nothing sent yet")
        pacing.record("ready", now: 5 * second)
        XCTAssertEqual(pacing.delay(now: 5 * second + 250_000_000), 750_000, "µs to the second's end")
        XCTAssertEqual(pacing.take("a", now: 6 * second), "a")
        XCTAssertEqual(pacing.delay(now: 6 * second), 1_000_000)
        XCTAssertEqual(pacing.delay(now: 7 * second), 0)
        XCTAssertEqual(pacing.delay(now: 9 * second), 0)
    }

    /// A client that came and went within the second: the line says what the last one said, so
    /// nothing goes; and the next look is still a second away.
    func testAnUnchangedLineIsNotSentAgain() {
        var pacing = StatusPacing()
        pacing.record("Serving 0 clients", now: second)
        XCTAssertNil(pacing.take("Serving 0 clients", now: 2 * second))
        XCTAssertEqual(pacing.delay(now: 2 * second), 1_000_000)
        XCTAssertEqual(pacing.take("Serving 1 client", now: 3 * second), "Serving 1 client")
        XCTAssertEqual(pacing.sent, "Serving 1 client")
    }
}

// The typed Swift client (SwipedClient) against the real daemon: every typed op, its values
// decoded into the library's own types (Movie, CommittedEvent, RowRender), events kept while
// waiting for replies, and the daemon's errors as ClientError with the protocol's code.

import Movies
import SwipeEngine
import SwipedClient
import XCTest

final class SwipedClientTests: XCTestCase {
    private var daemon: SwipedDaemon!

    override func setUpWithError() throws {
        daemon = try SwipedDaemon(prefix: "swiped-cl")
    }

    override func tearDownWithError() throws {
        if let daemon { XCTAssertEqual(try daemon.stop(), .exited(0)) }
        daemon = nil
    }

    private func client() throws -> SwipedClient {
        try SwipedClient(socketPath: daemon.socketPath, timeout: 5)
    }

    func testStateOpsDecodeIntoTheLibrarysTypes() throws {
        let c = try client()
        XCTAssertEqual(c.hello.protocolVersion, 1)
        XCTAssertEqual(c.hello.seq, 10)
        XCTAssertTrue(c.hello.writer)
        try c.ping()

        let (seq, movies) = try c.list()
        XCTAssertEqual(seq, 10)
        XCTAssertEqual(
            movies.first, Movie(id: "godfather", title: "The Godfather", image: "godfather", version: 1))
        XCTAssertEqual(movies.map(\.id).count, 10)

        let added = try c.add(title: "Heat", key: "k1")
        XCTAssertEqual(added.seq, 11)
        XCTAssertEqual(added.movie, Movie(id: "heat", title: "Heat", image: "heat", version: 11))
        XCTAssertEqual(try c.add(title: "Heat", key: "k1").seq, 11, "the same key replays")

        let watched = try c.toggleWatched("heat", expect: 11)
        XCTAssertEqual(watched.movie.watched, true)
        XCTAssertEqual(watched.movie.version, 12)
        XCTAssertEqual(try c.toggleWatchedWithFriends("heat").movie.watchedWithFriends, true)
        let removed = try c.remove("heat")
        XCTAssertEqual(removed.seq, 14)
        XCTAssertEqual(removed.movie.watched, true, "remove returns the last state")

        let (latest, events) = try c.history(from: 10, limit: 10)
        XCTAssertEqual(latest, 14)
        XCTAssertEqual(events.map(\.seq), [11, 12, 13, 14])
        XCTAssertEqual(
            events.map(\.kind.rawValue),
            ["added", "watched-toggled", "watched-with-friends-toggled", "removed"])
        XCTAssertGreaterThan(
            events[0].at, 1_700_000_000_000_000, "at is µs since the epoch, parsed from RFC 3339")
    }

    func testErrorsCarryTheProtocolsCode() throws {
        let c = try client()
        let cases: [(String, () throws -> Void)] = [
            ("not-found", { _ = try c.toggleWatched("alien") }),
            ("conflict", { _ = try c.toggleWatched("matrix", expect: 1) }),
            ("bad-request", { _ = try c.add(title: "   ") }),
            ("not-revealed", { _ = try c.tap("matrix", action: "delete") }),
        ]
        for (code, call) in cases {
            XCTAssertThrowsError(try call(), code) { error in
                let error = error as? ClientError
                XCTAssertEqual(error?.kind, .server)
                XCTAssertEqual(error?.code, code, error?.message ?? "")
            }
        }
        XCTAssertEqual(
            try c.callRaw(#"{"op":"fly","id":9}"#).prefix(36), #"{"id":9,"ok":false,"error":{"code":""#)
    }

    func testSwipeOpsAndEventsFromAnotherClient() throws {
        let c = try client()
        let other = try client()
        XCTAssertEqual(try c.subscribe(), 10)

        let dragged = try c.drag("seven", dx: -60)
        XCTAssertEqual(dragged.phase, .dragging)
        XCTAssertEqual(dragged.buttons.map(\.action), ["delete"])
        let (open, fired) = try c.release("seven")
        XCTAssertNil(fired)
        XCTAssertEqual(open.offset, -70)
        XCTAssertEqual(open.buttons.first?.x, 320)
        XCTAssertEqual(try c.rows().map(\.row), ["seven"])

        // Another client's change: a movie event, and the open row re-rendered, both kept
        // while the next reply is awaited.
        _ = try other.toggleWatched("seven")
        try c.ping()
        XCTAssertTrue(
            c.pendingEvents.contains { if case .movie(let e, _) = $0 { e.seq == 11 } else { false } },
            "\(c.pendingEvents)")
        XCTAssertTrue(
            c.pendingEvents.contains {
                if case .row(let r, false, nil) = $0 { r.row == "seven" } else { false }
            },
            "\(c.pendingEvents)")

        let (tapped, tapFired) = try c.tap("seven", action: "delete")
        XCTAssertEqual(tapped.phase, .closed)
        XCTAssertEqual(tapFired?.string("action"), "delete")
        XCTAssertEqual(tapFired?.uint("seq"), 12)
    }
}

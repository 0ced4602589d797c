import Glibc
import JSONCodec
import SwipedClient
import XCTest

/// SwipedClient's non-blocking connection, which `swipectl tui` polls: it never waits, decodes
/// the hello, replies by the id `send` returned, and events in between, and says when the
/// daemon has gone.
final class TuiStreamConnectionTests: DaemonClientTestCase {
    override class var prefix: String { "swiped-stream" }

    /// Polls the connection until `count` messages have come (or `closed`), as the tui's loop does.
    func receive(
        _ connection: StreamConnection, count: Int, timeout: Double = 5
    ) throws -> (messages: [StreamConnection.Message], closed: Bool) {
        var messages: [StreamConnection.Message] = []
        let deadline = Deadline(.milliseconds(Int(timeout * 1000)))
        while messages.count < count {
            if connection.wantsWrite { try connection.flush() }
            var pfd = pollfd(
                fd: connection.fd, events: Int16(POLLIN) | (connection.wantsWrite ? Int16(POLLOUT) : 0),
                revents: 0)
            guard poll(&pfd, 1, 100) >= 0 else { throw SystemCallError("poll") }
            let (more, closed) = try connection.receive()
            messages += more
            if closed { return (messages, true) }
            if deadline.hasPassed {
                throw TimeoutError("got \(messages.count) of \(count) messages: \(messages)")
            }
        }
        return (messages, false)
    }

    func testHelloRepliesByIdAndEventsInBetweenWithoutEverBlocking() throws {
        let connection = try StreamConnection(socketPath: daemon.socketPath)
        XCTAssertNotEqual(fcntl(connection.fd, F_GETFL) & O_NONBLOCK, 0, "the socket is non-blocking")
        // Nothing has to be there yet: receive returns what has come, never waits.
        let (hello, _) = try receive(connection, count: 1)
        guard case .hello(let h) = hello.first else { return XCTFail("expected hello first, got \(hello)") }
        XCTAssertEqual(h.seq, 10)
        XCTAssertTrue(h.writer)

        // Pipelined: subscribe, a change by this connection, help (about 17 KB: many reads).
        let subscribe = try connection.send("subscribe")
        let toggle = try connection.send("toggle-watched", [("movie", .string("matrix"))])
        let help = try connection.send("help")
        XCTAssertEqual([subscribe, toggle, help], [1, 2, 3])
        // Another client's change arrives as an event too.
        try client.ok(["op": "toggle-watched-with-friends", "movie": "seven"])
        let (messages, closed) = try receive(connection, count: 5)
        XCTAssertFalse(closed)
        var replies: [Int: Reply] = [:]
        var kinds: [String] = []
        for message in messages {
            switch message {
            case .reply(let id, let reply): replies[id] = reply
            case .event(.movie(let event, _)): kinds.append("\(event.seq) \(event.kind) \(event.movie.id)")
            default: XCTFail("unexpected \(message)")
            }
        }
        XCTAssertEqual(Set(replies.keys), [1, 2, 3])
        XCTAssertTrue(replies.values.allSatisfy(\.isOK))
        XCTAssertEqual(replies[2]?.object.uint("seq"), 11)
        XCTAssertGreaterThan(replies[3]?.line.utf8.count ?? 0, 10_000)
        XCTAssertEqual(kinds, ["11 watched-toggled matrix", "12 watched-with-friends-toggled seven"])

        // An error reply is a reply like any other, with its code.
        let bad = try connection.send("toggle-watched", [("movie", .string("alien"))])
        let (errors, _) = try receive(connection, count: 1)
        guard case .reply(bad, let reply) = errors.first else { return XCTFail("\(errors)") }
        XCTAssertEqual(reply.error?.code, "not-found")
    }

    func testItSaysWhenTheDaemonHasGone() throws {
        let connection = try StreamConnection(socketPath: daemon.socketPath)
        _ = try receive(connection, count: 1)
        client = nil
        XCTAssertEqual(try daemon.stop(), .exited(0))
        daemon = nil
        let (messages, closed) = try receive(connection, count: 2)
        XCTAssertTrue(closed)
        XCTAssertEqual(messages, [.event(.bye(reason: "shutdown"))])
        XCTAssertThrowsError(try StreamConnection(socketPath: "/nonexistent/swiped.sock")) { error in
            XCTAssertEqual((error as? ClientError)?.kind, .connect)
        }
    }
}

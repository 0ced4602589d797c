// The blocking typed client (SwipedClient.swift) on a fake daemon: requests carry ids their
// replies echo, events that come between are kept in order, and a reply out of order, a bye
// while waiting and a connection that closes before hello are each their own error.
import Foundation
import JSONCodec
import XCTest

@testable import SwipedClient

final class SwipedClientTests: XCTestCase {
    func testEventsBetweenRepliesAreKeptInOrder() throws {
        let daemon = try FakeDaemon()
        let event = #"{"event":"peer-row","client":3}"#
        daemon.serve([
            .write(hello), .readLine, .write(event + "\n" + #"{"id":1,"ok":true,"#), .pause,
            .write(#""seq":10}"# + "\n"), .readLine, .write(#"{"ok":true}"# + "\n"), .close,
        ])
        let client = try SwipedClient(socketPath: daemon.path, timeout: 5)
        XCTAssertEqual(client.hello.seq, 10)
        XCTAssertEqual(try client.call("ping").uint("seq"), 10)
        XCTAssertEqual(client.pendingEvents.count, 1)
        client.sendsIDs = false
        XCTAssertEqual(try client.exchange("list", [("from", .number(JSONNumber(3)))]).line, #"{"ok":true}"#)
        XCTAssertEqual(try client.nextEventLine(timeout: 0)?.line, event)
        XCTAssertNil(try client.nextEventLine(timeout: 5), "the daemon closed")
        XCTAssertEqual(daemon.finish(), [#"{"id":1,"op":"ping"}"#, #"{"op":"list","from":3}"#])
    }

    func testAReplyOutOfOrderAByeAndAnEarlyCloseAreErrors() throws {
        let daemon = try FakeDaemon()
        daemon.serve([
            .write(hello), .readLine, .write(#"{"id":7,"ok":true}"# + "\n"), .readLine,
            .write(#"{"event":"bye","reason":"shutdown"}"# + "\n"), .close,
        ])
        let client = try SwipedClient(socketPath: daemon.path, timeout: 5)
        XCTAssertThrowsError(try client.call("ping")) {
            XCTAssertEqual(($0 as? ClientError)?.message, #"reply out of order: {"id":7,"ok":true}"#)
        }
        XCTAssertThrowsError(try client.call("ping")) {
            XCTAssertEqual(
                $0 as? ClientError, ClientError(.closed, code: "shutdown", "the daemon said bye: shutdown"))
        }
        _ = daemon.finish()

        let silent = try FakeDaemon()
        silent.serve([.close])
        XCTAssertThrowsError(try SwipedClient(socketPath: silent.path, timeout: 5)) {
            XCTAssertEqual(
                $0 as? ClientError,
                ClientError(.closed, "the daemon at \(silent.path) closed the connection before saying hello")
            )
        }
        _ = silent.finish()
    }

    /// Issue 46: `history` asks for one person's changes with `by`, its events say who made each,
    /// and `undo` says whose change it undid (nil when the reply does not say).
    func testHistoryByAPersonAndWhoseChangeAnUndoUndid() throws {
        let daemon = try FakeDaemon()
        let movie =
            #"{"id":"seven","title":"Se7en","image":"seven","watched":false,"watchedWithFriends":false,"version":12}"#
        daemon.serve([
            .write(hello), .readLine,
            .write(
                #"{"id":1,"ok":true,"seq":12,"events":[{"seq":12,"kind":"removed","movie":\#(movie),"at":"2026-11-30T04:43:34Z","by":"alice"}]}"#
                    + "\n"),
            .readLine,
            .write(
                #"{"id":2,"ok":true,"seq":13,"movie":\#(movie),"undoes":12,"by":"root","undoesBy":"alice"}"#
                    + "\n"),
            .readLine, .write(#"{"id":3,"ok":true,"seq":14,"movie":\#(movie),"undoes":5}"# + "\n"), .close,
        ])
        let client = try SwipedClient(socketPath: daemon.path, timeout: 5)
        let (_, events) = try client.history(from: 11, limit: 5, by: "alice")
        XCTAssertEqual(events.map(\.by), ["alice"])
        let undone = try client.undo()
        XCTAssertEqual(undone.undoes, 12)
        XCTAssertEqual(undone.undoesBy, "alice")
        XCTAssertNil(try client.undo().undoesBy, "an undo of an event without by")
        XCTAssertEqual(
            daemon.finish(),
            [
                #"{"id":1,"op":"history","from":11,"limit":5,"by":"alice"}"#, #"{"id":2,"op":"undo"}"#,
                #"{"id":3,"op":"undo"}"#,
            ])
    }
}

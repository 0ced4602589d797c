// The non-blocking connection (StreamConnection.swift): `receive` gives the whole lines that
// have come, keeps a part line for the next call, decodes hello, replies and events, and says
// when the daemon has gone.
import Glibc
import XCTest

@testable import SwipedClient

final class StreamConnectionTests: XCTestCase {
    func testALineSplitAcrossReceivesComesWhole() throws {
        let daemon = try FakeDaemon()
        let connection = try StreamConnection(socketPath: daemon.path)
        let served = daemon.accept()
        defer { close(served) }
        XCTAssertEqual(try connection.receive().messages, [], "nothing yet, and no wait")
        FakeDaemon.write(hello + #"{"id":1,"ok""#, to: served)
        let first = try connection.receive()
        guard case .hello(let h)? = first.messages.first, first.messages.count == 1 else {
            return XCTFail("\(first)")
        }
        XCTAssertEqual(h.client, 7)
        FakeDaemon.write(#":true}"# + "\n" + #"{"event":"bye","reason":"shutdown"}"# + "\n", to: served)
        let (lines, closed) = try connection.receiveLines()
        XCTAssertFalse(closed)
        XCTAssertEqual(lines.map(\.line), [#"{"id":1,"ok":true}"#, #"{"event":"bye","reason":"shutdown"}"#])
        guard case .reply(let id, let reply) = lines[0].message else { return XCTFail("\(lines)") }
        XCTAssertEqual(id, 1)
        XCTAssertTrue(reply.isOK)
        XCTAssertEqual(lines[1].message, .event(.bye(reason: "shutdown")))
        close(served)
        XCTAssertTrue(try connection.receive().closed)
    }

    /// A long reply that arrives over many `receive` calls is scanned once, not once per call.
    func testALongLineOverManyReceivesIsScannedOnce() throws {
        let daemon = try FakeDaemon()
        let connection = try StreamConnection(socketPath: daemon.path)
        let served = daemon.accept()
        defer { close(served) }
        FakeDaemon.write(hello, to: served)
        XCTAssertEqual(try connection.receive().messages.count, 1)
        let movies = String(repeating: #"{"id":"m","title":"x"},"#, count: 200)
        let head = #"{"id":1,"ok":true,"movies":["#
        FakeDaemon.write(head, to: served)
        for _ in 0..<200 {
            FakeDaemon.write(movies, to: served)
            XCTAssertEqual(try connection.receive().messages, [])
        }
        FakeDaemon.write(#"{}]}"# + "\n", to: served)
        let (lines, _) = try connection.receiveLines()
        XCTAssertEqual(lines.count, 1)
        let length = head.utf8.count + 200 * movies.utf8.count + 4
        XCTAssertEqual(lines.first?.line.utf8.count, length)
        XCTAssertEqual(connection.input.bytesScanned, hello.utf8.count + length + 1)
    }

    func testAReplyWithoutTheIdOfItsRequestIsAProtocolError() throws {
        let daemon = try FakeDaemon()
        let connection = try StreamConnection(socketPath: daemon.path)
        let served = daemon.accept()
        defer { close(served) }
        XCTAssertEqual(try connection.send("ping"), 1)
        XCTAssertEqual(try connection.send("list"), 2)
        var request = [UInt8](repeating: 0, count: 256)
        let n = read(served, &request, request.count)
        XCTAssertEqual(
            String(decoding: request[0..<max(n, 0)], as: UTF8.self),
            #"{"id":1,"op":"ping"}"# + "\n" + #"{"id":2,"op":"list"}"# + "\n")
        FakeDaemon.write(hello + #"{"ok":true}"# + "\n", to: served)
        XCTAssertThrowsError(try connection.receive()) {
            XCTAssertEqual(
                ($0 as? ClientError)?.message, #"a reply without the id of its request: {"ok":true}"#)
        }
    }
}

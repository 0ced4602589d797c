// Every error code a client can provoke on the wire, with its reply shape: bad-json,
// bad-request, unknown-op, not-found, conflict (see DaemonStateOpsTests), not-revealed,
// too-large (the connection stays usable) and framing (\r\n, blank lines). `forbidden` is in
// DaemonWritersTests. `storage`, `overloaded` and `internal` cannot be provoked from a client
// here (a full disk, 65,536 commands waiting for the disk, a bug).

import Foundation
import Glibc
import XCTest

final class DaemonRequestErrorsTests: XCTestCase {
    private var daemon: SwipedDaemon!
    private var client: LineClient!

    override func setUpWithError() throws {
        daemon = try SwipedDaemon(arguments: ["--max-line", "2048"], prefix: "swiped-err")
        client = try daemon.connect()
    }

    override func tearDownWithError() throws {
        client = nil
        if let daemon { XCTAssertEqual(try daemon.stop(), .exited(0), daemon.process.standardError) }
        daemon = nil
    }

    /// Sends `bytes` plus "\n" and returns the reply.
    private func reply(toRaw bytes: [UInt8]) throws -> [String: Any] {
        try client.sendRaw(bytes + [0x0A])
        return try client.readReply()
    }

    private func assertError(
        _ line: String, _ code: String, naming: String? = nil, id expectedID: Any? = nil,
        file: StaticString = #filePath, line number: UInt = #line
    ) throws {
        try assertError(Array(line.utf8), code, naming: naming, id: expectedID, file: file, line: number)
    }

    private func assertError(
        _ bytes: [UInt8], _ code: String, naming: String? = nil, id expectedID: Any? = nil,
        file: StaticString = #filePath, line number: UInt = #line
    ) throws {
        let reply = try reply(toRaw: bytes)
        let what = String(decoding: bytes.prefix(80), as: UTF8.self)
        XCTAssertEqual(reply["ok"] as? Bool, false, what, file: file, line: number)
        XCTAssertEqual(LineClient.errorCode(of: reply), code, "\(what) → \(reply)", file: file, line: number)
        let message = LineClient.errorMessage(of: reply)
        XCTAssertFalse(message.isEmpty, what, file: file, line: number)
        if let naming {
            XCTAssertTrue(
                message.contains(naming), "\(what): the message does not name \(naming): \(message)",
                file: file, line: number)
        }
        if let expectedID {
            XCTAssertEqual("\(reply["id"] ?? "none")", "\(expectedID)", what, file: file, line: number)
        } else {
            XCTAssertNil(reply["id"], "\(what): \(reply)", file: file, line: number)
        }
        XCTAssertEqual(Set(reply.keys).subtracting(["id"]), ["ok", "error"], what, file: file, line: number)
    }

    func testBadJSON() throws {
        let lines = [
            #"{"op":"list",}"#, #"{"op":"ping","id":010}"#, #"{"op":"ping","id":1e999}"#,
            #"{"op":"ping","id":+1}"#, #"{"op":"ping","id":.5}"#, #"{"op":"ping","id":NaN}"#,
            #"{'op':'ping'}"#, #"{"op":"ping"} {"op":"ping"}"#, #"{"op":"ping""#, "ping",
            #"{"op":"ping","id":"\ud800"}"#, "[1,2]", #""op""#, "\u{FEFF}{\"op\":\"ping\"}",
        ]
        for line in lines { try assertError(line, "bad-json", naming: "byte") }
        // Invalid UTF-8: an overlong "/", an encoded surrogate, a truncated sequence.
        for bad: [UInt8] in [[0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xE2, 0x82]] {
            try assertError(Array(#"{"op":"add","title":"x"#.utf8) + bad + Array(#""}"#.utf8), "bad-json")
        }
        // A raw control character inside a string.
        try assertError(Array(#"{"op":"add","title":"a"#.utf8) + [0x01] + Array(#"b"}"#.utf8), "bad-json")
        try assertError(Array(#"{"op":"add","title":"a"#.utf8) + [0x09] + Array(#"b"}"#.utf8), "bad-json")
        // Nesting: 64 levels are fine, 65 are not.
        let ok64 =
            #"{"op":"ping","id":"# + String(repeating: "[", count: 63) + String(repeating: "]", count: 63)
            + "}"
        XCTAssertEqual(try reply(toRaw: Array(ok64.utf8))["ok"] as? Bool, true, "64 levels")
        let deep =
            #"{"op":"ping","id":"# + String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
            + "}"
        try assertError(deep, "bad-json")
        XCTAssertEqual(try client.ok(["op": "ping"])["ok"] as? Bool, true, "the connection survives")
    }

    func testBadRequestNamesTheArgument() throws {
        try assertError(#"{"op":"ping","id":1,"foo":1}"#, "bad-request", naming: "foo", id: 1)
        try assertError(#"{"op":"list","movie":"x"}"#, "bad-request", naming: "movie")
        try assertError(#"{"op":"toggle-watched","movie":5}"#, "bad-request", naming: "movie")
        try assertError(
            #"{"op":"toggle-watched","movie":"matrix","expect":"6"}"#, "bad-request", naming: "expect")
        try assertError(
            #"{"op":"toggle-watched","movie":"matrix","expect":6.5}"#, "bad-request", naming: "expect")
        try assertError(
            #"{"op":"toggle-watched","movie":"matrix","expect":-1}"#, "bad-request", naming: "expect")
        try assertError(#"{"op":"toggle-watched"}"#, "bad-request", naming: "movie")
        try assertError(#"{"op":"drag","movie":"matrix","dx":"10"}"#, "bad-request", naming: "dx")
        try assertError(#"{"op":"drag","movie":"matrix"}"#, "bad-request", naming: "dx")
        try assertError(#"{"op":"ping","op":"ping"}"#, "bad-request", naming: "op")
        let twice = try reply(toRaw: Array(#"{"op":"ping","id":1,"id":2}"#.utf8))
        XCTAssertEqual(LineClient.errorCode(of: twice), "bad-request")
        XCTAssertTrue(LineClient.errorMessage(of: twice).contains("\"id\""), "\(twice)")
        try assertError(#"{"id":"x"}"#, "bad-request", naming: "op", id: "x")
        try assertError(#"{"op":1}"#, "bad-request", naming: "op")
        try assertError(#"{"op":null}"#, "bad-request", naming: "op")
        try assertError(#"{"op":"history","limit":0}"#, "bad-request", naming: "limit")
        try assertError(#"{"op":"history","limit":1001}"#, "bad-request", naming: "limit")
        try assertError(#"{"op":"history","from":-1}"#, "bad-request", naming: "from")
        try assertError(#"{"op":"subscribe","from":11}"#, "bad-request", naming: "from")
        try assertError(#"{"op":"viewport","width":99}"#, "bad-request", naming: "width")
        try assertError(#"{"op":"viewport","width":4001}"#, "bad-request", naming: "width")
        try assertError(#"{"op":"viewport","direction":"up"}"#, "bad-request", naming: "direction")
        try assertError(#"{"op":"configure","buttonWidth":19}"#, "bad-request", naming: "buttonWidth")
        try assertError(#"{"op":"configure","leading":"watched"}"#, "bad-request", naming: "leading")
        try assertError(
            #"{"op":"configure","leading":[{"action":"a","color":"red"}]}"#, "bad-request", naming: "color")
        try assertError(
            #"{"op":"configure","leading":[{"action":"a","role":"cancel"}]}"#, "bad-request", naming: "role")
        try assertError(
            #"{"op":"configure","leading":[{"action":"a"}],"trailing":[{"action":"a"}]}"#, "bad-request")
        let nine = (1...9).map { #"{"action":"a\#($0)"}"# }.joined(separator: ",")
        try assertError(#"{"op":"configure","trailing":[\#(nine)]}"#, "bad-request", naming: "8")
        let long = String(repeating: "x", count: 1025)
        try assertError(#"{"op":"add","title":"t","image":"\#(long)"}"#, "bad-request", naming: "image")
        XCTAssertEqual(try client.ok(["op": "list"])["seq"] as? Int, 10, "a failed request changes nothing")
    }

    func testUnknownOp() throws {
        try assertError(#"{"op":"fly","id":"x"}"#, "unknown-op", naming: "help", id: "x")
        try assertError(#"{"op":"PING"}"#, "unknown-op", naming: "PING")
        try assertError(#"{"op":""}"#, "unknown-op")
    }

    func testNotFoundAndNotRevealedOnRows() throws {
        try assertError(#"{"op":"drag","movie":"alien","dx":-60}"#, "not-found", naming: "alien")
        try assertError(#"{"op":"close","movie":"alien"}"#, "not-found", naming: "alien")
        try assertError(
            #"{"op":"tap","movie":"seven","action":"delete","id":3}"#, "not-revealed", naming: "delete", id: 3
        )
        // Revealing the trailing edge shows delete, not watched.
        try client.ok(["op": "drag", "movie": "seven", "dx": -80])
        try client.ok(["op": "release", "movie": "seven"])
        try assertError(
            #"{"op":"tap","movie":"seven","action":"watched"}"#, "not-revealed", naming: "watched")
        let rows = try client.ok(["op": "rows"])["rows"] as? [[String: Any]]
        XCTAssertEqual(rows?.first?["phase"] as? String, "open", "a refused tap leaves the row as it was")
        try assertError(
            #"{"op":"tap","movie":"seven","action":"frobnicate"}"#, "bad-request", naming: "frobnicate")
    }

    func testTooLargeSkipsTheLineAndKeepsTheConnection() throws {
        // 2048 bytes is the limit (not counting "\n"): padded with spaces, this one is exactly it.
        let head = #"{"op":"ping","id":1}"#
        let exact = head.dropLast() + String(repeating: " ", count: 2048 - head.utf8.count) + "}"
        XCTAssertEqual(exact.utf8.count, 2048)
        try client.send(String(exact))
        XCTAssertEqual(int(try client.readReply()["id"]), 1)

        let over = head.dropLast() + String(repeating: " ", count: 2049 - head.utf8.count) + "}"
        try assertError(String(over), "too-large", naming: "2048")
        // Far over, in pieces, followed at once by a good request in the same write.
        try client.sendRaw(Array(repeating: UInt8(ascii: "x"), count: 100_000))
        try client.sendRaw(
            Array(repeating: UInt8(ascii: "y"), count: 100_000) + [0x0A]
                + Array(#"{"op":"ping","id":2}"#.utf8) + [0x0A])
        let skipped = try client.readReply()
        XCTAssertEqual(LineClient.errorCode(of: skipped), "too-large")
        XCTAssertNil(skipped["id"])
        XCTAssertEqual(int(try client.readReply()["id"]), 2)
    }

    func testFramingAcceptsCRLFAndIgnoresBlankLines() throws {
        try client.sendRaw(
            Array("\n   \n\t\r\n\r\n{\"op\":\"ping\",\"id\":1}\r\n\n{\"op\":\"ping\",\"id\":2}\n".utf8))
        XCTAssertEqual(try client.readLine(), #"{"id":1,"ok":true}"#)
        XCTAssertEqual(try client.readLine(), #"{"id":2,"ok":true}"#)
        try client.expectSilence(for: .milliseconds(200))
    }

    func testALastLineWithoutNewlineIsHandledOnHalfClose() throws {
        try client.sendRaw(
            Array(#"{"op":"ping","id":1}"#.utf8) + [0x0A]
                + Array(#"{"op":"toggle-watched","movie":"seven","id":2}"#.utf8))
        try client.shutdownWrite()
        let lines = try client.readUntilClosed()
        XCTAssertEqual(lines.count, 2, "\(lines)")
        XCTAssertEqual(lines.first, #"{"id":1,"ok":true}"#)
        XCTAssertTrue(lines.last?.hasPrefix(#"{"id":2,"ok":true,"seq":11"#) ?? false, "\(lines)")
    }
}

// Real command-line clients: socat and `nc -U`, lines piped in, lines read out, including the
// socat session of protocol.md.

import Foundation
import Glibc
import XCTest

final class DaemonShellClientsTests: XCTestCase {
    func testTheSocatSessionOfProtocolMd() throws {
        let daemon = try SwipedDaemon(prefix: "swiped-sh")
        let input =
            [
                #"{"op":"ping","id":1}"#, #"{"op":"toggle-watched","movie":"matrix"}"#,
                #"{"op":"drag","movie":"seven","dx":-60}"#, #"{"op":"release","movie":"seven"}"#,
                #"{"op":"tap","movie":"seven","action":"delete"}"#, #"{"op":"fly"}"#, #"{"op":"list",}"#,
            ].joined(separator: "\n") + "\n"
        let result = try Subprocess.run(
            "socat", ["-t", "5", "-", "UNIX-CONNECT:\(daemon.socketPath)"], input: input,
            timeout: .seconds(10))
        XCTAssertEqual(result.status, .exited(0), result.standardError)
        let lines = result.standardOutput.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 8, result.standardOutput)
        guard lines.count == 8 else { return }
        XCTAssertTrue(lines[0].hasPrefix(#"{"event":"hello","protocol":1,"server":"swiped/"#), lines[0])
        XCTAssertNotNil(
            lines[0].range(
                of: #","seq":10,"writer":true,"user":"root","role":"admin","log":"[0-9a-f]{32}"\}$"#,
                options: .regularExpression),
            lines[0])
        XCTAssertEqual(lines[1], #"{"id":1,"ok":true}"#)
        XCTAssertEqual(
            lines[2],
            #"{"ok":true,"seq":11,"movie":{"id":"matrix","title":"The Matrix","image":"matrix","watched":true,"watchedWithFriends":false,"version":11},"by":"root"}"#
        )
        XCTAssertTrue(
            lines[3].hasPrefix(
                #"{"ok":true,"row":{"movie":"seven","offset":-60,"phase":"dragging","edge":"trailing","fullSwipe":false,"buttons":[{"action":"delete","label":"Delete","icon":"trash","tint":"red","role":"destructive","x":330,"width":60}]"#
            ),
            lines[3])
        XCTAssertTrue(
            lines[4].hasPrefix(
                #"{"ok":true,"row":{"movie":"seven","offset":-70,"phase":"open","edge":"trailing","#),
            lines[4])
        XCTAssertTrue(
            lines[5].hasPrefix(#"{"ok":true,"row":{"movie":"seven","offset":0,"phase":"closed","#), lines[5])
        XCTAssertTrue(lines[5].hasSuffix(#""fired":{"action":"delete","seq":12}}"#), lines[5])
        XCTAssertEqual(
            lines[6],
            #"{"ok":false,"error":{"code":"unknown-op","message":"unknown op \"fly\"; send {\"op\":\"help\"} for the list of ops"}}"#
        )
        // protocol.md's session says "at byte 13"; the daemon names the comma's 0-based offset, 12
        // (reported as a discrepancy). Either way the message names a byte offset.
        XCTAssertTrue(
            lines[7].hasPrefix(#"{"ok":false,"error":{"code":"bad-json","message":"trailing comma at byte "#),
            lines[7])
    }

    func testNetcatSessionAndAnInteractiveSocat() throws {
        let daemon = try SwipedDaemon(prefix: "swiped-sh")
        let nc = try Subprocess.run(
            "nc", ["-U", "-N", daemon.socketPath],
            input: "{\"op\":\"add\",\"title\":\"Heat\",\"id\":\"a\"}\r\n\n{\"op\":\"list\",\"id\":\"b\"}\n",
            timeout: .seconds(10))
        XCTAssertEqual(nc.status, .exited(0), nc.standardError)
        let lines = try nc.standardOutput.split(separator: "\n").map { try LineClient.parse(String($0)) }
        XCTAssertEqual(lines.map { $0["event"] as? String ?? $0["id"] as? String }, ["hello", "a", "b"])
        XCTAssertEqual(int(lines[1]["seq"]), 11)

        // socat as a long-lived subscriber sees the change nc makes.
        let socat = try ProcessLineSession("socat", ["-", "UNIX-CONNECT:\(daemon.socketPath)"])
        XCTAssertEqual(try socat.readJSON()["event"] as? String, "hello")
        XCTAssertEqual(int(try socat.request(["op": "subscribe"])["seq"]), 11)
        let remove = try Subprocess.run(
            "nc", ["-U", "-N", daemon.socketPath], input: #"{"op":"remove","movie":"heat"}"# + "\n",
            timeout: .seconds(10))
        XCTAssertEqual(remove.status, .exited(0))
        let event = try socat.readJSON()
        XCTAssertEqual(event["kind"] as? String, "removed")
        XCTAssertEqual(int(event["seq"]), 12)
        // The daemon's bye ends socat on SIGTERM.
        XCTAssertEqual(try daemon.stop(), .exited(0))
        XCTAssertEqual(try socat.readJSON()["reason"] as? String, "shutdown")
        XCTAssertEqual(try socat.process.wait(timeout: .seconds(5)), .exited(0))
    }
}

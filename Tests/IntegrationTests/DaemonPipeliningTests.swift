// Replies echo `id` verbatim (the same bytes) and come in request order, also when 1,000
// requests arrive in one write with mutations (which wait for the disk) among reads.

import Foundation
import Glibc
import XCTest

final class DaemonPipeliningTests: XCTestCase {
    func testRepliesEchoTheIdVerbatim() throws {
        let daemon = try SwipedDaemon(prefix: "swiped-pipe")
        let client = try daemon.connect()
        let ids = [
            "1.50", "-0", "1E+2", "0.000", "12345678901234567890123", "true", "null",
            #""a\"b\\c\u00e9\n\/""#, #""é😀""#, #"{"b":[1,2],"a":"x"}"#,
            #"[1,"two",null,{}]"#, "[]", "{}",
        ]
        for id in ids {
            try client.send(#"{"op":"ping","id":\#(id)}"#)
            XCTAssertEqual(try client.readLine(), #"{"id":\#(id),"ok":true}"#)
            // Errors and mutations echo it too, wherever the id sits in the request.
            try client.send(#"{"id":\#(id),"op":"fly"}"#)
            XCTAssertTrue(try client.readLine()?.hasPrefix(#"{"id":\#(id),"ok":false,"error":"#) ?? false, id)
            try client.send(#"{"movie":"matrix","id":\#(id),"op":"toggle-watched"}"#)
            XCTAssertTrue(try client.readLine()?.hasPrefix(#"{"id":\#(id),"ok":true,"seq":"#) ?? false, id)
        }
        // Whitespace between an id's tokens is left out (the reply stays one compact line);
        // inside its strings nothing changes.
        try client.send("{\"op\":\"ping\",\"id\":{ \"k\" :\t[ 1 ,\r2 ], \"s\": \" a\\tb \" }}")
        XCTAssertEqual(try client.readLine(), #"{"id":{"k":[1,2],"s":" a\tb "},"ok":true}"#)
        // No id: no id in the reply.
        try client.send(#"{"op":"list"}"#)
        XCTAssertTrue(try client.readLine()?.hasPrefix(#"{"ok":true,"seq":"#) ?? false)
    }

    /// A read pipelined behind the client's own mutation is worded once that mutation is
    /// durable, so it includes it (read-your-writes); a drag's reply is worded at once.
    func testPipelinedReadsSeeTheClientsOwnEarlierWrites() throws {
        let daemon = try SwipedDaemon(prefix: "swiped-pipe")
        let client = try daemon.connect()
        try client.send(
            #"{"op":"add","title":"Alien","id":1}"# + "\n" + #"{"op":"list","id":2}"# + "\n"
                + #"{"op":"history","from":10,"id":3}"# + "\n" + #"{"op":"subscribe","id":4}"#)
        let added = try XCTUnwrap(client.readLine())
        XCTAssertTrue(added.hasPrefix(#"{"id":1,"ok":true,"seq":11,"#), added)
        let list = try XCTUnwrap(client.readLine())
        XCTAssertTrue(list.hasPrefix(#"{"id":2,"ok":true,"seq":11,"#), list)
        XCTAssertTrue(list.contains(#""id":"alien""#), list)
        let history = try XCTUnwrap(client.readLine())
        XCTAssertTrue(history.contains(#""seq":11,"kind":"added""#), history)
        XCTAssertEqual(try client.readLine(), #"{"id":4,"ok":true,"seq":11}"#)
    }

    /// A refused command is answered by the store at the end of the loop iteration; a `history`
    /// behind it becomes due then and asks the store for its page. An empty page (nothing after
    /// the latest seq) is answered by the store without its reader thread, so no eventfd
    /// announces it: it must come without anything else waking the loop (it once waited for
    /// the next client or timer).
    func testAReadThatBecomesDueBehindARefusalIsAnsweredWithoutAnotherWakeUp() throws {
        let daemon = try SwipedDaemon(prefix: "swiped-pipe")
        let client = try daemon.connect()
        // Past the status line's timer, which a connect arms: nothing else will wake the loop.
        usleep(1_300_000)
        try client.send(
            #"{"op":"toggle-watched","movie":"nope","id":1}"# + "\n" + #"{"op":"history","from":10,"id":2}"#)
        let refused = try XCTUnwrap(client.readLine(timeout: .seconds(3)))
        XCTAssertTrue(refused.hasPrefix(#"{"id":1,"ok":false,"error":{"code":"not-found""#), refused)
        let history = try XCTUnwrap(client.readLine(timeout: .seconds(3)))
        XCTAssertEqual(history, #"{"id":2,"ok":true,"seq":10,"events":[]}"#)
    }

    func testAThousandPipelinedRequestsAreAnsweredInOrder() throws {
        let daemon = try SwipedDaemon(prefix: "swiped-pipe")
        let client = try daemon.connect()
        let other = try daemon.connect()
        var batch = ""
        var mutations = 0
        for n in 0..<1000 {
            switch n % 10 {
            case 3: batch += #"{"op":"toggle-watched","movie":"matrix","id":\#(n)}"#; mutations += 1
            case 6: batch += #"{"op":"add","title":"Movie \#(n)","id":\#(n)}"#; mutations += 1
            case 8: batch += #"{"op":"drag","movie":"seven","dx":\#(-(n % 50)),"id":\#(n)}"#
            case 9: batch += #"{"op":"list","id":\#(n)}"#
            default: batch += #"{"op":"ping","id":\#(n)}"#
            }
            batch += "\n"
        }
        try client.sendRaw(Array(batch.utf8))
        // Another client's pings are answered meanwhile.
        let start = ContinuousClock.now
        XCTAssertEqual(try other.ok(["op": "ping", "id": "other"])["id"] as? String, "other")
        XCTAssertLessThan(ContinuousClock.now - start, .seconds(1))

        var lastSeq = 10
        for n in 0..<1000 {
            let reply = try client.readReply(timeout: .seconds(20))
            XCTAssertEqual(int(reply["id"]), n, "out of order: \(reply)")
            XCTAssertEqual(reply["ok"] as? Bool, true, "\(reply)")
            if n % 10 == 3 || n % 10 == 6 {
                let seq = try XCTUnwrap(int(reply["seq"]), "\(reply)")
                XCTAssertEqual(seq, lastSeq + 1, "mutations are answered in seq order")
                lastSeq = seq
            }
            if n % 10 == 9 {
                // A pipelined read is worded when it is due: it includes every mutation whose
                // reply came before it (read-your-writes), and may include later ones of the
                // same commit group.
                let seq = int(reply["seq"]) ?? -1
                XCTAssertTrue(
                    (lastSeq...(10 + mutations)).contains(seq), "list \(n): seq \(seq), last \(lastSeq)")
            }
        }
        XCTAssertEqual(lastSeq, 10 + mutations)
        XCTAssertTrue(client.events.isEmpty, "\(client.events.prefix(3))")
        XCTAssertEqual(try daemon.stop(), .exited(0))
    }
}

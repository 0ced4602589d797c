// Regression tests for what a review of the daemon found: a lagging subscriber whose queue the
// socket drained at once was never fed again; replies parked behind a client's own pending
// mutation were not counted against the write-queue cap; a pipelined re-subscribe lost its `from`.

import Foundation
import Glibc
import XCTest

final class ReliabilityReviewTests: XCTestCase {
    /// With a small queue cap the daemon feeds a subscriber catching up from the log a few
    /// pages at a time; each time the socket takes everything, it must go on by itself.
    func testACatchingUpSubscriberGetsEveryEventWithASmallQueue() throws {
        let dir = try TemporaryDirectory("swiped-rv")
        let daemon = try AbuseDaemon(
            state: dir.file("state"), socket: dir.file("s.sock"), arguments: ["--max-queue", "4096"])
        let writer = try daemon.connect()
        var batch = ""
        for n in 0..<1500 { batch += #"{"op":"toggle-watched","movie":"matrix","id":\#(n)}"# + "\n" }
        try writer.sendRaw(Array(batch.utf8))
        for _ in 0..<1500 { _ = try writer.readReply(timeout: .seconds(30)) }
        let latest = 10 + 1500

        let subscriber = try daemon.connect()
        try subscriber.send(#"{"op":"subscribe","from":0}"#)
        XCTAssertEqual(try subscriber.readReply()["seq"] as? Int, latest)
        var expected = 1
        while expected <= latest {
            let event = try subscriber.readEvent(timeout: .seconds(10))
            XCTAssertEqual(event["seq"] as? Int, expected, "no gap, no duplicate")
            expected += 1
        }
        daemon.kill(SIGTERM)
        XCTAssertEqual(try daemon.wait(), .exited(0))
    }

    /// A client that pipelines thousands of requests behind its own mutation, without reading:
    /// the replies waiting for that commit count against the cap, so the daemon stops reading
    /// it instead of holding them all; every reply still arrives, in order, once it reads.
    func testRepliesParkedBehindAPendingMutationAreBounded() throws {
        let dir = try TemporaryDirectory("swiped-rv")
        let daemon = try AbuseDaemon(state: dir.file("state"), socket: dir.file("s.sock"))
        let client = try daemon.connect()
        let before = try daemon.rssKB()
        var text = #"{"op":"toggle-watched","movie":"matrix","id":"t"}"# + "\n"
        for n in 0..<4000 { text += #"{"op":"help","id":\#(n)}"# + "\n" }
        let round = Array(text.utf8)
        let rounds = 5
        // The writes block once the daemon stops reading: they go on in a thread of their own.
        let sending = UncheckedBox(client)
        let sender = Thread {
            for _ in 0..<rounds { try? sending.value.sendRaw(round) }
        }
        sender.start()
        // Unbounded, this would park 5 × 4,000 help replies (≈ 14 KB each): 280 MB.
        Thread.sleep(forTimeInterval: 2)
        let grown = try daemon.rssKB() - before
        XCTAssertLessThan(grown, rssGrowthBoundKB / 2, "RSS grew by \(grown) kB")
        for r in 0..<rounds {
            XCTAssertEqual(try client.readReply(timeout: .seconds(30))["id"] as? String, "t", "round \(r)")
            for n in 0..<4000 {
                let reply = try client.readReply(timeout: .seconds(30))
                XCTAssertEqual(reply["id"] as? Int, n)
                if reply["id"] as? Int != n { return }
            }
        }
        daemon.kill(SIGTERM)
        XCTAssertEqual(try daemon.wait(), .exited(0))
    }

    /// Two subscribes pipelined behind a pending mutation: the second one's `from` wins.
    func testTheLastOfPipelinedSubscribesDecides() throws {
        let dir = try TemporaryDirectory("swiped-rv")
        let daemon = try AbuseDaemon(state: dir.file("state"), socket: dir.file("s.sock"))
        let client = try daemon.connect()
        try client.sendRaw(
            Array(
                (#"{"op":"add","title":"Heat","id":1}"# + "\n" + #"{"op":"subscribe","from":0,"id":2}"# + "\n"
                    + #"{"op":"subscribe","from":5,"id":3}"# + "\n").utf8))
        XCTAssertEqual(try client.readReply()["id"] as? Int, 1)
        XCTAssertEqual(try client.readReply()["id"] as? Int, 2)
        XCTAssertEqual(try client.readReply()["id"] as? Int, 3)
        XCTAssertEqual(try client.readEvent()["seq"] as? Int, 6, "events after 5, not after 0")
        daemon.kill(SIGTERM)
        XCTAssertEqual(try daemon.wait(), .exited(0))
    }
}

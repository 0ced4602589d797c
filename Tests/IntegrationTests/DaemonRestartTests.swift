// The state survives a restart (and the seed catalogue is written on the first start only).

import Foundation
import Glibc
import XCTest

final class DaemonRestartTests: XCTestCase {
    func testRestartKeepsTheStateAndDoesNotSeedAgain() throws {
        var daemon = try SwipedDaemon(prefix: "swiped-rs")
        var client = try daemon.connect()
        try client.ok(["op": "toggle-watched", "movie": "matrix"])
        try client.ok(["op": "toggle-watched-with-friends", "movie": "seven"])
        try client.ok(["op": "add", "title": "Heat", "image": "heat.jpg"])
        try client.ok(["op": "remove", "movie": "godfather"])
        let before = try client.ok(["op": "list"])
        let history = try client.ok(["op": "history"])["events"] as? [[String: Any]]
        client.close()

        daemon = try daemon.restart()
        let (again, hello) = try daemon.connectWithHello()
        client = again
        XCTAssertEqual(int(hello["seq"]), 14)
        let after = try client.ok(["op": "list"])
        XCTAssertEqual(after as NSDictionary, before as NSDictionary)
        XCTAssertFalse(
            (after["movies"] as? [[String: Any]] ?? []).contains { $0["id"] as? String == "godfather" },
            "the seed was written again")
        let historyAfter = try client.ok(["op": "history"])["events"] as? [[String: Any]]
        XCTAssertEqual(historyAfter.map { $0 as NSArray }, history.map { $0 as NSArray })
        // A removed id stays used across restarts.
        let readd = try client.ok(["op": "add", "title": "The Godfather"])
        XCTAssertEqual((readd["movie"] as? [String: Any])?["id"] as? String, "the_godfather")
        try client.ok(["op": "toggle-watched", "movie": "matrix"])
        client.close()

        daemon = try daemon.restart()
        client = try daemon.connect()
        let last = try client.ok(["op": "list"])
        XCTAssertEqual(int(last["seq"]), 16)
        XCTAssertEqual((last["movies"] as? [[String: Any]])?.count, 11)
        XCTAssertEqual(try daemon.stop(), .exited(0))
    }

    func testRestartWithNormalDurabilityKeepsAcknowledgedChanges() throws {
        var daemon = try SwipedDaemon(arguments: ["--durability", "normal"], prefix: "swiped-rs")
        let client = try daemon.connect()
        var batch = ""
        for n in 0..<100 { batch += #"{"op":"toggle-watched","movie":"seven","id":\#(n)}"# + "\n" }
        try client.sendRaw(Array(batch.utf8))
        for _ in 0..<100 { _ = try client.readReply() }
        daemon = try daemon.restart()
        XCTAssertEqual(int(try daemon.connectWithHello().hello["seq"]), 110)
    }
}

// The journal entries of swiped, read back from a real journald in a private mount namespace:
// start, connects, disconnects, state changes and errors carry SYSLOG_IDENTIFIER=swiped,
// PRIORITY and the fields CLIENT, PEER_UID, PEER_PID, OP, MOVIE, SEQ, ERROR; drags log nothing.

import Foundation
import Glibc
import XCTest

final class DaemonJournalTests: XCTestCase {
    func testConnectsChangesErrorsAndDisconnectsAreLoggedButDragsAreNot() throws {
        let journal = try PrivateJournal(
            script: #"exec "$SWIPED" --socket "$TEST_DIR/s.sock" --state "$TEST_DIR/state""#,
            environment: ["SWIPED": try Binaries.swiped])
        let (client, hello) = try {
            let client = try LineClient(path: journal.directory.file("s.sock"), timeout: .seconds(10))
            return (client, try client.readJSON())
        }()
        let id = try XCTUnwrap(int(hello["client"]))
        try client.ok(["op": "toggle-watched", "movie": "matrix"])
        for dx in stride(from: -10, through: -200, by: -10) {
            try client.ok(["op": "drag", "movie": "seven", "dx": dx])
        }
        try client.ok(["op": "release", "movie": "seven", "dx": 0])
        XCTAssertEqual(LineClient.errorCode(of: try client.request(["op": "fly"])), "unknown-op")
        XCTAssertEqual(
            LineClient.errorCode(of: try client.request(["op": "remove", "movie": "alien"])), "not-found")
        client.close()
        // Wait for the disconnect to be logged, then stop.
        _ = try poll(until: .seconds(5), "the disconnect entry") {
            try journal.entries().contains { $0["MESSAGE"] == "client disconnected" } ? true : nil
        }
        let run = try journal.stop()
        XCTAssertEqual(run.status, .exited(0), run.output)

        let entries = run.entries(identifier: "swiped")
        XCTAssertTrue(
            entries.allSatisfy { ($0["PRIORITY"].flatMap(Int.init) ?? -1) >= 0 }, "every entry has a PRIORITY"
        )
        let started = try XCTUnwrap(entries.first { $0["MESSAGE"] == "swiped started" }, "\(entries)")
        XCTAssertEqual(started["SOCKET"], journal.directory.file("s.sock"))
        XCTAssertEqual(started["SEQ"], "10")

        let mine = entries.filter { $0["CLIENT"] == "\(id)" }
        let connected = try XCTUnwrap(mine.first { $0["MESSAGE"] == "client connected" }, "\(mine)")
        XCTAssertEqual(connected["PEER_UID"], "\(geteuid())")
        XCTAssertEqual(connected["PEER_PID"], "\(getpid())")
        XCTAssertEqual(connected["PRIORITY"], "6")

        let changed = try XCTUnwrap(mine.first { $0["OP"] == "toggle-watched" }, "\(mine)")
        XCTAssertEqual(changed["MOVIE"], "matrix")
        XCTAssertEqual(changed["SEQ"], "11")

        let unknown = try XCTUnwrap(mine.first { $0["ERROR"] == "unknown-op" }, "\(mine)")
        XCTAssertEqual(unknown["OP"], "fly")
        let notFound = try XCTUnwrap(mine.first { $0["ERROR"] == "not-found" }, "\(mine)")
        XCTAssertEqual(notFound["OP"], "remove")
        XCTAssertEqual(notFound["MOVIE"], "alien")

        let disconnected = try XCTUnwrap(mine.first { $0["MESSAGE"] == "client disconnected" }, "\(mine)")
        XCTAssertEqual(disconnected["PEER_UID"], "\(geteuid())")
        XCTAssertEqual(disconnected["PEER_PID"], "\(getpid())")

        // 20 drags and a release: not one entry. Only the five above.
        XCTAssertEqual(mine.count, 5, mine.map { $0["MESSAGE"] ?? "?" }.joined(separator: ", "))
        XCTAssertFalse(entries.contains { $0["OP"] == "drag" || $0["OP"] == "release" })
        XCTAssertTrue(entries.contains { $0["MESSAGE"] == "stopping" && $0["SIGNAL"] == "SIGTERM" })
    }
}

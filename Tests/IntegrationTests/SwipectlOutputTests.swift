// What swipectl prints: --json shows the daemon's replies without swipectl's own request ids;
// titles are escaped and fitted to the terminal (issue 13).

import Foundation
import Glibc
import XCTest

final class SwipectlOutputTests: XCTestCase {
    private var daemon: TestDaemon!

    override func setUpWithError() throws {
        daemon = try TestDaemon()
    }

    override func tearDownWithError() throws {
        defer { daemon = nil }
        XCTAssertEqual(try daemon.stop(), .exited(0), daemon.process.standardError)
    }

    func testJSONRepliesCarryNoRequestIDs() throws {
        var outputs = [
            try daemon.ok("--json", "list"), try daemon.ok("--json", "toggle-watched", "The Mat"),
            try daemon.ok("--json", "add", "Heat"), try daemon.ok("--json", "history", "--from", "10"),
            try daemon.ok("--json", "remove", "heat"),
        ]
        let refused = try daemon.swipectl(["--json", "remove", "heat"])
        XCTAssertEqual(refused.status, .exited(1))
        outputs.append(refused.standardOutput)
        for output in outputs {
            XCTAssertTrue(output.hasPrefix(#"{"ok":"#), output)
            for reply in try jsonLines(output) { XCTAssertNil(reply["id"], "\(reply)") }
        }
        XCTAssertTrue(outputs[1].hasPrefix(#"{"ok":true,"seq":11,"movie":{"id":"matrix""#), outputs[1])
    }
}

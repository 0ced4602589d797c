// `--writers GROUP`: peers outside the group get `forbidden` on every mutation (and on a swipe
// that would fire a bound action) and `writer:false` in hello; members and root may write.
// Clients run as real test users: `setpriv … socat - UNIX-CONNECT:path`.

import Foundation
import Glibc
import XCTest

final class DaemonWritersTests: XCTestCase {
    private var users: TestUsers.Users!
    private var daemon: SwipedDaemon!

    override func setUpWithError() throws {
        users = try TestUsers.ensure()
        daemon = try SwipedDaemon(arguments: ["--writers", TestUsers.writersGroup], prefix: "swiped-wr")
        // Let the test users reach the socket (the directory is 0700, the socket 0660 root:root).
        try daemon.directory.allowOthers()
        try retryingEINTR("chmod", daemon.socketPath) { chmod(daemon.socketPath, 0o666) }
    }

    override func tearDownWithError() throws {
        if let daemon { XCTAssertEqual(try daemon.stop(), .exited(0), daemon.process.standardError) }
        daemon = nil
    }

    private func session(as user: TestUsers.User) throws -> (ProcessLineSession, [String: Any]) {
        let session = try ProcessLineSession(
            "setpriv",
            TestUsers.setpriv(user) + [
                try Binaries.system("socat"), "-", "UNIX-CONNECT:\(daemon.socketPath)",
            ])
        let hello = try session.readJSON()
        XCTAssertEqual(hello["event"] as? String, "hello")
        return (session, hello)
    }

    func testReadersAreForbiddenToChangeStateButMayReadAndSwipe() throws {
        let (reader, hello) = try session(as: users.reader)
        XCTAssertEqual(hello["writer"] as? Bool, false)

        let mutations: [[String: Any]] = [
            ["op": "add", "title": "Heat", "id": 1], ["op": "toggle-watched", "movie": "matrix", "id": 2],
            ["op": "toggle-watched-with-friends", "movie": "matrix", "id": 3],
            ["op": "remove", "movie": "matrix", "id": 4],
        ]
        for request in mutations {
            let reply = try reader.request(request)
            XCTAssertEqual(LineClient.errorCode(of: reply), "forbidden", "\(request): \(reply)")
            XCTAssertTrue(LineClient.errorMessage(of: reply).contains(TestUsers.writersGroup), "\(reply)")
            XCTAssertEqual(int(reply["id"]), int(request["id"]))
        }
        for op in ["ping", "list", "history", "help", "rows"] {
            XCTAssertEqual(try reader.request(["op": op])["ok"] as? Bool, true, op)
        }
        XCTAssertEqual(int(try reader.request(["op": "subscribe"])["seq"]), 10)

        // A full swipe that would fire `watched` is refused, and the row stays as it was.
        let drag = try reader.request(["op": "drag", "movie": "matrix", "dx": 300])
        XCTAssertEqual((drag["row"] as? [String: Any])?["fullSwipe"] as? Bool, true, "\(drag)")
        let release = try reader.request(["op": "release", "movie": "matrix"])
        XCTAssertEqual(LineClient.errorCode(of: release), "forbidden", "\(release)")
        let rows = try reader.request(["op": "rows"])["rows"] as? [[String: Any]]
        XCTAssertEqual(rows?.first?["phase"] as? String, "dragging", "\(rows ?? [])")
        XCTAssertEqual(double(rows?.first?["offset"]), 300)
        // Tapping a revealed bound button: refused too. Opening and closing rows is fine.
        try reader.request(["op": "close"])
        XCTAssertEqual(try reader.request(["op": "drag", "movie": "seven", "dx": -80])["ok"] as? Bool, true)
        XCTAssertEqual(try reader.request(["op": "release", "movie": "seven"])["ok"] as? Bool, true)
        let tap = try reader.request(["op": "tap", "movie": "seven", "action": "delete"])
        XCTAssertEqual(LineClient.errorCode(of: tap), "forbidden", "\(tap)")
        // A custom action changes no state: allowed.
        try reader.request(["op": "configure", "leading": [["action": "flag", "label": "Flag"]]])
        try reader.request(["op": "drag", "movie": "seven", "dx": 80])
        try reader.request(["op": "release", "movie": "seven"])
        let flag = try reader.request(["op": "tap", "movie": "seven", "action": "flag"])
        XCTAssertEqual((flag["fired"] as? [String: Any])?["action"] as? String, "flag", "\(flag)")

        let list = try reader.request(["op": "list"])
        XCTAssertEqual(int(list["seq"]), 10, "nothing was written")
        XCTAssertTrue(reader.events.isEmpty, "no movie event: \(reader.events)")
    }

    func testGroupMembersAndRootMayWrite() throws {
        let (writer, hello) = try session(as: users.writer)
        XCTAssertEqual(hello["writer"] as? Bool, true)
        let toggled = try writer.request(["op": "toggle-watched", "movie": "matrix"])
        XCTAssertEqual(int(toggled["seq"]), 11, "\(toggled)")
        try writer.request(["op": "drag", "movie": "seven", "dx": -80])
        try writer.request(["op": "release", "movie": "seven"])
        let tap = try writer.request(["op": "tap", "movie": "seven", "action": "delete"])
        XCTAssertEqual((tap["fired"] as? [String: Any])?["seq"] as? Int, 12, "\(tap)")

        let (root, rootHello) = try daemon.connectWithHello()
        XCTAssertEqual(rootHello["writer"] as? Bool, true, "root may always write")
        XCTAssertEqual(int(try root.ok(["op": "add", "title": "Heat"])["seq"]), 13)
    }
}

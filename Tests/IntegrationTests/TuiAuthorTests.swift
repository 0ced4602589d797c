import Foundation
import Glibc
import XCTest

/// Who made each change (issue 46) in the terminal front end, in tmux: another person's change
/// (alice, signed in with a token on a connection of her own) is said with her name on the line
/// above the keys, and her removal is undone with u, the message saying whose it was.
final class TuiAuthorTests: TuiTestCase {
    override class var prefix: String { "swiped-tuia" }

    func testAnotherPersonsChangesAreSaidWithTheirNameAndHerRemovalUndoneWithU() throws {
        let token =
            try client.ok(["op": "token-create", "name": "alice", "role": "writer"])["token"] as? String
        let alice = try daemon.connect()
        XCTAssertEqual(try alice.ok(["op": "auth", "token": token ?? ""])["user"] as? String, "alice")
        try startTui()
        _ = try alice.ok(["op": "toggle-watched", "movie": "matrix"])
        try tmux.waitForScreen("alice's toggle said") { $0.contains(" alice marked “The Matrix” watched\n") }
        _ = try alice.ok(["op": "remove", "movie": "inception"])
        try tmux.waitForScreen("alice's removal said, with its undo") {
            $0.contains(" alice removed “Inception” — press u to undo\n") && !$0.contains("  Inception")
        }
        try tmux.send(keys: "u")
        try tmux.waitForScreen("the undo said whose removal it undid") {
            $0.contains(" Restored “Inception”, which alice removed\n") && $0.contains("  Inception")
        }
        // The restore is this front end's person's, root's (an admin over the Unix socket).
        let last = (try client.ok(["op": "history", "from": 12])["events"] as? [[String: Any]])?.first
        XCTAssertEqual(last?["kind"] as? String, "restored")
        XCTAssertEqual(last?["by"] as? String, "root")
        XCTAssertNotNil(try movies()["inception"])
    }
}

import Foundation
import Glibc
import XCTest

/// The terminal front end signed in with a token (issue 45), in tmux: the header says who it
/// is, a role given while it runs changes it, a reader's delete is refused in words, a revoked
/// token turns it back into its Unix user; a refused token ends it before it takes the screen.
final class TuiPeopleTests: TuiTestCase {
    override class var prefix: String { "swiped-tuip" }

    /// A token for `name` with `role`, in a file of its own.
    private func tokenFile(_ name: String, _ role: String) throws -> String {
        let made = try client.ok(["op": "token-create", "name": name, "role": role])
        let file = files.file("\(name).token")
        try ((made["token"] as? String ?? "") + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    func testTheHeaderSaysWhoTheTokenSignedInAsAndFollowsItsRole() throws {
        try startTui(["--token-file", try tokenFile("alice", "writer")])
        try tmux.waitForScreen("alice in the header") {
            Tmux.line($0, 0).hasPrefix(" swiped  ● connected  seq 10  alice (writer)  /tmp/")
        }
        _ = try client.ok(["op": "role", "name": "alice", "role": "reader"])
        try tmux.waitForScreen("alice a reader") {
            Tmux.line($0, 0).contains("  alice (reader)  read-only  ")
                && $0.contains("Role changed: alice (reader) read-only")
        }
        // The selected row's delete: refused, in words, and the list unchanged.
        try tmux.send(keys: "d")
        try tmux.waitForScreen("the refusal") {
            $0.contains("“Delete” needs the role writer: alice (reader) is read-only here")
        }
        XCTAssertEqual(try movies().count, 10)
        _ = try client.ok(["op": "token-revoke", "name": "alice"])
        try tmux.waitForScreen("the sign-in gone") {
            Tmux.line($0, 0).contains("  root (admin)  ")
                && $0.contains("alice's token was revoked or expired: this connection is root (admin) now")
        }
    }

    func testARefusedTokenEndsTheFrontEndBeforeItsScreen() throws {
        let file = files.file("nobody.token")
        try "swp_not-a-token\n".write(toFile: file, atomically: true, encoding: .utf8)
        let run = try Subprocess.run(
            try Binaries.swipectl, ["--socket", daemon.socketPath, "--token-file", file, "tui"],
            environment: ["SWIPED_SOCKET": nil, "SWIPED_TOKEN": nil])
        XCTAssertEqual(run.status, .exited(1))
        XCTAssertEqual(run.standardOutput, "", "no screen taken")
        XCTAssertEqual(
            run.standardError,
            "swipectl: sign-in refused: no such token (never made, or revoked); the token came from --token-file \(file)\n"
        )
    }
}

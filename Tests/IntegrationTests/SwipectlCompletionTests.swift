// swipectl's bash completion as a person meets it (issue 49): an interactive bash in a real
// terminal (tmux), the completion sourced from the checkout as docs/swipectl.md says, and Tab
// pressed. Tests/deb/completion.sh checks every candidate by calling the function directly; this
// checks that bash wires it to Tab.

import Foundation
import XCTest

final class SwipectlCompletionTests: DaemonTestCase {
    func testTabCompletesCommandsAndMoviesInAnInteractiveBash() throws {
        let dir = try TemporaryDirectory("swiped-completion")
        let tmux = try Tmux(directory: dir)
        defer { _ = try? tmux.stop() }
        let bin = URL(fileURLWithPath: try Binaries.swipectl).deletingLastPathComponent().path
        try tmux.start(
            ["env", "PATH=\(bin):/usr/bin:/bin", "PS1=$ ", "bash", "--norc", "--noprofile", "-i"], width: 120,
            height: 20)
        let script = "\(InstallTests.root)/contrib/completion/swipectl.bash"
        try tmux.send(keys: "source '\(script)'", "Enter")
        try tmux.send(keys: "swipectl --socket \(daemon.socket) tog", "Tab")
        try tmux.waitForScreen("toggle- completed") { $0.contains("--socket \(daemon.socket) toggle-") }
        try tmux.send(keys: "w", "Tab", "mat", "Tab")
        let line = "$ swipectl --socket \(daemon.socket) toggle-watched matrix"
        try tmux.waitForScreen("the movie completed") { $0.contains(line) }
        try tmux.send(keys: "Enter")
        try tmux.waitForScreen("the toggle ran") { $0.contains("matrix") && $0.contains("(seq 11)") }
        // restore offers the removed movies.
        _ = try daemon.ok("remove", "seven")
        try tmux.send(keys: "swipectl --socket \(daemon.socket) restore ", "Tab")
        try tmux.waitForScreen("a removed movie offered") {
            $0.contains("--socket \(daemon.socket) restore seven")
        }
        try tmux.send(keys: "C-c")
        // Issue 46: history --by offers the people who made the latest changes.
        try tmux.send(keys: "swipectl --socket \(daemon.socket) history --by r", "Tab")
        try tmux.waitForScreen("an author offered") {
            $0.contains("--socket \(daemon.socket) history --by root")
        }
        try tmux.send(keys: "C-c")
        // Issue 48: move offers a movie, then another after --after.
        try tmux.send(keys: "swipectl --socket \(daemon.socket) move pu", "Tab")
        try tmux.waitForScreen("the movie to move") {
            $0.contains("--socket \(daemon.socket) move pulp_fiction")
        }
        // (Words that start with "-" go as bytes: send-keys would take them for its options.)
        try tmux.send(bytes: "--af")
        try tmux.send(keys: "Tab", "the_g", "Tab", "Enter")
        try tmux.waitForScreen("the move ran") {
            $0.contains("move pulp_fiction --after the_green_mile\n")
                && $0.contains("Moved pulp_fiction \"Pulp Fiction\" after the_green_mile (seq 13).")
        }
    }

    /// Issue 45: `token` and its verbs, their options and the role names, then a command after
    /// --token-file's file.
    func testTabCompletesTheCommandsOnPeople() throws {
        let dir = try TemporaryDirectory("swiped-completion")
        let tmux = try Tmux(directory: dir)
        defer { _ = try? tmux.stop() }
        let bin = URL(fileURLWithPath: try Binaries.swipectl).deletingLastPathComponent().path
        try tmux.start(
            ["env", "PATH=\(bin):/usr/bin:/bin", "PS1=$ ", "bash", "--norc", "--noprofile", "-i"], width: 120,
            height: 20)
        try tmux.send(keys: "source '\(InstallTests.root)/contrib/completion/swipectl.bash'", "Enter")
        try tmux.send(
            keys: "swipectl --socket \(daemon.socket) tok", "Tab", "cr", "Tab", "alice --ro", "Tab", "wr",
            "Tab")
        let line = "$ swipectl --socket \(daemon.socket) token create alice --role writer"
        try tmux.waitForScreen("token create completed") { $0.contains(line) }
        // (Words that start with "-" go as bytes: send-keys would take them for its options.)
        try tmux.send(bytes: "--ex")
        try tmux.send(keys: "Tab", "2w > \(dir.file("alice.token"))", "Enter")
        try tmux.waitForScreen("the token made") { $0.contains("swipectl: a token for alice, role writer") }
        try tmux.send(
            keys: "swipectl --socket \(daemon.socket) --token-f", "Tab", "\(dir.file("alice.tok"))", "Tab",
            "who", "Tab")
        try tmux.waitForScreen("whoami completed") { $0.contains("alice.token whoami") }
        try tmux.send(keys: "Enter")
        try tmux.waitForScreen("whoami ran") { $0.contains("user  alice") && $0.contains("role  writer") }
        try tmux.send(keys: "swipectl --socket \(daemon.socket) role alice ad", "Tab")
        try tmux.waitForScreen("a role completed") { $0.contains("role alice admin") }
        try tmux.send(keys: "C-c")
    }
}

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
    }
}

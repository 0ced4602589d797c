// The README's path for a new user, step by step: `make run` starts the daemon on the embedded
// default and says where; socat and swipectl talk to it as the README shows; `.ci/run` runs the
// README's test command; the swipectl guide's swipe session replays (docs/swipectl.md).
// (`make install` is InstallTests; the socat session of protocol.md is DaemonShellClientsTests;
// `make test` itself is what CI runs.)
//
// `make run` builds in release mode first, which takes minutes here; the test runs the same
// recipe on the binaries just built for the tests (`make run-built RELEASE=<build dir>`) and
// checks with `make -n` that `run` is `release` + `run-built`.

import Foundation
import Glibc
import XCTest

final class ReadmeTests: XCTestCase {
    static let root = InstallTests.root

    func testQuickStartCommandsAreTheOnesCIAndTheMakefileUse() throws {
        let readme = try String(contentsOfFile: "\(Self.root)/README.md", encoding: .utf8)
        XCTAssertTrue(readme.contains("    make run "), "README's quick start shows make run")
        XCTAssertTrue(readme.contains("    make test "), "README's quick start shows make test")
        let ci = try String(contentsOfFile: "\(Self.root)/.ci/run", encoding: .utf8)
        XCTAssertTrue(ci.contains("\nmake test\n"), ".ci/run calls the README's test command")
        let plan = try Subprocess.run("make", ["-n", "-C", Self.root, "run"])
        XCTAssertEqual(plan.status, .exited(0), plan.standardError)
        XCTAssertTrue(plan.standardOutput.contains("build -c release"), plan.standardOutput)
        XCTAssertTrue(plan.standardOutput.contains("run-built"), plan.standardOutput)
        // The README's way to pass the daemon's flags (issue 49): ARGS reaches its command line.
        XCTAssertTrue(readme.contains("make run ARGS='--metrics 127.0.0.1:9464"), "README shows ARGS")
        let withArgs = try Subprocess.run(
            "make",
            ["-n", "--no-print-directory", "-C", Self.root, "run-built", "ARGS=--metrics 127.0.0.1:9464"])
        XCTAssertEqual(withArgs.status, .exited(0), withArgs.standardError)
        XCTAssertTrue(
            withArgs.standardOutput.contains("/swiped --socket ")
                && withArgs.standardOutput.contains(" --metrics 127.0.0.1:9464\n"), withArgs.standardOutput)
    }

    func testMakeRunStartsTheDaemonThatSocatAndSwipectlTalkTo() throws {
        let dir = try TemporaryDirectory("swiped-readme")
        let socket = dir.file("swiped.sock")
        let buildDirectory = URL(fileURLWithPath: try Binaries.swiped).deletingLastPathComponent().path
        let make = try Subprocess(
            "make",
            [
                "--no-print-directory", "-C", Self.root, "run-built", "RELEASE=\(buildDirectory)",
                "RUN_SOCKET=\(socket)", "RUN_STATE=\(dir.file("swiped-state"))",
            ])
        // It says where it listens, on stdout (make) and in the daemon's own log line.
        try make.waitForOutput("socket \(socket)")
        try make.waitForOutput("swiped started", in: .standardError)

        // The README's socat lines.
        let socat = try Subprocess(
            "socat", ["-t", "2", "-", "UNIX-CONNECT:\(socket)"], input: .pipe)
        try socat.write(#"{"op":"options","rows":"compact"}"# + "\n")
        try socat.write(#"{"op":"toggle-watched","movie":"matrix","id":1}"# + "\n")
        try socat.write(#"{"op":"drag","movie":"seven","dx":-60}"# + "\n")
        try socat.write(#"{"op":"release","movie":"seven"}"# + "\n")
        try socat.waitForOutput(#""phase":"open""#)
        socat.closeStandardInput()
        _ = try socat.wait(timeout: .seconds(5))
        let lines = socat.standardOutput.split(separator: "\n")
        XCTAssertEqual(lines.count, 5, "\(lines)")
        guard lines.count == 5 else { return }
        XCTAssertTrue(lines[0].hasPrefix(#"{"event":"hello","protocol":1,"#), "\(lines)")
        XCTAssertEqual(lines[1], #"{"ok":true,"options":{"rows":"compact"}}"#)
        XCTAssertTrue(lines[2].hasPrefix(#"{"id":1,"ok":true,"seq":11,"movie":{"id":"matrix""#), "\(lines)")
        // The compact rows, whole, as the README shows them.
        XCTAssertEqual(
            lines[3],
            #"{"ok":true,"row":{"movie":"seven","offset":-60,"phase":"dragging","edge":"trailing","fullSwipe":false,"buttons":[{"action":"delete","label":"Delete","icon":"trash","tint":"red","role":"destructive","x":330,"width":60}]}}"#
        )
        XCTAssertEqual(
            lines[4],
            #"{"ok":true,"row":{"movie":"seven","offset":-70,"phase":"open","edge":"trailing","fullSwipe":false,"buttons":[{"action":"delete","label":"Delete","icon":"trash","tint":"red","role":"destructive","x":320,"width":70}]}}"#
        )
        let readme = try String(contentsOfFile: "\(Self.root)/README.md", encoding: .utf8)
        for line in lines.dropFirst() {
            XCTAssertTrue(readme.contains("    " + line + "\n"), "not in the README: \(line)")
        }

        // The README's swipectl lines.
        let swipectl = try Binaries.swipectl
        let list = try Subprocess.run(swipectl, ["--socket", socket, "list"])
        XCTAssertEqual(list.status, .exited(0), list.standardError)
        XCTAssertTrue(list.standardOutput.contains("The Matrix"), list.standardOutput)
        for args in [["toggle-watched", "matrix"], ["toggle-friends", "The God"]] {
            let run = try Subprocess.run(swipectl, ["--socket", socket] + args)
            XCTAssertEqual(run.status, .exited(0), "\(args): \(run.standardError)")
        }

        // Ctrl-C stops it cleanly.
        make.kill(SIGINT, group: true)
        let status = try make.wait(timeout: .seconds(5))
        XCTAssertTrue(
            status == .exited(0) || status == .exited(2) || status == .signaled(SIGINT), "\(status)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: socket), "the socket file is removed on exit")
    }

    /// The swipectl guide's sample sessions ("Swipe from the command line" in docs/swipectl.md,
    /// moved there from the README), replayed byte for byte on a fresh state: each
    /// `$ swipectl ARGS` line is run (with --socket) and must print the lines that follow it
    /// (standard output, then standard error).
    func testTheSwipeSessionReplays() throws {
        let guide = try String(contentsOfFile: "\(Self.root)/docs/swipectl.md", encoding: .utf8)
        let section = try XCTUnwrap(guide.range(of: "\n## Swipe from the command line\n"))
        var steps: [(arguments: [String], expected: String)] = []
        for line in guide[section.upperBound...].split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("## ") { break }
            guard line.hasPrefix("    ") else { continue }
            let text = line.dropFirst(4)
            if text.hasPrefix("$ swipectl ") {
                steps.append((Self.words(text.dropFirst("$ swipectl ".count)), ""))
            } else if !steps.isEmpty {
                steps[steps.count - 1].expected += text + "\n"
            }
        }
        XCTAssertEqual(steps.count, 5)
        let daemon = try TestDaemon()
        defer { XCTAssertEqual(try? daemon.stop(), .exited(0)) }
        for (arguments, expected) in steps {
            let result = try daemon.swipectl(arguments)
            XCTAssertEqual(result.standardOutput + result.standardError, expected, "\(arguments)")
        }
    }

    /// Words as a shell splits them, with "double quotes" around spaces.
    static func words(_ text: Substring) -> [String] {
        var words: [String] = []
        var word: String?
        var quoted = false
        for character in text {
            if character == "\"" {
                quoted.toggle()
                word = word ?? ""
            } else if character == " " && !quoted {
                if let done = word { words.append(done) }
                word = nil
            } else {
                word = (word ?? "") + String(character)
            }
        }
        if let word { words.append(word) }
        return words
    }
}

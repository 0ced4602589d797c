// What `make install` ships: the man pages render cleanly, and an install into DESTDIR puts the
// binaries, the units (with @BINDIR@ substituted), the sysusers snippet, the man pages and the
// documentation (README, protocol.md, the guides) where they belong.
//
// The test installs the binaries built for the tests (`make install-built RELEASE=<build dir>`)
// rather than running `make install`, which first builds in release mode: that takes minutes on
// a small machine, and `make test` has just built everything. What `install` adds to
// `install-built` (the release build) is checked with `make -n`.

import Foundation
import Glibc
import XCTest

final class InstallTests: XCTestCase {
    /// The source tree.
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    static let pages = ["swiped.1", "swipectl.1"]

    // MARK: Man pages

    func testManPagesRenderWithoutWarnings() throws {
        guard Binaries.hasSystem("groff") else {
            throw XCTSkip("groff is not installed (Debian package groff-base)")
        }
        for page in Self.pages {
            let path = "\(Self.root)/man/\(page)"
            // -ww: every warning; -z: no output, only the diagnostics.
            let check = try Subprocess.run("groff", ["-man", "-Tutf8", "-ww", "-z", path])
            XCTAssertEqual(check.status, .exited(0), "\(page): \(check.standardError)")
            XCTAssertEqual(check.standardError, "", "groff warns about \(page)")

            let rendered = try Subprocess.run(
                "groff", ["-man", "-Tutf8", "-P-c", "-P-b", "-P-u", path], environment: ["MANWIDTH": "80"])
            XCTAssertEqual(rendered.status, .exited(0), rendered.standardError)
            let text = rendered.standardOutput
            for section in [
                "NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "EXAMPLES", "SEE ALSO",
            ] {
                XCTAssertTrue(text.contains("\n\(section)\n"), "\(page) has no \(section) section")
            }
        }
    }

    func testManPagesDocumentEveryOptionAndCommand() throws {
        let swiped = try String(contentsOfFile: "\(Self.root)/man/swiped.1", encoding: .utf8)
            .replacingOccurrences(of: "\\-", with: "-")
        for option in [
            "--socket", "--state", "--durability", "--max-line", "--max-clients", "--max-queue", "--writers",
            "--help", "--version", "SIGTERM", "SIGHUP", "events.sqlite3", "swiped.socket", "protocol.md",
        ] {
            XCTAssertTrue(swiped.contains(option), "swiped.1 does not mention \(option)")
        }
        let swipectl = try String(contentsOfFile: "\(Self.root)/man/swipectl.1", encoding: .utf8)
            .replacingOccurrences(of: "\\-", with: "-")
        for name in [
            "list", "add", "toggle-watched", "toggle-friends", "remove", "watch", "history", "call", "help",
        ] {
            XCTAssertTrue(
                swipectl.contains(".B \(name)") || swipectl.contains(".BI \(name)")
                    || swipectl.contains(".BR \(name)"), "swipectl.1 does not describe \(name)")
        }
        for text in ["--socket", "--json", "SWIPED_SOCKET", "/run/swiped/swiped.sock", "EXIT STATUS"] {
            XCTAssertTrue(swipectl.contains(text), "swipectl.1 does not mention \(text)")
        }
    }

    // MARK: make install

    func testMakeInstallIntoDESTDIR() throws {
        guard Binaries.hasSystem("make") else { throw XCTSkip("make is not installed") }
        let destination = try TemporaryDirectory("swiped-install")
        let build = URL(fileURLWithPath: try Binaries.swiped).deletingLastPathComponent().path
        _ = try Binaries.swipectl
        let result = try Subprocess.run(
            "make",
            [
                "-C", Self.root, "--no-print-directory", "install-built", "DESTDIR=\(destination.path)",
                "PREFIX=/usr", "RELEASE=\(build)",
            ])
        XCTAssertEqual(result.status, .exited(0), result.standardOutput + result.standardError)

        let root = destination.path
        for binary in ["swiped", "swipectl"] {
            XCTAssertEqual(
                access("\(root)/usr/bin/\(binary)", X_OK), 0, "\(binary) is not installed executable")
        }
        let version = try Subprocess.run("\(root)/usr/bin/swipectl", ["--version"])
        XCTAssertEqual(version.standardOutput, "swipectl 0.1.0 (protocol 1)\n")

        let units = "\(root)/usr/lib/systemd/system"
        let service = try String(contentsOfFile: "\(units)/swiped.service", encoding: .utf8)
        XCTAssertTrue(
            service.contains("\nExecStart=/usr/bin/swiped --web-root /usr/share/swiped/web $SWIPED_OPTS\n"),
            service)
        XCTAssertFalse(service.contains("@BINDIR@"))
        XCTAssertFalse(service.contains("@DOCDIR@"))
        XCTAssertFalse(service.contains("@WEBDIR@"))
        XCTAssertTrue(service.contains("file:///usr/share/doc/swiped/protocol.md"), service)
        XCTAssertEqual(
            try String(contentsOfFile: "\(units)/swiped.socket", encoding: .utf8),
            try String(contentsOfFile: "\(Self.root)/systemd/swiped.socket", encoding: .utf8)
                .replacingOccurrences(of: "@DOCDIR@", with: "/usr/share/doc/swiped"))
        XCTAssertEqual(
            try String(contentsOfFile: "\(root)/usr/share/doc/swiped/protocol.md", encoding: .utf8),
            try String(contentsOfFile: "\(Self.root)/protocol.md", encoding: .utf8))
        // README and the guides beside it, with the images they show (issue 41): README's links
        // into docs/ hold in the installed copy too.
        let guides = try FileManager.default.contentsOfDirectory(atPath: "\(Self.root)/docs")
            .filter { $0.hasSuffix(".md") || $0.hasSuffix(".png") }
        XCTAssertTrue(guides.contains("ARCHITECTURE.md") && guides.contains("running.md"), "\(guides)")
        for file in ["README.md"] + guides.map({ "docs/" + $0 }) {
            XCTAssertEqual(
                FileManager.default.contents(atPath: "\(root)/usr/share/doc/swiped/\(file)"),
                FileManager.default.contents(atPath: "\(Self.root)/\(file)"), file)
        }
        XCTAssertEqual(
            try String(contentsOfFile: "\(root)/usr/lib/sysusers.d/swiped.conf", encoding: .utf8),
            try String(contentsOfFile: "\(Self.root)/systemd/swiped.sysusers", encoding: .utf8))
        for page in Self.pages {
            XCTAssertEqual(
                try String(contentsOfFile: "\(root)/usr/share/man/man1/\(page)", encoding: .utf8),
                try String(contentsOfFile: "\(Self.root)/man/\(page)", encoding: .utf8))
        }
        // swipectl's shell completion (issue 35), where bash-completion, zsh and fish look.
        for (installed, source) in [
            ("usr/share/bash-completion/completions/swipectl", "swipectl.bash"),
            ("usr/share/zsh/vendor-completions/_swipectl", "_swipectl"),
            ("usr/share/fish/vendor_completions.d/swipectl.fish", "swipectl.fish"),
        ] {
            XCTAssertEqual(
                try String(contentsOfFile: "\(root)/\(installed)", encoding: .utf8),
                try String(contentsOfFile: "\(Self.root)/contrib/completion/\(source)", encoding: .utf8),
                installed)
        }
        for file in [
            "usr/bin/swiped", "usr/lib/systemd/system/swiped.service", "usr/share/man/man1/swiped.1",
        ] {
            var info = stat()
            XCTAssertEqual(stat("\(root)/\(file)", &info), 0, file)
            XCTAssertEqual(info.st_mode & 0o777, file.hasPrefix("usr/bin") ? 0o755 : 0o644, file)
        }
        // Nothing outside DESTDIR/usr (systemd-sysusers runs only without DESTDIR).
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: root), ["usr"])

        // `make install` is `release` followed by the same recipe.
        let plan = try Subprocess.run(
            "make",
            ["-C", Self.root, "-n", "--no-print-directory", "install", "DESTDIR=\(root)", "PREFIX=/usr"])
        XCTAssertTrue(plan.standardOutput.contains("build -c release"), plan.standardOutput)
        XCTAssertTrue(plan.standardOutput.contains("install-built"), plan.standardOutput)
    }
}

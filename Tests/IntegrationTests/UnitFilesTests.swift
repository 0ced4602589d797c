// The systemd units in systemd/: systemd-analyze verify, the security score, the settings the
// issue asks for, and the sysusers snippet.

import Foundation
import Glibc
import XCTest

final class UnitFilesTests: XCTestCase {
    /// The highest overall exposure `systemd-analyze security` may give swiped.service.
    static let maximumExposure = 1.5

    /// systemd/ in the source tree.
    static let unitDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("systemd").path

    private var analyze = ""

    override func setUpWithError() throws {
        guard let path = try? Binaries.system("systemd-analyze") else {
            throw XCTSkip("systemd-analyze is not installed (Debian package systemd)")
        }
        analyze = path
    }

    /// Copies of both units in a temporary directory, with @BINDIR@ replaced by the directory of
    /// the built swiped, as `make install` does with the installed one.
    private func installedCopies() throws -> TemporaryDirectory {
        let dir = try TemporaryDirectory("swiped-units")
        let bindir = URL(fileURLWithPath: try Binaries.swiped).deletingLastPathComponent().path
        let service = try String(contentsOfFile: "\(Self.unitDirectory)/swiped.service", encoding: .utf8)
        XCTAssertTrue(service.contains("ExecStart=@BINDIR@/swiped"), "make install substitutes @BINDIR@")
        try dir.write(
            "swiped.service",
            service.replacingOccurrences(of: "@BINDIR@", with: bindir)
                .replacingOccurrences(of: "@DOCDIR@", with: "/usr/share/doc/swiped")
                .replacingOccurrences(of: "@WEBDIR@", with: "/usr/share/swiped/web"))
        for socket in ["swiped.socket", "swiped-web.socket"] {
            try dir.write(
                socket,
                try String(contentsOfFile: "\(Self.unitDirectory)/\(socket)", encoding: .utf8)
                    .replacingOccurrences(of: "@DOCDIR@", with: "/usr/share/doc/swiped"))
        }
        return dir
    }

    func testBothUnitsPassVerify() throws {
        let dir = try installedCopies()
        // verify exits 0 even for unknown keys or values it ignores: any output is a failure.
        let result = try Subprocess.run(
            analyze,
            [
                "verify", "--man=no", "--generators=no", "--recursive-errors=no", dir.file("swiped.socket"),
                dir.file("swiped.service"), dir.file("swiped-web.socket"),
            ],
            environment: ["SYSTEMD_LOG_LEVEL": "notice", "SYSTEMD_LOG_COLOR": "0"], workingDirectory: dir.path
        )
        XCTAssertEqual(result.status, .exited(0), result.standardError)
        XCTAssertEqual(result.standardOutput + result.standardError, "", "systemd-analyze verify complained")
    }

    func testVerifyCatchesAMistake() throws {
        // The check above is only worth something if verify reports errors in this container.
        let dir = try installedCopies()
        let broken = try dir.read("swiped.service").replacingOccurrences(
            of: "Type=notify", with: "Type=notifyy")
        try dir.write("swiped.service", broken)
        let result = try Subprocess.run(
            analyze,
            ["verify", "--man=no", "--generators=no", dir.file("swiped.socket"), dir.file("swiped.service")],
            workingDirectory: dir.path)
        XCTAssertTrue(result.standardError.contains("notifyy"), result.standardError)
    }

    func testServiceSecurityExposureIsAtMostOnePointFive() throws {
        let dir = try installedCopies()
        let threshold = Int(Self.maximumExposure * 10)  // --threshold counts in tenths
        let result = try Subprocess.run(
            analyze,
            [
                "security", "--offline=true", "--threshold=\(threshold)", "--no-pager",
                dir.file("swiped.service"),
            ],
            environment: ["SYSTEMD_COLORS": "0"], workingDirectory: dir.path)
        let output = result.standardOutput + result.standardError
        let exposure = try XCTUnwrap(Self.overallExposure(output), "no overall exposure in:\n\(output)")
        XCTAssertLessThanOrEqual(exposure, Self.maximumExposure, output)
        XCTAssertEqual(result.status, .exited(0), "over --threshold=\(threshold):\n\(output)")
    }

    /// The figure the unit's comment and docs/running.md give is the one `systemd-analyze security`
    /// measures (issue 29: they said 1.5 and 0.5).
    func testDocsSayTheMeasuredExposure() throws {
        let dir = try installedCopies()
        let result = try Subprocess.run(
            analyze, ["security", "--offline=true", "--no-pager", dir.file("swiped.service")],
            environment: ["SYSTEMD_COLORS": "0"], workingDirectory: dir.path)
        let output = result.standardOutput + result.standardError
        let measured = try XCTUnwrap(Self.overallExposure(output), "no overall exposure in:\n\(output)")
        let unit = try String(contentsOfFile: "\(Self.unitDirectory)/swiped.service", encoding: .utf8)
        let guide = try String(contentsOfFile: "\(Self.unitDirectory)/../docs/running.md", encoding: .utf8)
        XCTAssertEqual(Self.documentedExposure(unit), measured, "swiped.service's comment")
        XCTAssertEqual(Self.documentedExposure(guide), measured, "docs/running.md")
    }

    /// X in "systemd-analyze security … swiped.service` scores X" or "… swiped.service (scores X)",
    /// across a line break.
    static func documentedExposure(_ text: String) -> Double? {
        guard
            let range = text.range(
                of: #"systemd-analyze security[^\n]*swiped\.service`?\s+\(?scores\s+[0-9]+\.[0-9]+"#,
                options: .regularExpression)
        else { return nil }
        return Double(text[range].split(whereSeparator: \.isWhitespace).last ?? "")
    }

    func testDocumentedExposureParser() {
        XCTAssertEqual(
            Self.documentedExposure(
                "#   systemd-analyze security --offline=true swiped.service" + "   (scores 0.4)"), 0.4)
        XCTAssertEqual(
            Self.documentedExposure("(`systemd-analyze security swiped.service` scores\n1.2; the"), 1.2)
        XCTAssertNil(Self.documentedExposure("`systemd-analyze security` scores 1.1"))
    }

    /// After `make install`, verify is clean with its check of the units' man: links on (no
    /// --man=no): the pages they name are installed and render (issue 29). Installed into
    /// DESTDIR here, so man looks there (MANPATH), and ExecStart= is pointed at the binary
    /// installed there.
    func testInstalledUnitsPassVerifyWithTheirManPages() throws {
        guard Binaries.hasSystem("make"), Binaries.hasSystem("man") else {
            throw XCTSkip("make or man is not installed (Debian package man-db)")
        }
        let destination = try TemporaryDirectory("swiped-verify")
        let build = URL(fileURLWithPath: try Binaries.swiped).deletingLastPathComponent().path
        _ = try Binaries.swipectl
        try Subprocess.check(
            "make",
            [
                "-C", "\(Self.unitDirectory)/..", "--no-print-directory", "install-built",
                "DESTDIR=\(destination.path)", "PREFIX=/usr", "RELEASE=\(build)",
            ], timeout: .seconds(60))
        let units = destination.file("usr/lib/systemd/system")
        let service = try String(contentsOfFile: "\(units)/swiped.service", encoding: .utf8)
        XCTAssertTrue(service.contains("\nExecStart=/usr/bin/swiped "), service)
        try service.replacingOccurrences(
            of: "\nExecStart=/usr/bin/swiped ", with: "\nExecStart=\(destination.path)/usr/bin/swiped "
        ).write(toFile: "\(units)/swiped.service", atomically: false, encoding: .utf8)
        let result = try Subprocess.run(
            analyze,
            [
                "verify", "--generators=no", "--recursive-errors=no", "\(units)/swiped.socket",
                "\(units)/swiped.service", "\(units)/swiped-web.socket",
            ],
            environment: [
                "MANPATH": destination.file("usr/share/man"), "SYSTEMD_LOG_LEVEL": "notice",
                "SYSTEMD_LOG_COLOR": "0",
            ], workingDirectory: units, timeout: .seconds(60))
        XCTAssertEqual(result.status, .exited(0), result.standardError)
        XCTAssertEqual(result.standardOutput + result.standardError, "", "systemd-analyze verify complained")
    }

    func testExposureParser() {
        let line = "→ Overall exposure level for swiped.service: 0.4 SAFE 😀\n"
        XCTAssertEqual(Self.overallExposure("x\n" + line), 0.4)
        XCTAssertEqual(Self.overallExposure("Overall exposure level for a.service: 9.6 UNSAFE 😨"), 9.6)
        XCTAssertNil(Self.overallExposure("nothing"))
    }

    /// The number in "Overall exposure level for X.service: 0.4 SAFE".
    static func overallExposure(_ output: String) -> Double? {
        guard
            let range = output.range(
                of: #"Overall exposure level for [^:]+: ([0-9]+\.[0-9]+)"#, options: .regularExpression)
        else { return nil }
        return Double(output[range].split(separator: " ").last ?? "")
    }

    func testUnitsSayWhatTheIssueAsks() throws {
        let socket = try Self.settings("swiped.socket")
        XCTAssertEqual(socket["ListenStream"], ["/run/swiped/swiped.sock"])
        XCTAssertEqual(socket["SocketMode"], ["0660"])
        XCTAssertEqual(socket["Accept"], ["no"])
        XCTAssertEqual(socket["WantedBy"], ["sockets.target"])

        let service = try Self.settings("swiped.service")
        for (key, value) in [
            "Type": "notify", "Restart": "on-failure", "DynamicUser": "yes", "StateDirectory": "swiped",
            "RestrictAddressFamilies": "AF_UNIX", "PrivateNetwork": "yes", "CapabilityBoundingSet": "",
        ] {
            XCTAssertEqual(service[key], [value], key)
        }
        XCTAssertNotNil(service["WatchdogSec"])
        // /run/swiped belongs to the socket unit: a RuntimeDirectory= would remove the socket.
        XCTAssertNil(service["RuntimeDirectory"])
        XCTAssertNil(service["PrivateUsers"], "PrivateUsers= hides peer uids from SO_PEERCRED (--writers)")
        XCTAssertTrue(
            service["ExecStart"]?.first?.hasSuffix("$SWIPED_OPTS") == true, "\(service["ExecStart"] ?? [])")
    }

    func testSysusersCreatesTheSocketGroup() throws {
        let socketGroup = try XCTUnwrap(try Self.settings("swiped.socket")["SocketGroup"]?.first)
        let root = try TemporaryDirectory("swiped-sysusers")
        try FileManager.default.createDirectory(atPath: root.file("etc"), withIntermediateDirectories: true)
        try Subprocess.check(
            "systemd-sysusers", ["--root=\(root.path)", "\(Self.unitDirectory)/swiped.sysusers"])
        let groups = try root.read("etc/group").split(separator: "\n").map {
            $0.split(separator: ":").first.map(String.init)
        }
        XCTAssertTrue(groups.contains(socketGroup), "\(groups)")
        XCTAssertTrue(groups.contains("swiped-writers"), "\(groups)")
    }

    /// Key → values (in order) of a unit file in systemd/, ignoring sections and comments.
    static func settings(_ unit: String) throws -> [String: [String]] {
        let text = try String(contentsOfFile: "\(unitDirectory)/\(unit)", encoding: .utf8)
        var result: [String: [String]] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") && !line.hasPrefix("[") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces)
            result[key, default: []].append(
                line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces))
        }
        return result
    }

    // MARK: swiped-web.socket (issue 43): the web listener's socket, passed to swiped.service.

    func testWebSocketUnitSaysWhatTheIssueAsks() throws {
        let web = try Self.settings("swiped-web.socket")
        for (key, value) in [
            "ListenStream": "127.0.0.1:8080", "FileDescriptorName": "web", "Service": "swiped.service",
            "Accept": "no", "WantedBy": "sockets.target",
        ] {
            XCTAssertEqual(web[key], [value], key)
        }
        // The service reads the installed page, and the web listener is the daemon's own: no
        // bridge unit is left.
        let exec = try XCTUnwrap(try Self.settings("swiped.service")["ExecStart"]?.first)
        XCTAssertTrue(exec.hasPrefix("@BINDIR@/swiped --web-root @WEBDIR@ "), exec)
        XCTAssertFalse(FileManager.default.fileExists(atPath: "\(Self.unitDirectory)/swiped-web.service"))
    }
}

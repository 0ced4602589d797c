import XCTest

@testable import Daemon

final class ConfigTests: XCTestCase {
    private func config(_ args: [String], _ env: [String: String] = [:]) -> Config? {
        if case .run(let config) = Config.parse(args, environment: env) { return config }
        return nil
    }

    func testDefaultsWithoutEnvironment() throws {
        let c = try XCTUnwrap(config([]))
        XCTAssertEqual(c.socketPath, "./swiped.sock")
        XCTAssertEqual(c.stateDirectory, "./swiped-state")
        XCTAssertEqual(c.durability, .full)
        XCTAssertEqual(c.maxLine, 65_536)
        XCTAssertNil(c.maxClients)
        XCTAssertEqual(c.maxQueue, 1 << 20)
        XCTAssertNil(c.writersGroup)
        XCTAssertEqual(c.logLevel, .info)
    }

    /// `--log-level` takes systemd's names and numbers; anything else is a usage error.
    func testLogLevel() throws {
        for (text, level) in [
            ("emerg", Priority.emerg), ("alert", .alert), ("crit", .crit), ("err", .err), ("error", .err),
            ("warning", .warning), ("notice", .notice), ("info", .info), ("debug", .debug), ("0", .emerg),
            ("7", .debug), ("5", .notice),
        ] {
            XCTAssertEqual(try XCTUnwrap(config(["--log-level", text]), text).logLevel, level, text)
        }
        XCTAssertEqual(config(["--log-level=debug"])?.logLevel, .debug)
        for bad in ["8", "-1", "Debug", "", "07", "verbose"] {
            guard case .usageError(let message) = Config.parse(["--log-level", bad], environment: [:]) else {
                return XCTFail("'\(bad)' was accepted")
            }
            XCTAssertTrue(message.hasPrefix("--log-level must be one of"), message)
        }
        guard case .usageError = Config.parse(["--log-level"], environment: [:]) else {
            return XCTFail("--log-level without a value was accepted")
        }
    }

    func testSystemdDirectoriesComeBeforeXDG() throws {
        let env = [
            "RUNTIME_DIRECTORY": "/run/swiped", "XDG_RUNTIME_DIR": "/run/user/1000",
            "STATE_DIRECTORY": "/var/lib/swiped:/var/lib/other", "XDG_STATE_HOME": "/home/u/.local/state",
        ]
        let c = try XCTUnwrap(config([], env))
        XCTAssertEqual(c.socketPath, "/run/swiped/swiped.sock")
        XCTAssertEqual(c.stateDirectory, "/var/lib/swiped")
    }

    func testXDGDirectories() throws {
        let env = ["XDG_RUNTIME_DIR": "/run/user/1000", "XDG_STATE_HOME": "/home/u/.local/state"]
        let c = try XCTUnwrap(config([], env))
        XCTAssertEqual(c.socketPath, "/run/user/1000/swiped.sock")
        XCTAssertEqual(c.stateDirectory, "/home/u/.local/state/swiped")
    }

    func testOptionsWinOverEnvironment() throws {
        let c = try XCTUnwrap(
            config(
                [
                    "--socket", "/tmp/s.sock", "--state=/tmp/st", "--durability", "normal", "--max-line",
                    "1024",
                    "--max-clients=3", "--max-queue", "8192", "--writers", "staff",
                ],
                ["RUNTIME_DIRECTORY": "/run/x", "STATE_DIRECTORY": "/var/x", "SWIPED_WRITERS": "other"]))
        XCTAssertEqual(c.socketPath, "/tmp/s.sock")
        XCTAssertEqual(c.stateDirectory, "/tmp/st")
        XCTAssertEqual(c.durability, .normal)
        XCTAssertEqual(c.maxLine, 1024)
        XCTAssertEqual(c.maxClients, 3)
        XCTAssertEqual(c.maxQueue, 8192)
        XCTAssertEqual(c.writersGroup, "staff")
    }

    func testWritersFromEnvironment() throws {
        XCTAssertEqual(config([], ["SWIPED_WRITERS": "staff"])?.writersGroup, "staff")
        XCTAssertNil(config([], ["SWIPED_WRITERS": ""])?.writersGroup)
    }

    func testHelpVersionAndUsageErrors() {
        XCTAssertEqual(Config.parse(["--help"], environment: [:]), .help)
        XCTAssertEqual(Config.parse(["--version"], environment: [:]), .version)
        let bad: [[String]] = [
            ["--bogus"], ["--socket"], ["--durability", "fast"], ["--max-line", "0"], ["--max-line", "x"],
            ["--max-clients", "-1"], ["--max-queue", "1"], ["--state", ""],
        ]
        for args in bad {
            guard case .usageError(let message) = Config.parse(args, environment: [:]) else {
                XCTFail("\(args) should be a usage error")
                continue
            }
            XCTAssertFalse(message.isEmpty)
        }
    }

    /// The web listener's options (issue 43): --web repeats, --web-origin is checked at once.
    func testWebOptions() throws {
        let c = try XCTUnwrap(
            config([
                "--web", "127.0.0.1:8080", "--web=[::1]:8080", "--web", "127.0.0.1:8080", "--web-root", "web",
                "--web-origin", "https://swiped.example.org", "--web-origin", "lan:8080", "--web-ping", "5",
            ]))
        XCTAssertEqual(c.web.map(\.description), ["127.0.0.1:8080", "[::1]:8080"])
        XCTAssertEqual(c.webRoot, "web")
        XCTAssertEqual(c.webOrigins, ["https://swiped.example.org", "lan:8080"])
        XCTAssertEqual(c.webPing, 5)
        XCTAssertEqual(try XCTUnwrap(config([])).webPing, 30)
        for bad in [
            ["--web", "localhost:8080"], ["--web-origin", "https://x/path"], ["--web-ping", "-1"],
            ["--web-root", ""],
        ] {
            guard case .usageError = Config.parse(bad, environment: [:]) else {
                return XCTFail("\(bad) was accepted")
            }
        }
    }
}

extension ConfigTests {
    /// On the shared scanner (CommandLineParsing): each mistake names the option and what it
    /// wants; the daemon takes no positional, and `--` ends the options.
    func testUsageErrorMessages() {
        let cases: [([String], String)] = [
            (["--bogus"], "unknown option '--bogus'"),
            (["--bogus=1"], "unknown option '--bogus=1'"),
            (["serve"], "unexpected argument 'serve'"),
            (["--", "--socket"], "unexpected argument '--socket'"),
            (["--socket"], "--socket needs a path"),
            (["--socket="], "--socket needs a path"),
            (["--durability", "fast"], "--durability must be full or normal, not 'fast'"),
            (["--durability"], "--durability needs full or normal"),
            (["--max-line", "0"], "--max-line must be a whole number from 256 to 67108864, not '0'"),
            (["--max-clients"], "--max-clients needs a value"),
            (["--web-ping", "x"], "--web-ping must be a whole number from 0 to 86400, not 'x'"),
            (["--web-ping"], "--web-ping needs a number of seconds"),
            (["--version=2"], "--version takes no value"),
            (["--web-anonymous", "admin"], "--web-anonymous must be one of none, reader, writer"),
            (["--web-trust-header="], "--web-trust-header needs an HTTP header name, e.g. Remote-User"),
        ]
        for (arguments, message) in cases {
            XCTAssertEqual(Config.parse(arguments, environment: [:]), .usageError(message), "\(arguments)")
        }
        XCTAssertEqual(Config.parse(["--help", "--bogus"], environment: [:]), .help)
        XCTAssertEqual(config(["--"])?.socketPath, "./swiped.sock")
    }
}

// swiped started by hand: --help, --version, bad options (exit 2), and the socket it binds
// itself (no activation): mode 0660, a stale socket file replaced, a live one or a non-socket
// refused, the file removed on exit; a start that fails leaves no file behind.

import Foundation
import Glibc
import XCTest

final class DaemonCommandLineTests: XCTestCase {
    func testHelpAndVersion() throws {
        let help = try SwipedDaemon.run(["--help"])
        XCTAssertEqual(help.status, .exited(0), help.standardError)
        for option in [
            "--socket", "--state", "--durability", "--max-line", "--max-clients", "--help", "--version",
        ] {
            XCTAssertTrue(help.standardOutput.contains(option), "--help does not mention \(option)")
        }
        let version = try SwipedDaemon.run(["--version"])
        XCTAssertEqual(version.status, .exited(0), version.standardError)
        XCTAssertTrue(version.standardOutput.hasPrefix("swiped "), version.standardOutput)

        // The hello names the same version.
        let number = version.standardOutput.dropFirst("swiped ".count).trimmingCharacters(
            in: .whitespacesAndNewlines)
        let daemon = try SwipedDaemon(prefix: "swiped-cli")
        let (_, hello) = try daemon.connectWithHello()
        XCTAssertEqual(hello["server"] as? String, "swiped/\(number)")
    }

    func testBadOptionsExitWithStatusTwoAndSaySo() throws {
        let cases: [([String], String)] = [
            (["--bogus"], "--bogus"),
            (["--max-line", "10"], "--max-line"),
            (["--max-line", "lots"], "--max-line"),
            (["--max-clients"], "--max-clients"),
            (["--max-clients", "0"], "--max-clients"),
            (["--durability", "fast"], "--durability"),
            (["--socket", ""], "--socket"),
            (["positional"], "positional"),
        ]
        for (arguments, mention) in cases {
            let result = try SwipedDaemon.run(arguments)
            XCTAssertEqual(result.status, .exited(2), "\(arguments): \(result.standardError)")
            XCTAssertTrue(result.standardError.contains(mention), "\(arguments): \(result.standardError)")
            XCTAssertEqual(result.standardOutput, "", "\(arguments)")
        }
    }

    func testAnUnknownWritersGroupStopsTheStart() throws {
        let dir = try TemporaryDirectory("swiped-cli")
        let result = try SwipedDaemon.run([
            "--socket", dir.file("s.sock"), "--state", dir.file("state"), "--writers", "swiped-no-such-group",
        ])
        XCTAssertEqual(result.status, .exited(1))
        XCTAssertTrue(result.standardError.contains("swiped-no-such-group"), result.standardError)
    }

    // MARK: The socket it binds

    func testBindsWithMode0660AndRemovesTheSocketOnExit() throws {
        let daemon = try SwipedDaemon(prefix: "swiped-cli")
        var info = stat()
        XCTAssertEqual(stat(daemon.socketPath, &info), 0)
        XCTAssertEqual(info.st_mode & S_IFMT, S_IFSOCK)
        XCTAssertEqual(info.st_mode & 0o7777, 0o660)
        XCTAssertNoThrow(
            try daemon.process.waitForOutput(daemon.socketPath, in: .standardError, timeout: .seconds(2)),
            "logs where it listens")
        XCTAssertEqual(try daemon.stop(), .exited(0))
        XCTAssertEqual(access(daemon.socketPath, F_OK), -1, "the socket file was left behind")
    }

    func testReplacesAStaleSocketFile() throws {
        let dir = try TemporaryDirectory("swiped-cli")
        let path = dir.file("swiped.sock")
        // A socket file nobody listens on, as a crashed daemon leaves it.
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = try unixAddress(path)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        XCTAssertEqual(bound, 0)
        close(fd)

        let daemon = try SwipedDaemon(directory: dir)
        let client = try daemon.connect()
        XCTAssertNotNil(try client.ok(["op": "ping"]))
    }

    func testRefusesToStealALiveSocket() throws {
        let daemon = try SwipedDaemon(prefix: "swiped-cli")
        let other = try TemporaryDirectory("swiped-cli")
        let second = try SwipedDaemon.run(["--socket", daemon.socketPath, "--state", other.file("state")])
        XCTAssertNotEqual(second.status, .exited(0))
        XCTAssertTrue(second.standardError.contains(daemon.socketPath), second.standardError)
        XCTAssertTrue(second.standardError.contains("listening"), second.standardError)
        // The first daemon still serves on its socket.
        let client = try daemon.connect()
        XCTAssertNotNil(try client.ok(["op": "ping"]))
        XCTAssertEqual(try daemon.stop(), .exited(0))
    }

    /// A start that fails leaves nothing behind: not a seeded log in a state directory nobody
    /// serves (the socket is taken), not a socket file nobody accepts on (the state is taken).
    func testAFailedStartWritesNothing() throws {
        let daemon = try SwipedDaemon(prefix: "swiped-cli")
        let other = try TemporaryDirectory("swiped-cli")
        let socketTaken = try SwipedDaemon.run([
            "--socket", daemon.socketPath, "--state", other.file("state2"),
        ])
        XCTAssertEqual(socketTaken.status, .exited(1), socketTaken.standardError)
        XCTAssertEqual(access(other.file("state2"), F_OK), -1, "the state directory was created")

        let stateTaken = try SwipedDaemon.run([
            "--socket", other.file("second.sock"), "--state", daemon.stateDirectory,
        ])
        XCTAssertEqual(stateTaken.status, .exited(1), stateTaken.standardError)
        XCTAssertTrue(stateTaken.standardError.contains("in use"), stateTaken.standardError)
        XCTAssertEqual(access(other.file("second.sock"), F_OK), -1, "the socket file was left behind")
        XCTAssertEqual(try daemon.stop(), .exited(0))
    }

    func testRefusesToReplaceSomethingThatIsNotASocket() throws {
        let dir = try TemporaryDirectory("swiped-cli")
        let path = try dir.write("swiped.sock", "precious\n")
        let result = try SwipedDaemon.run(["--socket", path, "--state", dir.file("state")])
        XCTAssertNotEqual(result.status, .exited(0))
        XCTAssertTrue(result.standardError.contains("not a socket"), result.standardError)
        XCTAssertEqual(try dir.read("swiped.sock"), "precious\n", "the file was modified")
    }

    func testDefaultPathsComeFromTheEnvironment() throws {
        let dir = try TemporaryDirectory("swiped-cli")
        try FileManager.default.createDirectory(atPath: dir.file("run"), withIntermediateDirectories: true)
        let notify = try NotifySocket()
        let process = try Subprocess(
            try Binaries.swiped, [],
            environment: [
                "RUNTIME_DIRECTORY": dir.file("run"), "STATE_DIRECTORY": dir.file("lib"),
                "NOTIFY_SOCKET": notify.path, "XDG_RUNTIME_DIR": nil, "XDG_STATE_HOME": nil,
            ], workingDirectory: dir.path)
        try notify.waitFor("READY=1")
        let client = try LineClient(path: dir.file("run/swiped.sock"))
        XCTAssertEqual(try client.readJSON()["event"] as? String, "hello")
        XCTAssertEqual(access(dir.file("lib/events.sqlite3"), F_OK), 0)
        XCTAssertEqual(try process.terminate(), .exited(0))
    }
}

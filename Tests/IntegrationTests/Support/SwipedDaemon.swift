// SwipedDaemon: the real `swiped` binary on a temporary socket and state directory.
//
//     let daemon = try SwipedDaemon()                        // started, READY=1 received
//     let client = try daemon.connect()                      // its hello already read
//     XCTAssertEqual(try client.request(["op": "ping"])["ok"] as? Bool, true)
//     let again = try daemon.restart()                       // same socket, same state
//     XCTAssertEqual(try daemon.stop(), .exited(0))          // SIGTERM; also done on deinit
//
// The daemon gets a NotifySocket of its own (NOTIFY_SOCKET), so `init` returns once it said
// READY=1, which it does only once the socket accepts and the store is open; if it exits
// first, `init` throws with its standard error. Its stdout and stderr are kept (`process`).
// `stop()` sends SIGTERM and waits (SIGKILL after a grace period); dropping the object kills
// and reaps it (Subprocess), so a failing test leaves nothing behind.

import Foundation
import Glibc

final class SwipedDaemon {
    /// Where the socket and the state live unless given; removed with the daemon object.
    let directory: TemporaryDirectory
    /// The socket the daemon binds (`--socket`).
    let socketPath: String
    /// The state directory (`--state`).
    let stateDirectory: String
    /// Options beyond --socket and --state (e.g. ["--max-clients", "2"]).
    let arguments: [String]
    /// Added to the daemon's environment.
    let environment: [String: String?]
    /// The notify socket the daemon reports to.
    let notify: NotifySocket
    /// The running daemon.
    let process: Subprocess

    /// Starts swiped and waits for READY=1.
    /// - Parameters:
    ///   - arguments: options added after `--socket` and `--state`.
    ///   - directory: reuse a directory (for a restart); a fresh one when nil.
    ///   - socketPath, stateDirectory: defaults `<directory>/swiped.sock`, `<directory>/state`.
    ///   - environment: added to (nil: removed from) the inherited environment.
    ///   - prefix: a few letters to find the directory under /tmp when debugging.
    ///   - launcher: a command that execs swiped (its path and arguments follow).
    init(
        arguments: [String] = [], directory: TemporaryDirectory? = nil, socketPath: String? = nil,
        stateDirectory: String? = nil, environment: [String: String?] = [:], prefix: String = "swiped-d",
        launcher: [String] = [], timeout: Duration = .seconds(10)
    ) throws {
        let directory = try directory ?? TemporaryDirectory(prefix)
        self.directory = directory
        self.socketPath = socketPath ?? directory.file("swiped.sock")
        self.stateDirectory = stateDirectory ?? directory.file("state")
        self.arguments = arguments
        self.environment = environment
        notify = try NotifySocket()
        var env = environment
        env["NOTIFY_SOCKET"] = notify.path
        // Not a child of a service manager: no watchdog, no passed sockets, unless asked.
        for name in ["WATCHDOG_USEC", "WATCHDOG_PID", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES"]
        where environment[name] == nil {
            env[name] = .some(nil)
        }
        // A launcher (e.g. `prlimit --nofile=…`) execs swiped in its own process, as systemd does.
        let command =
            launcher + [try Binaries.swiped, "--socket", self.socketPath, "--state", self.stateDirectory]
        process = try Subprocess(command[0], Array(command.dropFirst()) + arguments, environment: env)
        try waitUntilReady(timeout: timeout)
    }

    deinit {
        // Subprocess's deinit kills and reaps it too; SIGTERM first keeps the state tidy.
        if process.isRunning { _ = try? process.terminate(grace: .seconds(2)) }
    }

    private func waitUntilReady(timeout: Duration) throws {
        let deadline = Deadline(timeout)
        while true {
            if (try? notify.waitFor("READY=1", timeout: .milliseconds(50))) != nil { return }
            if !process.isRunning {
                let status = try process.wait()
                throw SubprocessFailure(
                    command: process.command, status: status,
                    standardError: "swiped exited before READY=1:\n" + process.standardError)
            }
            if deadline.hasPassed {
                throw TimeoutError(
                    "swiped did not send READY=1 within \(timeout); stderr:\n\(process.standardError)")
            }
        }
    }

    /// The daemon's pid.
    var pid: pid_t { process.pid }

    // MARK: Clients

    /// Connects and reads the `hello` event (use `connectWithHello` to see it); throws if the
    /// first line is not a hello.
    func connect(timeout: Duration = .seconds(5)) throws -> LineClient {
        try connectWithHello(timeout: timeout).client
    }

    /// Connects and returns the client and its `hello` event.
    func connectWithHello(timeout: Duration = .seconds(5)) throws -> (
        client: LineClient, hello: [String: Any]
    ) {
        let client = try LineClient(path: socketPath, timeout: timeout)
        let hello = try client.readJSON(timeout: timeout)
        guard hello["event"] as? String == "hello" else {
            throw LineClientError("expected a hello from swiped, got \(hello)")
        }
        return (client, hello)
    }

    // MARK: Stopping

    /// SIGTERM, then waits up to `grace` (SIGKILL after it); returns how it ended.
    @discardableResult
    func stop(grace: Duration = .seconds(5)) throws -> Termination {
        try process.terminate(grace: grace)
    }

    /// Stops this daemon (asserting nothing) and starts another one on the same socket, state and
    /// options.
    func restart(timeout: Duration = .seconds(10)) throws -> SwipedDaemon {
        let status = try stop()
        guard status.isSuccess else {
            throw SubprocessFailure(
                command: process.command, status: status, standardError: process.standardError)
        }
        return try SwipedDaemon(
            arguments: arguments, directory: directory, socketPath: socketPath,
            stateDirectory: stateDirectory,
            environment: environment, timeout: timeout)
    }

    /// Runs swiped to completion with `arguments` only (for --help, --version, bad options).
    static func run(_ arguments: [String], environment: [String: String?] = [:]) throws -> Subprocess.Result {
        try Subprocess.run(try Binaries.swiped, arguments, environment: environment, timeout: .seconds(10))
    }
}

// MARK: - Protocol helpers on LineClient

extension LineClient {
    /// Sends `object` (which must have "op") and returns the reply, failing unless it is ok.
    @discardableResult
    func ok(_ object: [String: Any], timeout: Duration = .seconds(5)) throws -> [String: Any] {
        let reply = try request(object, timeout: timeout)
        guard reply["ok"] as? Bool == true else {
            throw LineClientError("expected an ok reply to \(object), got \(reply)")
        }
        return reply
    }

    /// Sends the raw `line` and returns the reply's error code (nil when the reply is ok).
    func errorCode(_ line: String, timeout: Duration = .seconds(5)) throws -> String? {
        try send(line)
        return Self.errorCode(of: try readReply(timeout: timeout))
    }

    /// The `error.code` of a reply, or nil.
    static func errorCode(of reply: [String: Any]) -> String? {
        (reply["error"] as? [String: Any])?["code"] as? String
    }

    /// The `error.message` of a reply, or "".
    static func errorMessage(of reply: [String: Any]) -> String {
        ((reply["error"] as? [String: Any])?["message"] as? String) ?? ""
    }

    /// Waits for the next event named `name` (others met on the way are returned too, oldest
    /// first, in `skipped`). Throws if a reply comes first.
    func waitForEvent(
        _ name: String, timeout: Duration = .seconds(5)
    ) throws -> (event: [String: Any], skipped: [[String: Any]]) {
        let deadline = Deadline(timeout)
        var skipped: [[String: Any]] = []
        while true {
            let event = try readEvent(timeout: deadline.remaining)
            if event["event"] as? String == name { return (event, skipped) }
            skipped.append(event)
        }
    }

    /// Asserts (by throwing) that nothing arrives for `duration`.
    func expectSilence(for duration: Duration) throws {
        if !events.isEmpty { throw LineClientError("unexpected pending events: \(events)") }
        do {
            let line = try readLine(timeout: duration)
            throw LineClientError("expected silence, got \(line ?? "end-of-file")")
        } catch is TimeoutError {
            return
        }
    }
}

// MARK: - JSON values from replies

/// `value` as an Int, whether JSONSerialization made it an Int, a Double or an NSNumber.
func int(_ value: Any?) -> Int? {
    if let n = value as? Int { return n }
    if let d = value as? Double, d == d.rounded() { return Int(d) }
    return nil
}

/// `value` as a Double.
func double(_ value: Any?) -> Double? {
    if let d = value as? Double { return d }
    if let n = value as? Int { return Double(n) }
    return nil
}

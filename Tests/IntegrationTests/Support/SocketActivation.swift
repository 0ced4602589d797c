// SocketActivation: starts a program the way swiped.socket does, with systemd-socket-activate.
//
//     let activation = try SocketActivation(try Binaries.swiped, ["--state", dir.file("state")])
//     let client = try LineClient(path: activation.socketPath)   // this connection starts it
//     try activation.notify.waitFor("READY=1")
//     ...
//     XCTAssertEqual(try activation.stop(), .exited(0))
//
// systemd-socket-activate binds and listens on the socket, then waits for the first connection
// (as systemd does with Accept=no) before it execs the program in its own place, with
// LISTEN_FDS=1 and LISTEN_PID set, the listening socket as fd 3, and NOTIFY_SOCKET pointing at
// a NotifySocket the test reads. `process.pid` is therefore the program's pid once it runs.

import Foundation
import Glibc

final class SocketActivation {
    /// The listening socket's path (in `directory` unless given).
    let socketPath: String
    /// The notify socket passed as NOTIFY_SOCKET.
    let notify: NotifySocket
    /// systemd-socket-activate, then (same pid) the program.
    let process: Subprocess
    /// A temporary directory for the test's own files (state directories, …); removed on deinit.
    let directory: TemporaryDirectory

    /// - Parameters:
    ///   - program, arguments: what to start on the first connection.
    ///   - environment: passed to the program (each as `-E NAME=VALUE`); NOTIFY_SOCKET is added.
    ///   - socketPath: where to listen; `<directory>/swiped.sock` when nil.
    ///   - socketMode: chmod'ed onto the socket once it exists (systemd-socket-activate follows
    ///     the umask), e.g. 0o666 so test users may connect. Its directory is made 0755 too.
    ///   - fdName: LISTEN_FDNAMES for the socket (`--fdname`), if any; with `before` and `after`,
    ///     one name per socket, colon-separated, in the order they are passed.
    ///   - before, after: more addresses to listen on (`--listen`), passed before or after the
    ///     socket at `socketPath` (e.g. a metrics socket, "127.0.0.1:9464").
    init(
        _ program: String, _ arguments: [String] = [], environment: [String: String] = [:],
        socketPath: String? = nil, socketMode: mode_t? = nil, fdName: String? = nil,
        before: [String] = [], after: [String] = [], timeout: Duration = .seconds(5)
    ) throws {
        directory = try TemporaryDirectory("swiped-sa")
        notify = try NotifySocket()
        let path = socketPath ?? directory.file("swiped.sock")
        self.socketPath = path
        var options = before.map { "--listen=\($0)" } + ["--listen=\(path)"] + after.map { "--listen=\($0)" }
        options.append("--setenv=NOTIFY_SOCKET=\(notify.path)")
        for (name, value) in environment.sorted(by: { $0.key < $1.key }) {
            options.append("--setenv=\(name)=\(value)")
        }
        if let fdName { options.append("--fdname=\(fdName)") }
        process = try Subprocess("systemd-socket-activate", options + [program] + arguments)
        _ = try poll(until: timeout, "systemd-socket-activate to listen on \(path)") { () -> Bool? in
            var info = stat()
            if stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFSOCK { return true }
            if !self.process.isRunning {
                throw SubprocessFailure(
                    command: self.process.command, status: try self.process.wait(),
                    standardError: self.process.standardError)
            }
            return nil
        }
        if let socketMode {
            try directory.allowOthers()
            try retryingEINTR("chmod", path) { chmod(path, socketMode) }
        }
    }

    /// Connects a client, which (the first time) starts the program.
    func connect(timeout: Duration = .seconds(5)) throws -> LineClient {
        try LineClient(path: socketPath, timeout: timeout)
    }

    /// Connects (starting the program) and waits for READY=1; returns the client.
    func start(timeout: Duration = .seconds(10)) throws -> LineClient {
        let client = try connect()
        try notify.waitFor("READY=1", timeout: timeout)
        return client
    }

    /// SIGTERM, then waits (SIGKILL after `grace`); returns how the program ended.
    @discardableResult
    func stop(grace: Duration = .seconds(3)) throws -> Termination {
        try process.terminate(grace: grace)
    }
}

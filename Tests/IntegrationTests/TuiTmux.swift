// Tmux: a private tmux 3.3a server for the terminal front end's end-to-end tests. The server
// runs in the foreground (`tmux -D`) as a Subprocess, so that it is our child and is reaped
// (PID 1 here reaps nothing); the clients (`new-session`, `send-keys`, `capture-pane`) are
// short Subprocess runs against its socket. tmux 3.3a ignores synchronized output (mode
// 2026), which the front end sends: nothing here depends on it.
//
//     let tmux = try Tmux(directory: dir)
//     try tmux.start(["swipectl", "tui"], width: 80, height: 24)
//     try tmux.mouse(press: 60, 6); try tmux.mouse(drag: 40, 6); try tmux.mouse(release: 40, 6)
//     let screen = try tmux.waitForScreen { $0.contains("Delete") }
//     try tmux.stop()

import Foundation
import Glibc

final class Tmux {
    let socket: String
    let server: Subprocess
    let session = "tui"

    init(directory: TemporaryDirectory) throws {
        socket = directory.file("tmux.sock")
        // UTF-8 in the panes; a fixed TERM so that the front end's bytes are the same everywhere.
        server = try Subprocess(
            "tmux", ["-D", "-u", "-S", socket, "-f", "/dev/null"],
            environment: ["LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "COLORTERM": nil, "TMUX": nil])
        let deadline = Deadline(.seconds(10))
        while access(socket, F_OK) != 0 {
            if deadline.hasPassed || !server.isRunning {
                throw TimeoutError("tmux -D did not create \(socket): \(server.standardError)")
            }
            usleep(10_000)
        }
    }

    deinit { _ = try? stop() }

    /// Runs a tmux client command against this server; its standard output.
    @discardableResult
    func run(_ arguments: [String]) throws -> String {
        try Subprocess.check(
            "tmux", ["-S", socket] + arguments, environment: ["TMUX": nil], timeout: .seconds(10))
    }

    /// Starts `command` in a detached session of `width`×`height` cells.
    func start(_ command: [String], width: Int = 80, height: Int = 24) throws {
        try run(["new-session", "-d", "-s", session, "-x", "\(width)", "-y", "\(height)", "--"] + command)
        try run(["set-option", "-t", session, "status", "off"])
    }

    /// The pane as text; with `colors`, with its SGR sequences (`capture-pane -e`).
    func capture(colors: Bool = false) throws -> String {
        try run(["capture-pane", "-p", "-t", session] + (colors ? ["-e"] : []))
    }

    /// A pane format variable (`#{alternate_on}`, `#{mouse_sgr_flag}`…).
    func format(_ name: String) throws -> String {
        try run(["display-message", "-p", "-t", session, "#{\(name)}"]).trimmingCharacters(
            in: .whitespacesAndNewlines)
    }

    /// Sends raw bytes to the program in the pane, as a terminal would (`send-keys -H`).
    func send(bytes text: String) throws {
        try run(["send-keys", "-t", session, "-H"] + text.utf8.map { String($0, radix: 16) })
    }

    /// Sends keys by tmux's names (`Up`, `Enter`, `q`).
    func send(keys: String...) throws { try run(["send-keys", "-t", session] + keys) }

    // xterm's SGR mouse reports (mode 1006), columns and lines from 1.
    func mouse(press x: Int, _ y: Int) throws { try send(bytes: "\u{1B}[<0;\(x);\(y)M") }
    func mouse(drag x: Int, _ y: Int) throws { try send(bytes: "\u{1B}[<32;\(x);\(y)M") }
    func mouse(release x: Int, _ y: Int) throws { try send(bytes: "\u{1B}[<0;\(x);\(y)m") }

    func resize(width: Int, height: Int) throws {
        try run(["resize-window", "-t", session, "-x", "\(width)", "-y", "\(height)"])
    }

    /// Polls the screen until `done` holds; throws with the last screen after `timeout`.
    @discardableResult
    func waitForScreen(
        colors: Bool = false, timeout: Duration = .seconds(10), _ what: String = "the screen",
        _ done: (String) throws -> Bool
    ) throws -> String {
        let deadline = Deadline(timeout)
        var screen = ""
        while true {
            screen = try capture(colors: colors)
            if try done(screen) { return screen }
            if deadline.hasPassed {
                throw TimeoutError("waited \(timeout) for \(what); the screen:\n\(screen)")
            }
            usleep(20_000)
        }
    }

    /// Line `n` (from 0) of a captured screen.
    static func line(_ screen: String, _ n: Int) -> String {
        let lines = screen.split(separator: "\n", omittingEmptySubsequences: false)
        return n < lines.count ? String(lines[n]) : ""
    }

    /// Kills the server and reaps it.
    func stop() throws {
        guard server.isRunning else { return }
        _ = try? run(["kill-server"])
        _ = try server.wait(timeout: .seconds(5))
    }
}

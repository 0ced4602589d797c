// ProcessLineSession: talks lines through a child's stdin and stdout, for clients that are real
// programs (socat, nc) or that run as another user (setpriv … socat - UNIX-CONNECT:path).
//
//     let session = try ProcessLineSession("setpriv", TestUsers.setpriv(user) + ["socat", "-", "UNIX-CONNECT:\(path)"])
//     let hello = try session.readJSON()
//     let reply = try session.request(["op": "ping"])
//
// The child is a Subprocess: it is killed and reaped when the session is dropped.

import Foundation
import Glibc

final class ProcessLineSession: JSONLineSession {
    let process: Subprocess
    /// Complete lines already returned by `readLine`.
    private var consumed = 0
    /// Events skipped by `readReply`, oldest first.
    var events: [[String: Any]] = []

    init(_ program: String, _ arguments: [String], environment: [String: String?] = [:]) throws {
        process = try Subprocess(program, arguments, environment: environment, input: .pipe)
    }

    func send(_ line: String) throws { try process.write(line + "\n") }

    func send(json object: [String: Any]) throws {
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        try send(String(decoding: data, as: UTF8.self))
    }

    /// The next complete line of the child's stdout; throws on timeout or when the child exits
    /// without writing it.
    func readLine(timeout: Duration = .seconds(5)) throws -> String {
        let index = consumed
        let line = try poll(
            until: timeout, "line \(index + 1) from \(process.command.joined(separator: " "))"
        ) {
            () throws -> String? in
            let text = self.process.standardOutput
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            // The last element is the incomplete tail ("" after a final newline).
            if lines.count - 1 > index { return String(lines[index]) }
            if !self.process.isRunning {
                throw LineClientError(
                    "\(self.process.command.joined(separator: " ")) ended; stdout:\n\(text)\nstderr:\n"
                        + self.process.standardError)
            }
            return nil
        }
        consumed += 1
        return line
    }

    func readJSON(timeout: Duration = .seconds(5)) throws -> [String: Any] {
        try LineClient.parse(try readLine(timeout: timeout))
    }
}

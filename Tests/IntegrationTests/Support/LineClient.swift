// LineClient: a raw AF_UNIX stream client that speaks in lines, for tests of the wire protocol.
//
//     let client = try LineClient(path: socketPath)           // retries until the socket is up
//     let hello = try client.readJSON()                       // {"event":"hello",…}
//     try client.send(#"{"op":"ping","id":1}"#)
//     let reply = try client.readReply()                      // skips (and keeps) events
//     XCTAssertEqual(reply["ok"] as? Bool, true)
//
// Nothing here knows the protocol beyond "one JSON object per line" and "replies have no
// `event` key", so it can send malformed input on purpose.

import Foundation
import Glibc

final class LineClient: JSONLineSession {
    /// The socket path this client connected to.
    let path: String
    private var fd: Int32
    /// Bytes received and not yet returned as a line.
    private var buffer: [UInt8] = []
    private var endOfFile = false
    /// Events (objects with an "event" key) skipped by `readReply`, oldest first.
    var events: [[String: Any]] = []

    /// Connects to `path`, retrying while the socket does not exist yet or refuses (a daemon
    /// that is still starting), until `timeout`.
    init(path: String, timeout: Duration = .seconds(5)) throws {
        _ = ignoreSIGPIPE
        self.path = path
        let address = try unixAddress(path)
        fd = try poll(until: timeout, "a connection to \(path)") { () throws -> Int32? in
            let fd = try retryingEINTR("socket") {
                socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            }
            var address = address
            let rc = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            if rc == 0 { return fd }
            let code = errno
            Glibc.close(fd)
            if code == ENOENT || code == ECONNREFUSED || code == EAGAIN || code == EINTR { return nil }
            throw SystemCallError("connect", errno: code, path)
        }
    }

    deinit { close() }

    /// The connected socket, for tests that need a raw call (getsockopt, partial writes…).
    var fileDescriptor: Int32 { fd }

    // MARK: Sending

    /// Sends `line` followed by "\n".
    func send(_ line: String) throws { try sendRaw(Array(line.utf8) + [0x0A]) }

    /// Sends `object` as one line of JSON.
    func send(json object: [String: Any]) throws {
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        try sendRaw(Array(data) + [0x0A])
    }

    /// Sends `bytes` exactly as given (no newline added): partial lines, invalid UTF-8, …
    func sendRaw(_ bytes: [UInt8]) throws {
        var rest = bytes[...]
        while !rest.isEmpty {
            let n = try retryingEINTR("send", path) {
                rest.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            }
            rest = rest.dropFirst(n)
        }
    }

    /// Shuts down the sending side: the server reads end-of-file, and can still answer.
    func shutdownWrite() throws { try retryingEINTR("shutdown", path) { shutdown(fd, Int32(SHUT_WR)) } }

    /// Closes the connection (idempotent).
    func close() {
        if fd >= 0 {
            Glibc.close(fd)
            fd = -1
        }
    }

    // MARK: Receiving

    /// The next line without its "\n" (a "\r" before it is kept), or nil at end-of-file.
    /// Throws on timeout. A final line without "\n" before end-of-file is returned as is.
    func readLine(timeout: Duration = .seconds(5)) throws -> String? {
        let deadline = Deadline(timeout)
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            if endOfFile {
                guard !buffer.isEmpty else { return nil }
                defer { buffer.removeAll() }
                return String(decoding: buffer, as: UTF8.self)
            }
            guard try waitReadable(fd, until: deadline) else {
                throw TimeoutError(
                    "no line from \(path) within \(timeout)"
                        + (buffer.isEmpty ? "" : "; partial: \(String(decoding: buffer, as: UTF8.self))"))
            }
            try receive()
        }
    }

    /// The next line parsed as a JSON object. Throws at end-of-file, on timeout, or when the line
    /// is not a JSON object (the line is in the error).
    func readJSON(timeout: Duration = .seconds(5)) throws -> [String: Any] {
        guard let line = try readLine(timeout: timeout) else {
            throw LineClientError("\(path) closed the connection while a JSON line was expected")
        }
        return try Self.parse(line)
    }

    /// Waits until the server closes the connection, returning the lines it sent before closing.
    /// Throws on timeout.
    func readUntilClosed(timeout: Duration = .seconds(5)) throws -> [String] {
        let deadline = Deadline(timeout)
        var lines: [String] = []
        while let line = try readLine(timeout: deadline.remaining) { lines.append(line) }
        return lines
    }

    /// Parses one line as a JSON object.
    static func parse(_ line: String) throws -> [String: Any] {
        guard
            let object = try? JSONSerialization.jsonObject(
                with: Data(line.utf8), options: [.fragmentsAllowed]),
            let dictionary = object as? [String: Any]
        else { throw LineClientError("not a JSON object: \(line)") }
        return dictionary
    }

    private func receive() throws {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = try retryingEINTR("recv", path) {
            chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        }
        if n == 0 { endOfFile = true } else { buffer += chunk[0..<n] }
    }
}

/// A protocol-level surprise in a LineClient exchange.
struct LineClientError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// What LineClient (a socket) and ProcessLineSession (a child's stdin/stdout) share: one JSON
/// object per line, replies told apart from events, events kept for later.
protocol JSONLineSession: AnyObject {
    var events: [[String: Any]] { get set }
    func send(json object: [String: Any]) throws
    func readJSON(timeout: Duration) throws -> [String: Any]
}

extension JSONLineSession {
    /// The next reply (an object without "event"), keeping the events met on the way in `events`.
    func readReply(timeout: Duration = .seconds(5)) throws -> [String: Any] {
        let deadline = Deadline(timeout)
        while true {
            let object = try readJSON(timeout: deadline.remaining)
            if object["event"] == nil { return object }
            events.append(object)
        }
    }

    /// The next event, taken from `events` first, then from the peer (failing if a reply comes
    /// first: replies are answers to requests and must not be lost).
    func readEvent(timeout: Duration = .seconds(5)) throws -> [String: Any] {
        if !events.isEmpty { return events.removeFirst() }
        let object = try readJSON(timeout: timeout)
        guard object["event"] != nil else {
            throw LineClientError("expected an event, got a reply: \(object)")
        }
        return object
    }

    /// Sends `object` and returns the next reply.
    @discardableResult
    func request(_ object: [String: Any], timeout: Duration = .seconds(5)) throws -> [String: Any] {
        try send(json: object)
        return try readReply(timeout: timeout)
    }
}

// A scraper of the daemon's metrics listener, at the byte level (issue 31): connects to
// 127.0.0.1:PORT, sends what it is given (a request, part of one, nothing), and reads what the
// daemon answers until it closes.

import Foundation
import Glibc
import XCTest

/// A TCP port on 127.0.0.1 that was free a moment ago (for `--metrics` and
/// systemd-socket-activate, which take no port 0).
func freeTCPPort() throws -> UInt16 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let r = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { p in
            bind(fd, p, length) == 0 ? getsockname(fd, p, &length) : -1
        }
    }
    guard r == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    return UInt16(bigEndian: address.sin_port)
}

/// One connection to the metrics listener.
final class HTTPProbe {
    let fd: Int32

    /// Connected (the connect completes in the listener's backlog even before an accept).
    init(port: UInt16) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        let r = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard r == 0 else {
            let e = errno
            close(fd)
            throw POSIXError(.init(rawValue: e) ?? .EIO)
        }
    }

    deinit { close(fd) }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
            offset += n
        }
    }

    /// Everything the daemon sends until it closes (or `timeout`, then a TimeoutError).
    func readAll(timeout: Duration = .seconds(10)) throws -> String {
        let deadline = Deadline(timeout)
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pfd, 1, deadline.pollMilliseconds)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { throw TimeoutError("HTTP response (got \(received.count) bytes)") }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }  // closed (or reset after the response)
            received += buffer[0..<n]
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// `GET path`: the status code and the body.
    static func get(port: UInt16, _ path: String, method: String = "GET") throws -> (
        status: Int, body: String
    ) {
        let probe = try HTTPProbe(port: port)
        try probe.send("\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        return parse(try probe.readAll())
    }

    /// A response's status code and body (0 and the text when it is not a response).
    static func parse(_ response: String) -> (status: Int, body: String) {
        guard response.hasPrefix("HTTP/1.1 "), let end = response.range(of: "\r\n\r\n") else {
            return (0, response)
        }
        let status = Int(response.dropFirst(9).prefix(3)) ?? 0
        return (status, String(response[end.upperBound...]))
    }
}

/// A sample's value in a Prometheus text exposition (`name` with its labels, as written).
func sample(_ exposition: String, _ name: String) -> Double? {
    for line in exposition.split(separator: "\n") where line.hasPrefix(name + " ") {
        return Double(line.dropFirst(name.count + 1))
    }
    return nil
}

// A raw RFC 6455 client of the daemon's web listener (issue 43), at the byte level: it writes
// the handshake's head as given and masked frames as built here (or unmasked, binary, cut,
// oversized, on purpose), and reads the daemon's frames as they come. Independent of wslay,
// so that the tests check the daemon against the RFC.
//
//     let (status, ws) = try WebSocketClient.open(port: port)   // 101, and the hello read
//     let reply = try ws.request(["op": "ping", "id": 1])        // JSONLineSession, as LineClient
//     try ws.sendFrame(opcode: .binary, [1, 2, 3])
//     XCTAssertEqual(try ws.readClose()?.code, 1003)

import Foundation
import Glibc

/// One TCP connection to 127.0.0.1 (or ::1).
final class TCPClient {
    let fd: Int32
    var buffer: [UInt8] = []
    private(set) var endOfFile = false

    init(port: UInt16, ipv6: Bool = false, receiveBuffer: Int32? = nil) throws {
        _ = ignoreSIGPIPE
        fd = socket(ipv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        if var size = receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        let r: Int32
        if ipv6 {
            var a = sockaddr_in6()
            a.sin6_family = sa_family_t(AF_INET6)
            a.sin6_port = port.bigEndian
            inet_pton(AF_INET6, "::1", &a.sin6_addr)
            r = withUnsafePointer(to: &a) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        } else {
            var a = sockaddr_in()
            a.sin_family = sa_family_t(AF_INET)
            a.sin_addr.s_addr = inet_addr("127.0.0.1")
            a.sin_port = port.bigEndian
            r = withUnsafePointer(to: &a) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        guard r == 0 else {
            let e = errno
            Glibc.close(fd)
            throw SystemCallError("connect", errno: e, "127.0.0.1:\(port)")
        }
    }

    deinit { Glibc.close(fd) }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw SystemCallError("send", "web") }
            offset += n
        }
    }

    /// Reads more bytes into `buffer`; false at end of file or reset.
    func fill(until deadline: Deadline) throws -> Bool {
        guard !endOfFile else { return false }
        guard try waitReadable(fd, until: deadline) else {
            throw TimeoutError("bytes from the web listener (have \(buffer.count))")
        }
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n < 0 && errno == EINTR { return true }
        if n <= 0 {
            endOfFile = true
            return false
        }
        buffer += chunk[0..<n]
        return true
    }

    /// An HTTP response's head (up to its empty line), and its status.
    func readHead(timeout: Duration = .seconds(5)) throws -> (status: Int, head: String) {
        let deadline = Deadline(timeout)
        while true {
            if let end = buffer.firstRange(of: Array("\r\n\r\n".utf8)) {
                let head = String(decoding: buffer[..<end.upperBound], as: UTF8.self)
                buffer.removeSubrange(..<end.upperBound)
                let status = Int(head.split(separator: " ", maxSplits: 2)[1]) ?? 0
                return (status, head)
            }
            guard try fill(until: deadline) else { throw LineClientError("closed before a response head") }
        }
    }

    /// Everything until the server closes.
    func readAll(timeout: Duration = .seconds(5)) throws -> [UInt8] {
        let deadline = Deadline(timeout)
        while try fill(until: deadline) {}
        defer { buffer = [] }
        return buffer
    }
}

final class WebSocketClient: JSONLineSession {
    enum Opcode: UInt8 {
        case continuation = 0, text = 1, binary = 2, close = 8, ping = 9, pong = 10
    }

    struct Frame {
        var fin: Bool
        var opcode: UInt8
        var payload: [UInt8]
        var text: String { String(decoding: payload, as: UTF8.self) }
        var closeCode: UInt16? { payload.count >= 2 ? UInt16(payload[0]) << 8 | UInt16(payload[1]) : nil }
        var closeReason: String { String(decoding: payload.dropFirst(2), as: UTF8.self) }
    }

    let tcp: TCPClient
    var events: [[String: Any]] = []
    /// Whether pings are answered (a browser does); off, the client is a dead peer.
    var answersPings = true
    /// Text messages of a fragmented message read so far.
    private var partial: [UInt8]?

    init(_ tcp: TCPClient) { self.tcp = tcp }

    /// The handshake's head for `/ws` on 127.0.0.1:`port`: `origin` nil leaves Origin out.
    static func handshake(
        port: UInt16, origin: String? = "", host: String? = nil, path: String = "/ws", extra: [String] = []
    ) -> String {
        var lines = [
            "GET \(path) HTTP/1.1", "Host: \(host ?? "127.0.0.1:\(port)")", "Upgrade: websocket",
            "Connection: Upgrade", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 13",
        ]
        if let origin { lines.append("Origin: \(origin.isEmpty ? "http://127.0.0.1:\(port)" : origin)") }
        return (lines + extra).joined(separator: "\r\n") + "\r\n\r\n"
    }

    /// Opens a WebSocket: the status of the answer, and the client when it is 101 (its hello
    /// read when `readHello`).
    static func open(
        port: UInt16, origin: String? = "", host: String? = nil, ipv6: Bool = false,
        receiveBuffer: Int32? = nil,
        readHello: Bool = true, extra: [String] = []
    ) throws -> (status: Int, client: WebSocketClient?) {
        let tcp = try TCPClient(port: port, ipv6: ipv6, receiveBuffer: receiveBuffer)
        try tcp.send(Array(handshake(port: port, origin: origin, host: host, extra: extra).utf8))
        let (status, _) = try tcp.readHead()
        guard status == 101 else { return (status, nil) }
        let ws = WebSocketClient(tcp)
        if readHello {
            let hello = try ws.readJSON(timeout: .seconds(5))
            guard hello["event"] as? String == "hello" else { throw LineClientError("no hello: \(hello)") }
            ws.hello = hello
        }
        return (status, ws)
    }

    /// A frame as a browser sends it: masked (unless `masked` is false), length in its shortest form.
    static func frame(_ opcode: UInt8, _ payload: [UInt8], fin: Bool = true, masked: Bool = true) -> [UInt8] {
        var out: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        let m: UInt8 = masked ? 0x80 : 0
        if payload.count < 126 {
            out.append(m | UInt8(payload.count))
        } else if payload.count < 65536 {
            out += [m | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            out.append(m | 127)
            for shift in stride(from: 56, through: 0, by: -8) {
                out.append(UInt8((payload.count >> shift) & 0xFF))
            }
        }
        guard masked else { return out + payload }
        let mask: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
        out += mask
        for (i, b) in payload.enumerated() { out.append(b ^ mask[i % 4]) }
        return out
    }

    func sendFrame(_ opcode: Opcode, _ payload: [UInt8], fin: Bool = true, masked: Bool = true) throws {
        try tcp.send(Self.frame(opcode.rawValue, payload, fin: fin, masked: masked))
    }

    func send(text: String) throws { try sendFrame(.text, Array(text.utf8)) }

    func send(json object: [String: Any]) throws {
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        try sendFrame(.text, Array(data))
    }

    /// The next frame; nil when the server closed the TCP connection.
    func readFrame(timeout: Duration = .seconds(5)) throws -> Frame? {
        let deadline = Deadline(timeout)
        while true {
            let b = tcp.buffer
            if b.count >= 2 {
                var length = Int(b[1] & 0x7F)
                var at = 2
                if length == 126, b.count >= 4 {
                    length = Int(b[2]) << 8 | Int(b[3])
                    at = 4
                } else if length == 127, b.count >= 10 {
                    length = b[2..<10].reduce(0) { $0 << 8 | Int($1) }
                    at = 10
                }
                if length < 126 || at > 2, b.count >= at + length {
                    precondition(b[1] & 0x80 == 0, "the server masked a frame")
                    tcp.buffer.removeFirst(at + length)
                    return Frame(
                        fin: b[0] & 0x80 != 0, opcode: b[0] & 0x0F, payload: Array(b[at..<at + length]))
                }
            }
            guard try tcp.fill(until: deadline) else { return nil }
        }
    }

    /// The next whole text message (pings answered on the way unless `answersPings` is off);
    /// nil when a close frame or the end of the connection comes first.
    func readText(timeout: Duration = .seconds(5)) throws -> String? {
        let deadline = Deadline(timeout)
        while let f = try readFrame(timeout: deadline.remaining) {
            switch f.opcode {
            case Opcode.ping.rawValue:
                if answersPings { try sendFrame(.pong, f.payload) }
            case Opcode.text.rawValue where f.fin: return f.text
            case Opcode.text.rawValue: partial = f.payload
            case Opcode.continuation.rawValue:
                partial! += f.payload
                if f.fin {
                    defer { partial = nil }
                    return String(decoding: partial!, as: UTF8.self)
                }
            case Opcode.close.rawValue:
                closeFrame = f
                return nil
            default: break
            }
        }
        return nil
    }

    /// The hello `open` read.
    var hello: [String: Any] = [:]

    /// The close frame met by `readText`, if one was.
    var closeFrame: Frame?

    func readJSON(timeout: Duration) throws -> [String: Any] {
        guard let text = try readText(timeout: timeout) else {
            throw LineClientError(
                "the WebSocket closed (\(closeFrame?.closeCode.map(String.init) ?? "no close frame"))")
        }
        return try LineClient.parse(text)
    }

    /// Reads on until the close frame (its code and reason), skipping messages; nil when the
    /// connection ends without one.
    func readClose(timeout: Duration = .seconds(5)) throws -> (code: UInt16?, reason: String)? {
        let deadline = Deadline(timeout)
        while true {
            if let f = closeFrame { return (f.closeCode, f.closeReason) }
            guard try readText(timeout: deadline.remaining) != nil || closeFrame != nil else { return nil }
        }
    }
}

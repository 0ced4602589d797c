// A blocking line connection to swiped's Unix socket: connect, write lines, read lines with a
// timeout. The typed client (`SwipedClient`) is built on it; tests and benchmarks use it raw.
import JSONCodec

#if canImport(Glibc)
    import Glibc
#endif

public struct ClientError: Error, CustomStringConvertible, Equatable, Sendable {
    public enum Kind: String, Sendable {
        /// The socket could not be reached (exit code 3 in swipectl).
        case connect
        /// The daemon answered `ok:false`; `code` is the protocol's error code.
        case server
        /// The daemon closed the connection (`bye`, or gone).
        case closed
        /// No reply in time.
        case timeout
        /// The daemon sent something this client does not understand.
        case `protocol`
    }

    public var kind: Kind
    public var code: String?
    public var message: String

    public init(_ kind: Kind, code: String? = nil, _ message: String) {
        self.kind = kind
        self.code = code
        self.message = message
    }

    public var description: String {
        if let code { return "\(code): \(message)" }
        return message
    }
}

public final class LineConnection {
    public let path: String
    public let fd: Int32
    /// What has arrived and is not yet returned (internal: tests check how it was scanned).
    var lines = LineFramer.client()
    private var chunk = [UInt8](repeating: 0, count: 65536)

    public init(path: String) throws(ClientError) {
        self.path = path
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard !bytes.isEmpty, bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw ClientError(
                .connect, "cannot connect to \(path): the path is empty or longer than 107 bytes")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else {
            throw ClientError(.connect, "cannot create a socket: \(String(cString: strerror(errno)))")
        }
        let r = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard r == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw ClientError(.connect, "cannot connect to \(path): \(reason)")
        }
        self.fd = fd
    }

    deinit { close(fd) }

    /// Writes all of `bytes` (blocking).
    public func write(_ bytes: [UInt8]) throws(ClientError) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { raw in
                send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
            }
            if n < 0 {
                if errno == EINTR { continue }
                throw ClientError(
                    .closed, "the daemon closed the connection (\(String(cString: strerror(errno))))")
            }
            offset += n
        }
    }

    public func writeLine(_ line: String) throws(ClientError) {
        try write(Array((line + "\n").utf8))
    }

    /// Closes the writing side (the daemon still answers what it has).
    public func shutdownWrite() { shutdown(fd, Int32(SHUT_WR)) }

    /// The next line without its newline; nil at end of stream. `timeout` in seconds, nil = wait.
    /// A line may be of any length (`LineFramer.client()`): each byte is scanned once.
    public func readLine(timeout: Double? = nil) throws(ClientError) -> [UInt8]? {
        while true {
            if let line = lines.nextLine() { return line }
            if let timeout {
                var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let r = poll(&pfd, 1, Int32(max(0, timeout * 1000)))
                if r == 0 { throw ClientError(.timeout, "no answer from the daemon within \(timeout) s") }
                if r < 0 && errno != EINTR {
                    throw ClientError(.closed, "poll: \(String(cString: strerror(errno)))")
                }
                if r < 0 { continue }
            }
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw ClientError(.closed, "read: \(String(cString: strerror(errno)))")
            }
            if n == 0 { return nil }
            chunk.withUnsafeBytes { lines.append(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
        }
    }
}

extension LineFramer {
    /// The framing of the daemon's lines, for both connections (LineConnection, StreamConnection).
    /// No limit on a line's length: the daemon's replies have none (a `list` grows with the list,
    /// and `--max-line` bounds only what the daemon reads), and this client trusts its daemon.
    /// The framer's other rules (a blank line is skipped, one CR before the newline dropped) never
    /// apply: the daemon writes JSON, one object a line.
    static func client() -> LineFramer { LineFramer(maxLine: .max) }

    /// The next whole line, copied out of the framer's storage; nil until one has arrived.
    mutating func nextLine() -> [UInt8]? {
        switch next() {
        case .line(let bytes)?: return Array(bytes)
        case .tooLarge(let length)?:
            preconditionFailure("a line of \(length) bytes over maxLine \(maxLine), in a client framer")
        case nil: return nil
        }
    }
}

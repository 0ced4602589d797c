// A non-blocking connection to swiped for front ends with an event loop of their own
// (`swipectl tui`): it never waits. The front end polls `fd` (POLLIN, and POLLOUT while
// `wantsWrite`), calls `receive()` when it is readable and `flush()` when it is writable.
// Requests are queued with `send` and answered, in order, by `.reply` messages carrying the id
// `send` returned; events and the hello come as they arrive. The blocking `SwipedClient`
// stays as it is for the command-line tools.
import JSONCodec
import Wire

#if canImport(Glibc)
    import Glibc
#endif

public final class StreamConnection {
    /// A line from the daemon, decoded.
    public enum Message: Equatable, Sendable {
        case hello(Hello)
        /// The reply to the request `send` numbered `id`.
        case reply(id: Int, Reply)
        case event(ServerEvent)
    }

    public let path: String
    public let fd: Int32
    /// What has arrived and is not yet decoded (internal: tests check how it was scanned).
    var input = LineFramer.client()
    private var output: [UInt8] = []
    private var sentOffset = 0
    private var nextID = 1
    private var sawHello = false
    private var chunk = [UInt8](repeating: 0, count: 65536)

    /// Connects (a Unix socket connects at once or fails) and makes the socket non-blocking.
    public init(socketPath: String) throws(ClientError) {
        let line = try LineConnection(path: socketPath)
        // Keep the descriptor: LineConnection closes its own on deinit, so take a duplicate.
        let fd = fcntl(line.fd, F_DUPFD_CLOEXEC, 0)
        guard fd >= 0 else { throw ClientError(.connect, "dup: \(String(cString: strerror(errno)))") }
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
        self.path = socketPath
        self.fd = fd
    }

    deinit { close(fd) }

    /// Whether bytes wait to be written (poll for POLLOUT).
    public var wantsWrite: Bool { sentOffset < output.count }

    /// Queues one request and writes what the socket takes now; returns the id its reply echoes.
    @discardableResult
    public func send(_ op: String, _ arguments: [(String, JSON)] = []) throws(ClientError) -> Int {
        let id = nextID
        nextID += 1
        var line = JSONWriter()
        line.object { w in
            w.field("id", id)
            w.field("op", op)
            for (key, value) in arguments { w.field(key, value) }
        }
        line.newline()
        output += line.bytes
        try flush()
        return id
    }

    /// Writes queued bytes until the socket would block.
    public func flush() throws(ClientError) {
        while sentOffset < output.count {
            let n = output.withUnsafeBytes { raw in
                Glibc.send(fd, raw.baseAddress! + sentOffset, raw.count - sentOffset, Int32(MSG_NOSIGNAL))
            }
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { return }
                throw ClientError(
                    .closed, "the daemon closed the connection (\(String(cString: strerror(errno))))")
            }
            sentOffset += n
        }
        output.removeAll(keepingCapacity: true)
        sentOffset = 0
    }

    /// Every whole line that has arrived, decoded, and whether the daemon closed its side (then
    /// nothing more comes: the front end drops this connection).
    public func receive() throws(ClientError) -> (messages: [Message], closed: Bool) {
        let (lines, closed) = try receiveLines()
        return (lines.map(\.message), closed)
    }

    /// As `receive`, with each message's line as the daemon sent it (without its newline): a
    /// front end that records its session keeps the lines with rows, for `swipectl replay
    /// --expect`, which compares them as the daemon wrote them.
    public func receiveLines() throws(ClientError) -> (
        lines: [(message: Message, line: String)], closed: Bool
    ) {
        var closed = false
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n > 0 {
                chunk.withUnsafeBytes { input.append(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
                if n < chunk.count { break }
                continue
            }
            if n == 0 {
                closed = true
                break
            }
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK { break }
            closed = true  // ECONNRESET and the like: the daemon is gone
            break
        }
        var messages: [(message: Message, line: String)] = []
        while let line = input.nextLine() {
            messages.append((try decode(line), String(decoding: line, as: UTF8.self)))
        }
        return (messages, closed)
    }

    private func decode(_ line: [UInt8]) throws(ClientError) -> Message {
        let object = try SwipedClient.object(line)
        let text = String(decoding: line, as: UTF8.self)
        if !sawHello {
            sawHello = true
            return .hello(try SwipedClient.hello(object, line: line, socketPath: path))
        }
        if object["event"] != nil { return .event(try SwipedClient.event(object)) }
        guard let id = object.uint("id") else {
            throw ClientError(.protocol, "a reply without the id of its request: \(text)")
        }
        return .reply(id: Int(id), Reply(object: object, line: text))
    }
}

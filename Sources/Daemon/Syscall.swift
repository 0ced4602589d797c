// Each system call is wrapped once: EINTR is retried here, and a failure keeps errno together
// with the call's name, so whoever handles it can log one precise line (swift-nio's System.swift).
import CSystemd  // sys/socket.h: MSG_NOSIGNAL, which Glibc's module does not export

#if canImport(Glibc)
    import Glibc
#endif

public struct SystemError: Error, CustomStringConvertible, Sendable {
    public let call: String
    public let errno: Int32

    public init(_ call: String, errno: Int32 = Glibc.errno) {
        self.call = call
        self.errno = errno
    }

    public var description: String { "\(call): \(String(cString: strerror(errno)))" }

    /// Whether a send failed because the peer went (closed its end, or was reset): how
    /// connections end, not a fault of the daemon's.
    var peerGone: Bool { errno == EPIPE || errno == ECONNRESET }
}

@discardableResult
@inline(__always)
func syscall<T: BinaryInteger>(_ name: String, _ body: () -> T) throws(SystemError) -> T {
    while true {
        let result = body()
        if result >= 0 { return result }
        if errno == EINTR { continue }
        throw SystemError(name)
    }
}

/// Outcome of a non-blocking read: bytes read, would block, or the peer is gone.
enum IOResult: Equatable {
    case done(Int)
    case wouldBlock
    case eof
}

func readNonBlocking(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> IOResult
{
    while true {
        let n = read(fd, buffer.baseAddress, buffer.count)
        if n > 0 { return .done(n) }
        if n == 0 { return .eof }
        switch errno {
        case EINTR: continue
        case EAGAIN: return .wouldBlock
        case ECONNRESET: return .eof
        default: throw SystemError("read")
        }
    }
}

/// How many bytes of `buffer` the socket took: 0 when it is full. A peer gone is an error like
/// any other here (`SystemError.peerGone` tells it apart), so that whoever handles it has errno.
func writeNonBlocking(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) throws(SystemError) -> Int {
    while true {
        // MSG_NOSIGNAL: a peer that vanished must cost an EPIPE, not the whole daemon.
        let n = send(fd, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL))
        if n >= 0 { return n }
        switch errno {
        case EINTR: continue
        case EAGAIN: return 0
        default: throw SystemError("send")
        }
    }
}

/// Writes everything to fd 2, ignoring failures: the C `stderr` global is not usable under
/// strict concurrency, and a log line must never take the daemon down.
func writeStderr(_ text: String) {
    var text = text
    text.withUTF8 { bytes in
        var offset = 0
        while offset < bytes.count {
            let n = write(2, bytes.baseAddress! + offset, bytes.count - offset)
            if n <= 0 {
                if n < 0 && errno == EINTR { continue }
                return
            }
            offset += n
        }
    }
}

/// For executables: a message on stderr (fd 2).
public func printError(_ text: String) { writeStderr(text) }

// The eventfd a worker thread rings when answers wait for its owner's event loop.
import CPlumbing
import Glibc

/// An eventfd as a doorbell: readable from `ring()` until `reset()`. The log's writer, the
/// store's reader and the in-memory store ring one when completions wait; the owner's loop polls
/// `fd` and resets it when it collects them. The threaded owners ring and reset only under the
/// lock that guards their completions, so `fd` is readable exactly while completions wait.
public struct Doorbell: Sendable {
    public let fd: Int32

    /// A new eventfd; `owner` names it in the error.
    public init(_ owner: String) throws(PlumbingError) {
        fd = swiped_eventfd()
        guard fd >= 0 else {
            throw PlumbingError("\(owner): eventfd failed: \(String(cString: strerror(errno)))")
        }
    }

    /// Makes `fd` readable. The write fails only with EAGAIN, when the counter is at its
    /// maximum (2^64 - 2 rings unread): the descriptor is readable then, which is all a ring
    /// asks. Any other failure is a bug (a closed or reused descriptor).
    @inlinable
    public func ring() {
        var one: UInt64 = 1
        let n = withUnsafeBytes(of: &one) { Glibc.write(fd, $0.baseAddress, 8) }
        if n != 8 {
            let e = errno
            precondition(e == EAGAIN, "doorbell \(fd): write: \(String(cString: strerror(e)))")
        }
    }

    /// Makes `fd` unreadable until the next `ring()`. The read fails only with EAGAIN, when
    /// nothing rang since the last reset: unreadable already, as asked. Any other failure is a
    /// bug.
    @inlinable
    public func reset() {
        var counter: UInt64 = 0
        let n = withUnsafeMutableBytes(of: &counter) { Glibc.read(fd, $0.baseAddress, 8) }
        if n != 8 {
            let e = errno
            precondition(e == EAGAIN, "doorbell \(fd): read: \(String(cString: strerror(e)))")
        }
    }

    public func close() { Glibc.close(fd) }
}

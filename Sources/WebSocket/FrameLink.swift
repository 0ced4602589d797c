// One WebSocket's frames (RFC 6455, 5), with wslay (Sources/CWslay), without a socket: the
// daemon reads from the socket into a buffer and hands it to `received`, and writes to the
// socket what `outbound` holds; wslay's callbacks read from the one and write into the other.
// So this is a state machine like the project's others (bytes in, messages and bytes out), and
// the tests and the fuzzer drive it with byte arrays (Tests/WebSocketTests, Fuzz/FrameFuzz).
//
// What wslay does here: it parses and checks every frame (a client frame must be masked: else
// close 1002; text must be UTF-8: else 1007; a message past `maxMessage`: 1009, before its
// payload is read; reserved bits, unknown opcodes, a control frame over 125 bytes or
// fragmented: closed), unmasks, joins fragments into whole messages (`on_msg_recv_callback`),
// answers a ping with a pong and a close with a close, and frames what we send. What is ours:
// a binary message is refused (1003: the protocol is text); more than `maxFragments` frames in
// one message (each is an allocation of wslay's) or more than `maxQueuedControl` control
// frames waiting to be sent at once (pongs queued faster than they can be written: a read full
// of pings, or a peer that pings and does not read its pongs) close with 1008.
// Known and left to wslay (Fuzz/FrameFuzz found it): wslay 1.1.1 checks a close frame's reason
// for UTF-8 from the third byte of each read's part of the frame, so a bad reason cut across two
// reads may pass, and wslay then answers with the peer's own code instead of 1007. The
// connection ends either way, and writing the close handshake by hand for this would be more
// protocol code of our own than the fault is worth.
//
// Sending: the daemon's output for this connection is the Session's, lines ending in `\n`.
// Each line becomes one text message, without its `\n`. A line is framed while it is written
// (wslay's fragmented messages, whose data a callback reads from the Session's output in place):
// the output is consumed only as fast as frames fit into `outbound` (`window` bytes), so the
// Session's `--max-queue` accounting stays what it is over the Unix socket, and a `list` of
// 100,000 movies that the Session words a part at a time (its ListStream) goes out as the
// frames of one message as it is worded, never copied whole. The close frame we send ourselves
// (`close(code:reason:)`) waits until every line before it is out: wslay sends control frames
// ahead of data, and a close that overtook a `bye` would lose it.
import CWslay

#if canImport(Glibc)
    import Glibc
#endif

public struct FrameLimits: Equatable, Sendable {
    /// The longest message read, fragments together: past it, close 1009 (the hard cap).
    public var maxMessage: Int
    /// Frames in one message, at most: past it, close 1008.
    public var maxFragments = 256
    /// Control frames queued and not yet sent, at most: past it, close 1008.
    public var maxQueuedControl = 32
    /// Bytes framed ahead of the socket (`outbound`), at most.
    public var window = 64 * 1024

    public init(maxMessage: Int) { self.maxMessage = maxMessage }
}

/// The close codes the link sends (RFC 6455, 7.4.1).
public enum CloseCode {
    public static let normal: UInt16 = 1000
    public static let goingAway: UInt16 = 1001
    public static let protocolError: UInt16 = 1002
    public static let unsupportedData: UInt16 = 1003
    /// What wslay reports as "sent" for a close frame without a code.
    public static let noStatus: UInt16 = 1005
    public static let invalidPayload: UInt16 = 1007
    public static let policyViolation: UInt16 = 1008
    public static let messageTooBig: UInt16 = 1009
    public static let internalError: UInt16 = 1011
    public static let tryAgainLater: UInt16 = 1013
}

public final class FrameLink {
    public let limits: FrameLimits
    private var context: OpaquePointer?

    // Reading: the bytes of the current `received`, and where wslay is in them.
    private var input: UnsafeRawBufferPointer?
    private var inputOffset = 0
    private var onText: ((UnsafeRawBufferPointer) -> Void)?
    /// Frames of the data message being read.
    private var fragments = 0

    // Writing.
    /// Frames for the socket; `outboundHead` bytes of it were written.
    private var buffer: [UInt8] = []
    private var outboundHead = 0
    /// The output lines of the current `produce`, and how much of them wslay took.
    private var source: UnsafeRawBufferPointer?
    private var taken = 0
    /// A text message is being framed: its line's `\n` has not been read yet.
    private var lineOpen = false
    /// The close to send once every line before it is out.
    private var closing: (code: UInt16, reason: String)?
    /// A close frame is queued (ours, or wslay's answer to the peer's or to a protocol error).
    private var closeQueued = false

    /// The close frame the peer sent (its code; 1005 when it had none).
    public private(set) var closeReceived: UInt16?
    /// Why the link closed on a fault of the peer's that we found (a limit, a binary message).
    private var failure: String?

    public init(limits: FrameLimits) {
        self.limits = limits
        var callbacks = wslay_event_callbacks()
        callbacks.recv_callback = { _, buf, len, _, user in FrameLink.of(user).read(into: buf!, len) }
        callbacks.send_callback = { _, data, len, _, user in FrameLink.of(user).write(data!, len) }
        callbacks.on_frame_recv_start_callback = { _, arg, user in
            FrameLink.of(user).frameStarted(arg!.pointee)
        }
        callbacks.on_msg_recv_callback = { _, arg, user in FrameLink.of(user).message(arg!.pointee) }
        let r = wslay_event_context_server_init(
            &context, &callbacks, Unmanaged.passUnretained(self).toOpaque())
        // Out of memory is wslay's only failure here: as fatal as any allocation Swift makes.
        precondition(r == 0 && context != nil, "wslay_event_context_server_init: \(r)")
        wslay_event_config_set_max_recv_msg_length(context, UInt64(limits.maxMessage))
    }

    deinit { wslay_event_context_free(context) }

    private static func of(_ user: UnsafeMutableRawPointer?) -> FrameLink {
        Unmanaged<FrameLink>.fromOpaque(user!).takeUnretainedValue()
    }

    // MARK: - Reading

    /// Bytes read from the peer: `onText` gets each whole text message in order (without copies
    /// beyond wslay's own). Control frames are answered (into `outbound`); a protocol error or
    /// a limit queues a close and stops reading (`wantsRead` false, `fault` says why).
    public func received(_ bytes: UnsafeRawBufferPointer, onText: (UnsafeRawBufferPointer) -> Void) {
        guard wslay_event_want_read(context) != 0 else { return }
        input = bytes
        inputOffset = 0
        withoutActuallyEscaping(onText) { f in
            self.onText = f
            let r = wslay_event_recv(context)
            self.onText = nil
            if r != 0 && failure == nil {
                // A frame wslay cannot parse (a control frame too long or fragmented, a length
                // not in its shortest form): it queued a close without a code.
                failure = "a malformed frame"
                closeQueued = true
            }
        }
        input = nil
        // wslay closes on its own (1002, 1007, 1009) by queueing a close and no longer reading.
        if wslay_event_want_read(context) == 0 { closeQueued = true }
    }

    /// Why the link stopped reading on a fault of the peer's, if it did: a limit of ours, or
    /// one of wslay's checks (said by the code it sent, once sent).
    public var fault: String? {
        if let failure { return failure }
        guard closeReceived == nil, wslay_event_get_read_enabled(context) == 0, closing == nil else {
            return nil
        }
        return closeCodeSent.map(Self.failureText) ?? "a frame wslay refused"
    }

    /// wslay's recv_callback: the next bytes of the current input.
    private func read(into buffer: UnsafeMutablePointer<UInt8>, _ length: Int) -> Int {
        guard let input, inputOffset < input.count else {
            wslay_event_set_error(context, Int32(WSLAY_ERR_WOULDBLOCK.rawValue))
            return -1
        }
        let n = min(length, input.count - inputOffset)
        UnsafeMutableRawPointer(buffer).copyMemory(from: input.baseAddress! + inputOffset, byteCount: n)
        inputOffset += n
        return n
    }

    private func frameStarted(_ frame: wslay_event_on_frame_recv_start_arg) {
        switch frame.opcode {
        case UInt8(WSLAY_TEXT_FRAME.rawValue), UInt8(WSLAY_BINARY_FRAME.rawValue): fragments = 1
        case UInt8(WSLAY_CONTINUATION_FRAME.rawValue): fragments += 1
        default: break
        }
        if fragments > limits.maxFragments {
            fail(CloseCode.policyViolation, "message in more than \(limits.maxFragments) frames")
        } else if wslay_event_get_queued_msg_count(context) > limits.maxQueuedControl {
            fail(CloseCode.policyViolation, "more than \(limits.maxQueuedControl) control frames unanswered")
        }
    }

    private func message(_ m: wslay_event_on_msg_recv_arg) {
        switch m.opcode {
        case UInt8(WSLAY_TEXT_FRAME.rawValue):
            guard failure == nil, closing == nil else { return }
            onText?(UnsafeRawBufferPointer(start: m.msg, count: m.msg_length))
        case UInt8(WSLAY_BINARY_FRAME.rawValue):
            fail(CloseCode.unsupportedData, "binary message: the protocol is text")
        case UInt8(WSLAY_CONNECTION_CLOSE.rawValue):
            // wslay queued its answer already (or ours was queued before).
            closeReceived = m.status_code == 0 ? CloseCode.noStatus : m.status_code
            closeQueued = true
        default:
            break  // a ping (wslay queued the pong) or a pong: the peer is alive, nothing to do
        }
    }

    /// Closes on a fault of the peer's: the close goes ahead of any data (the connection is done).
    private func fail(_ code: UInt16, _ reason: String) {
        guard failure == nil else { return }
        failure = reason
        wslay_event_shutdown_read(context)
        queueClose(code, reason)
    }

    private func queueClose(_ code: UInt16, _ reason: String) {
        closeQueued = true
        let bytes = Array(reason.utf8.prefix(123))
        // NO_MORE_MSG: a close is queued already (the peer's, answered): the first one stands.
        _ = wslay_event_queue_close(context, code, bytes, bytes.count)
    }

    static func failureText(_ code: UInt16) -> String {
        switch code {
        case CloseCode.protocolError: "a protocol error (an unmasked frame, a reserved bit or opcode)"
        case CloseCode.invalidPayload: "text that is not UTF-8"
        case CloseCode.messageTooBig: "a message over the hard cap"
        default: "closed by wslay (\(code))"
        }
    }

    // MARK: - Writing

    /// Whether the peer may still send (no close sent on a failure, none received).
    public var wantsRead: Bool { wslay_event_want_read(context) != 0 && closeReceived == nil }

    /// Frames for the socket, in order.
    public var outbound: ArraySlice<UInt8> { buffer[outboundHead...] }

    /// `n` bytes of `outbound` were written.
    public func sent(_ n: Int) {
        outboundHead += n
        precondition(outboundHead <= buffer.count, "sent \(outboundHead) of \(buffer.count) bytes")
        if outboundHead == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= limits.window * 2)
            outboundHead = 0
        }
    }

    /// Bytes to put before the first frame (the handshake's 101).
    public func prepend(_ bytes: [UInt8]) {
        precondition(buffer.isEmpty, "prepend after frames")
        buffer = bytes
    }

    /// Whether the link is ending: a close asked for, queued or sent, by us or in answer to the
    /// peer's. No line given to `produce` after it is sent, but for those before `close`.
    public var isClosing: Bool { closing != nil || closeQueued || closeReceived != nil }

    /// Whether a new line may start: no close frame is queued (wslay sends control frames ahead
    /// of data: a line after a close would never go out).
    private var acceptsLines: Bool {
        !closeQueued && closeReceived == nil && wslay_event_get_write_enabled(context) != 0
    }

    /// Whether our close frame is in `outbound` or written.
    public var closeSent: Bool { wslay_event_get_close_sent(context) != 0 }

    /// The code of the close frame we sent (1005: none); nil while none was sent.
    public var closeCodeSent: UInt16? { closeSent ? wslay_event_get_status_code_sent(context) : nil }

    /// Frames, into `outbound` up to its window, the lines of `pending` (the Session's output:
    /// each `\n` ends a message; a last line without one is framed as far as it goes and goes
    /// on at the next call) and the control frames due. Returns how many bytes of `pending` it
    /// took (the caller consumes them).
    public func produce(_ pending: UnsafeRawBufferPointer) -> Int {
        source = pending
        taken = 0
        defer { source = nil }
        while outbound.count < limits.window {
            if !lineOpen, taken < pending.count, acceptsLines {
                var message = wslay_event_fragmented_msg()
                message.opcode = UInt8(WSLAY_TEXT_FRAME.rawValue)
                message.read_callback = { _, buf, len, _, eof, user in
                    FrameLink.of(user).line(into: buf!, len, eof!)
                }
                guard wslay_event_queue_fragmented_msg(context, &message) == 0 else { break }
                lineOpen = true
            }
            if let (code, reason) = closing, !lineOpen, taken == pending.count,
                wslay_event_get_queued_msg_count(context) == 0, !closeSent
            {
                queueClose(code, reason)
            }
            let before = (taken, buffer.count)
            if wslay_event_send(context) != 0 {
                // Only our callbacks could fail it, and they do not: a link that cannot send
                // is closing.
                failure = failure ?? "wslay could not send"
                closeQueued = true
                break
            }
            // Nothing moved: the line waits for more output, or the window is full.
            if (taken, buffer.count) == before { break }
        }
        return taken
    }

    /// A ping, to find out whether the peer is still there (its pong, or anything it sends).
    public func ping() {
        guard acceptsLines else { return }
        var m = wslay_event_msg(opcode: UInt8(WSLAY_PING.rawValue), msg: nil, msg_length: 0)
        // NO_MORE_MSG only: a close is queued, and nothing more matters.
        _ = wslay_event_queue_msg(context, &m)
    }

    /// Closes with `code` and `reason` once every line given to `produce` so far is out.
    public func close(code: UInt16, reason: String) {
        guard closing == nil else { return }
        closing = (code, reason)
    }

    /// wslay's read_callback of a text message: the current line's next bytes, up to its `\n`.
    private func line(
        into out: UnsafeMutablePointer<UInt8>, _ length: Int, _ eof: UnsafeMutablePointer<Int32>
    )
        -> Int
    {
        guard let source else { return 0 }
        let available = UnsafeRawBufferPointer(rebasing: source[taken...])
        // memchr, not `firstIndex(of:)`: the generic scan cost ≈ 8 instructions a byte, 28 % of
        // a WebSocket drag's instructions (callgrind, BENCHMARKS.md, "Many browsers").
        let end =
            available.isEmpty
            ? nil
            : memchr(available.baseAddress!, 0x0A, available.count).map {
                $0 - UnsafeMutableRawPointer(mutating: available.baseAddress!)
            }
        let n = min(length, end ?? available.count)
        if n > 0 { UnsafeMutableRawPointer(out).copyMemory(from: available.baseAddress!, byteCount: n) }
        taken += n
        if let end, n == end {
            taken += 1  // the `\n`, which is not part of the message
            eof.pointee = 1
            lineOpen = false
        }
        return n
    }

    /// wslay's send_callback: frames into `outbound`, as far as the window goes.
    private func write(_ data: UnsafePointer<UInt8>, _ length: Int) -> Int {
        let room = limits.window - outbound.count
        guard room > 0 else {
            wslay_event_set_error(context, Int32(WSLAY_ERR_WOULDBLOCK.rawValue))
            return -1
        }
        let n = min(room, length)
        buffer.append(contentsOf: UnsafeBufferPointer(start: data, count: n))
        return n
    }
}

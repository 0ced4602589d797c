// One WebSocket's frames (RFC 6455, 5), without a socket: the daemon reads from the socket into
// its buffer and hands it to `received`, and writes to the socket what `outbound` holds. So this
// is a state machine like the project's others (bytes in, messages and bytes out), and the tests
// and the fuzzer drive it with byte arrays (Tests/WebSocketTests, Fuzz/FrameFuzz).
//
// Why our own frames and not wslay's, which this used until issue 44: wslay's event API
// allocated, copied and freed every message both ways (a queue entry and a buffer per message
// read and per line sent, call-backs per piece), and its frame codec, tried next, copies every
// read into a buffer of its own and unmasks a byte at a time (≈ 530 instructions for a drag's
// 40 bytes, a third of what a drag over a WebSocket still cost beyond one over the Unix socket;
// callgrind, BENCHMARKS.md, "Many browsers"). Here frames are read in the daemon's read buffer,
// unmasked there in place eight bytes at a time, and a read's messages are moved together over
// their headers as lines (`received(lines:)`), so that the Session takes them as it takes a read
// from the Unix socket; our frames, unmasked, are a header of 2 to 10 bytes and the payload,
// written straight into `outbound`.
//
// The rules (FrameLink+Reading.swift), with the close codes wslay used: a control frame over
// 125 bytes or fragmented, or a length not in its shortest form, closes without a code; a client
// frame must be masked, its reserved bits clear, its opcode known and in order (a continuation
// only inside a message, a new message only outside one), else 1002; text must be UTF-8 (1007,
// UTF8Check.swift), a close frame's reason too; a message past `maxMessage` closes 1009 from its
// first frame's header, before its payload is kept. A ping is answered with a pong, a close with
// a close (the peer's code and reason); a close frame with a code no endpoint may send, or of one
// byte, is a protocol error (1002). A binary message is refused (1003: the protocol is text);
// more than `maxFragments` frames in one message, or more than `maxQueuedControl` control frames
// waiting to be sent (pongs queued faster than they can be written: a peer that pings and does
// not read), close with 1008.
//
// Sending: the daemon's output for this connection is the Session's, lines ending in `\n`.
// Each line becomes one text message, without its `\n`, framed whole when it fits the window
// (`window` bytes ahead of the socket), so that the Session's `--max-queue` accounting stays
// what it is over the Unix socket. A line longer than the window, or not yet whole (a `list` of
// 100,000 movies that the Session words a part at a time, its ListStream), goes out as the
// frames of one message as far as it is there, never copied whole. Control frames go between
// frames, ahead of the lines. The close frame we send ourselves (`close(code:reason:)`) waits
// until every line before it is out, so that a `bye` is not lost; a close for a fault of the
// peer's goes ahead of any data (the connection is done), and after a close frame nothing more.
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
    /// What a close frame without a code counts as (and what we "sent" with one).
    public static let noStatus: UInt16 = 1005
    public static let invalidPayload: UInt16 = 1007
    public static let policyViolation: UInt16 = 1008
    public static let messageTooBig: UInt16 = 1009
    public static let internalError: UInt16 = 1011
    public static let tryAgainLater: UInt16 = 1013
}

/// The opcodes (RFC 6455, 5.2).
enum Opcode {
    static let continuation: UInt8 = 0x0
    static let text: UInt8 = 0x1
    static let binary: UInt8 = 0x2
    static let close: UInt8 = 0x8
    static let ping: UInt8 = 0x9
    static let pong: UInt8 = 0xA
}

public final class FrameLink {
    public let limits: FrameLimits

    // Reading (FrameLink+Reading.swift).
    /// False once a close was received or queued for a fault: nothing more is read.
    var readEnabled = true
    /// The frame being read; nil between frames.
    var frame: Frame?
    /// The header of a frame cut across reads, as far as it came (empty, and not allocated,
    /// while headers come whole).
    var partialHeader: [UInt8] = []
    /// A data message is open (its first frame read, its last not yet).
    var messageOpen = false
    /// Its payload so far, and its frames so far.
    var messageLength = 0
    var fragments = 0
    var utf8 = UTF8Check()
    /// The parts of a message that did not come whole in one piece (fragments, or a frame cut
    /// across reads): empty, and not allocated, while every message comes whole.
    var held: [UInt8] = []
    /// The payload of the control frame being read (at most 125 bytes).
    var control: [UInt8] = []

    // Writing.
    /// Frames for the socket, `outboundCount` bytes, of which `outboundHead` were written: raw
    /// memory, not an Array, whose appends cost a WebSocket drag ≈ 70 instructions a reply.
    var buffer: UnsafeMutableRawPointer?
    var capacity = 0
    var outboundCount = 0
    var outboundHead = 0
    /// Pongs and pings to send, ahead of the lines.
    var controls: [(opcode: UInt8, payload: [UInt8])] = []
    /// The close frame to send, ahead of everything else: its payload (empty: no code).
    var closeFrame: [UInt8]?
    /// A text message is being framed in parts: its line's `\n` has not been framed yet.
    var lineOpen = false
    /// The close to send once every line before it is out.
    var closing: (code: UInt16, reason: String)?
    /// Whether a close frame is queued or sent (ours, or our answer to the peer's).
    var closeQueued: Bool { closeFrame != nil || closeSent }
    /// Whether our close frame is in `outbound` or written.
    public private(set) var closeSent = false
    /// The code of the close frame we sent (1005: none); nil while none was sent.
    public private(set) var closeCodeSent: UInt16?

    /// The close frame the peer sent (its code; 1005 when it had none).
    public internal(set) var closeReceived: UInt16?
    /// Why the link closed on a fault of the peer's: a rule of the protocol or a limit of ours.
    public internal(set) var fault: String?

    public init(limits: FrameLimits) { self.limits = limits }

    deinit { buffer?.deallocate() }

    /// Whether the peer may still send (no close sent on a failure, none received).
    public var wantsRead: Bool { readEnabled && closeReceived == nil }

    /// Whether the link is ending: a close asked for, queued or sent, by us or in answer to the
    /// peer's. No line given to `produce` after it is sent, but for those before `close`.
    public var isClosing: Bool { closing != nil || closeQueued || closeReceived != nil }

    /// Whether a new line may start: no close frame is queued (a line after a close would never
    /// go out).
    private var acceptsLines: Bool { !closeQueued && closeReceived == nil }

    // MARK: - Writing

    /// Frames for the socket, in order (valid until the link is next used).
    public var outbound: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(
            start: buffer.map { UnsafeRawPointer($0) + outboundHead }, count: outboundCount - outboundHead)
    }

    /// `n` bytes of `outbound` were written.
    public func sent(_ n: Int) {
        outboundHead += n
        precondition(outboundHead <= outboundCount, "sent \(outboundHead) of \(outboundCount) bytes")
        if outboundHead == outboundCount {
            outboundHead = 0
            outboundCount = 0
            // What a long line grew is given back; a window's worth is kept for the next replies.
            if capacity > limits.window * 2 {
                buffer?.deallocate()
                buffer = nil
                capacity = 0
            }
        }
    }

    /// Bytes to put before the first frame (the handshake's 101).
    public func prepend(_ bytes: [UInt8]) {
        precondition(outboundCount == 0, "prepend after frames")
        bytes.withUnsafeBytes { append($0) }
    }

    /// Room for `n` more bytes after `outboundCount`: what is not yet written moves to the start
    /// of a larger buffer when it must grow.
    @inline(__always)
    private func reserve(_ n: Int) {
        guard outboundCount + n > capacity else { return }
        let pending = outboundCount - outboundHead
        let grown = max(pending + n, capacity * 2, 256)
        let new = UnsafeMutableRawPointer.allocate(byteCount: grown, alignment: 16)
        if let buffer {
            new.copyMemory(from: buffer + outboundHead, byteCount: pending)
            buffer.deallocate()
        }
        buffer = new
        capacity = grown
        outboundHead = 0
        outboundCount = pending
    }

    @inline(__always)
    private func append(_ bytes: UnsafeRawBufferPointer) {
        guard let from = bytes.baseAddress, bytes.count > 0 else { return }
        reserve(bytes.count)
        (buffer! + outboundCount).copyMemory(from: from, byteCount: bytes.count)
        outboundCount += bytes.count
    }

    /// Frames, into `outbound` up to its window, the control frames due and the lines of
    /// `pending` (the Session's output: each `\n` ends a message; a last line without one is
    /// framed as far as it goes and goes on at the next call). Returns how many bytes of
    /// `pending` it took (the caller consumes them).
    public func produce(_ pending: UnsafeRawBufferPointer) -> Int {
        writeControls()
        var taken = acceptsLines && !lineOpen ? frameShortLines(pending) : 0
        while acceptsLines, taken < pending.count, let n = frameLine(pending, from: taken) {
            taken += n
        }
        if let (code, reason) = closing, !lineOpen, taken == pending.count, !closeQueued {
            queueClose(code, Array(reason.utf8.prefix(123)))
            writeControls()
        }
        return taken
    }

    /// A ping, to find out whether the peer is still there (its pong, or anything it sends).
    public func ping() {
        guard acceptsLines else { return }
        controls.append((Opcode.ping, []))
    }

    /// Closes with `code` and `reason` once every line given to `produce` so far is out.
    public func close(code: UInt16, reason: String) {
        guard closing == nil else { return }
        closing = (code, reason)
    }

    /// Queues a close frame (`code` 0: none), unless one is queued or sent already: the first
    /// one stands. Control frames not yet sent are dropped (nothing but the close matters now).
    func queueClose(_ code: UInt16, _ reason: [UInt8]) {
        guard !closeQueued else { return }
        closeFrame = code == 0 ? [] : [UInt8(code >> 8), UInt8(code & 0xFF)] + reason
        controls.removeAll()
    }

    private var room: Int { limits.window - (outboundCount - outboundHead) }

    private func fits(_ control: Int) -> Bool { room >= control || outboundCount == outboundHead }

    /// The close frame if one is queued, else the pongs and pings, as far as the window goes (a
    /// control frame, at most 127 bytes, goes into an empty `outbound` whatever the window).
    private func writeControls() {
        guard !closeSent else { return }
        if let payload = closeFrame {
            guard fits(2 + payload.count) else { return }
            payload.withUnsafeBytes { writeFrame(Opcode.close, fin: true, $0) }
            closeFrame = nil
            closeSent = true
            closeCodeSent =
                payload.count >= 2 ? UInt16(payload[0]) << 8 | UInt16(payload[1]) : CloseCode.noStatus
            lineOpen = false
            return
        }
        var sent = 0
        while sent < controls.count, fits(2 + controls[sent].payload.count) {
            let (opcode, payload) = controls[sent]
            payload.withUnsafeBytes { writeFrame(opcode, fin: true, $0) }
            sent += 1
        }
        if sent > 0 { controls.removeFirst(sent) }
    }

    /// The common lines on their own: whole, under 64 KiB, each framed while it fits the window,
    /// with what the loop changes kept in locals (a property of the class is reloaded after every
    /// call to memchr and memcpy). Returns the bytes of `pending` taken; the rest is
    /// `frameLine`'s.
    @inline(__always)
    private func frameShortLines(_ pending: UnsafeRawBufferPointer) -> Int {
        guard let base = pending.baseAddress else { return 0 }
        let end = pending.count
        let limit = limits.window
        var taken = 0
        var count = outboundCount
        defer { outboundCount = count }
        while taken < end, let newline = memchr(base + taken, 0x0A, end - taken) {
            let start = base + taken
            let length = UnsafeRawPointer(newline) - start
            let header = length < 126 ? 2 : 4
            guard length < 65536, count - outboundHead + header + length <= limit else { break }
            if count + header + length > capacity {
                outboundCount = count
                reserve(header + length)
                count = outboundCount
            }
            let p = buffer.unsafelyUnwrapped + count
            p.storeBytes(of: 0x80 | Opcode.text, as: UInt8.self)
            if header == 2 {
                p.storeBytes(of: UInt8(truncatingIfNeeded: length), toByteOffset: 1, as: UInt8.self)
            } else {
                p.storeBytes(of: 126, toByteOffset: 1, as: UInt8.self)
                p.storeBytes(
                    of: UInt16(truncatingIfNeeded: length).bigEndian, toByteOffset: 2, as: UInt16.self)
            }
            (p + header).copyMemory(from: start, byteCount: length)
            count += header + length
            taken += length + 1
        }
        return taken
    }

    /// Frames the line of `pending` that starts at `from`, or as much of it as goes now; the
    /// bytes of `pending` it took, nil when nothing fits yet.
    private func frameLine(_ pending: UnsafeRawBufferPointer, from: Int) -> Int? {
        let start = pending.baseAddress! + from
        let available = pending.count - from
        let newline = memchr(start, 0x0A, available).map { UnsafeRawPointer($0) - start }
        let length = newline ?? available
        let room = room
        let opcode = lineOpen ? Opcode.continuation : Opcode.text
        if newline != nil, Self.headerSize(length) + length <= room {
            writeFrame(opcode, fin: true, UnsafeRawBufferPointer(start: start, count: length))
            lineOpen = false
            return length + 1
        }
        // A whole line waits for room, unless it is longer than the window: that one, and a
        // line not yet whole, go as far as they fit, as fragments of their message.
        guard newline == nil || outboundCount == outboundHead else { return nil }
        let part = min(length, room - Self.headerSize(room))
        guard part > 0 else { return nil }
        writeFrame(opcode, fin: false, UnsafeRawBufferPointer(start: start, count: part))
        lineOpen = true
        return part
    }

    /// A frame's header length for a payload of `length` bytes (a server's: not masked).
    static func headerSize(_ length: Int) -> Int { length < 126 ? 2 : length < 65536 ? 4 : 10 }

    /// One whole frame into `outbound`: its header (a server's frame is not masked: 2 bytes, 4
    /// past 125 bytes of payload, 10 past 65,535), then its payload.
    private func writeFrame(_ opcode: UInt8, fin: Bool, _ payload: UnsafeRawBufferPointer) {
        let length = payload.count
        let header = Self.headerSize(length)
        reserve(header + length)
        let p = buffer! + outboundCount
        p.storeBytes(of: (fin ? 0x80 : 0) | opcode, as: UInt8.self)
        switch header {
        case 2:
            p.storeBytes(of: UInt8(length), toByteOffset: 1, as: UInt8.self)
        case 4:
            p.storeBytes(of: 126, toByteOffset: 1, as: UInt8.self)
            p.storeBytes(of: UInt16(length).bigEndian, toByteOffset: 2, as: UInt16.self)
        default:
            p.storeBytes(of: 127, toByteOffset: 1, as: UInt8.self)
            p.storeBytes(of: UInt64(length).bigEndian, toByteOffset: 2, as: UInt64.self)
        }
        if let from = payload.baseAddress, length > 0 {
            (p + header).copyMemory(from: from, byteCount: length)
        }
        outboundCount += header + length
    }
}

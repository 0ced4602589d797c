// FrameLink's reading side: each frame's header parsed and checked against the rules of RFC
// 6455 (FrameLink.swift says which), its payload unmasked in place in the caller's buffer,
// fragments joined, control frames answered.

#if canImport(Glibc)
    import Glibc
#endif

extension FrameLink {
    /// A frame being read: its header, and how far its payload came.
    struct Frame {
        var opcode: UInt8
        var fin: Bool
        /// Payload bytes still to come.
        var remaining: UInt64
        /// The masking key, as its four bytes lie in memory.
        var key: UInt32
        /// Payload bytes unmasked so far (which key byte the next one takes).
        var offset: Int
    }

    /// Bytes read from the peer, as `received(_:onText:)` takes them, the messages handed on as
    /// lines: each followed by a `\n`, moved down in place over the frames' headers (a client's
    /// frame has at least six bytes of header, room for the `\n`), so that `onLines` gets a
    /// read's messages as one run of lines, as a read from the Unix socket brings them (issue
    /// 44: the same lane for both). A message that did not come whole in this read ends the run
    /// (it is handed on by itself, then its `\n`). A raw `\n` inside a message is a line end
    /// there, as it would be on the Unix socket; an empty message is a blank line.
    public func received(
        lines bytes: UnsafeMutableRawBufferPointer, onLines: (UnsafeRawBufferPointer) -> Void
    ) {
        guard let base = bytes.baseAddress else { return }
        var sink = LinesSink(base: base, count: bytes.count)
        read(bytes, &sink, onLines)
        sink.flush(onLines)
    }

    /// Bytes read from the peer, unmasked here in place: `onText` gets each whole text message
    /// in order, without a copy when it came in one read. Control frames are answered (into
    /// `outbound`, at the next `produce`); a protocol error or a limit queues a close and stops
    /// reading (`wantsRead` false, `fault` says why).
    public func received(_ bytes: UnsafeMutableRawBufferPointer, onText: (UnsafeRawBufferPointer) -> Void) {
        var sink = TextSink()
        read(bytes, &sink, onText)
    }

    /// The frames of `bytes`, their whole messages to `sink`, which hands them to `out` (passed
    /// down with each message, not kept in the sink, where its context would be boxed: an
    /// allocation a read). Generic, so that each way of handing messages on is compiled into the
    /// loop.
    @inline(__always)
    private func read<Sink: MessageSink>(
        _ bytes: UnsafeMutableRawBufferPointer, _ sink: inout Sink, _ out: (UnsafeRawBufferPointer) -> Void
    ) {
        guard let base = bytes.baseAddress else { return }
        let count = bytes.count
        var at = 0
        while readEnabled {
            if frame == nil {
                guard at < count else { return }
                if let next = whole(base, at, count, &sink, out) {
                    at = next
                    continue
                }
                at += readHeader(base + at, count - at)
                // The header goes on in the next read, or the frame was refused.
                guard frame != nil else { return }
            }
            // Worked on as a local and stored back once (a property of the class is reloaded
            // after every call).
            var f = frame.unsafelyUnwrapped
            let n = Int(min(f.remaining, UInt64(count - at)))
            guard n > 0 || f.remaining == 0 else { return }
            Self.unmask(base + at, n, key: f.key, offset: f.offset)
            f.offset &+= n
            f.remaining -= UInt64(n)
            frame = f.remaining == 0 ? nil : f
            take(UnsafeRawBufferPointer(start: base + at, count: n), f, &sink, out)
            at += n
        }
    }

    /// The common frame on its own: a whole text message in one short frame, all of it in this
    /// read (a drag's, a browser's every request). Checked and handed on as `readHeader`,
    /// `started` and `take` would, in a fraction of their instructions; the offset after it, or
    /// nil for any other frame (they take it then, nothing of it touched).
    @inline(__always)
    private func whole<Sink: MessageSink>(
        _ base: UnsafeMutableRawPointer, _ at: Int, _ count: Int, _ sink: inout Sink,
        _ out: (UnsafeRawBufferPointer) -> Void
    ) -> Int? {
        guard at + 6 <= count, partialHeader.isEmpty, !messageOpen, closing == nil,
            base.load(fromByteOffset: at, as: UInt8.self) == 0x80 | Opcode.text
        else { return nil }
        let second = base.load(fromByteOffset: at + 1, as: UInt8.self)
        let length = Int(second & 0x7F)
        guard second & 0x80 != 0, length < 126, at + 6 + length <= count, length <= limits.maxMessage,
            limits.maxFragments >= 1, controls.count <= limits.maxQueuedControl
        else { return nil }
        let payload = base + at + 6
        Self.unmask(
            payload, length, key: base.loadUnaligned(fromByteOffset: at + 2, as: UInt32.self), offset: 0)
        var check = UTF8Check()
        guard check.check(UnsafeRawBufferPointer(start: payload, count: length)), check.complete else {
            refuse(CloseCode.invalidPayload, "text that is not UTF-8")
            return at + 6 + length
        }
        sink.message(UnsafeRawBufferPointer(start: payload, count: length), out)
        return at + 6 + length
    }

    /// Takes the header that starts at `p` (`available` bytes there), or as much of it as came;
    /// `frame` is set once it is whole and passes. Returns the bytes taken.
    private func readHeader(_ p: UnsafeMutableRawPointer, _ available: Int) -> Int {
        if partialHeader.isEmpty, available >= 2 {
            let length = Self.headerLength(p.load(fromByteOffset: 1, as: UInt8.self))
            if available >= length {
                started(UnsafeRawPointer(p))
                return length
            }
        }
        // Cut across reads (rare: a read ends inside a header): gathered until whole.
        var used = 0
        while used < available {
            partialHeader.append(p.load(fromByteOffset: used, as: UInt8.self))
            used += 1
            if partialHeader.count >= 2, partialHeader.count == Self.headerLength(partialHeader[1]) {
                partialHeader.withUnsafeBytes { started($0.baseAddress!) }
                partialHeader.removeAll(keepingCapacity: true)
                break
            }
        }
        return used
    }

    /// A header's length from its second byte: 2, the extended length's 2 or 8, the key's 4.
    @inline(__always)
    static func headerLength(_ second: UInt8) -> Int {
        let length = second & 0x7F
        return 2 + (length == 126 ? 2 : length == 127 ? 8 : 0) + (second & 0x80 != 0 ? 4 : 0)
    }

    /// XORs `count` bytes at `p` with the masking key (RFC 6455, 5.3), eight at a time, the
    /// key turned to start at payload byte `offset`.
    @inline(__always)
    static func unmask(_ p: UnsafeMutableRawPointer, _ count: Int, key: UInt32, offset: Int) {
        guard count > 0, key != 0 else { return }
        // The key's bytes from `offset`'s on, as they lie in memory, twice over.
        let turn = UInt32(truncatingIfNeeded: offset & 3) &* 8
        #if _endian(little)
            let turned = turn == 0 ? key : key >> turn | key << (32 &- turn)
        #else
            let turned = turn == 0 ? key : key << turn | key >> (32 &- turn)
        #endif
        let pattern = UInt64(turned) | UInt64(turned) << 32
        var i = 0
        while i + 8 <= count {
            p.storeBytes(
                of: p.loadUnaligned(fromByteOffset: i, as: UInt64.self) ^ pattern, toByteOffset: i,
                as: UInt64.self)
            i += 8
        }
        // The last seven bytes at most: four, two, one (the pattern repeats every four bytes, so
        // each step starts where the key does).
        if i + 4 <= count {
            p.storeBytes(
                of: p.loadUnaligned(fromByteOffset: i, as: UInt32.self) ^ turned, toByteOffset: i,
                as: UInt32.self)
            i += 4
        }
        var rest = turned.littleEndian  // its lowest byte the one in memory first
        if i + 2 <= count {
            let two = UInt16(truncatingIfNeeded: rest).littleEndian
            p.storeBytes(
                of: p.loadUnaligned(fromByteOffset: i, as: UInt16.self) ^ two, toByteOffset: i,
                as: UInt16.self)
            rest >>= 16
            i += 2
        }
        if i < count {
            p.storeBytes(
                of: p.load(fromByteOffset: i, as: UInt8.self) ^ UInt8(truncatingIfNeeded: rest),
                toByteOffset: i,
                as: UInt8.self)
        }
    }

    /// A piece of frame `f`'s payload, unmasked (the whole payload when the frame came whole;
    /// `f` as it is after the piece).
    @inline(__always)
    private func take<Sink: MessageSink>(
        _ piece: UnsafeRawBufferPointer, _ f: Frame, _ sink: inout Sink,
        _ out: (UnsafeRawBufferPointer) -> Void
    ) {
        let (opcode, fin, done) = (f.opcode, f.fin, f.remaining == 0)
        if opcode >= Opcode.close {
            control.append(contentsOf: piece)
            if done { controlFrame(opcode) }
            return
        }
        guard utf8.check(piece) else { return refuse(CloseCode.invalidPayload, "text that is not UTF-8") }
        guard done && fin else {
            held.append(contentsOf: piece)
            return
        }
        guard utf8.complete else { return refuse(CloseCode.invalidPayload, "text that is not UTF-8") }
        messageOpen = false
        // Nothing for the Session once it is being closed (its lines before the close stand).
        let deliver = closing == nil
        if held.isEmpty {
            if deliver { sink.message(piece, out) }
            return
        }
        held.append(contentsOf: piece)
        if deliver { held.withUnsafeBytes { sink.message($0, out) } }
        // A message's worth is kept for the next one, unless it was a long one.
        held.removeAll(keepingCapacity: held.capacity <= 4096)
    }

    /// A whole header at `h`: checked against the rules and the limits; `frame` is set when the
    /// frame is read on (else the link is closing).
    private func started(_ h: UnsafeRawPointer) {
        let first = h.load(as: UInt8.self)
        let second = h.load(fromByteOffset: 1, as: UInt8.self)
        let (fin, rsv, opcode) = (first & 0x80 != 0, first >> 4 & 7, first & 0x0F)
        var length = UInt64(second & 0x7F)
        var at = 2
        // What wslay's frame codec refused before issue 44, closing without a code (as the
        // daemon still does): a control frame over 125 bytes or fragmented, a length not in its
        // shortest form.
        if opcode & 0x8 != 0, !fin || length > 125 { return refuse(0, "a malformed frame") }
        if length == 126 {
            length =
                UInt64(h.load(fromByteOffset: 2, as: UInt8.self)) << 8
                | UInt64(h.load(fromByteOffset: 3, as: UInt8.self))
            at = 4
            guard length >= 126 else { return refuse(0, "a malformed frame") }
        } else if length == 127 {
            length = 0
            for i in 2..<10 { length = length << 8 | UInt64(h.load(fromByteOffset: i, as: UInt8.self)) }
            at = 10
            guard length >= 65536, length >> 63 == 0 else { return refuse(0, "a malformed frame") }
        }
        guard rsv == 0, second & 0x80 != 0 else {
            return refuse(CloseCode.protocolError, rsv == 0 ? "an unmasked frame" : "a reserved bit set")
        }
        switch opcode {
        case Opcode.close, Opcode.ping, Opcode.pong:
            control.removeAll(keepingCapacity: true)
        case Opcode.text, Opcode.binary, Opcode.continuation:
            guard messageOpen == (opcode == Opcode.continuation) else {
                return refuse(
                    CloseCode.protocolError,
                    messageOpen ? "a new message inside a fragmented one" : "a continuation outside a message"
                )
            }
            if !messageOpen {
                messageOpen = true
                messageLength = 0
                fragments = 0
                utf8 = UTF8Check()
            }
            fragments += 1
            guard UInt64(messageLength) + length <= UInt64(limits.maxMessage) else {
                return refuse(CloseCode.messageTooBig, "a message over the hard cap")
            }
            messageLength += Int(length)
            if opcode == Opcode.binary {
                return refuse(CloseCode.unsupportedData, "binary message: the protocol is text")
            }
            if fragments > limits.maxFragments {
                return refuse(CloseCode.policyViolation, "message in more than \(limits.maxFragments) frames")
            }
        default:
            return refuse(CloseCode.protocolError, "a reserved opcode (\(opcode))")
        }
        if controls.count > limits.maxQueuedControl {
            return refuse(
                CloseCode.policyViolation, "more than \(limits.maxQueuedControl) control frames unanswered")
        }
        frame = Frame(
            opcode: opcode, fin: fin, remaining: length,
            key: h.loadUnaligned(fromByteOffset: at, as: UInt32.self), offset: 0)
    }

    /// A whole control frame (its payload in `control`).
    private func controlFrame(_ opcode: UInt8) {
        switch opcode {
        case Opcode.ping:
            // Once a close is queued, nothing but the close is sent.
            if !closeQueued { controls.append((Opcode.pong, control)) }
        case Opcode.close:
            closeFrameReceived()
        default:
            break  // a pong: the peer is alive, nothing to do
        }
    }

    /// The peer's close: answered with its code and reason (the close handshake), unless a
    /// close of ours is queued or sent already; nothing more is read.
    private func closeFrameReceived() {
        var code: UInt16 = 0
        if !control.isEmpty {
            guard control.count >= 2 else {
                return refuse(CloseCode.protocolError, "a close frame of one byte")
            }
            code = UInt16(control[0]) << 8 | UInt16(control[1])
            guard Self.mayBeReceived(code) else {
                return refuse(CloseCode.protocolError, "a close code no endpoint may send (\(code))")
            }
            var check = UTF8Check()
            let reason = control.withUnsafeBytes { check.check(UnsafeRawBufferPointer(rebasing: $0[2...])) }
            guard reason, check.complete else {
                return refuse(CloseCode.invalidPayload, "a close reason that is not UTF-8")
            }
        }
        closeReceived = code == 0 ? CloseCode.noStatus : code
        readEnabled = false
        queueClose(code, Array(control.dropFirst(2)))
    }

    /// The codes a close frame may carry (RFC 6455, 7.4): 1005, 1006 and 1015 are never sent,
    /// 1004 and 1012 to 2999 are reserved, 3000 to 4999 are the applications'.
    static func mayBeReceived(_ code: UInt16) -> Bool {
        switch code {
        case 1000...1003, 1007...1011, 3000...4999: true
        default: false
        }
    }

    /// Closes on a fault of the peer's (`code` 0: a close frame without a code): the close goes
    /// ahead of any data, and nothing more is read.
    func refuse(_ code: UInt16, _ reason: String) {
        readEnabled = false
        guard fault == nil else { return }
        fault = reason
        // The reason goes with the limits of ours (1003, 1008), as before issue 44; a frame that
        // breaks the RFC is closed with its code alone (1002, 1007, 1009), as wslay closed it.
        let told = code == CloseCode.unsupportedData || code == CloseCode.policyViolation
        queueClose(code, told ? Array(reason.utf8.prefix(123)) : [])
    }
}

/// Where `FrameLink.read` hands whole messages, and how they go on to `out`.
protocol MessageSink {
    mutating func message(_ message: UnsafeRawBufferPointer, _ out: (UnsafeRawBufferPointer) -> Void)
}

/// Each message to `out` (the tests', the fuzzer's).
struct TextSink: MessageSink {
    func message(_ message: UnsafeRawBufferPointer, _ out: (UnsafeRawBufferPointer) -> Void) { out(message) }
}

/// The messages as lines, moved together in place at the start of the read's buffer
/// (`FrameLink.received(lines:)`); `run` bytes of lines are there, not yet handed on.
struct LinesSink: MessageSink {
    let base: UnsafeMutableRawPointer
    let count: Int
    var run = 0

    init(base: UnsafeMutableRawPointer, count: Int) {
        self.base = base
        self.count = count
    }

    @inline(__always)
    mutating func message(_ message: UnsafeRawBufferPointer, _ out: (UnsafeRawBufferPointer) -> Void) {
        let at = message.baseAddress.map { UnsafeRawPointer(base).distance(to: $0) } ?? -1
        if at > run && at + message.count <= count {
            if at != run { memmove(base + run, message.baseAddress!, message.count) }
            base.storeBytes(of: 0x0A, toByteOffset: run + message.count, as: UInt8.self)
            run += message.count + 1
            return
        }
        // Not in this read's bytes (joined from pieces), or with no room before it (its header
        // came in the read before): by itself.
        flush(out)
        out(message)
        withUnsafeBytes(of: UInt8(0x0A)) { out($0) }
    }

    mutating func flush(_ out: (UnsafeRawBufferPointer) -> Void) {
        if run > 0 { out(UnsafeRawBufferPointer(start: base, count: run)) }
        run = 0
    }
}

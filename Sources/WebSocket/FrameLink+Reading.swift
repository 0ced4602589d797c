// FrameLink's reading side: wslay's frame codec parses each frame's header and unmasks its
// payload in its own input buffer, and this applies the rules of RFC 6455 the codec leaves to
// its caller (FrameLink.swift says which), joins fragments, and answers control frames.
import CWslay

extension FrameLink {
    /// Bytes read from the peer: `onText` gets each whole text message in order, without a copy
    /// when it came in one piece. Control frames are answered (into `outbound`, at the next
    /// `produce`); a protocol error or a limit queues a close and stops reading (`wantsRead`
    /// false, `fault` says why).
    public func received(_ bytes: UnsafeRawBufferPointer, onText: (UnsafeRawBufferPointer) -> Void) {
        guard readEnabled else { return }
        input = bytes
        inputOffset = 0
        defer { input = nil }
        while readEnabled {
            var iocb = wslay_frame_iocb()
            let r = wslay_frame_recv(context, &iocb)
            if r == Int(WSLAY_ERR_WANT_READ.rawValue) { return }
            guard r >= 0 else {
                // A frame the codec cannot parse (a control frame over 125 bytes or fragmented,
                // a length not in its shortest form): closed without a code, as before.
                return refuse(0, "a malformed frame")
            }
            take(iocb, onText)
        }
    }

    /// wslay's recv_callback: the next bytes of the current input; none (0) makes it wait for
    /// the next read.
    func read(into buffer: UnsafeMutablePointer<UInt8>, _ length: Int) -> Int {
        guard let input, inputOffset < input.count else { return 0 }
        let n = min(length, input.count - inputOffset)
        UnsafeMutableRawPointer(buffer).copyMemory(from: input.baseAddress! + inputOffset, byteCount: n)
        inputOffset += n
        return n
    }

    /// A piece of a frame's payload, unmasked (the whole payload when the frame came whole):
    /// the first piece of a frame starts it (`started`).
    @inline(__always)
    private func take(_ iocb: wslay_frame_iocb, _ onText: (UnsafeRawBufferPointer) -> Void) {
        if frame == nil, !started(iocb) { return }
        let piece = UnsafeRawBufferPointer(start: iocb.data, count: iocb.data_length)
        frame!.remaining -= UInt64(piece.count)
        let done = frame!.remaining == 0
        let (opcode, fin) = (frame!.opcode, frame!.fin)
        if done { frame = nil }
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
            if deliver { onText(piece) }
            return
        }
        held.append(contentsOf: piece)
        if deliver { held.withUnsafeBytes { onText($0) } }
        // A message's worth is kept for the next one, unless it was a long one.
        held.removeAll(keepingCapacity: held.capacity <= 4096)
    }

    /// A frame's first piece: its header checked against the rules and the limits. Whether it
    /// is read on (else the link is closing).
    private func started(_ iocb: wslay_frame_iocb) -> Bool {
        guard iocb.rsv == 0, iocb.mask != 0 else {
            refuse(CloseCode.protocolError, iocb.rsv == 0 ? "an unmasked frame" : "a reserved bit set")
            return false
        }
        let opcode = iocb.opcode
        switch opcode {
        case Opcode.close, Opcode.ping, Opcode.pong:
            control.removeAll(keepingCapacity: true)
        case Opcode.text, Opcode.binary, Opcode.continuation:
            guard messageOpen == (opcode == Opcode.continuation) else {
                refuse(
                    CloseCode.protocolError,
                    messageOpen ? "a new message inside a fragmented one" : "a continuation outside a message"
                )
                return false
            }
            if !messageOpen {
                messageOpen = true
                messageLength = 0
                fragments = 0
                utf8 = UTF8Check()
            }
            fragments += 1
            guard UInt64(messageLength) + iocb.payload_length <= UInt64(limits.maxMessage) else {
                refuse(CloseCode.messageTooBig, "a message over the hard cap")
                return false
            }
            messageLength += Int(iocb.payload_length)
            if opcode == Opcode.binary {
                refuse(CloseCode.unsupportedData, "binary message: the protocol is text")
                return false
            }
            if fragments > limits.maxFragments {
                refuse(CloseCode.policyViolation, "message in more than \(limits.maxFragments) frames")
                return false
            }
        default:
            refuse(CloseCode.protocolError, "a reserved opcode (\(opcode))")
            return false
        }
        if controls.count > limits.maxQueuedControl {
            refuse(
                CloseCode.policyViolation, "more than \(limits.maxQueuedControl) control frames unanswered")
            return false
        }
        frame = (opcode, iocb.fin != 0, iocb.payload_length)
        return true
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
        queueClose(code, code == 0 ? [] : Array(reason.utf8.prefix(123)))
    }
}

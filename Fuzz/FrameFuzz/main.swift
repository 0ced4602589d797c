// libFuzzer target: the WebSocket frame path (issues 43, 44) without the sockets: WebSocket's
// FrameLink reading the bytes a browser sends, and the Session's lines going back (each
// message received is answered with one line, as a `ping` would be). The first byte picks how the
// input is cut into reads and the second the outbound window; the rest is the client's bytes.
// Invariants checked (a violation is a crash libFuzzer reports):
// - the messages delivered, whether the peer broke the protocol, the close frame sent and
//   whether one was received do not depend on how the input is cut into reads (the bytes
//   written may: a pong answered before a close arrives in a later read is written, one queued
//   in the same read as the close is not, as RFC 6455 allows), but for a flood of control
//   frames, which is counted per read: a read with more pings than `maxQueuedControl` closes
//   1008 where smaller reads have their pongs written in between, so then the messages of one
//   run need only be a prefix of the other's;
// - read as lines (`received(lines:)`, the daemon's way), the same cut gives the same messages,
//   each followed by a `\n`, in order;
// - every message delivered is UTF-8 and at most the hard cap; none after the link stopped
//   reading (a fault, a close received);
// - what the link writes is server frames (unmasked, lengths in their shortest form), control
//   frames of at most 125 bytes and never fragmented, nothing after a close frame;
// - the text messages written are the lines given, in order, each whole (continuations joined),
//   up to where a close cut them off; `outbound` never holds more than the window (or one
//   control frame).
// Build and run: `make fuzz` (see Fuzz/FrameFuzz/build.sh).
import WebSocket

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size)
    guard input.count >= 2 else { return 0 }
    let piece = Int(input[0]) + 1
    let window = 16 + Int(input[1]) * 8
    let body = Array(input[2...])
    let whole = run(body, piece: body.count + 1, window: window)
    let split = run(body, piece: piece, window: window)
    if whole.flooded || split.flooded {
        let (short, long) = whole.messages.count <= split.messages.count ? (whole, split) : (split, whole)
        precondition(
            Array(long.messages.prefix(short.messages.count)) == short.messages, "\(whole)\n\(split)")
    } else {
        precondition(whole == split, "the outcome depends on how the input is cut:\n\(whole)\n\(split)")
    }
    // Without replies to write, its pongs go out sooner: a flood is a flood in some runs only.
    let lines = run(body, piece: piece, window: window, asLines: true)
    if !whole.flooded, !split.flooded, !lines.flooded {
        let expected = split.messages.flatMap { message -> [UInt8] in message + [0x0A] }
        precondition(lines.lines == expected, "read as lines, not the messages: \(lines.lines) \(expected)")
    }
    return 0
}

struct Outcome: Equatable {
    var messages: [[UInt8]] = []
    var faulted = false
    var closeSent: UInt16?
    var closeReceived = false
    /// Closed for a flood of control frames (counted per read).
    var flooded = false
    /// Read as lines: what the link handed on.
    var lines: [UInt8] = []
}

let maxMessage = 300

func run(_ bytes: [UInt8], piece: Int, window: Int, asLines: Bool = false) -> Outcome {
    var limits = FrameLimits(maxMessage: maxMessage)
    limits.window = window
    limits.maxFragments = 8
    limits.maxQueuedControl = 4
    let link = FrameLink(limits: limits)
    var outcome = Outcome()
    var written: [UInt8] = []
    var lines: [UInt8] = []
    var taken = 0
    var i = 0
    while i < bytes.count {
        let end = min(i + piece, bytes.count)
        let stopped = !link.wantsRead
        var read = Array(bytes[i..<end])  // unmasked in place, as the daemon's read buffer
        read.withUnsafeMutableBytes { raw in
            if asLines {
                link.received(lines: raw) { outcome.lines += $0 }
                return
            }
            link.received(raw) { message in
                precondition(!stopped, "a message after the link stopped reading")
                precondition(message.count <= maxMessage, "a message over the hard cap: \(message.count)")
                let m = Array(message)
                precondition(String(validating: m, as: UTF8.self) != nil, "a message that is not UTF-8")
                outcome.messages.append(m)
                // The reply: the message's length and first bytes, no raw newline in it.
                lines +=
                    Array("{\"ok\":\(m.count),\"echo\":\"".utf8) + m.prefix(8).map { $0 == 0x0A ? 0x20 : $0 }
                    + Array("\"}\n".utf8)
            }
        }
        i = end
        // Drain, as the daemon does after every read: frame the lines, write everything.
        while true {
            let n = lines[taken...].withUnsafeBytes { link.produce($0) }
            taken += n
            // A control frame (at most 127 bytes) goes into an empty `outbound` whatever the window.
            precondition(link.outbound.count <= max(window, 127), "outbound over its window")
            let out = link.outbound
            written += out
            link.sent(out.count)
            if n == 0 && out.isEmpty { break }
        }
    }
    outcome.closeSent = link.closeCodeSent
    outcome.faulted = link.fault != nil
    outcome.flooded = link.fault?.contains("control frames") == true
    outcome.closeReceived = link.closeReceived != nil
    precondition(!outcome.faulted || outcome.closeSent != nil, "a fault without a close frame")
    checkFrames(written, lines: lines)
    return outcome
}

/// What the link wrote: server frames, control frames small and whole, nothing after a close,
/// the text messages the lines given, in order, up to a close.
func checkFrames(_ bytes: [UInt8], lines: [UInt8]) {
    let expected = lines.split(separator: 0x0A, omittingEmptySubsequences: false).dropLast().map(Array.init)
    var messages: [[UInt8]] = []
    var open: [UInt8]?
    var closed = false
    var i = 0
    while i < bytes.count {
        precondition(!closed, "a frame after a close frame")
        precondition(i + 2 <= bytes.count, "a frame cut short")
        let fin = bytes[i] & 0x80 != 0
        let opcode = bytes[i] & 0x0F
        precondition(bytes[i] & 0x70 == 0, "a reserved bit set")
        precondition(bytes[i + 1] & 0x80 == 0, "a server frame masked")
        var length = Int(bytes[i + 1] & 0x7F)
        var at = i + 2
        if length == 126 {
            length = Int(bytes[at]) << 8 | Int(bytes[at + 1])
            precondition(length >= 126, "a length not in its shortest form")
            at += 2
        } else if length == 127 {
            length = bytes[at..<at + 8].reduce(0) { $0 << 8 | Int($1) }
            precondition(length >= 65536, "a length not in its shortest form")
            at += 8
        }
        precondition(at + length <= bytes.count, "a frame cut short")
        let payload = Array(bytes[at..<at + length])
        i = at + length
        switch opcode {
        case 0x8, 0x9, 0xA:
            precondition(fin && length <= 125, "a control frame fragmented or over 125 bytes")
            if opcode == 0x8 { closed = true }
        case 0x1:
            precondition(open == nil, "a text frame inside a message")
            if fin { messages.append(payload) } else { open = payload }
        case 0x0:
            precondition(open != nil, "a continuation outside a message")
            open! += payload
            if fin {
                messages.append(open!)
                open = nil
            }
        default:
            preconditionFailure("opcode \(opcode)")
        }
    }
    precondition(messages.count <= expected.count, "more messages than lines")
    precondition(Array(expected.prefix(messages.count)) == messages, "the messages are not the lines")
    precondition(closed || messages.count == expected.count, "lines lost without a close")
}

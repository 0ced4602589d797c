// A WebSocket client's side of frames (RFC 6455, 5.2), written out by hand for the tests: what
// a browser sends (masked) and reads. Deliberately independent of FrameLink's code, so that
// the tests check the link against the RFC, not against itself.
enum TestFrames {
    struct Frame: Equatable {
        var fin: Bool
        var opcode: UInt8
        var payload: [UInt8]

        var text: String { String(decoding: payload, as: UTF8.self) }
        /// A close frame's code (nil: none).
        var closeCode: UInt16? { payload.count >= 2 ? UInt16(payload[0]) << 8 | UInt16(payload[1]) : nil }
        var closeReason: String { String(decoding: payload.dropFirst(2), as: UTF8.self) }
    }

    static let text: UInt8 = 1
    static let binary: UInt8 = 2
    static let continuation: UInt8 = 0
    static let close: UInt8 = 8
    static let ping: UInt8 = 9
    static let pong: UInt8 = 10

    /// One frame as a client sends it: masked (unless `masked` is false), with the length in its
    /// shortest form.
    static func encode(
        _ opcode: UInt8, _ payload: [UInt8], fin: Bool = true, masked: Bool = true, rsv: UInt8 = 0,
        mask: [UInt8] = [0x12, 0x34, 0x56, 0x78]
    ) -> [UInt8] {
        var out: [UInt8] = [(fin ? 0x80 : 0) | rsv << 4 | opcode]
        let m: UInt8 = masked ? 0x80 : 0
        if payload.count < 126 {
            out.append(m | UInt8(payload.count))
        } else if payload.count < 65536 {
            out.append(m | 126)
            out += [UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            out.append(m | 127)
            for shift in stride(from: 56, through: 0, by: -8) {
                out.append(UInt8((payload.count >> shift) & 0xFF))
            }
        }
        guard masked else { return out + payload }
        out += mask
        for (i, b) in payload.enumerated() { out.append(b ^ mask[i % 4]) }
        return out
    }

    static func text(_ s: String, fin: Bool = true) -> [UInt8] { encode(text, Array(s.utf8), fin: fin) }

    static func close(_ code: UInt16, _ reason: String = "") -> [UInt8] {
        encode(close, [UInt8(code >> 8), UInt8(code & 0xFF)] + Array(reason.utf8))
    }

    /// The server's frames in `bytes` (unmasked), and the bytes of a frame cut short at the end.
    static func decode(_ bytes: some Collection<UInt8>) -> (frames: [Frame], rest: Int) {
        let b = Array(bytes)
        var frames: [Frame] = []
        var i = 0
        while i + 2 <= b.count {
            let fin = b[i] & 0x80 != 0
            let opcode = b[i] & 0x0F
            precondition(b[i + 1] & 0x80 == 0, "a server frame is masked")
            var length = Int(b[i + 1] & 0x7F)
            var at = i + 2
            if length == 126 {
                guard at + 2 <= b.count else { break }
                length = Int(b[at]) << 8 | Int(b[at + 1])
                at += 2
            } else if length == 127 {
                guard at + 8 <= b.count else { break }
                length = b[at..<at + 8].reduce(0) { $0 << 8 | Int($1) }
                at += 8
            }
            guard at + length <= b.count else { break }
            frames.append(Frame(fin: fin, opcode: opcode, payload: Array(b[at..<at + length])))
            i = at + length
        }
        return (frames, b.count - i)
    }

    /// Whole messages from frames: (opcode, payload), continuations joined; control frames as
    /// they are.
    static func messages(_ frames: [Frame]) -> [(opcode: UInt8, payload: [UInt8])] {
        var out: [(UInt8, [UInt8])] = []
        var open: (UInt8, [UInt8])?
        for f in frames {
            if f.opcode >= 8 {
                out.append((f.opcode, f.payload))
            } else if f.opcode == continuation {
                open!.1 += f.payload
                if f.fin {
                    out.append(open!)
                    open = nil
                }
            } else if f.fin {
                out.append((f.opcode, f.payload))
            } else {
                open = (f.opcode, f.payload)
            }
        }
        return out
    }
}

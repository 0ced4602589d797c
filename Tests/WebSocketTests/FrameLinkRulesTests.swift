import XCTest

@testable import WebSocket

/// FrameLink's own frames (issue 44): the rules of RFC 6455 it applies, each
/// where it is a rule exhaustively (every opcode, every reserved bit, every close code, every
/// cut of the input), and the frames it writes.
final class FrameLinkRulesTests: XCTestCase {
    typealias Harness = FrameLinkTests.Harness

    /// A stream with every kind of frame a browser sends: whole messages short and long
    /// (the 2-, 4- and 10-byte headers), a fragmented one with a ping and a pong between its
    /// fragments, empty frames, and text with characters of every length.
    static let stream: [UInt8] =
        TestFrames.text(#"{"op":"ping"}"#) + TestFrames.text(String(repeating: "x", count: 126))
        + TestFrames.text(String(repeating: "é", count: 40_000)) + TestFrames.text("", fin: false)
        + TestFrames.encode(TestFrames.continuation, Array(Array("€".utf8).prefix(2)), fin: false)
        + TestFrames.encode(TestFrames.ping, Array("are you there".utf8))
        + TestFrames.encode(TestFrames.continuation, Array(Array("€😀".utf8).dropFirst(2)), fin: false)
        + TestFrames.encode(TestFrames.pong, [])
        + TestFrames.encode(TestFrames.continuation, [], fin: true) + TestFrames.text("")
        + TestFrames.encode(TestFrames.text, Array("abc".utf8), mask: [0, 0, 0, 0])

    static let expected = [
        #"{"op":"ping"}"#, String(repeating: "x", count: 126), String(repeating: "é", count: 40_000), "€😀",
        "",
        "abc",
    ]

    /// The same messages and the same frames written, however the stream is cut in two, and
    /// when it comes a byte at a time.
    func testFramesCutAtEveryOffset() {
        let whole = Harness(limits: FrameLimits(maxMessage: 100_000))
        whole.receive(Self.stream)
        whole.produce()
        XCTAssertTrue(whole.messages == Self.expected, "\(whole.messages.map(\.count))")
        XCTAssertEqual(whole.frames.map(\.opcode), [TestFrames.pong])
        XCTAssertNil(whole.link.fault)
        // Every cut near the headers (the first 400 bytes and the last 400), and a sample of the
        // long message's middle.
        let count = Self.stream.count
        let cuts =
            Array(0...400) + Array(stride(from: 401, to: count - 400, by: 997)) + Array((count - 400)...count)
        for cut in cuts {
            let h = Harness(limits: FrameLimits(maxMessage: 100_000))
            h.receive(Array(Self.stream[..<cut]))
            h.receive(Array(Self.stream[cut...]))
            h.produce()
            // Compared as a whole (a failure would print 80 kB otherwise).
            XCTAssertTrue(h.messages == Self.expected, "cut at \(cut): \(h.messages.map(\.count))")
            XCTAssertTrue(h.written == whole.written, "cut at \(cut)")
        }
        let bytewise = Harness(limits: FrameLimits(maxMessage: 100_000))
        bytewise.receive(Self.stream, piece: 1)
        XCTAssertTrue(bytewise.messages == Self.expected, "\(bytewise.messages.map(\.count))")
    }

    /// Unmasking eight, four, two and one bytes at a time is the RFC's byte at a time (5.3), for
    /// every length up to 40, every offset into the key, at every alignment of the buffer.
    func testUnmaskAgainstTheRFC() {
        let key: [UInt8] = [0x9A, 0x01, 0xFF, 0x5C]
        let keyWord = key.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
        for length in 0...40 {
            for offset in 0..<4 {
                for align in 0..<8 {
                    var bytes = (0..<(length + align)).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
                    let expected = bytes[align...].enumerated().map {
                        $0.element ^ key[($0.offset + offset) % 4]
                    }
                    bytes.withUnsafeMutableBytes {
                        FrameLink.unmask($0.baseAddress! + align, length, key: keyWord, offset: offset)
                    }
                    XCTAssertEqual(
                        Array(bytes[align...]), expected, "length \(length) offset \(offset) align \(align)")
                }
            }
        }
    }

    /// A message that comes whole in one read goes to the Session from the read's own buffer:
    /// nothing is kept for it.
    func testAWholeMessageIsNotCopied() {
        let h = Harness()
        h.receive(TestFrames.text(#"{"op":"drag","movie":"matrix","dx":-60}"#) + TestFrames.text("{}"))
        XCTAssertEqual(h.messages.count, 2)
        XCTAssertEqual(h.link.held.capacity, 0)
    }

    /// Every opcode, as the first frame of a message and inside a fragmented one, fin or not:
    /// only text (and continuations inside a message), the three control frames (whole) pass;
    /// binary is 1003, the rest 1002.
    func testEveryOpcodeInEveryPlace() {
        for opcode in UInt8(0)...15 {
            for inside in [false, true] {
                for fin in [false, true] {
                    let h = Harness()
                    let open = inside ? TestFrames.text("a", fin: false) : []
                    h.receive(
                        open + TestFrames.encode(opcode, opcode == TestFrames.close ? [] : [0x62], fin: fin))
                    h.produce()
                    let name = "opcode \(opcode), \(inside ? "inside a message" : "first"), fin \(fin)"
                    let code = h.link.closeCodeSent
                    switch opcode {
                    case 0x1 where !inside, 0x0 where inside:
                        XCTAssertNil(code, name)
                        XCTAssertEqual(h.messages, fin ? [inside ? "ab" : "b"] : [], name)
                    case 0x2 where !inside:
                        XCTAssertEqual(code, CloseCode.unsupportedData, name)
                    case 0x8...0xF where !fin:
                        // A control frame (8 and up, reserved ones too) must not be fragmented:
                        // the codec refuses it before its opcode is looked at.
                        XCTAssertEqual(code, CloseCode.noStatus, name)
                        XCTAssertEqual(h.link.fault, "a malformed frame", name)
                    case 0x8:
                        // The peer's close without a code, answered likewise.
                        XCTAssertEqual(h.link.closeReceived, CloseCode.noStatus, name)
                        XCTAssertEqual(code, CloseCode.noStatus, name)
                    case 0x9:
                        XCTAssertNil(code, name)
                        XCTAssertEqual(h.frames.map(\.opcode), [TestFrames.pong], name)
                    case 0xA:
                        XCTAssertNil(code, name)
                        XCTAssertEqual(h.frames, [], name)
                    default:
                        XCTAssertEqual(code, CloseCode.protocolError, name)
                    }
                }
            }
        }
    }

    /// Any reserved bit, on any kind of frame, and a frame not masked, wherever it comes: 1002.
    func testReservedBitsAndUnmaskedFramesClose1002() {
        let kinds: [(String, [UInt8], (UInt8, Bool) -> [UInt8])] = [
            ("text", [], { TestFrames.encode(TestFrames.text, [0x61], masked: $1, rsv: $0) }),
            ("ping", [], { TestFrames.encode(TestFrames.ping, [0x61], masked: $1, rsv: $0) }),
            (
                "continuation", TestFrames.text("a", fin: false),
                { TestFrames.encode(TestFrames.continuation, [0x61], masked: $1, rsv: $0) }
            ),
            (
                "a ping inside a message", TestFrames.text("a", fin: false),
                { TestFrames.encode(TestFrames.ping, [], masked: $1, rsv: $0) }
            ),
            ("close", [], { TestFrames.encode(TestFrames.close, [0x03, 0xE8], masked: $1, rsv: $0) }),
        ]
        for (name, before, frame) in kinds {
            for rsv in UInt8(0)...7 {
                for masked in [true, false] where rsv != 0 || !masked {
                    let h = Harness()
                    h.receive(before + frame(rsv, masked) + TestFrames.text("after"))
                    h.produce()
                    XCTAssertEqual(
                        h.link.closeCodeSent, CloseCode.protocolError, "\(name) rsv \(rsv) masked \(masked)")
                    XCTAssertEqual(h.messages, [], name)
                    XCTAssertFalse(h.link.wantsRead, name)
                    XCTAssertNil(h.link.closeReceived, name)
                }
            }
        }
    }

    /// Every close code a peer may send: answered with itself (and its reason), the connection
    /// ends; every other one, and a close frame of one byte, is a protocol error (1002).
    func testEveryCloseCode() {
        for code in UInt16(0)...UInt16.max {
            let h = Harness()
            h.receive(TestFrames.close(code, "why"))
            h.produce()
            let valid =
                (1000...1003).contains(code) || (1007...1011).contains(code) || (3000...4999).contains(code)
            if valid {
                XCTAssertEqual(h.link.closeReceived, code)
                XCTAssertEqual(h.frames.last?.closeCode, code)
                XCTAssertEqual(h.frames.last?.closeReason, "why")
                XCTAssertNil(h.link.fault)
            } else {
                XCTAssertNil(h.link.closeReceived, "\(code)")
                XCTAssertEqual(h.frames.last?.closeCode, CloseCode.protocolError, "\(code)")
            }
            XCTAssertFalse(h.link.wantsRead)
        }
        let one = Harness()
        one.receive(TestFrames.encode(TestFrames.close, [0x03]))
        one.produce()
        XCTAssertEqual(one.frames.last?.closeCode, CloseCode.protocolError)
        let none = Harness()
        none.receive(TestFrames.encode(TestFrames.close, []))
        none.produce()
        XCTAssertEqual(none.link.closeReceived, CloseCode.noStatus)
        XCTAssertEqual(none.frames.last?.payload, [])
        XCTAssertEqual(none.link.closeCodeSent, CloseCode.noStatus)
    }

    /// A close reason that is not UTF-8 closes 1007, however the frame is cut (wslay's event
    /// API missed one cut across reads).
    func testACloseReasonThatIsNotUTF8Closes1007WhereverItIsCut() {
        let frame = TestFrames.encode(TestFrames.close, [0x03, 0xE8, 0x61, 0xC3, 0x28])
        for cut in 0...frame.count {
            let h = Harness()
            h.receive(Array(frame[..<cut]))
            h.receive(Array(frame[cut...]))
            h.produce()
            XCTAssertEqual(h.frames.last?.closeCode, CloseCode.invalidPayload, "cut at \(cut)")
            XCTAssertNil(h.link.closeReceived)
        }
    }

    /// Text checked across fragments and reads: a character split between two fragments is
    /// fine, one cut short at the message's end or broken in the middle closes 1007.
    func testUTF8AcrossFragments() {
        let euro = Array("€".utf8)
        for split in 0...euro.count {
            let h = Harness()
            h.receive(
                TestFrames.encode(TestFrames.text, Array(euro[..<split]), fin: false)
                    + TestFrames.encode(TestFrames.continuation, Array(euro[split...])))
            XCTAssertEqual(h.messages, ["€"], "split at \(split)")
        }
        let short = Harness()
        short.receive(TestFrames.encode(TestFrames.text, Array(euro.prefix(2))))
        short.produce()
        XCTAssertEqual(short.frames.last?.closeCode, CloseCode.invalidPayload)
        let broken = Harness()
        broken.receive(
            TestFrames.encode(TestFrames.text, Array(euro.prefix(2)), fin: false)
                + TestFrames.encode(TestFrames.continuation, [0x41]))
        broken.produce()
        XCTAssertEqual(broken.frames.last?.closeCode, CloseCode.invalidPayload)
        XCTAssertEqual(broken.messages, [])
    }

    /// The cap: a message of exactly `maxMessage` bytes passes, one byte more closes 1009 from
    /// its header, whole or in fragments; control frames are not counted against it.
    func testTheHardCapExactly() {
        for fragments in [1, 2, 5] {
            let limit = 100
            let h = Harness(limits: FrameLimits(maxMessage: limit))
            h.receive(Self.fragmented(limit, fragments))
            XCTAssertEqual(h.messages.map(\.count), [limit], "\(fragments) fragments")
            h.receive(Self.fragmented(limit + 1, fragments))
            h.produce()
            XCTAssertEqual(h.frames.last?.closeCode, CloseCode.messageTooBig, "\(fragments) fragments")
            XCTAssertEqual(h.messages.count, 1)
        }
        let ping = Harness(limits: FrameLimits(maxMessage: 10))
        ping.receive(TestFrames.encode(TestFrames.ping, [UInt8](repeating: 1, count: 125)))
        ping.produce()
        XCTAssertEqual(ping.frames.map(\.opcode), [TestFrames.pong])
    }

    /// `length` bytes of text in `count` frames.
    static func fragmented(_ length: Int, _ count: Int) -> [UInt8] {
        let payload = [UInt8](repeating: 0x61, count: length)
        let size = (length + count - 1) / count
        var out: [UInt8] = []
        for i in 0..<count {
            let part = Array(payload[min(length, i * size)..<min(length, (i + 1) * size)])
            out += TestFrames.encode(
                i == 0 ? TestFrames.text : TestFrames.continuation, part, fin: i == count - 1)
        }
        return out
    }

    /// A control frame of 125 bytes is fine, of 126 (or fragmented) the codec refuses: closed
    /// without a code; a length not in its shortest form likewise.
    func testMalformedFramesCloseWithoutACode() {
        let ok = Harness()
        ok.receive(TestFrames.encode(TestFrames.ping, [UInt8](repeating: 7, count: 125)))
        ok.produce()
        XCTAssertEqual(ok.frames.map(\.payload), [[UInt8](repeating: 7, count: 125)])
        let long: [UInt8] = [0x81, 0x80 | 126, 0, 5, 1, 2, 3, 4] + [UInt8](repeating: 0x61, count: 5)
        let h = Harness()
        h.receive(long)
        h.produce()
        XCTAssertEqual(h.link.closeCodeSent, CloseCode.noStatus)
        XCTAssertEqual(h.link.fault, "a malformed frame")
        XCTAssertEqual(h.messages, [])
    }

    /// The lines mode the daemon reads with: the messages of a read moved together in place,
    /// each followed by a `\n`, one run for a read of whole messages; the same bytes for the
    /// Session however the input is cut (a message in pieces, a header cut across reads).
    func testLinesInPlaceWhateverTheCut() {
        let stream =
            TestFrames.text(#"{"op":"drag","movie":"matrix","dx":-60}"#) + TestFrames.text("a\nb")
            + TestFrames.text("") + TestFrames.text("x", fin: false)
            + TestFrames.encode(TestFrames.ping, [1])
            + TestFrames.encode(TestFrames.continuation, Array("yz".utf8))
            + TestFrames.text(String(repeating: "€", count: 50))
        let expected = Array(
            (#"{"op":"drag","movie":"matrix","dx":-60}"# + "\na\nb\n\nxyz\n"
                + String(repeating: "€", count: 50) + "\n").utf8)
        for cut in 0...stream.count {
            let link = FrameLink(limits: FrameLimits(maxMessage: 1024))
            var lines: [UInt8] = []
            var runs = 0
            for part in [Array(stream[..<cut]), Array(stream[cut...])] {
                var read = part
                read.withUnsafeMutableBytes { raw in
                    link.received(lines: raw) {
                        lines += $0
                        runs += 1
                    }
                }
            }
            XCTAssertEqual(
                String(decoding: lines, as: UTF8.self), String(decoding: expected, as: UTF8.self),
                "cut at \(cut)")
            if cut == 0 || cut == stream.count {
                XCTAssertEqual(runs, 4, "whole: the fragmented message by itself")
            }
        }
        let whole = FrameLink(limits: FrameLimits(maxMessage: 1024))
        var read = TestFrames.text("{}") + TestFrames.text("[]") + TestFrames.text("{}")
        var runs: [[UInt8]] = []
        read.withUnsafeMutableBytes { raw in whole.received(lines: raw) { runs.append(Array($0)) } }
        XCTAssertEqual(runs, [Array("{}\n[]\n{}\n".utf8)])
    }

    // MARK: - Writing

    /// Each line is one frame, its header the shortest for its length, across every boundary.
    func testLinesAtTheHeaderBoundaries() {
        for length in [0, 1, 125, 126, 127, 65_535, 65_536, 70_000] {
            var limits = FrameLimits(maxMessage: 1024)
            limits.window = 100_000
            let h = Harness(limits: limits)
            let line = String(repeating: "y", count: length)
            XCTAssertEqual(h.produce(line + "\n"), length + 1)
            XCTAssertEqual(h.frames.count, 1, "\(length)")
            XCTAssertEqual(h.frames.first?.payload.count, length)
            XCTAssertEqual(h.written.count, length + FrameLink.headerSize(length))
        }
    }

    /// A line longer than the window goes in fragments, each within the window; a ping asked
    /// for meanwhile goes between two of them, and the line is whole at the other end.
    func testALongLineInFragmentsWithAPingBetween() {
        var limits = FrameLimits(maxMessage: 1024)
        limits.window = 1000
        let link = FrameLink(limits: limits)
        let line = Array(String(repeating: "z", count: 5000).utf8) + [0x0A]
        var total = 0
        var written: [UInt8] = []
        var pinged = false
        while true {
            let n = line[total...].withUnsafeBytes { link.produce($0) }
            total += n
            let out = link.outbound.count
            XCTAssertLessThanOrEqual(out, 1000)
            written += link.outbound
            link.sent(out)
            if !pinged && total > 0 {
                link.ping()
                pinged = true
            }
            if n == 0 && out == 0 { break }
        }
        let frames = TestFrames.decode(written).frames
        XCTAssertEqual(frames.filter { $0.opcode == TestFrames.ping }.count, 1)
        XCTAssertNotEqual(frames.last?.opcode, TestFrames.ping)
        let texts = TestFrames.messages(frames).filter { $0.opcode == TestFrames.text }.map(\.payload)
        XCTAssertTrue(texts == [Array(line.dropLast())], "\(texts.count) messages")
        XCTAssertGreaterThan(frames.count, 6)
        XCTAssertEqual(total, line.count)
    }

    /// A whole line that does not fit what is left of the window waits for the socket rather
    /// than go in pieces.
    func testAWholeLineWaitsForRoom() {
        var limits = FrameLimits(maxMessage: 1024)
        limits.window = 100
        let link = FrameLink(limits: limits)
        let lines = Array(
            (String(repeating: "a", count: 60) + "\n" + String(repeating: "b", count: 60) + "\n").utf8)
        let first = lines.withUnsafeBytes { link.produce($0) }
        XCTAssertEqual(first, 61)
        XCTAssertEqual(link.outbound.count, 62)
        link.sent(62)
        let second = lines[61...].withUnsafeBytes { link.produce($0) }
        XCTAssertEqual(second, 61)
        XCTAssertEqual(TestFrames.decode(link.outbound).frames.map(\.fin), [true])
    }

    /// A close frame longer than a small window still goes (into an empty `outbound`), with its
    /// reason for a limit of ours and without one for a frame that breaks the RFC (as wslay).
    func testACloseFrameGoesWhateverTheWindow() {
        for (frame, code, reason) in [
            (
                TestFrames.encode(TestFrames.binary, [1]), CloseCode.unsupportedData,
                "binary message: the protocol is text"
            ),
            (TestFrames.encode(TestFrames.continuation, [1]), CloseCode.protocolError, ""),
        ] {
            var limits = FrameLimits(maxMessage: 1024)
            limits.window = 16
            let h = Harness(limits: limits)
            h.receive(frame)
            h.produce("{\"ok\":true}\n")
            XCTAssertEqual(h.frames.map(\.opcode), [TestFrames.close])
            XCTAssertEqual(h.frames.last?.closeCode, code)
            XCTAssertEqual(h.frames.last?.closeReason, reason)
        }
    }

    /// After a fault, the close goes ahead of the lines waiting, and nothing follows it.
    func testAFaultsCloseGoesAheadOfTheLines() {
        let h = Harness()
        h.receive(TestFrames.encode(TestFrames.binary, [1]))
        XCTAssertEqual(h.produce("{\"ok\":true}\n"), 0)
        XCTAssertEqual(h.frames.map(\.opcode), [TestFrames.close])
        XCTAssertEqual(h.link.closeCodeSent, CloseCode.unsupportedData)
    }
}

import XCTest

@testable import WebSocket

final class FrameLinkTests: XCTestCase {
    /// A link and what it read and wrote.
    final class Harness {
        let link: FrameLink
        var messages: [String] = []
        var written: [UInt8] = []

        init(limits: FrameLimits = FrameLimits(maxMessage: 1024)) { link = FrameLink(limits: limits) }

        func receive(_ bytes: [UInt8], piece: Int = .max) {
            var i = 0
            while i < bytes.count {
                let end = min(bytes.count, i + piece)
                var read = Array(bytes[i..<end])  // unmasked in place, as the daemon's read buffer
                read.withUnsafeMutableBytes { raw in
                    link.received(raw) { messages.append(String(decoding: $0, as: UTF8.self)) }
                }
                i = end
            }
        }

        /// Frames `output` (lines) and drains what the link writes; returns the bytes of
        /// `output` taken.
        @discardableResult
        func produce(_ output: String = "") -> Int {
            var total = 0
            let bytes = Array(output.utf8)
            while true {
                let n = bytes[total...].withUnsafeBytes { link.produce($0) }
                total += n
                let out = link.outbound
                written += out
                link.sent(out.count)
                if n == 0 && out.isEmpty { return total }
            }
        }

        var frames: [TestFrames.Frame] {
            let (frames, rest) = TestFrames.decode(written)
            precondition(rest == 0, "a frame cut short")
            return frames
        }
    }

    func testATextMessageIsOneLineWhateverTheReads() {
        for piece in [1, 2, 3, 7, 1000] {
            let h = Harness()
            h.receive(TestFrames.text("{\"op\":\"ping\"}") + TestFrames.text("é"), piece: piece)
            XCTAssertEqual(h.messages, ["{\"op\":\"ping\"}", "é"], "piece \(piece)")
            XCTAssertTrue(h.link.wantsRead)
        }
    }

    func testFragmentsAreJoinedAndAControlFrameMayComeBetweenThem() {
        let h = Harness()
        h.receive(
            TestFrames.text("{\"op\":", fin: false) + TestFrames.encode(TestFrames.ping, Array("p".utf8))
                + TestFrames.encode(TestFrames.continuation, Array("\"ping\"}".utf8)))
        XCTAssertEqual(h.messages, ["{\"op\":\"ping\"}"])
        h.produce()
        XCTAssertEqual(
            h.frames, [TestFrames.Frame(fin: true, opcode: TestFrames.pong, payload: Array("p".utf8))])
    }

    func testEachLineIsOneTextMessageWithoutItsNewline() {
        let h = Harness()
        XCTAssertEqual(h.produce("{\"ok\":true}\n{\"event\":\"bye\"}\n"), 28)
        XCTAssertEqual(h.frames.map(\.text), ["{\"ok\":true}", "{\"event\":\"bye\"}"])
        XCTAssertEqual(h.frames.map(\.fin), [true, true])
        XCTAssertEqual(h.frames.map(\.opcode), [TestFrames.text, TestFrames.text])
    }

    /// A line worded a part at a time (a long `list`) goes out as the frames of one message as
    /// it comes.
    func testALineInPartsIsOneMessageInSeveralFrames() {
        let h = Harness()
        XCTAssertEqual(h.produce("{\"movies\":["), 11)
        XCTAssertEqual(h.produce("1,2,"), 4)
        XCTAssertEqual(h.produce("3]}\n{\"ok\":true}\n"), 16)
        let messages = TestFrames.messages(h.frames)
        XCTAssertEqual(
            messages.map { String(decoding: $0.payload, as: UTF8.self) },
            ["{\"movies\":[1,2,3]}", "{\"ok\":true}"])
        XCTAssertGreaterThan(h.frames.count, 2)
    }

    /// Output is taken only as fast as frames fit the window: what the socket has not taken
    /// stays the Session's (its --max-queue counts it).
    func testOutputIsTakenNoFasterThanTheWindowDrains() {
        var limits = FrameLimits(maxMessage: 1024)
        limits.window = 100
        let link = FrameLink(limits: limits)
        let line = Array(String(repeating: "x", count: 20_000).utf8) + [0x0A]
        var total = line.withUnsafeBytes { link.produce($0) }
        XCTAssertLessThanOrEqual(link.outbound.count, 100)
        XCTAssertLessThanOrEqual(total, 100 + 4096)
        var all: [UInt8] = []
        while true {
            all += link.outbound
            link.sent(link.outbound.count)
            let n = line[total...].withUnsafeBytes { link.produce($0) }
            total += n
            if n == 0 && link.outbound.isEmpty { break }
        }
        XCTAssertEqual(total, line.count)
        let messages = TestFrames.messages(TestFrames.decode(all).frames)
        XCTAssertEqual(messages.map(\.payload), [Array(line.dropLast())])
    }

    func testAPingIsAnsweredAndTheCloseHandshakeEndsTheLink() {
        let h = Harness()
        h.receive(TestFrames.encode(TestFrames.ping, [1, 2, 3]))
        h.produce()
        h.receive(TestFrames.close(1000, "bye"))
        h.produce()
        XCTAssertEqual(h.frames.map(\.opcode), [TestFrames.pong, TestFrames.close])
        guard h.frames.count == 2 else { return }
        XCTAssertEqual(h.frames[0].payload, [1, 2, 3])
        XCTAssertEqual(h.frames[1].closeCode, 1000)
        XCTAssertEqual(h.link.closeReceived, 1000)
        XCTAssertFalse(h.link.wantsRead)
        XCTAssertNil(h.link.fault)
    }

    /// Our close waits for the lines before it (a `bye`), and then no line follows it.
    func testOurCloseGoesAfterTheLinesBeforeIt() {
        let h = Harness()
        h.link.close(code: CloseCode.policyViolation, reason: "slow-consumer")
        h.produce("{\"event\":\"bye\",\"reason\":\"slow-consumer\"}\n")
        XCTAssertEqual(h.frames.map(\.opcode), [TestFrames.text, TestFrames.close])
        XCTAssertEqual(h.frames[1].closeCode, 1008)
        XCTAssertEqual(h.frames[1].closeReason, "slow-consumer")
        XCTAssertEqual(h.link.closeCodeSent, 1008)
        XCTAssertEqual(h.produce("{\"late\":true}\n"), 0)
        XCTAssertEqual(h.frames.count, 2)
    }

    func testAnUnmaskedFrameCloses1002() {
        let h = Harness()
        h.receive(TestFrames.encode(TestFrames.text, Array("hi".utf8), masked: false))
        h.produce()
        XCTAssertEqual(h.messages, [])
        XCTAssertEqual(h.frames.last?.closeCode, 1002)
        XCTAssertFalse(h.link.wantsRead)
        XCTAssertNotNil(h.link.fault)
    }

    func testTextThatIsNotUTF8Closes1007() {
        let h = Harness()
        h.receive(TestFrames.encode(TestFrames.text, [0x7B, 0xC3, 0x28, 0x7D]))
        h.produce()
        XCTAssertEqual(h.messages, [])
        XCTAssertEqual(h.frames.last?.closeCode, 1007)
        XCTAssertEqual(h.link.fault, "text that is not UTF-8")
    }

    func testABinaryMessageCloses1003() {
        let h = Harness()
        h.receive(TestFrames.encode(TestFrames.binary, [1, 2, 3]) + TestFrames.text("{}"))
        h.produce()
        XCTAssertEqual(h.messages, [])
        XCTAssertEqual(h.frames.last?.closeCode, 1003)
    }

    /// Past the hard cap the link closes 1009 from the frame's header, before its payload is
    /// kept (as soon as its first byte shows that it comes).
    func testAMessageOverTheHardCapCloses1009() {
        let h = Harness(limits: FrameLimits(maxMessage: 100))
        h.receive(TestFrames.text(String(repeating: "a", count: 100)))
        XCTAssertEqual(h.messages.count, 1)
        let header = Array(
            TestFrames.encode(TestFrames.text, [UInt8](repeating: 0x61, count: 70_000)).prefix(15))
        h.receive(header)
        h.produce()
        XCTAssertEqual(h.frames.last?.closeCode, 1009)
        // Fragments count together.
        let g = Harness(limits: FrameLimits(maxMessage: 100))
        g.receive(TestFrames.text(String(repeating: "a", count: 60), fin: false))
        g.receive(TestFrames.encode(TestFrames.continuation, [UInt8](repeating: 0x61, count: 60)))
        g.produce()
        XCTAssertEqual(g.messages, [])
        XCTAssertEqual(g.frames.last?.closeCode, 1009)
    }

    func testTooManyFragmentsClose1008() {
        var limits = FrameLimits(maxMessage: 1 << 20)
        limits.maxFragments = 4
        let h = Harness(limits: limits)
        var bytes = TestFrames.text("a", fin: false)
        for _ in 0..<3 { bytes += TestFrames.encode(TestFrames.continuation, [0x61], fin: false) }
        h.receive(bytes)
        XCTAssertNil(h.link.fault)
        h.receive(TestFrames.encode(TestFrames.continuation, [0x61]))
        h.produce()
        XCTAssertEqual(h.messages, [])
        XCTAssertEqual(h.frames.last?.closeCode, 1008)
    }

    /// A peer that pings and never reads the pongs is closed before they pile up.
    func testPingsPilingUpUnansweredClose1008() {
        var limits = FrameLimits(maxMessage: 1024)
        limits.maxQueuedControl = 8
        let h = Harness(limits: limits)
        for _ in 0..<20 { h.receive(TestFrames.encode(TestFrames.ping, [UInt8](repeating: 1, count: 125))) }
        XCTAssertFalse(h.link.wantsRead)
        XCTAssertEqual(h.link.fault, "more than 8 control frames unanswered")
    }

    /// A control frame over 125 bytes is malformed: closed, without a code (as wslay did).
    func testAnOversizedControlFrameCloses() {
        let h = Harness()
        h.receive(TestFrames.encode(TestFrames.ping, [UInt8](repeating: 1, count: 126)))
        h.produce()
        XCTAssertFalse(h.link.wantsRead)
        XCTAssertEqual(h.frames.last?.opcode, TestFrames.close)
        XCTAssertEqual(h.link.closeCodeSent, CloseCode.noStatus)
    }

    func testTheHandshakesBytesGoFirst() {
        let h = Harness()
        h.link.prepend(Array("HTTP/1.1 101 Switching Protocols\r\n\r\n".utf8))
        h.produce("{\"event\":\"hello\"}\n")
        let text = String(decoding: h.written.prefix(36), as: UTF8.self)
        XCTAssertEqual(text, "HTTP/1.1 101 Switching Protocols\r\n\r\n")
        XCTAssertEqual(
            TestFrames.decode(h.written.dropFirst(36)).frames.map(\.text), ["{\"event\":\"hello\"}"])
    }

    func testAServerPingIsSent() {
        let h = Harness()
        h.link.ping()
        h.produce()
        XCTAssertEqual(h.frames.map(\.opcode), [TestFrames.ping])
    }
}

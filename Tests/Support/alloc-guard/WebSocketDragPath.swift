// The WebSocket drag path (issue 44): what the daemon does with one read from a browser's
// WebSocket (Daemon/Server+Web.swift: `received`, `flushWeb`): FrameLink unmasks the drag
// messages in place and hands them on as lines, the Session answers them as a read from the
// Unix socket, and its replies are framed into the link's output. The guard's reads are lines, as a Unix client
// writes them; this path first masks each into the frame a browser would send, in a buffer that
// keeps its capacity (so the masking itself allocates nothing once warm).
import Movies
import People
import Session
import WebSocket

final class WebSocketDragPath: DragPath {
    private let session = Session(
        config: SessionConfig(
            client: 1, identity: Identity(user: "bench", role: .writer, door: .anonymous)),
        latestSeq: 10,
        log: "0123456789abcdef0123456789abcdef")
    private let link = FrameLink(limits: FrameLimits(maxMessage: 2 * 65_536))
    private var state = MovieState()
    private var sink = SessionActions()
    /// One read's frames, as a browser sends them.
    private var frames: [UInt8] = []

    init() {
        for (seq, event) in MovieState.seedCatalogue.enumerated() {
            _ = state.apply(event, seq: UInt64(seq + 1))
        }
        _ = written()  // the hello
    }

    func receive(_ bytes: UnsafeRawBufferPointer) -> Int {
        frames.removeAll(keepingCapacity: true)
        var start = 0
        for i in 0..<bytes.count where bytes[i] == 0x0A {
            mask(UnsafeRawBufferPointer(rebasing: bytes[start..<i]))
            start = i + 1
        }
        frames.withUnsafeMutableBytes { read in
            link.received(lines: read) { session.handle(.bytes($0), state, &sink) }
        }
        precondition(sink.isEmpty, "a drag asked the manager for something")
        return written()
    }

    /// A text frame as a browser masks it (RFC 6455, 5.3); drag lines are under 126 bytes.
    private func mask(_ line: UnsafeRawBufferPointer) {
        precondition(line.count < 126, "a drag line of \(line.count) bytes")
        let key: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
        frames.append(0x81)
        frames.append(0x80 | UInt8(line.count))
        frames.append(contentsOf: key)
        for (i, b) in line.enumerated() { frames.append(b ^ key[i & 3]) }
    }

    private func written() -> Int {
        var total = 0
        while true {
            let taken = session.withPendingOutput { link.produce($0) }
            if taken > 0 { session.handle(.written(taken), state, &sink) }
            let n = link.outbound.count
            link.sent(n)
            total += n
            session.handle(.resume, state, &sink)
            if taken == 0 && n == 0 { return total }
        }
    }
}

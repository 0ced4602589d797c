// Splits a connection's byte stream into lines, with bounded memory.
//
// Modelled on swift-nio-extras' LineBasedFrameDecoder: it remembers how far it has scanned, so
// each byte is looked at once (memchr) however the input is split; framing knows nothing of JSON.
// The daemon frames requests with it (a limit, `--max-line`); swipectl's connections frame the
// daemon's replies with it, with no limit (`maxLine: .max`): a `list` of 100,000 movies is one
// line of about 18 MB arriving in hundreds of reads, which a rescan per read made quadratic.
//
// Rules (protocol.md, "Wire format"):
// - A line ends at `\n`; one `\r` before it is dropped (`\r\n` clients).
// - Blank lines (empty, or only spaces, tabs and CRs) are skipped: no frame, no reply.
// - A line longer than `maxLine` bytes (not counting its `\r\n` or `\n`) is not buffered: once the
//   buffer holds more than `maxLine + 1` bytes without a newline, they are dropped and the rest
//   of the line is dropped as it arrives. The line is reported once, as `.tooLarge(length)`, when
//   its newline arrives (or at end of input), so replies stay in request order. Memory stays
//   below `maxLine` + 1 + one read.
// - At end of input (`finish()`), a last line without `\n` is still a line: a client that writes
//   its final request and shuts down its write side gets an answer, as with most line protocols.

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

public struct LineFramer: Sendable {
    public enum Frame: Equatable, Sendable {
        /// A line without its terminator. It shares the framer's storage: use it (or copy it)
        /// before the next `append`, or the append has to copy the buffer.
        case line(ArraySlice<UInt8>)
        /// A line longer than `maxLine` was dropped; `length` is its full length in bytes,
        /// without the terminator.
        case tooLarge(length: Int)
    }

    public static let defaultMaxLine = 65_536

    /// The longest line kept, in bytes; `.max` for no limit (then every frame is a `.line`).
    public let maxLine: Int
    /// Every byte memchr has looked at, the newline it stopped at included: tests check that each
    /// byte is scanned once, however the input is split. Where the scan resumes (`scanned`)
    /// cannot show that: it ends up the same when every search starts again from `start`. One
    /// add per search, not per byte (a search per line, and one more per read that ends inside
    /// a line), so it costs the daemon's read path nothing it can measure (BENCHMARKS.md, Wire
    /// codec); wrapping (`&+=`) is for 2^63 bytes, not a case to trap on.
    public private(set) var bytesScanned = 0
    private var buffer: [UInt8] = []
    /// The first byte not yet framed.
    private var start = 0
    /// Bytes from `start` up to here hold no newline.
    private var scanned = 0
    /// Inside an oversized line: how many of its bytes were dropped so far.
    private var discarded: Int? = nil
    /// Whether the last dropped byte was a CR (it would be the terminator's, not the line's).
    private var discardedCR = false
    private var atEnd = false

    public init(maxLine: Int = LineFramer.defaultMaxLine) {
        precondition(maxLine > 0, "maxLine must be positive")
        self.maxLine = maxLine
    }

    /// Bytes held and not yet returned as frames.
    public var buffered: Int { buffer.count - start }

    /// Adds bytes read from the connection.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        compact()
        buffer.append(contentsOf: bytes)
    }

    public mutating func append(_ bytes: [UInt8]) {
        compact()
        buffer.append(contentsOf: bytes)
    }

    public mutating func append(_ bytes: ArraySlice<UInt8>) {
        compact()
        buffer.append(contentsOf: bytes)
    }

    /// Marks the end of input: `next()` then also returns a last line that has no `\n`.
    public mutating func finish() {
        atEnd = true
    }

    /// The next complete line or oversize report, or nil until more bytes arrive.
    public mutating func next() -> Frame? {
        while true {
            guard let newline = findNewline() else {
                return atEnd ? takeTail() : dropIfOversized()
            }
            if let dropped = discarded {
                // The end of an oversized line: everything before the newline goes too.
                var length = dropped + (newline - start)
                let crBeforeNewline = newline > start ? buffer[newline - 1] == 0x0D : discardedCR
                if crBeforeNewline { length -= 1 }
                discarded = nil
                discardedCR = false
                advance(to: newline + 1)
                return .tooLarge(length: length)
            }
            var lineEnd = newline
            if lineEnd > start && buffer[lineEnd - 1] == 0x0D { lineEnd -= 1 }
            let lineStart = start
            advance(to: newline + 1)
            if lineEnd - lineStart > maxLine { return .tooLarge(length: lineEnd - lineStart) }
            if isBlank(lineStart, lineEnd) { continue }
            return .line(buffer[lineStart..<lineEnd])
        }
    }

    // MARK: Internals

    /// The index of the next `\n` at or after `scanned`, remembering how far it looked.
    private mutating func findNewline() -> Int? {
        let from = max(scanned, start)
        let count = buffer.count - from
        guard count > 0 else { return nil }
        let found: Int? = buffer.withUnsafeBytes { raw in
            guard let base = raw.baseAddress,
                let hit = memchr(base + from, 0x0A, count)
            else { return nil }
            return base.distance(to: UnsafeRawPointer(hit))
        }
        scanned = found ?? buffer.count
        bytesScanned &+= (found.map { $0 + 1 } ?? buffer.count) &- from
        return found
    }

    private mutating func advance(to index: Int) {
        start = index
        scanned = index
    }

    /// Without a newline in sight: once the bytes held cannot be a line within the limit, drop
    /// them and start counting the oversized line.
    private mutating func dropIfOversized() -> Frame? {
        let held = buffer.count - start
        // `held - 1`, not `maxLine + 1`, which overflows for `.max`.
        guard discarded != nil || held - 1 > maxLine else { return nil }
        if held > 0 {
            discarded = (discarded ?? 0) + held
            discardedCR = buffer[buffer.count - 1] == 0x0D
            advance(to: buffer.count)
        }
        return nil
    }

    /// At end of input: the last unterminated line, or the report of an oversized one.
    private mutating func takeTail() -> Frame? {
        if let dropped = discarded {
            var length = dropped + (buffer.count - start)
            let crAtEnd = start < buffer.count ? buffer[buffer.count - 1] == 0x0D : discardedCR
            if crAtEnd { length -= 1 }  // a last line is stripped of one CR like any other
            discarded = nil
            discardedCR = false
            advance(to: buffer.count)
            return .tooLarge(length: length)
        }
        guard start < buffer.count else { return nil }
        let lineStart = start
        var lineEnd = buffer.count
        if buffer[lineEnd - 1] == 0x0D { lineEnd -= 1 }
        advance(to: buffer.count)
        if lineEnd - lineStart > maxLine { return .tooLarge(length: lineEnd - lineStart) }
        if isBlank(lineStart, lineEnd) { return nil }
        return .line(buffer[lineStart..<lineEnd])
    }

    private func isBlank(_ from: Int, _ to: Int) -> Bool {
        var k = from
        while k < to {
            let b = buffer[k]
            guard b == 0x20 || b == 0x09 || b == 0x0D else { return false }
            k += 1
        }
        return true
    }

    /// Before appending: drop framed bytes. Free when everything was framed (the usual case after
    /// a read of whole requests); otherwise one memmove of the partial line, and only once the
    /// framed part is at least half the buffer, so the cost stays linear in the bytes read.
    /// The caller drains `next()` after each `append`, so the buffer holds at most one partial
    /// line (≤ maxLine + 1 bytes) plus one read.
    private mutating func compact() {
        guard start > 0 else { return }
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
        } else if start >= buffer.count / 2 {
            buffer.removeSubrange(0..<start)
        } else {
            return
        }
        scanned -= start
        start = 0
    }
}

// Reads one request head as it arrives, in any pieces, keeping at most `maxBytes` and one byte
// more (the byte that proves a head too long). Each byte is looked at once, however the head is
// cut (it remembers where it stopped and where the current line began). Shared by the metrics
// listener's connections (ScrapeConnection) and the web listener's (WebConnection).
public struct HeadReader: Sendable {
    /// The longest head, its final empty line included.
    public let maxBytes: Int
    private var buffer: [UInt8] = []
    /// Bytes searched for the head's end so far; where the current line began.
    private var scanned = 0
    private var lineStart = 0

    public init(maxBytes: Int) { self.maxBytes = maxBytes }

    public enum Progress: Equatable, Sendable {
        /// No end of head yet: more bytes are needed.
        case more
        /// The head is complete: `head` bytes (`bytes`), and the bytes of the last `append`
        /// from offset `rest` on came after it (a pipelined request, a WebSocket frame sent
        /// without waiting for the 101).
        case complete(rest: Int)
        /// More than `maxBytes` without the head's end.
        case tooLarge
    }

    /// The complete head (after `.complete`).
    public var bytes: ArraySlice<UInt8> { buffer[0..<scanned] }

    /// Adds bytes read from the peer.
    public mutating func append(_ bytes: some Collection<UInt8>) -> Progress {
        let before = buffer.count
        // Never keep more than one byte past the limit: that byte proves the head too long.
        buffer.append(contentsOf: bytes.prefix(maxBytes + 1 - buffer.count))
        while scanned < buffer.count {
            let byte = buffer[scanned]
            scanned += 1
            guard byte == UInt8(ascii: "\n") else { continue }
            let lineLength = scanned - 1 - lineStart
            let empty = lineLength == 0 || (lineLength == 1 && buffer[lineStart] == UInt8(ascii: "\r"))
            lineStart = scanned
            if empty && scanned <= maxBytes && scanned > 2 {
                return .complete(rest: scanned - before)
            }
        }
        return buffer.count > maxBytes ? .tooLarge : .more
    }
}

/// A connection that may still be sending its head, as `Stalest` sees it.
public protocol HeadWaiting {
    /// Whether its head is still coming in: then it may be evicted for a new connection.
    var isReadingHead: Bool { get }
    /// Monotonic nanoseconds: when it was accepted.
    var since: UInt64 { get }
    /// Its place in the order of accepts: those of one wake-up share `since`.
    var serial: UInt64 { get }
}

public enum Stalest {
    /// The index of the connection that has been sending its head longest (accepted first),
    /// nil when none is still sending its head. The rule both listeners evict by when full:
    /// a slow or stuck peer gives its place to a new one, rather than the new one being refused.
    public static func index<C: HeadWaiting>(_ connections: some Sequence<C>) -> Int? {
        var best: (index: Int, since: UInt64, serial: UInt64)?
        for (i, c) in connections.enumerated() where c.isReadingHead {
            if let b = best, (b.since, b.serial) <= (c.since, c.serial) { continue }
            best = (i, c.since, c.serial)
        }
        return best?.index
    }
}

// The daemon's lines as they arrive, for both connections (LineConnection, StreamConnection).
// It remembers how far it has looked for a newline, so each byte is scanned once however the
// line is split across reads: a `list` of 100,000 movies is one line of about 18 MB, which
// arrives in hundreds of reads, and scanning the whole buffer again after each of them made
// reading it quadratic.
//
// No limit on a line's length: the daemon's replies have none (a `list` grows with the list,
// and `--max-line` bounds only what the daemon reads), and this client trusts its daemon.
#if canImport(Glibc)
    import Glibc
#endif

struct LineBuffer {
    private var buffer: [UInt8] = []
    /// The first byte not yet returned in a line.
    private var start = 0
    /// Bytes from `start` up to here hold no newline.
    private var scanned = 0
    /// Every byte ever looked at for a newline (what tests check: each byte once).
    private(set) var bytesScanned = 0

    /// Bytes held and not yet returned as lines.
    var buffered: Int { buffer.count - start }

    /// Adds bytes read from the socket.
    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        compact()
        buffer.append(contentsOf: bytes)
    }

    /// The next whole line, without its newline; nil until one has arrived.
    mutating func next() -> [UInt8]? {
        let from = max(scanned, start)
        let count = buffer.count - from
        guard count > 0 else { return nil }
        bytesScanned += count
        let found: Int? = buffer.withUnsafeBytes { raw in
            guard let base = raw.baseAddress, let hit = memchr(base + from, 0x0A, count) else { return nil }
            let index = base.distance(to: UnsafeRawPointer(hit))
            bytesScanned -= count - (index - from + 1)
            return index
        }
        guard let newline = found else {
            scanned = buffer.count
            return nil
        }
        let line = Array(buffer[start..<newline])
        start = newline + 1
        scanned = start
        return line
    }

    /// Before appending: drops the bytes already returned. Free when everything was returned;
    /// otherwise one move of the partial line, and only once the returned part is at least half
    /// the buffer, so the cost stays linear in the bytes read.
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

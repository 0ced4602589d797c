// The repeat lane of request decoding: a finger streams drag lines to one row, 60 to 120 a
// second, and they differ only in "dx" (and in "dy" when the client sends it, and in "id" when it
// numbers its requests).
//
// Why: even the fast path (RequestFastPath.swift) reads every key, matches every name, scans
// every string and makes a String of the movie id for each drag: over a quarter of what a drag
// cost the daemon. Here a connection keeps its last drag line with holes where its dx, dy and id
// values were. The next line is compared with it byte for byte around the holes, and only the
// holes are read, by the fast path's own value scanners. A line that matches has exactly the
// old line's keys and structure (every byte outside the holes is the same, and each hole holds
// one whole value its key takes: a number for dx, any scalar for id, as the fast path reads
// them), so it is the same drag with the new values.
// Any other line — another row, another op, other spacing, a value of another kind — misses and
// goes the usual way, which also makes it the new repeat when it is a drag.
//
// The movie id comes back as the very String of the line that filled the repeat: later look-ups
// keyed by it compare by identity before they compare bytes. The id is compacted into storage
// the repeat keeps, so a drag allocates nothing (Tests/Support/alloc-guard checks it): the
// next drag reuses that storage once the body has let go of the id, and a body that keeps it
// keeps its own copy (arrays are values; the next id then gets fresh storage).
import JSONCodec

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A connection's last drag line, with its holes. One per connection; empty until a drag.
public struct DragRepeat {
    /// The line as it came (without its newline).
    var line: [UInt8] = []
    /// Where its values are, in line order: dx always, dy and id when the line had them.
    var holes: [(key: FastKey, range: Range<Int>)] = []
    var movie = ""
    /// The id of the last line read from the repeat, compacted: storage to reuse.
    var id: [UInt8] = []

    public init() {}

    /// Whether a drag is kept.
    public var isEmpty: Bool { line.isEmpty }

    /// Keeps `line`, a drag the fast path decoded into `given`.
    mutating func keep(_ line: UnsafeBufferPointer<UInt8>, _ given: FastArguments, movie: String) {
        guard let dx = given.dxRange else { return }
        self.line = Array(line)
        holes = [(.dx, dx)]
        if let dy = given.dyRange { holes.append((.dy, dy)) }
        if let id = given.id { holes.append((.id, id)) }
        holes.sort { $0.range.lowerBound < $1.range.lowerBound }
        self.movie = movie
    }

    /// The dx, the dy and the id's range of `new` when it is this drag with other values in its
    /// holes.
    func match(_ new: UnsafeBufferPointer<UInt8>) -> (dx: Double, dy: Double?, id: Range<Int>?)? {
        guard let base = new.baseAddress, !line.isEmpty else { return nil }
        return line.withUnsafeBufferPointer { old -> (dx: Double, dy: Double?, id: Range<Int>?)? in
            let oldBase = old.baseAddress!
            var scanner = Parser(base, count: new.count, maxDepth: 1)
            var given = FastArguments()
            var from = 0  // in the old line: the end of the last hole
            for hole in holes {
                // The bytes before the hole: the same, at the same distance from the last hole.
                let same = hole.range.lowerBound - from
                guard scanner.i + same < new.count,
                    memcmp(oldBase + from, base + scanner.i, same) == 0
                else { return nil }
                scanner.i += same
                guard scanner.scanValue(of: hole.key, into: &given) else { return nil }
                from = hole.range.upperBound
            }
            let rest = old.count - from
            guard new.count - scanner.i == rest, memcmp(oldBase + from, base + scanner.i, rest) == 0,
                let dx = given.dx
            else { return nil }
            return (dx, given.dy, given.id)
        }
    }
}

extension RequestDecoder {
    /// `withFastRequest`, first trying `last`: a drag that matches it is handed over without
    /// decoding; a drag decoded the usual way becomes the new `last`.
    public static func withFastRequest(
        _ line: UnsafeRawBufferPointer, repeating last: inout DragRepeat,
        _ body: (Request, [UInt8]?, OpSpec.Kind) -> Void
    ) -> Bool {
        let bytes = line.bindMemory(to: UInt8.self)
        if let (dx, dy, idRange) = last.match(bytes) {
            var id: [UInt8]?
            if let idRange {
                // Room for an id of up to 32 bytes from the first: one counting up gains digits.
                last.id.removeAll(keepingCapacity: true)
                last.id.reserveCapacity(max(idRange.count, 32))
                let start = line.baseAddress! + idRange.lowerBound
                compact(UnsafeRawBufferPointer(start: start, count: idRange.count), into: &last.id)
                id = last.id
            }
            body(.drag(movie: last.movie, dx: dx, dy: dy), id, .drag)
            return true
        }
        return withFastRequest(line, body) { given, request in
            if case .drag(let movie, _, _) = request { last.keep(bytes, given, movie: movie) }
        }
    }
}

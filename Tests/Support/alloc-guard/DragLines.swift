// The bytes a client sends while a finger drags a row: one drag line per frame, the same row,
// dx moving back and forth across both edges (through every shape a row can take: nothing
// revealed, one button or all of them, past the full-swipe threshold), the id counting up.
// Built before the counting starts (formatting numbers allocates), as a list of reads.
//
// The warm-up sweeps in steps of 0.25, so it passes every dx the counted drags can take
// (multiples of 0.25 within ±420; dx = 0 exactly, the one shape with no edge, included): each
// shape's row template is made then, as a real client's first gestures would make them. The
// ids count up from 100,001, so that every id of a run has 6 digits: the longest line and the
// longest reply are seen in the warm-up too, and the buffers that grow to fit them (the
// framer's, the write queue) have grown before counting starts. (A client counting from 1
// lengthens its lines at 10, 100, 1,000: the daemon's buffers may then grow, once each.)

/// How a client spells its drag lines.
enum LineShape {
    /// SwipedClient's spelling: `{"id":17,"op":"drag","movie":"godfather","dx":-60.5}`.
    case idFirst
    /// `{"op":"drag","movie":"godfather","dx":-60.5,"id":17}` (wire-bench's spelling).
    case idLast
    /// A client that numbers nothing: `{"op":"drag","movie":"godfather","dx":-60.5}`.
    case noID
    /// Every line spelled unlike the one before it (the keys' order alternates), so each misses
    /// the repeat lane and takes the fast path.
    case alternating
    /// Issue 47: with a `dy` that changes too, a little (the finger a touch off horizontal: a
    /// swipe): `{"id":17,"op":"drag","movie":"godfather","dx":-60.5,"dy":3}`.
    case withDy
    /// With a `dy` far past `dx` from the first line: a touch the daemon says scrolls, every
    /// drag of it answered `"scroll":true`.
    case scrolling
}

/// The bytes of `count` reads, each holding `linesPerRead` drag lines.
struct DragReads {
    var bytes: [UInt8] = []
    var reads: [Range<Int>] = []
    let linesPerRead: Int

    /// `warmUp` reads with dx in steps of 0.25 (`Sweep.warmUpReads` covers every value), then
    /// `count` reads with dx in steps of 0.25 to 4.
    init(_ shape: LineShape, movie: String, warmUp: Int, count: Int, linesPerRead: Int = 1) {
        self.linesPerRead = linesPerRead
        var fine = Sweep(varied: false)
        var varied = Sweep(varied: true)
        var id = 100_001
        for read in 0..<(warmUp + count) {
            let start = bytes.count
            for _ in 0..<linesPerRead {
                let dx = read < warmUp ? fine.next() : varied.next()
                let line: String
                switch shape {
                case .idFirst:
                    line = #"{"id":\#(id),"op":"drag","movie":"\#(movie)","dx":\#(dx)}"#
                case .idLast:
                    line = #"{"op":"drag","movie":"\#(movie)","dx":\#(dx),"id":\#(id)}"#
                case .noID:
                    line = #"{"op":"drag","movie":"\#(movie)","dx":\#(dx)}"#
                case .alternating where id % 2 == 0:
                    line = #"{"op":"drag","movie":"\#(movie)","dx":\#(dx),"id":\#(id)}"#
                case .alternating:
                    line = #"{"movie":"\#(movie)","op":"drag","dx":\#(dx),"id":\#(id)}"#
                case .withDy:
                    line = #"{"id":\#(id),"op":"drag","movie":"\#(movie)","dx":\#(dx),"dy":\#(id % 7)}"#
                case .scrolling:
                    line =
                        #"{"id":\#(id),"op":"drag","movie":"\#(movie)","dx":\#(dx / 4),"dy":\#(500 + id % 7)}"#
                }
                bytes += Array(line.utf8)
                bytes.append(0x0A)
                id += 1
            }
            reads.append(start..<bytes.count)
        }
    }
}

/// A finger's dx, back and forth between -420 and 420 (past every threshold of the movie layout
/// at width 390), in steps of 0.25, or of 0.25 to 4 points when `varied` (a seeded generator,
/// the same every run).
struct Sweep {
    /// Drags for a sweep of steps of 0.25 to pass every value: 0 to -420, to 420, back to 0.
    static let warmUpReads = 4 * 420 * 4

    private let varied: Bool
    private var dx = 0.0
    private var direction = -1.0
    private var state: UInt64 = 0x9E37_79B9_7F4A_7C15

    init(varied: Bool) { self.varied = varied }

    mutating func next() -> Double {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        let step = varied ? Double((state >> 33) % 16 + 1) / 4 : 0.25
        dx += direction * step
        if abs(dx) >= 420 { direction = -direction }
        return dx
    }
}

// Rule 12: a drag crossing the open or the full-swipe threshold, as a value. The daemon's drag
// path reports crossings without allocating (a drag that crosses is as hot as any other: a
// finger sweeping back and forth crosses four times a sweep), so they travel as `Crossings`, a
// short list held in one integer, next to the geometry; `send` spells each one out as an
// `Effect.crossed`.

/// One threshold crossed by a drag (rule 12).
public struct Crossing: Equatable, Hashable, Sendable {
    public enum Threshold: String, Sendable, CaseIterable {
        /// Rule 5's open threshold: |s| > 0.8·W.
        case open
        /// Rule 4's full-swipe threshold: |s| > R/2 on an edge that allows full swipe.
        case full
    }

    public enum Direction: String, Sendable, CaseIterable {
        /// Now past it, and before not.
        case out
        /// Before past it, and now not.
        case back
    }

    public var threshold: Threshold
    public var direction: Direction

    public init(_ threshold: Threshold, _ direction: Direction) {
        self.threshold = threshold
        self.direction = direction
    }
}

/// The crossings of one drag, in the order they were crossed: at most four (from past both
/// thresholds on one edge to past both on the other: full and open back, then open and full out).
/// Two bits a crossing and a count, in one integer: no allocation.
public struct Crossings: Equatable, Sendable, Sequence {
    @usableFromInline var raw: UInt16 = 0

    public init() {}

    public init(_ crossings: [Crossing]) {
        for crossing in crossings { append(crossing) }
    }

    @inlinable public var isEmpty: Bool { raw == 0 }
    public var count: Int { Int(raw >> 8) }

    public mutating func append(_ crossing: Crossing) {
        let n = count
        precondition(n < 4, "more than four crossings in one drag: \(raw) then \(crossing)")
        let bits = UInt16(crossing.threshold == .full ? 1 : 0) | UInt16(crossing.direction == .back ? 2 : 0)
        raw = (raw & 0xFF) | bits << (2 * UInt16(n)) | UInt16(n + 1) << 8
    }

    public func makeIterator() -> Iterator { Iterator(raw: raw, position: 0) }

    public struct Iterator: IteratorProtocol {
        let raw: UInt16
        var position: Int

        public mutating func next() -> Crossing? {
            guard position < Int(raw >> 8) else { return nil }
            let bits = raw >> (2 * UInt16(position)) & 3
            position += 1
            return Crossing(bits & 1 == 0 ? .open : .full, bits & 2 == 0 ? .out : .back)
        }
    }

    /// Rule 12: the crossings of a move from zone `old` to zone `new` (`SwipeList.zone`): the
    /// thresholds of the edge left, full then open, back; then those of the edge reached, open
    /// then full, out. The same zone: none.
    @inline(__always)
    static func between(_ old: Int8, _ new: Int8) -> Crossings {
        if old == new { return Crossings() }
        return crossing(old, new)
    }

    static func crossing(_ old: Int8, _ new: Int8) -> Crossings {
        var result = Crossings()
        // Past-ness on the edge each zone is on; a zone on the other edge is not past anything here.
        let sameEdge = (old >= 0) == (new >= 0) || old == 0 || new == 0
        let before = old.magnitude
        let after = new.magnitude
        let stillAfter = sameEdge ? after : 0
        if before & 2 != 0 && stillAfter & 2 == 0 { result.append(Crossing(.full, .back)) }
        if before & 1 != 0 && stillAfter & 1 == 0 { result.append(Crossing(.open, .back)) }
        let stillBefore = sameEdge ? before : 0
        if after & 1 != 0 && stillBefore & 1 == 0 { result.append(Crossing(.open, .out)) }
        if after & 2 != 0 && stillBefore & 2 == 0 { result.append(Crossing(.full, .out)) }
        return result
    }
}

extension SwipeList {
    /// Rule 12's zone of a physical offset: 0 when past neither threshold (or nothing revealed),
    /// else +1 past the open threshold, +2 past the full-swipe one, or both (3), negative toward
    /// the trailing edge. Two offsets in one zone are on the same side of every threshold.
    @inline(__always)
    func zone(_ offset: Double) -> Int8 {
        let s = offset * viewport.direction.sign
        if s == 0 { return 0 }
        let extent = abs(s)
        var zone: Int8 = extent > Rules.openFraction * layout.buttonWidth ? 1 : 0
        if extent > Rules.fullSwipeFraction * viewport.width
            && layout.allowsFullSwipe(s > 0 ? .leading : .trailing)
        {
            zone |= 2
        }
        return s > 0 ? zone : -zone
    }
}

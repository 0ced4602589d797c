/// A movie's place in list order (issue 48): the list is the live movies sorted by their keys.
///
/// Fractional keys rather than positions or an order-statistics tree: a key is a fact about one
/// movie, so it survives the movie's removal, and a restored movie goes back where its key falls
/// among the movies there now: between the movies that surrounded it, when they are still there
/// and were not moved since. An added movie's key is the seq of its `added` event, one digit:
/// while no movie was ever moved, the order is exactly the order of the adds, as before moves
/// existed (and the snapshot's and the digest's bytes are the same as before). A move gives the
/// movie a key between its new neighbours', which every daemon folding the log computes the same.
///
/// A key is a number in base 2⁶⁴: `head` is its integer part, `tail` the digits after the point
/// (never ending in a zero digit, so that equal numbers are equal keys). Only moved movies have a
/// tail, and it grows by one digit per 64 moves into the same gap at worst: the halving of a
/// digit's room. Compared as numbers, which is lexicographic order of the digits.
public struct OrderKey: Hashable, Sendable, Comparable, CustomStringConvertible {
    public private(set) var head: UInt64
    public private(set) var tail: [UInt64]

    /// The key of a movie added at `seq`.
    public init(added seq: UInt64) {
        head = seq
        tail = []
    }

    /// A key from its digits; nil when the tail ends in a zero digit (not normalised).
    public init?(head: UInt64, tail: [UInt64]) {
        guard tail.last != 0 else { return nil }
        self.head = head
        self.tail = tail
    }

    public var description: String {
        tail.isEmpty ? "\(head)" : "\(head)." + tail.map { String($0, radix: 16) }.joined(separator: ":")
    }

    /// Digit `i` (0: the head), zero past the last.
    @inline(__always)
    private func digit(_ i: Int) -> UInt64 { i == 0 ? head : i <= tail.count ? tail[i - 1] : 0 }

    private var digits: Int { 1 + tail.count }

    public static func < (a: OrderKey, b: OrderKey) -> Bool {
        if a.head != b.head { return a.head < b.head }
        for i in 1...max(a.digits, b.digits) {
            let x = a.digit(i)
            let y = b.digit(i)
            if x != y { return x < y }
        }
        return false
    }

    /// A key strictly between `low` and `high`: after `low` (nil: before every key, whose head is
    /// at least 0) and before `high` (nil: after every key). `low < high` when both are given.
    ///
    /// After the last key: the next whole number, one digit (so a movie moved to the end has a
    /// key of one digit, as short as an added one's). Otherwise the shortest prefix that fits:
    /// the first digit where the two differ, halfway between them when they differ by two or
    /// more, else `low`'s digits followed by a digit halfway up from `low`'s next one.
    public static func between(_ low: OrderKey?, _ high: OrderKey?) -> OrderKey {
        guard let high else {
            guard let low else { return OrderKey(added: 1) }
            precondition(low.head < UInt64.max, "no key after \(low)")
            return OrderKey(added: low.head + 1)
        }
        let low = low ?? OrderKey(added: 0)
        precondition(low < high, "no key between \(low) and \(high): not in order")
        var i = 0
        while low.digit(i) == high.digit(i) { i += 1 }
        let a = low.digit(i)
        let b = high.digit(i)
        var out = (0..<i).map { low.digit($0) }
        if b - a >= 2 {
            out.append(a + (b - a) / 2)
            return OrderKey(digits: out)
        }
        // Room only below `high`'s digit: keep `low`'s digit, then the first of `low`'s next
        // digits that is not the largest, raised halfway to the top (zero past its last digit).
        out.append(a)
        var j = i + 1
        while low.digit(j) == UInt64.max {
            out.append(UInt64.max)
            j += 1
        }
        let d = low.digit(j)
        out.append(d + (UInt64.max - d) / 2 + 1)
        return OrderKey(digits: out)
    }

    private init(digits: [UInt64]) {
        head = digits[0]
        tail = Array(digits.dropFirst())
        precondition(tail.last != 0, "a key ending in a zero digit: \(digits)")
    }

    // MARK: - Bytes

    /// The snapshot's bytes of a key: the head (8 bytes), the number of tail digits (4 bytes,
    /// MVS4 only) and each digit (8 bytes); big-endian.
    func write(_ w: inout ByteWriter) {
        w.u64(head)
        w.u32(UInt32(tail.count))
        for d in tail { w.u64(d) }
    }

    static func read(_ r: inout ByteReader) throws(MovieDecodingError) -> OrderKey {
        let head = try r.u64("order key")
        let count = try r.u32("order key length")
        guard count <= 1 << 16 else { throw MovieDecodingError("an order key of \(count) digits") }
        var tail: [UInt64] = []
        tail.reserveCapacity(Int(count))
        for _ in 0..<count { tail.append(try r.u64("order key digit")) }
        guard let key = OrderKey(head: head, tail: tail) else {
            throw MovieDecodingError("an order key ending in a zero digit")
        }
        return key
    }
}

// Whether a text message is UTF-8 (RFC 6455, 8.1: else close 1007), checked as its bytes come:
// a message arrives in frames and reads cut anywhere, so a character may be split across them,
// and the check carries what it still expects from one part to the next. It accepts exactly
// what the Unicode Standard calls well-formed (table 3-7): no overlong forms, no surrogates,
// nothing past U+10FFFF. wslay's event API did this with a byte-at-a-time table; here a run of
// ASCII, which is nearly all the protocol sends, is passed over eight bytes at a time.
// UTF8CheckTests compare it with the standard library's own validation, every sequence of up to
// three bytes and the four-byte ones around every boundary, cut at every offset.
struct UTF8Check {
    /// Continuation bytes still expected for the character begun.
    private var need: UInt8 = 0
    /// The range the next continuation byte must be in (narrower than 80...BF after E0, ED, F0
    /// and F4: what keeps out overlong forms, surrogates and code points past U+10FFFF).
    private var low: UInt8 = 0x80
    private var high: UInt8 = 0xBF

    /// Whether the bytes so far end on a character's end (a message may end here).
    var complete: Bool { need == 0 }

    /// Checks the next bytes; false as soon as they cannot be UTF-8 whatever follows.
    @inline(__always)
    mutating func check(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let count = bytes.count
        if need == 0, Self.isASCII(base, count) { return true }
        var i = 0
        while i < count {
            if need == 0 {
                while i + 8 <= count,
                    base.loadUnaligned(fromByteOffset: i, as: UInt64.self) & 0x8080_8080_8080_8080 == 0
                {
                    i += 8
                }
                guard i < count else { return true }
                let b = base.load(fromByteOffset: i, as: UInt8.self)
                i += 1
                if b < 0x80 { continue }
                guard start(b) else { return false }
            } else {
                let b = base.load(fromByteOffset: i, as: UInt8.self)
                i += 1
                guard b >= low && b <= high else { return false }
                need -= 1
                low = 0x80
                high = 0xBF
            }
        }
        return true
    }

    /// Whether `count` bytes at `p` are all ASCII: eight at a time, the last eight overlapping
    /// the ones before (a drag's 40 bytes are five loads).
    @inline(__always)
    static func isASCII(_ p: UnsafeRawPointer, _ count: Int) -> Bool {
        guard count >= 8 else {
            for i in 0..<count where p.load(fromByteOffset: i, as: UInt8.self) >= 0x80 { return false }
            return true
        }
        var any = p.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
        var i = 0
        while i + 8 <= count {
            any |= p.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            i += 8
        }
        return any & 0x8080_8080_8080_8080 == 0
    }

    /// A lead byte: how many continuation bytes follow, and the range of the first.
    private mutating func start(_ b: UInt8) -> Bool {
        switch b {
        case 0xC2...0xDF: (need, low, high) = (1, 0x80, 0xBF)
        case 0xE0: (need, low, high) = (2, 0xA0, 0xBF)
        case 0xE1...0xEC, 0xEE...0xEF: (need, low, high) = (2, 0x80, 0xBF)
        case 0xED: (need, low, high) = (2, 0x80, 0x9F)
        case 0xF0: (need, low, high) = (3, 0x90, 0xBF)
        case 0xF1...0xF3: (need, low, high) = (3, 0x80, 0xBF)
        case 0xF4: (need, low, high) = (3, 0x80, 0x8F)
        default: return false  // a continuation byte first, C0, C1, F5…FF
        }
        return true
    }
}

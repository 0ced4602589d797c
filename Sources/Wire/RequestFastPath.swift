// The fast path of request decoding, for the lines clients send most: a flat object of
// short ASCII strings, numbers and booleans (`{"op":"drag","movie":"matrix","dx":-60}`).
//
// Why: the full decoder builds a String per key, an array of members and a value tree before it
// looks at the op; at a million requests a second that was most of a ping's cost (issue 6).
// This path scans the line once, keeps each member as offsets on the stack, matches keys and the
// op by their bytes, and creates a String only for a string value an argument keeps.
//
// It decides nothing on its own. It gives up (returns nil) on anything it does not fully
// understand: bad JSON, escapes, non-ASCII or control bytes in a string, a nested value, a
// duplicate or unknown key, a missing or unknown op, more than `capacity` members. The full
// decoder then answers, error messages and all. What it does accept is handed to the same
// `Arguments.build()` the full decoder uses, so the two cannot disagree on a request's meaning:
// the unit tests and the request fuzzer check that they give the same answer on every line.

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

extension RequestDecoder {
    /// Members a flat request may have on the fast path: `op`, `id` and at most five arguments.
    static let fastPathCapacity = 8

    /// The decoded request when `line` is a flat request this path understands; nil otherwise
    /// (`decode` then uses `decodeFull`, which answers every line).
    public static func decodeFast(_ line: UnsafeRawBufferPointer) -> DecodedRequest? {
        guard let base = line.baseAddress, line.count > 0 else { return nil }
        return withUnsafeTemporaryAllocation(of: FlatMember.self, capacity: fastPathCapacity) { members in
            var scanner = Parser(base.assumingMemoryBound(to: UInt8.self), count: line.count, maxDepth: 1)
            guard let count = scanner.scanFlatObject(into: members) else { return nil }
            return resolve(UnsafeBufferPointer(rebasing: members[..<count]), in: scanner.p, end: line.count)
        }
    }

    /// Matches scanned members to the op's arguments and builds the request.
    private static func resolve(
        _ members: UnsafeBufferPointer<FlatMember>, in p: UnsafePointer<UInt8>, end: Int
    ) -> DecodedRequest? {
        // Duplicates are the full decoder's to report.
        for i in members.indices {
            for j in 0..<i where members[j].sameKey(as: members[i], in: p) { return nil }
        }
        var spec: OpSpec?
        var id: [UInt8]?
        let op = FlatWord.op
        let idKey = FlatWord.id
        for member in members {
            if member.keyIs(op.bytes, word: op.word, in: p) {
                guard member.kind == .string else { return nil }
                spec = Ops.named(
                    bytes: member.value(in: p),
                    word: FlatWord.of(p, member.valueStart..<member.valueStart + member.valueCount, end: end))
                if spec == nil { return nil }
            } else if member.keyIs(idKey.bytes, word: idKey.word, in: p) {
                id = compact(UnsafeRawBufferPointer(member.raw(in: p)))
            }
        }
        guard let spec else { return nil }
        var args = Arguments(op: spec)
        for member in members
        where !member.keyIs(op.bytes, word: op.word, in: p)
            && !member.keyIs(idKey.bytes, word: idKey.word, in: p)
        {
            guard let index = spec.args.firstIndex(where: { member.keyIs($0.utf8, word: $0.word, in: p) })
            else {
                return nil
            }
            args.values[index] = member.json(in: p)
        }
        do {
            return DecodedRequest(id: id, op: spec.name, result: .success(try args.build()))
        } catch {
            return DecodedRequest(id: id, op: spec.name, result: .failure(error))
        }
    }
}

/// One member of a flat object: offsets into the line, and the value when it is a number or a
/// boolean. Trivial (no references), so a stack buffer of them needs no clean-up.
struct FlatMember {
    enum Kind { case string, number, bool, null }

    var keyStart: Int
    var keyCount: Int
    /// The key's first eight bytes (`FlatWord`): most keys are told apart by this alone.
    var keyWord: UInt64 = 0
    var kind: Kind
    /// The value's text: a string without its quotes, or the literal as written.
    var valueStart: Int
    var valueCount: Int
    var number = JSONNumber(double: 0, int: 0)
    var flag = false

    func key(in p: UnsafePointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: p + keyStart, count: keyCount)
    }

    func value(in p: UnsafePointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: p + valueStart, count: valueCount)
    }

    /// The value as written: a string with its quotes.
    func raw(in p: UnsafePointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        kind == .string
            ? UnsafeBufferPointer(start: p + valueStart - 1, count: valueCount + 2) : value(in: p)
    }

    /// Whether the key is `name`, given as its bytes and their `FlatWord`.
    @inline(__always)
    func keyIs(_ name: [UInt8], word: UInt64, in p: UnsafePointer<UInt8>) -> Bool {
        guard keyCount == name.count && keyWord == word else { return false }
        return keyCount <= 8
            || name.withUnsafeBufferPointer { memcmp(p + keyStart, $0.baseAddress!, keyCount) == 0 }
    }

    func sameKey(as other: FlatMember, in p: UnsafePointer<UInt8>) -> Bool {
        keyCount == other.keyCount && keyWord == other.keyWord
            && (keyCount <= 8 || memcmp(p + keyStart, p + other.keyStart, keyCount) == 0)
    }

    func json(in p: UnsafePointer<UInt8>) -> JSON {
        switch kind {
        case .string: .string(String(decoding: value(in: p), as: UTF8.self))
        case .number: .number(number)
        case .bool: .bool(flag)
        case .null: .null
        }
    }
}

/// A name's first eight bytes as one little-endian integer, zero-padded: two names of the same
/// length up to 8 bytes are equal exactly when their words are; longer ones compare the rest.
enum FlatWord {
    static func of(_ bytes: [UInt8]) -> UInt64 {
        var word: UInt64 = 0
        for (k, b) in bytes.prefix(8).enumerated() { word |= UInt64(b) << (8 * UInt64(k)) }
        return word
    }

    /// The word of `p[range]`, reading at most up to `end`.
    @inline(__always)
    static func of(_ p: UnsafePointer<UInt8>, _ range: Range<Int>, end: Int) -> UInt64 {
        let count = min(range.count, 8)
        if range.lowerBound + 8 <= end {
            let word = UnsafeRawPointer(p).loadUnaligned(fromByteOffset: range.lowerBound, as: UInt64.self)
            return count == 8 ? word : word & ((1 << (8 * UInt64(count))) &- 1)
        }
        var word: UInt64 = 0
        for k in 0..<count { word |= UInt64(p[range.lowerBound + k]) << (8 * UInt64(k)) }
        return word
    }

    /// Whether any of the eight bytes is `"`, `\`, below 0x20 or 0x80 and above (the classic
    /// "has zero byte" bit trick, on the word xor'ed with each byte to find).
    @inline(__always)
    static func hasSpecialByte(_ w: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        @inline(__always) func hasZero(_ x: UInt64) -> Bool { (x &- ones) & ~x & highs != 0 }
        let control = (w &- 0x2020_2020_2020_2020) & ~w & highs
        return w & highs != 0 || control != 0 || hasZero(w ^ (ones &* 0x22)) || hasZero(w ^ (ones &* 0x5C))
    }

    static let op = (bytes: Array("op".utf8), word: of(Array("op".utf8)))
    static let id = (bytes: Array("id".utf8), word: of(Array("id".utf8)))
}

extension Parser {
    /// Scans a whole line that is one flat object with at most `members.count` members, each a
    /// plain ASCII string, a number, `true`, `false` or `null`, with nothing but whitespace after
    /// it. Returns the member count, or nil for anything else (including every syntax error).
    mutating func scanFlatObject(into members: UnsafeMutableBufferPointer<FlatMember>) -> Int? {
        skipWhitespace()
        guard i < end, p[i] == UInt8(ascii: "{") else { return nil }
        i += 1
        skipWhitespace()
        guard i < end else { return nil }
        var count = 0
        if p[i] == UInt8(ascii: "}") {
            i += 1
        } else {
            while true {
                guard count < members.count, p[i] == UInt8(ascii: "\""), let key = scanPlainString() else {
                    return nil
                }
                skipWhitespace()
                guard i < end, p[i] == UInt8(ascii: ":") else { return nil }
                i += 1
                skipWhitespace()
                guard i < end, let member = scanScalar(key: key) else { return nil }
                members.initializeElement(at: count, to: member)
                count += 1
                skipWhitespace()
                guard i < end else { return nil }
                if p[i] == UInt8(ascii: "}") {
                    i += 1
                    break
                }
                guard p[i] == UInt8(ascii: ",") else { return nil }
                i += 1
                skipWhitespace()
                guard i < end else { return nil }
            }
        }
        skipWhitespace()
        return i == end ? count : nil
    }

    /// At a quote: the string's bytes when they are printable ASCII without escapes. Eight
    /// bytes at a time while none of them is a quote, a backslash, a control byte or ≥ 0x80.
    mutating func scanPlainString() -> Range<Int>? {
        i += 1
        let start = i
        let raw = UnsafeRawPointer(p)
        while i + 8 <= end && !FlatWord.hasSpecialByte(raw.loadUnaligned(fromByteOffset: i, as: UInt64.self))
        {
            i += 8
        }
        while i < end {
            let b = p[i]
            if b == UInt8(ascii: "\"") {
                i += 1
                return start..<(i - 1)
            }
            if b < 0x20 || b == UInt8(ascii: "\\") || b >= 0x80 { return nil }
            i += 1
        }
        return nil
    }

    /// A member's value when it is a scalar this path takes; nil otherwise.
    mutating func scanScalar(key: Range<Int>) -> FlatMember? {
        let start = i
        var member = FlatMember(
            keyStart: key.lowerBound, keyCount: key.count, keyWord: FlatWord.of(p, key, end: end),
            kind: .null,
            valueStart: start, valueCount: 0)
        switch p[i] {
        case UInt8(ascii: "\""):
            guard let text = scanPlainString() else { return nil }
            member.kind = .string
            member.valueStart = text.lowerBound
            member.valueCount = text.count
            return member
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            guard let number = try? parseNumber() else { return nil }
            member.kind = .number
            member.number = number
        case UInt8(ascii: "t"):
            guard (try? parseLiteral("true")) != nil else { return nil }
            member.kind = .bool
            member.flag = true
        case UInt8(ascii: "f"):
            guard (try? parseLiteral("false")) != nil else { return nil }
            member.kind = .bool
        case UInt8(ascii: "n"):
            guard (try? parseLiteral("null")) != nil else { return nil }
        default:
            return nil
        }
        member.valueCount = i - start
        return member
    }
}

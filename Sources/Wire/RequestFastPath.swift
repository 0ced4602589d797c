// The fast path of request decoding, for the lines clients send most: a flat object of
// short ASCII strings, numbers and booleans (`{"op":"drag","movie":"matrix","dx":-60}`).
//
// Why: the full decoder builds a String per key, an array of members and a value tree before it
// looks at the op; at a million requests a second that was most of a ping's cost (issue 6).
// This path scans the line once, keeps each member as offsets on the stack, matches keys and the
// op by their bytes, and creates a String only for a string value an argument keeps.
//
// It words no error. It gives up (returns nil) on anything it does not fully understand or
// would have to refuse: bad JSON, escapes, non-ASCII or control bytes in a string, a nested
// value, a duplicate or unknown key, a missing or unknown op, an op it leaves to the full decoder
// (add, subscribe, history, viewport, configure), an argument of the wrong type or out of range,
// a missing one. The full decoder then answers, error messages and all. Its acceptance rules
// are the full decoder's limits (`Arguments`), and the unit tests and the request fuzzer check
// that the two give the same answer on every line the fast path takes.

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

extension RequestDecoder {
    /// Members a flat request may have on the fast path: `op`, `id` and at most three arguments.
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

    /// Matches scanned members to the op's arguments and builds the request, for the ops clients
    /// send all the time and only when every argument is valid: anything to complain about is
    /// the full decoder's to word.
    private static func resolve(
        _ members: UnsafeBufferPointer<FlatMember>, in p: UnsafePointer<UInt8>, end: Int
    ) -> DecodedRequest? {
        var given = FastArguments()
        var seen: UInt16 = 0
        var id: [UInt8]?
        var spec: OpSpec?
        for member in members {
            guard let key = FastKey(member) else { return nil }
            let bit: UInt16 = 1 << key.rawValue
            guard seen & bit == 0 else { return nil }  // a duplicate
            seen |= bit
            switch key {
            case .op:
                guard member.kind == .string else { return nil }
                spec = Ops.named(
                    bytes: member.value(in: p),
                    word: FlatWord.of(p, member.valueStart..<member.valueStart + member.valueCount, end: end))
            case .id:
                id = compact(UnsafeRawBufferPointer(member.raw(in: p)))
            case .movie:
                guard let text = member.string(in: p, maxBytes: maxStringBytes) else { return nil }
                given.movie = text
            case .action:
                guard let text = member.string(in: p, maxBytes: maxStringBytes) else { return nil }
                given.action = text
            case .key:
                guard let text = member.string(in: p, maxBytes: Arguments.maxKeyBytes) else { return nil }
                given.key = text
            case .dx:
                guard let x = member.coordinate else { return nil }
                given.dx = x
            case .vx:
                guard let x = member.coordinate else { return nil }
                given.vx = x
            case .expect:
                guard member.kind == .number, let n = member.number.int, n >= 0 else { return nil }
                given.expect = UInt64(n)
            }
        }
        guard let spec, let request = given.request(for: spec.kind, keys: seen) else { return nil }
        return DecodedRequest(id: id, op: spec.name, result: .success(request))
    }
}

/// The member names the fast path knows: `op`, `id`, and the arguments of its ops. All are at
/// most eight bytes long, so a name is known by its length and `FlatWord` alone.
private enum FastKey: Int, CaseIterable {
    case op, id, movie, dx, vx, action, expect, key

    static let table: [(count: Int, word: UInt64, key: FastKey)] = allCases.map { key in
        let name = Array("\(key)".utf8)
        return (name.count, FlatWord.of(name), key)
    }

    init?(_ member: FlatMember) {
        for entry in FastKey.table where entry.word == member.keyWord && entry.count == member.keyCount {
            self = entry.key
            return
        }
        return nil
    }

    var bit: UInt16 { 1 << rawValue }
}

/// The arguments the fast path took, each already valid on its own.
private struct FastArguments {
    var movie: String?
    var action: String?
    var key: String?
    var dx: Double?
    var vx: Double?
    var expect: UInt64?

    /// The request when `keys` (a FastKey bit set) are exactly what the op accepts, with all it
    /// requires; nil otherwise (and for the ops this path leaves to the full decoder).
    func request(for op: OpSpec.Kind, keys: UInt16) -> Request? {
        let arguments = keys & ~(FastKey.op.bit | FastKey.id.bit)
        func takes(_ allowed: FastKey...) -> Bool {
            arguments & ~allowed.reduce(0) { $0 | $1.bit } == 0
        }
        switch op {
        case .ping: return takes() ? .ping : nil
        case .list: return takes() ? .list : nil
        case .rows: return takes() ? .rows : nil
        case .help: return takes() ? .help : nil
        case .unsubscribe: return takes() ? .unsubscribe : nil
        case .drag:
            guard takes(.movie, .dx), let movie, let dx else { return nil }
            return .drag(movie: movie, dx: dx)
        case .release:
            guard takes(.movie, .dx, .vx), let movie else { return nil }
            return .release(movie: movie, dx: dx, vx: vx)
        case .tap:
            guard takes(.movie, .action), let movie, let action else { return nil }
            return .tap(movie: movie, action: action)
        case .close:
            guard takes(.movie) else { return nil }
            return .close(movie: movie)
        case .toggleWatched, .toggleWatchedWithFriends, .remove:
            guard takes(.movie, .expect, .key), let movie else { return nil }
            let options = MutationOptions(expect: expect, key: key)
            switch op {
            case .toggleWatched: return .toggleWatched(movie: movie, options: options)
            case .toggleWatchedWithFriends: return .toggleWatchedWithFriends(movie: movie, options: options)
            default: return .remove(movie: movie, options: options)
            }
        case .add, .subscribe, .history, .viewport, .configure:
            return nil
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

    /// A string argument that `Arguments.string` would take: not empty, at most `maxBytes`.
    func string(in p: UnsafePointer<UInt8>, maxBytes: Int) -> String? {
        guard kind == .string, valueCount > 0, valueCount <= maxBytes else { return nil }
        return String(decoding: value(in: p), as: UTF8.self)
    }

    /// A number argument that `Arguments.number` would take without a range (|x| ≤ 1e9).
    var coordinate: Double? {
        guard kind == .number, number.double.magnitude <= Arguments.maxMagnitude else { return nil }
        return number.double
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

// The fast path of request decoding, for the lines clients send most: a flat object of
// short ASCII strings and numbers (`{"op":"drag","movie":"matrix","dx":-60}`).
//
// Why: the full decoder builds a String per key, an array of members and a value tree before it
// looks at the op; at a million requests a second that was most of a ping's cost (issue 6).
// This path reads the line once, left to right: each key is known by its length and first eight
// bytes (every key it takes is at most eight bytes long), each value goes straight into its
// typed slot, and a String is made only for a string argument the request keeps.
//
// It words no error. It gives up (returns nil) on anything it does not fully understand or
// would have to refuse: bad JSON, escapes, non-ASCII or control bytes in a string, a nested
// value, a duplicate or unknown key, a missing or unknown op, an op it leaves to the full decoder
// (add, subscribe, history, viewport, configure, peek…), an argument of the wrong type or out of range,
// a missing one. The full decoder then answers, error messages and all. Its acceptance rules
// are the op table's limits (`Limits`, declared once in ArgSpec.swift and used by Ops.swift),
// and the unit tests and the request fuzzer check that the two give the same answer on every
// line the fast path takes.
import JSONCodec

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

extension RequestDecoder {
    /// The decoded request when `line` is a valid flat request of an op this path takes; nil
    /// otherwise (`decode` then uses `decodeFull`, which answers every line).
    public static func decodeFast(_ line: UnsafeRawBufferPointer) -> DecodedRequest? {
        var decoded: DecodedRequest?
        _ = withFastRequest(line) { decoded = DecodedRequest(id: $1, op: $2.rawValue, result: .success($0)) }
        return decoded
    }

    /// Hands the fast path's request to `body` and returns true, or returns false (the line is
    /// for `decodeFull`). What the daemon calls first for every line: no Optional around the
    /// request to unwrap and destroy (that went through generic value witnesses).
    public static func withFastRequest(
        _ line: UnsafeRawBufferPointer, _ body: (Request, [UInt8]?, OpSpec.Kind) -> Void
    ) -> Bool {
        withFastRequest(line, body) { _, _ in }
    }

    /// `withFastRequest`, showing a drag's arguments to `drag` before `body` gets it (for
    /// `DragRepeat`).
    @inline(__always)
    static func withFastRequest(
        _ line: UnsafeRawBufferPointer, _ body: (Request, [UInt8]?, OpSpec.Kind) -> Void,
        drag: (inout FastArguments, Request) -> Void
    ) -> Bool {
        guard let base = line.baseAddress, line.count > 0 else { return false }
        var scanner = Parser(base.assumingMemoryBound(to: UInt8.self), count: line.count, maxDepth: 1)
        var given = FastArguments()
        guard scanner.scanFlatRequest(into: &given), let op = given.op else { return false }
        let p = scanner.p
        guard
            let kind = fastOp(
                UnsafeBufferPointer(start: p + op.lowerBound, count: op.count),
                word: FlatWord.of(p, op, end: line.count)),
            let request = given.request(for: kind)
        else { return false }
        if kind == .drag { drag(&given, request) }
        let id = given.id.map { compact(UnsafeRawBufferPointer(start: p + $0.lowerBound, count: $0.count)) }
        body(request, id, kind)
        return true
    }

    /// The op the fast path takes that `name` (with its `FlatWord`) names, by a switch on the
    /// written-out words (`RequestFastPathTests` checks them against the op table); a name
    /// longer than eight bytes is then compared whole.
    @inline(__always)
    static func fastOp(_ name: UnsafeBufferPointer<UInt8>, word: UInt64) -> OpSpec.Kind? {
        func whole(_ text: StaticString) -> Bool {
            name.count == text.utf8CodeUnitCount && memcmp(name.baseAddress!, text.utf8Start, name.count) == 0
        }
        switch (name.count, word) {
        case (4, 0x676E_6970): return .ping
        case (4, 0x7473_696C): return .list
        case (4, 0x7377_6F72): return .rows
        case (4, 0x706C_6568): return .help
        case (4, 0x6761_7264): return .drag
        case (3, 0x70_6174): return .tap
        case (5, 0x65_736F_6C63): return .close
        case (6, 0x6576_6F6D_6572): return .remove
        case (7, 0x65_7361_656C_6572): return .release
        case (11, 0x7263_7362_7573_6E75): return whole("unsubscribe") ? .unsubscribe : nil
        case (14, 0x772D_656C_6767_6F74): return whole("toggle-watched") ? .toggleWatched : nil
        case (27, 0x772D_656C_6767_6F74):
            return whole("toggle-watched-with-friends") ? .toggleWatchedWithFriends : nil
        default: return nil
        }
    }
}

/// The member names the fast path knows: `op`, `id`, and the arguments of its ops. All are at
/// most eight bytes long, so a name is known by its length and `FlatWord` alone.
enum FastKey: Int, CaseIterable {
    case op, id, movie, dx, vx, action, expect, key, dy

    /// The key named by a name of `count` bytes whose `FlatWord` is `word`. The words are
    /// written out (little-endian ASCII; `RequestFastPathTests` checks each against its name):
    /// a table built at start-up would cost a lazy-initialisation check per member.
    @inline(__always)
    init?(count: Int, word: UInt64) {
        switch (count, word) {
        case (2, 0x706F): self = .op  // "op"
        case (2, 0x6469): self = .id  // "id"
        case (5, 0x65_6976_6F6D): self = .movie  // "movie"
        case (2, 0x7864): self = .dx  // "dx"
        case (2, 0x7876): self = .vx  // "vx"
        case (6, 0x6E6F_6974_6361): self = .action  // "action"
        case (6, 0x7463_6570_7865): self = .expect  // "expect"
        case (3, 0x79_656B): self = .key  // "key"
        case (2, 0x7964): self = .dy  // "dy"
        default: return nil
        }
    }

    var bit: UInt16 { 1 << rawValue }
}

/// What the fast path read, each argument already valid on its own.
struct FastArguments {
    /// The FastKey bits of the members seen.
    var seen: UInt16 = 0
    /// Where the op's name and the id's text are in the line.
    var op: Range<Int>?
    var id: Range<Int>?
    var movie: String?
    var action: String?
    var key: String?
    var dx: Double?
    /// Where the dx value is in the line (for `DragRepeat`).
    var dxRange: Range<Int>?
    var dy: Double?
    /// Where the dy value is in the line (for `DragRepeat`).
    var dyRange: Range<Int>?
    var vx: Double?
    var expect: UInt64?

    /// The request when the arguments seen are exactly what the op accepts, with all it
    /// requires; nil otherwise (and for the ops this path leaves to the full decoder).
    func request(for op: OpSpec.Kind) -> Request? {
        let arguments = seen & ~(FastKey.op.bit | FastKey.id.bit)
        // Bit sets, not variadic lists: a variadic argument is an array made at each call.
        @inline(__always) func takes(_ allowed: UInt16) -> Bool { arguments & ~allowed == 0 }
        let movieBit = FastKey.movie.bit
        /// The arguments of the three changes of one movie, which take the same.
        @inline(__always) func movieMutation() -> (String, MutationOptions)? {
            guard takes(movieBit | FastKey.expect.bit | FastKey.key.bit), let movie else { return nil }
            return (movie, MutationOptions(expect: expect, key: key))
        }
        switch op {
        case .ping: return takes(0) ? .ping : nil
        case .list: return takes(0) ? .list(.all) : nil
        case .rows: return takes(0) ? .rows : nil
        case .help: return takes(0) ? .help : nil
        case .unsubscribe: return takes(0) ? .unsubscribe : nil
        case .drag:
            guard takes(movieBit | FastKey.dx.bit | FastKey.dy.bit), let movie, let dx else { return nil }
            return .drag(movie: movie, dx: dx, dy: dy)
        case .release:
            guard takes(movieBit | FastKey.dx.bit | FastKey.vx.bit), let movie else { return nil }
            return .release(movie: movie, dx: dx, vx: vx)
        case .tap:
            guard takes(movieBit | FastKey.action.bit), let movie, let action else { return nil }
            return .tap(movie: movie, action: action)
        case .close:
            guard takes(movieBit) else { return nil }
            return .close(movie: movie)
        case .toggleWatched:
            guard let (movie, options) = movieMutation() else { return nil }
            return .toggleWatched(movie: movie, options: options)
        case .toggleWatchedWithFriends:
            guard let (movie, options) = movieMutation() else { return nil }
            return .toggleWatchedWithFriends(movie: movie, options: options)
        case .remove:
            guard let (movie, options) = movieMutation() else { return nil }
            return .remove(movie: movie, options: options)
        case .options, .add, .subscribe, .history, .viewport, .configure, .restore, .move, .undo, .open,
            .perform,
            .peek, .record, .recording, .share, .peers, .status, .auth, .tokenCreate, .tokenList,
            .tokenRevoke,
            .role, .denials:
            return nil
        }
    }
}

/// A name's first eight bytes as one little-endian integer, zero-padded: two names of the same
/// length up to 8 bytes are equal exactly when their words are; longer ones compare the rest.
enum FlatWord {
    /// The word of a whole name (the tests check the written-out words with it).
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

    /// The high bit of each of the eight bytes (little-endian) that is `"`, `\`, below 0x20 or
    /// 0x80 and above: the classic "has zero byte" trick, on the word xor'ed with each byte to
    /// find. A flag can be wrong only above a true one (a borrow runs upward), so the lowest
    /// flag is always exact, which is all `scanPlainString` reads.
    @inline(__always)
    static func specialBytes(_ w: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        @inline(__always) func zeros(_ x: UInt64) -> UInt64 { (x &- ones) & ~x & highs }
        let control = (w &- 0x2020_2020_2020_2020) & ~w & highs
        return (w & highs) | control | zeros(w ^ (ones &* 0x22)) | zeros(w ^ (ones &* 0x5C))
    }
}

extension Parser {
    /// Reads a whole line that is one flat object whose members are all FastKeys, each once,
    /// with a value of the key's type that the full decoder would accept, and nothing but
    /// whitespace after it. False for anything else (including every syntax error).
    mutating func scanFlatRequest(into given: inout FastArguments) -> Bool {
        skipWhitespace()
        guard i < end, p[i] == UInt8(ascii: "{") else { return false }
        i += 1
        skipWhitespace()
        guard i < end else { return false }
        if p[i] == UInt8(ascii: "}") {
            i += 1
        } else {
            while true {
                guard p[i] == UInt8(ascii: "\""), let name = scanPlainString(), name.count <= 8,
                    let key = FastKey(count: name.count, word: FlatWord.of(p, name, end: end)),
                    given.seen & key.bit == 0
                else { return false }
                given.seen |= key.bit
                skipWhitespace()
                guard i < end, p[i] == UInt8(ascii: ":") else { return false }
                i += 1
                skipWhitespace()
                guard i < end, scanValue(of: key, into: &given) else { return false }
                skipWhitespace()
                guard i < end else { return false }
                if p[i] == UInt8(ascii: "}") {
                    i += 1
                    break
                }
                guard p[i] == UInt8(ascii: ","), i + 1 < end else { return false }
                i += 1
                skipWhitespace()
                guard i < end else { return false }
            }
        }
        skipWhitespace()
        return i == end
    }

    /// At a member's value: reads it into `given` when it has the type `key` takes and is within
    /// the full decoder's limits.
    mutating func scanValue(of key: FastKey, into given: inout FastArguments) -> Bool {
        switch key {
        case .op:
            guard p[i] == UInt8(ascii: "\""), let name = scanPlainString() else { return false }
            given.op = name
        case .id:
            let start = i
            guard skipScalar() else { return false }
            given.id = start..<i
        case .movie:
            guard let text = scanStringArgument(bytes: Limits.stringBytes) else { return false }
            given.movie = text
        case .action:
            guard let text = scanStringArgument(bytes: Limits.stringBytes) else { return false }
            given.action = text
        case .key:
            guard let text = scanStringArgument(bytes: Limits.keyBytes) else { return false }
            given.key = text
        case .dx, .vx, .dy:
            let start = i
            let x: Double
            if let small = scanSmallInteger() {
                x = Double(small)
            } else {
                guard isNumberStart, let number = try? parseNumber() else { return false }
                x = number.double
            }
            guard Limits.number.contains(x) else { return false }
            switch key {
            case .dx:
                given.dx = x
                given.dxRange = start..<i
            case .dy:
                given.dy = x
                given.dyRange = start..<i
            case .vx:
                given.vx = x
            case .op, .id, .movie, .action, .expect, .key:
                preconditionFailure("\(key) is not a number")
            }
        case .expect:
            guard isNumberStart, let number = try? parseNumber(), let n = number.int, n >= 0 else {
                return false
            }
            given.expect = UInt64(n)
        }
        return true
    }

    /// A plain integer of one to fifteen digits not starting with 0 (`-60`, `330`): what most
    /// offsets are, read without the general number scanner. Anything else — a zero, a fraction,
    /// an exponent, more digits — is left for `parseNumber` (nil, nothing consumed). Fifteen
    /// digits are exact in a Double, so the value is the one `parseNumber` would give.
    @inline(__always)
    private mutating func scanSmallInteger() -> Int64? {
        var j = i
        let negative = p[j] == UInt8(ascii: "-")
        if negative { j += 1 }
        guard j < end, p[j] &- UInt8(ascii: "1") <= 8 else { return nil }
        let first = j
        var value: Int64 = 0
        while j < end, p[j] &- UInt8(ascii: "0") <= 9 {
            guard j - first < 15 else { return nil }
            value = value &* 10 &+ Int64(p[j] &- UInt8(ascii: "0"))
            j += 1
        }
        if j < end, p[j] == UInt8(ascii: ".") || p[j] | 0x20 == UInt8(ascii: "e") { return nil }
        i = j
        return negative ? -value : value
    }

    private var isNumberStart: Bool { p[i] == UInt8(ascii: "-") || (p[i] &- UInt8(ascii: "0")) <= 9 }

    /// A string argument that `Arguments.string` would take: plain, its length within `bytes`.
    private mutating func scanStringArgument(bytes: ClosedRange<Int>) -> String? {
        guard p[i] == UInt8(ascii: "\""), let text = scanPlainString(), bytes.contains(text.count)
        else { return nil }
        return String(
            decoding: UnsafeBufferPointer(start: p + text.lowerBound, count: text.count), as: UTF8.self)
    }

    /// Skips a plain string, a number, `true`, `false` or `null` (an `id`).
    private mutating func skipScalar() -> Bool {
        switch p[i] {
        case UInt8(ascii: "\""): return scanPlainString() != nil
        case UInt8(ascii: "t"): return (try? parseLiteral("true")) != nil
        case UInt8(ascii: "f"): return (try? parseLiteral("false")) != nil
        case UInt8(ascii: "n"): return (try? parseLiteral("null")) != nil
        default: return isNumberStart && (try? parseNumber()) != nil
        }
    }

    /// At a quote: the string's bytes when they are printable ASCII without escapes. Eight
    /// bytes at a time: the first byte that is a quote, a backslash, a control byte or ≥ 0x80
    /// is found with bit tricks (`FlatWord.specialBytes`), and the string is good exactly when
    /// that byte is its closing quote.
    mutating func scanPlainString() -> Range<Int>? {
        i += 1
        let start = i
        let raw = UnsafeRawPointer(p)
        while i + 8 <= end {
            let special = FlatWord.specialBytes(raw.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            if special == 0 {
                i += 8
                continue
            }
            i += special.trailingZeroBitCount >> 3
            guard p[i] == UInt8(ascii: "\"") else { return nil }
            i += 1
            return start..<(i - 1)
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
}

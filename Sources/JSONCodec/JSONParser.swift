// A strict RFC 8259 parser over raw bytes.
//
// Why our own: Foundation's parsers on Linux accept trailing commas, invalid UTF-8, raw control
// characters, `010` and `1e999`, and cost about 4 µs per small object. This one takes exactly one
// value with optional whitespace around it, and nothing else.
//
// Speed: it works on an UnsafePointer with one index, never allocates per byte, turns ASCII
// strings without escapes into Strings in one step (short ones are stored inline, with no
// allocation), and builds numbers by hand, falling back to the standard library's correctly
// rounded Double(String) only when the fast path cannot be exact.
//
// Safety: it recurses once per nesting level and stops at `maxDepth` (64 by default), so a
// 10,000-deep `[[[[…` fails at the 65th bracket without deep recursion.

/// A top-level object member with the byte range of its value's text, so the daemon can echo a
/// request's `"id"` verbatim.
public struct JSONRawMember: Equatable, Sendable {
    public var key: String
    public var value: JSON
    /// The value's bytes in the input, without surrounding whitespace (offsets relative to the
    /// start of the buffer that was parsed).
    public var range: Range<Int>

    public init(key: String, value: JSON, range: Range<Int>) {
        self.key = key
        self.value = value
        self.range = range
    }
}

public enum JSONParser {
    public static let defaultMaxDepth = 64

    /// Parses exactly one JSON value, with optional whitespace (space, tab, CR, LF) around it.
    public static func parse(
        _ bytes: UnsafeRawBufferPointer, maxDepth: Int = defaultMaxDepth
    ) throws(JSONError) -> JSON {
        guard let base = bytes.baseAddress, bytes.count > 0 else { throw .endOfInput(0) }
        var parser = Parser(
            base.assumingMemoryBound(to: UInt8.self), count: bytes.count,
            maxDepth: maxDepth)
        return try parser.parseDocument()
    }

    /// Parses a top-level object and returns its members in order, duplicates included, each with
    /// its value's raw byte range. Valid JSON that is not an object throws `.notAnObject`
    /// ("expected a JSON object at byte N"); invalid JSON throws its syntax error.
    public static func parseObjectMembers(
        _ bytes: UnsafeRawBufferPointer, maxDepth: Int = defaultMaxDepth
    ) throws(JSONError) -> [JSONRawMember] {
        guard let base = bytes.baseAddress, bytes.count > 0 else { throw .endOfInput(0) }
        var parser = Parser(
            base.assumingMemoryBound(to: UInt8.self), count: bytes.count,
            maxDepth: maxDepth)
        return try parser.parseRawMembersDocument()
    }

    // Convenience overloads. Offsets are relative to the start of the given bytes (for a slice,
    // its first element, not index 0 of the base array).

    public static func parse(_ bytes: [UInt8], maxDepth: Int = defaultMaxDepth) throws(JSONError) -> JSON {
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(JSONError) in try parse(buffer, maxDepth: maxDepth) }
        }
        return try result.get()
    }

    public static func parse(_ bytes: ArraySlice<UInt8>, maxDepth: Int = defaultMaxDepth) throws(JSONError)
        -> JSON
    {
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(JSONError) in try parse(buffer, maxDepth: maxDepth) }
        }
        return try result.get()
    }

    public static func parse(_ text: String, maxDepth: Int = defaultMaxDepth) throws(JSONError) -> JSON {
        var text = text
        let result = text.withUTF8 { buffer in
            Result { () throws(JSONError) in try parse(UnsafeRawBufferPointer(buffer), maxDepth: maxDepth) }
        }
        return try result.get()
    }

    public static func parseObjectMembers(
        _ bytes: [UInt8], maxDepth: Int = defaultMaxDepth
    ) throws(JSONError) -> [JSONRawMember] {
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(JSONError) in try parseObjectMembers(buffer, maxDepth: maxDepth) }
        }
        return try result.get()
    }

    public static func parseObjectMembers(
        _ bytes: ArraySlice<UInt8>, maxDepth: Int = defaultMaxDepth
    ) throws(JSONError) -> [JSONRawMember] {
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(JSONError) in try parseObjectMembers(buffer, maxDepth: maxDepth) }
        }
        return try result.get()
    }

    public static func parseObjectMembers(
        _ text: String, maxDepth: Int = defaultMaxDepth
    ) throws(JSONError) -> [JSONRawMember] {
        var text = text
        let result = text.withUTF8 { buffer in
            Result { () throws(JSONError) in
                try parseObjectMembers(UnsafeRawBufferPointer(buffer), maxDepth: maxDepth)
            }
        }
        return try result.get()
    }
}

// ASCII bytes the grammar names. Computed, not stored: the scanners Wire's fast path inlines
// (see `Parser`) read them in another module, where a stored global is a call to its accessor.
@inlinable var quote: UInt8 { 0x22 }
@inlinable var backslash: UInt8 { 0x5C }
@inlinable var comma: UInt8 { 0x2C }
@inlinable var colon: UInt8 { 0x3A }
@inlinable var openBrace: UInt8 { 0x7B }
@inlinable var closeBrace: UInt8 { 0x7D }
@inlinable var openBracket: UInt8 { 0x5B }
@inlinable var closeBracket: UInt8 { 0x5D }
@inlinable var minus: UInt8 { 0x2D }
@inlinable var plus: UInt8 { 0x2B }
@inlinable var dot: UInt8 { 0x2E }
@inlinable var zero: UInt8 { 0x30 }
@inlinable var nine: UInt8 { 0x39 }

@inlinable @inline(__always) func isDigit(_ b: UInt8) -> Bool { b &- zero <= 9 }

/// The parser's state over one buffer. `package`, with the scanners a request is read by
/// `@inlinable`: Wire's fast lanes (RequestFastPath.swift, RequestRepeat.swift) extend it with
/// their own scanners and run for every request, so these must inline there as they did when
/// both lived in one module.
///
/// `@usableFromInline` on the type and its stored properties too: without it, the compiler
/// does not serialize the bodies of its `@inlinable package` methods, and every call from Wire
/// stays a call (seen with callgrind: +7 % instructions per ping, +12 % per drag).
@usableFromInline package struct Parser {
    @usableFromInline package let p: UnsafePointer<UInt8>
    @usableFromInline package let end: Int
    @usableFromInline package let maxDepth: Int
    @usableFromInline package var i: Int
    @usableFromInline package var depth: Int
    /// Reused by strings with escapes; allocated at most once per parse.
    @usableFromInline package var scratch: [UInt8]

    /// (The initial values are set here, not where the properties are declared: a declared
    /// initial value is a function of this module, which the inlined `init` would call.)
    @inlinable
    package init(_ p: UnsafePointer<UInt8>, count: Int, maxDepth: Int) {
        self.p = p
        self.end = count
        self.maxDepth = maxDepth
        i = 0
        depth = 0
        scratch = []
    }

    // MARK: Documents

    mutating func parseDocument() throws(JSONError) -> JSON {
        let value = try parseValue()
        try expectEndOfDocument()
        return value
    }

    mutating func parseRawMembersDocument() throws(JSONError) -> [JSONRawMember] {
        skipWhitespace()
        guard i < end else { throw .endOfInput(i) }
        let start = i
        guard p[i] == openBrace else {
            // Tell a bad line (bad-json) from good JSON of the wrong shape (bad-request).
            _ = try parseDocument()
            throw JSONError(
                .notAnObject, offset: start,
                message: "expected a JSON object at byte \(start)")
        }
        try enter()
        i += 1
        var members: [JSONRawMember] = []
        members.reserveCapacity(8)
        if try !atObjectEnd() {
            repeat {
                let key = try parseKey()
                skipWhitespace()
                let valueStart = i
                let value = try parseValue()
                members.append(JSONRawMember(key: key, value: value, range: valueStart..<i))
            } while try objectContinues()
        }
        depth -= 1
        try expectEndOfDocument()
        return members
    }

    mutating func expectEndOfDocument() throws(JSONError) {
        skipWhitespace()
        if i < end { throw .at(i, "trailing characters after the value") }
    }

    // MARK: Values

    @inlinable @inline(__always)
    package mutating func skipWhitespace() {
        while i < end {
            let b = p[i]
            guard b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 else { return }
            i += 1
        }
    }

    mutating func parseValue() throws(JSONError) -> JSON {
        skipWhitespace()
        guard i < end else { throw .endOfInput(i) }
        switch p[i] {
        case quote: return .string(try parseString())
        case openBrace: return .object(try parseObject())
        case openBracket: return .array(try parseArray())
        case UInt8(ascii: "t"): try parseLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try parseLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try parseLiteral("null"); return .null
        case minus, zero...nine: return .number(try parseNumber())
        case 0xEF where i + 2 < end && p[i + 1] == 0xBB && p[i + 2] == 0xBF:
            throw .at(i, "byte order mark (not allowed)")
        case let b: throw .unexpected(b, at: i)
        }
    }

    @inlinable
    package mutating func parseLiteral(_ word: StaticString) throws(JSONError) {
        let start = i
        let count = word.utf8CodeUnitCount
        let text = word.utf8Start
        for k in 0..<count {
            guard i < end else { throw .endOfInput(i) }
            guard p[i] == text[k] else { throw .at(start, "invalid literal (expected '\(word)')") }
            i += 1
        }
    }

    mutating func enter() throws(JSONError) {
        depth += 1
        if depth > maxDepth { throw .at(i, "nesting deeper than \(maxDepth)") }
    }

    /// At `{`. Members in order, duplicates kept.
    mutating func parseObject() throws(JSONError) -> JSONObject {
        try enter()
        i += 1
        var members: [JSONObject.Member] = []
        if try !atObjectEnd() {
            members.reserveCapacity(4)
            repeat {
                let key = try parseKey()
                let value = try parseValue()
                members.append((key: key, value: value))
            } while try objectContinues()
        }
        depth -= 1
        return JSONObject(members)
    }

    /// Just after `{`: consumes `}` of an empty object.
    mutating func atObjectEnd() throws(JSONError) -> Bool {
        skipWhitespace()
        guard i < end else { throw .endOfInput(i) }
        if p[i] == closeBrace { i += 1; return true }
        return false
    }

    /// A member's key and its colon.
    mutating func parseKey() throws(JSONError) -> String {
        skipWhitespace()
        guard i < end else { throw .endOfInput(i) }
        guard p[i] == quote else { throw .at(i, "expected a member name in double quotes") }
        let key = try parseString()
        skipWhitespace()
        guard i < end else { throw .endOfInput(i) }
        guard p[i] == colon else { throw .at(i, "expected ':' after member name") }
        i += 1
        return key
    }

    /// After a member: true after `,`, false after `}`.
    mutating func objectContinues() throws(JSONError) -> Bool {
        skipWhitespace()
        guard i < end else { throw .endOfInput(i) }
        switch p[i] {
        case comma:
            let at = i
            i += 1
            skipWhitespace()
            if i < end && p[i] == closeBrace { throw .at(at, "trailing comma") }
            return true
        case closeBrace:
            i += 1
            return false
        default:
            throw .at(i, "expected ',' or '}' after object member")
        }
    }

    /// At `[`.
    mutating func parseArray() throws(JSONError) -> [JSON] {
        try enter()
        i += 1
        var elements: [JSON] = []
        skipWhitespace()
        guard i < end else { throw .endOfInput(i) }
        if p[i] == closeBracket {
            i += 1
        } else {
            while true {
                elements.append(try parseValue())
                skipWhitespace()
                guard i < end else { throw .endOfInput(i) }
                if p[i] == closeBracket { i += 1; break }
                guard p[i] == comma else { throw .at(i, "expected ',' or ']' after array element") }
                let at = i
                i += 1
                skipWhitespace()
                if i < end && p[i] == closeBracket { throw .at(at, "trailing comma") }
            }
        }
        depth -= 1
        return elements
    }

    // MARK: Strings

    /// At the opening quote.
    mutating func parseString() throws(JSONError) -> String {
        let open = i
        i += 1
        let start = i
        // Fast path: ASCII without escapes or control characters, the usual key or value.
        while i < end {
            let b = p[i]
            if b == quote {
                let s = String(
                    decoding: UnsafeBufferPointer(start: p + start, count: i - start),
                    as: UTF8.self)
                i += 1
                return s
            }
            if b < 0x20 || b == backslash || b >= 0x80 { break }
            i += 1
        }
        return try parseStringSlow(open: open, start: start)
    }

    /// The rest of a string from `i`: validates UTF-8 and decodes escapes into `scratch`.
    mutating func parseStringSlow(open: Int, start: Int) throws(JSONError) -> String {
        var escaped = false
        var segment = start  // first byte not yet copied into scratch
        while i < end {
            let b = p[i]
            if b == quote {
                let s: String
                if escaped {
                    scratch.append(contentsOf: UnsafeBufferPointer(start: p + segment, count: i - segment))
                    s = String(decoding: scratch, as: UTF8.self)
                } else {
                    s = String(
                        decoding: UnsafeBufferPointer(start: p + start, count: i - start),
                        as: UTF8.self)
                }
                i += 1
                return s
            }
            if b < 0x20 {
                throw .at(i, "raw control character U+\(JSONError.hex(UInt32(b), digits: 4)) in string")
            }
            if b == backslash {
                if !escaped {
                    escaped = true
                    scratch.removeAll(keepingCapacity: true)
                }
                scratch.append(contentsOf: UnsafeBufferPointer(start: p + segment, count: i - segment))
                try parseEscape()
                segment = i
            } else if b < 0x80 {
                i += 1
            } else {
                try skipUTF8Sequence()
            }
        }
        throw JSONError(offset: end, message: "unexpected end of input in string starting at byte \(open)")
    }

    /// At a lead byte ≥ 0x80: one well-formed UTF-8 sequence (Unicode Table 3-7), so no overlongs,
    /// no encoded surrogates, nothing above U+10FFFF, nothing truncated.
    mutating func skipUTF8Sequence() throws(JSONError) {
        let at = i
        var low: UInt8 = 0x80, high: UInt8 = 0xBF
        let continuations: Int
        switch p[i] {
        case 0xC2...0xDF: continuations = 1
        case 0xE0: continuations = 2; low = 0xA0
        case 0xE1...0xEC, 0xEE, 0xEF: continuations = 2
        case 0xED: continuations = 2; high = 0x9F
        case 0xF0: continuations = 3; low = 0x90
        case 0xF1...0xF3: continuations = 3
        case 0xF4: continuations = 3; high = 0x8F
        default: throw .at(at, "invalid UTF-8")
        }
        guard at + continuations < end else { throw .at(at, "invalid UTF-8") }
        let second = p[at + 1]
        guard second >= low && second <= high else { throw .at(at, "invalid UTF-8") }
        var k = 2
        while k <= continuations {
            guard p[at + k] & 0xC0 == 0x80 else { throw .at(at, "invalid UTF-8") }
            k += 1
        }
        i = at + continuations + 1
    }

    /// At a backslash: decodes one escape (a surrogate pair counts as one) into `scratch`.
    mutating func parseEscape() throws(JSONError) {
        let at = i
        guard i + 1 < end else { throw .endOfInput(end) }
        let c = p[i + 1]
        i += 2
        switch c {
        case quote, backslash, UInt8(ascii: "/"): scratch.append(c)
        case UInt8(ascii: "b"): scratch.append(0x08)
        case UInt8(ascii: "f"): scratch.append(0x0C)
        case UInt8(ascii: "n"): scratch.append(0x0A)
        case UInt8(ascii: "r"): scratch.append(0x0D)
        case UInt8(ascii: "t"): scratch.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try parseHex4()
            if scalar >= 0xD800 && scalar <= 0xDBFF {
                guard i + 1 < end, p[i] == backslash, p[i + 1] == UInt8(ascii: "u") else {
                    throw .loneSurrogate(scalar, at: at)
                }
                i += 2
                let low = try parseHex4()
                guard low >= 0xDC00 && low <= 0xDFFF else { throw .loneSurrogate(scalar, at: at) }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if scalar >= 0xDC00 && scalar <= 0xDFFF {
                throw .loneSurrogate(scalar, at: at)
            }
            appendUTF8(scalar)
        default:
            throw .at(at, "invalid escape '\\\(JSONError.describe(c))' in string")
        }
    }

    mutating func parseHex4() throws(JSONError) -> UInt32 {
        guard i + 4 <= end else { throw .endOfInput(end) }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let b = p[i]
            let digit: UInt8
            switch b {
            case zero...nine: digit = b - zero
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = b - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = b - UInt8(ascii: "A") + 10
            default: throw .at(i, "invalid hex digit \(JSONError.describe(b)) in \\u escape")
            }
            value = value << 4 | UInt32(digit)
            i += 1
        }
        return value
    }

    mutating func appendUTF8(_ scalar: UInt32) {
        switch scalar {
        case 0..<0x80:
            scratch.append(UInt8(scalar))
        case 0x80..<0x800:
            scratch.append(UInt8(0xC0 | scalar >> 6))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        case 0x800..<0x10000:
            scratch.append(UInt8(0xE0 | scalar >> 12))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        default:
            scratch.append(UInt8(0xF0 | scalar >> 18))
            scratch.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        }
    }
}

extension JSONError {
    static func loneSurrogate(_ scalar: UInt32, at offset: Int) -> JSONError {
        at(offset, "lone surrogate \\u\(hex(scalar, digits: 4)) in string")
    }
}

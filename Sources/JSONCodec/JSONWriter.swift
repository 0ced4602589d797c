// Appends JSON to a byte buffer.
//
// Commas are placed for the caller: before a key or a value, the writer looks at the last byte
// it wrote. After `{`, `[`, `:` or a newline (or at the start) no comma is needed; after anything
// else (the end of a value) one is. Every complete value ends in `"`, `}`, `]`, a digit or a
// letter of true/false/null, so this needs no stack, as long as `raw` is given whole values.
//
// Output never contains a raw newline except the one `newline()` appends: strings escape every
// control character, so a written line is always one frame of the line protocol.

public struct JSONWriter: Sendable {
    public var bytes: [UInt8]

    @inlinable
    public init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Empties the buffer but keeps its storage, to build the next line without allocating.
    @inlinable
    public mutating func reset() {
        bytes.removeAll(keepingCapacity: true)
    }

    /// The line terminator of the protocol.
    @inlinable
    public mutating func newline() {
        bytes.append(0x0A)
    }

    /// Whether the next key or value needs a comma before it (see the top of the file).
    @inlinable @inline(__always)
    var needsComma: Bool {
        guard let last = bytes.last else { return false }
        switch last {
        case 0x7B, 0x5B, 0x3A, 0x0A: return false  // { [ : newline
        default: return true
        }
    }

    @inlinable @inline(__always)
    mutating func separate() {
        if needsComma { bytes.append(0x2C) }
    }

    // MARK: Structure

    @inlinable
    public mutating func beginObject() {
        separate()
        bytes.append(0x7B)
    }

    @inlinable
    public mutating func endObject() {
        bytes.append(0x7D)
    }

    @inlinable
    public mutating func beginArray() {
        separate()
        bytes.append(0x5B)
    }

    @inlinable
    public mutating func endArray() {
        bytes.append(0x5D)
    }

    /// A member name and its colon; the next value call writes the member's value.
    @inlinable
    public mutating func key(_ name: String) {
        appendString(name, comma: needsComma, colon: true)
    }

    /// `{ … }` around `body`.
    @inlinable
    public mutating func object(_ body: (inout JSONWriter) -> Void) {
        beginObject()
        body(&self)
        endObject()
    }

    /// `[ … ]` around `body`.
    @inlinable
    public mutating func array(_ body: (inout JSONWriter) -> Void) {
        beginArray()
        body(&self)
        endArray()
    }

    // MARK: Scalars

    @inlinable
    public mutating func string(_ value: String) {
        appendString(value, comma: needsComma, colon: false)
    }

    @inlinable
    public mutating func bool(_ value: Bool) {
        separate()
        appendStatic(value ? "true" : "false")
    }

    @inlinable
    public mutating func null() {
        separate()
        appendStatic("null")
    }

    @inlinable
    public mutating func int(_ value: Int) {
        int64(Int64(value))
    }

    @inlinable
    public mutating func int64(_ value: Int64) {
        digits(value.magnitude, negative: value < 0)
    }

    @inlinable
    public mutating func uint64(_ value: UInt64) {
        digits(value, negative: false)
    }

    /// An integer through the one formatter (`NumberText`), in place.
    @inlinable @inline(__always)
    mutating func digits(_ magnitude: UInt64, negative: Bool) {
        separate()
        bytes.append(addingCapacity: 21) { span in
            span.withUnsafeMutableBufferPointer { buffer, count in
                count += NumberText.writeDigits(
                    magnitude, negative: negative, to: buffer.baseAddress! + count)
            }
        }
    }

    /// Integral values within ±2^53 as integers (`-70`, not `-70.0`); others as the shortest
    /// representation that parses back to the same double (Swift's `description`, e.g. `0.1`,
    /// `1e-05`, `1e+20`: always valid JSON). NaN and infinities have no JSON form: `null`.
    @inlinable
    public mutating func double(_ value: Double) {
        separate()
        bytes.append(addingCapacity: NumberText.maxDoubleBytes) { span in
            span.withUnsafeMutableBufferPointer { buffer, count in
                count += NumberText.write(value, to: buffer.baseAddress! + count)
            }
        }
    }

    /// A parsed number: its exact integer when it has one, else its double. Writing and parsing
    /// again gives an equal JSONNumber (see JSONNumber).
    @inlinable
    public mutating func number(_ value: JSONNumber) {
        if let exact = value.int {
            int64(exact)
        } else {
            double(value.double)
        }
    }

    /// Bytes already known to be one complete JSON value, such as a request's `"id"` echoed
    /// verbatim from the raw range the parser reported. Not checked.
    public mutating func raw(_ value: UnsafeRawBufferPointer) {
        separate()
        bytes.append(contentsOf: value)
    }

    public mutating func raw(_ value: ArraySlice<UInt8>) {
        separate()
        bytes.append(contentsOf: value)
    }

    public mutating func raw(_ value: [UInt8]) {
        separate()
        bytes.append(contentsOf: value)
    }

    /// Any JSON value; object members in their order, duplicates included.
    public mutating func value(_ value: JSON) {
        switch value {
        case .null: null()
        case .bool(let b): bool(b)
        case .number(let n): number(n)
        case .string(let s): string(s)
        case .array(let elements):
            beginArray()
            for element in elements { self.value(element) }
            endArray()
        case .object(let object):
            beginObject()
            for member in object.members {
                if case .string(let text) = member.value {
                    field(member.key, text)  // one append for the whole member
                } else {
                    key(member.key)
                    self.value(member.value)
                }
            }
            endObject()
        }
    }

    // MARK: Members, for replies that read like their JSON

    /// `"name":"value"`: the most common member of a reply, in one append when both are short
    /// and need no escapes (see `appendString`).
    public mutating func field(_ name: String, _ value: String) {
        let comma = needsComma
        var name = name
        var value = value
        let done = name.withUTF8 { key in
            value.withUTF8 { text in
                let total = key.count + text.count
                guard total <= 240, !needsEscaping(key), !needsEscaping(text) else { return false }
                withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 246) { staging in
                    let base = staging.baseAddress!
                    var k = 0
                    if comma {
                        base[k] = 0x2C
                        k += 1
                    }
                    base[k] = 0x22
                    k += 1
                    if let source = key.baseAddress, key.count > 0 {
                        (base + k).initialize(from: source, count: key.count)
                    }
                    k += key.count
                    (base + k).initialize(repeating: 0x22, count: 3)  // ":"
                    base[k + 1] = 0x3A
                    k += 3
                    if let source = text.baseAddress, text.count > 0 {
                        (base + k).initialize(from: source, count: text.count)
                    }
                    k += text.count
                    base[k] = 0x22
                    k += 1
                    bytes.append(contentsOf: UnsafeBufferPointer(start: base, count: k))
                }
                return true
            }
        }
        if !done {
            key(name)
            string(value)
        }
    }
    public mutating func field(_ name: String, _ value: Bool) { key(name); bool(value) }
    public mutating func field(_ name: String, _ value: Int) { key(name); int(value) }
    public mutating func field(_ name: String, _ value: Int64) { key(name); int64(value) }
    public mutating func field(_ name: String, _ value: UInt64) { key(name); uint64(value) }
    public mutating func field(_ name: String, _ value: Double) { key(name); double(value) }
    public mutating func field(_ name: String, _ value: JSON) { key(name); self.value(value) }

    @inlinable
    public mutating func field(_ name: String, object body: (inout JSONWriter) -> Void) {
        key(name)
        object(body)
    }

    @inlinable
    public mutating func field(_ name: String, array body: (inout JSONWriter) -> Void) {
        key(name)
        array(body)
    }

    // MARK: Encoding

    /// Literal text, without allocating an array for it.
    @inlinable @inline(__always)
    mutating func appendStatic(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// A quoted string, with a comma before it and a colon after it when asked. Swift strings
    /// are valid UTF-8, so only `"`, `\` and control characters need escaping; everything else
    /// (including U+2028) is copied as is.
    ///
    /// Why the staging: each `Array.append` costs a uniqueness and capacity check and a generic
    /// copy (about 70 instructions), so a short string without escapes, which is nearly every key
    /// and value, is assembled on the stack and appended once.
    @inlinable
    mutating func appendString(_ value: String, comma: Bool, colon: Bool) {
        var value = value
        value.withUTF8 { utf8 in
            let count = utf8.count
            if count <= 120 && !needsEscaping(utf8) {
                withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 124) { staging in
                    let base = staging.baseAddress!
                    var k = 0
                    if comma { base[k] = 0x2C; k += 1 }
                    base[k] = 0x22; k += 1
                    if let source = utf8.baseAddress, count > 0 {
                        (base + k).initialize(from: source, count: count)
                    }
                    k += count
                    base[k] = 0x22; k += 1
                    if colon { base[k] = 0x3A; k += 1 }
                    bytes.append(contentsOf: UnsafeBufferPointer(start: base, count: k))
                }
                return
            }
            if comma { bytes.append(0x2C) }
            appendEscaped(utf8)
            if colon { bytes.append(0x3A) }
        }
    }

    @inlinable @inline(__always)
    func needsEscaping(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        !JSONText.isPlain(utf8)
    }

    /// The general case: quotes, and clean runs copied between escapes.
    @usableFromInline
    mutating func appendEscaped(_ utf8: UnsafeBufferPointer<UInt8>) {
        bytes.append(0x22)
        guard let base = utf8.baseAddress else {
            bytes.append(0x22)
            return
        }
        let count = utf8.count
        var clean = 0  // start of the run not yet copied
        var index = 0
        while index < count {
            let b = base[index]
            if b < 0x20 || b == 0x22 || b == 0x5C {
                if index > clean {
                    bytes.append(contentsOf: UnsafeBufferPointer(start: base + clean, count: index - clean))
                }
                appendEscape(b)
                clean = index + 1
            }
            index += 1
        }
        bytes.append(contentsOf: UnsafeBufferPointer(start: base + clean, count: count - clean))
        bytes.append(0x22)
    }

    @usableFromInline
    mutating func appendEscape(_ b: UInt8) {
        bytes.append(0x5C)
        switch b {
        case 0x22, 0x5C: bytes.append(b)
        case 0x0A: bytes.append(UInt8(ascii: "n"))
        case 0x0D: bytes.append(UInt8(ascii: "r"))
        case 0x09: bytes.append(UInt8(ascii: "t"))
        case 0x08: bytes.append(UInt8(ascii: "b"))
        case 0x0C: bytes.append(UInt8(ascii: "f"))
        default:
            let hexDigits: StaticString = "0123456789abcdef"
            appendStatic("u00")
            bytes.append(hexDigits.utf8Start[Int(b >> 4)])
            bytes.append(hexDigits.utf8Start[Int(b & 0xF)])
        }
    }
}

/// Numbers as JSON text, written straight into memory: the one formatter behind
/// `JSONWriter.double` and the row templates' numbers (Wire's RowTemplate.swift), so both spell
/// a number the same way. `@inlinable`: a drag's reply is written by Wire with these.
@usableFromInline package enum NumberText {
    /// The most bytes `write` writes: a sign, 17 significant digits, a point, an exponent.
    @inlinable package static var maxDoubleBytes: Int { 32 }

    /// Integral values within ±2^53 as integers (`-70`, not `-70.0`); others as the shortest
    /// representation that parses back to the same double (Swift's `description`, e.g. `0.1`,
    /// `1e-05`, `1e+20`: always valid JSON). NaN and infinities have no JSON form: `null`.
    /// Returns the number of bytes written.
    @inlinable @inline(__always)
    package static func write(_ value: Double, to p: UnsafeMutablePointer<UInt8>) -> Int {
        if let exact = JSONNumber.exactInteger(value) {
            return writeDigits(exact.magnitude, negative: exact < 0, to: p)
        }
        guard value.isFinite else {
            let null: StaticString = "null"
            p.update(from: null.utf8Start, count: null.utf8CodeUnitCount)
            return null.utf8CodeUnitCount
        }
        if let count = writeShortDecimal(value, to: p) { return count }
        var text = value.description
        return text.withUTF8 { utf8 in
            p.update(from: utf8.baseAddress!, count: utf8.count)
            return utf8.count
        }
    }

    /// Decimal digits, most significant first, after a minus sign when asked: the length by
    /// comparisons, then two digits per division by 100 from the end.
    @inlinable @inline(__always)
    package static func writeDigits(
        _ value: UInt64, negative: Bool, to p: UnsafeMutablePointer<UInt8>
    ) -> Int {
        var count = 1
        var bound: UInt64 = 10
        while count < 20 && value >= bound {
            count += 1
            bound &*= 10
        }
        var k = 0
        if negative {
            p[0] = 0x2D
            k = 1
        }
        @inline(__always) func pair(_ r: UInt64, at i: Int) {
            let tens = r / 10
            p[i] = 0x30 &+ UInt8(truncatingIfNeeded: tens)
            p[i + 1] = 0x30 &+ UInt8(truncatingIfNeeded: r &- tens &* 10)
        }
        var v = value
        var at = k + count
        while v >= 100 {
            let (q, r) = v.quotientAndRemainder(dividingBy: 100)
            at -= 2
            pair(r, at: at)
            v = q
        }
        if v >= 10 {
            pair(v, at: at - 2)
        } else {
            p[at - 1] = 0x30 &+ UInt8(truncatingIfNeeded: v)
        }
        return k + count
    }

    /// The common reply numbers (offsets like -60.5, -30.25, 0.125) without `description`, which
    /// costs a String and about 400 instructions: with one to three decimals, `m / 10^k == value`
    /// says exactly that the decimal m·10^-k parses back to `value` (the division is correctly
    /// rounded, as parsing is), and trying k = 1, 2, 3 in turn finds the shortest such decimal.
    @inlinable
    package static func writeShortDecimal(_ value: Double, to p: UnsafeMutablePointer<UInt8>) -> Int? {
        guard value.magnitude < 1e15 else { return nil }
        var scale = 1.0
        for k in 1...3 {
            scale *= 10
            let m = (value * scale).rounded()
            guard m / scale == value else { continue }
            let scaled = Int64(m).magnitude
            let unit = UInt64(scale)
            var count = writeDigits(scaled / unit, negative: value < 0, to: p)
            p[count] = 0x2E
            count += 1
            let fraction = scaled % unit
            var divisor = unit / 10
            for _ in 0..<k {
                p[count] = 0x30 &+ UInt8(truncatingIfNeeded: fraction / divisor % 10)
                count += 1
                divisor /= 10
            }
            return count
        }
        return nil
    }
}

/// What a string's bytes need to be written inside quotes.
@usableFromInline package enum JSONText {
    /// Whether `utf8` can be copied between quotes as it is: no control character, `"` or `\`
    /// (UTF-8 needs nothing else escaped). Eight bytes per step: a movie reply's three strings
    /// are checked on every reply, and a loop over bytes cost about 5 instructions a byte.
    /// Exact: per byte, `(x - n) & ~x` has its high bit set when x < n (n ≤ 0x80), here for
    /// n = 0x20, and for n = 1 after an xor (a byte equal to `"` or `\`); a borrow only leaves
    /// a byte that is itself below n, so a flag is never set by a neighbour alone.
    @inlinable
    package static func isPlain(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = utf8.baseAddress else { return true }
        let count = utf8.count
        guard count >= 8 else {
            for i in 0..<count {
                let b = base[i]
                if b < 0x20 || b == 0x22 || b == 0x5C { return false }
            }
            return true
        }
        @inline(__always) func plain(_ offset: Int) -> Bool {
            let ones: UInt64 = 0x0101_0101_0101_0101
            let w = UnsafeRawPointer(base + offset).loadUnaligned(as: UInt64.self)
            let control = (w &- ones &* 0x20) & ~w
            let q = w ^ (ones &* 0x22)
            let quote = (q &- ones) & ~q
            let b = w ^ (ones &* 0x5C)
            let backslash = (b &- ones) & ~b
            return (control | quote | backslash) & (ones &* 0x80) == 0
        }
        var i = 0
        while i + 8 <= count {
            if !plain(i) { return false }
            i += 8
        }
        // The last bytes as the last word, overlapping the one before: checked twice is fine.
        if i < count && !plain(count - 8) { return false }
        return true
    }
}

/// Writes bytes at a pointer into memory reserved beforehand (`Array.append(addingCapacity:)`):
/// a message assembled from a few copies and numbers pays one capacity check, not one per part.
/// (`@usableFromInline`, as `Parser` is: so that its methods inline into Wire.)
@usableFromInline package struct ByteCursor {
    @usableFromInline package var p: UnsafeMutablePointer<UInt8>

    @inlinable
    package init(p: UnsafeMutablePointer<UInt8>) { self.p = p }

    @inlinable @inline(__always)
    package mutating func copy(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { source in
            guard let base = source.baseAddress else { return }
            p.update(from: base, count: source.count)
            p += source.count
        }
    }

    @inlinable @inline(__always)
    package mutating func copy(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress else { return }
        p.update(from: base, count: bytes.count)
        p += bytes.count
    }

    @inlinable @inline(__always)
    package mutating func copy(_ text: StaticString) {
        p.update(from: text.utf8Start, count: text.utf8CodeUnitCount)
        p += text.utf8CodeUnitCount
    }

    @inlinable @inline(__always)
    package mutating func uint64(_ value: UInt64) {
        p += NumberText.writeDigits(value, negative: false, to: p)
    }

    /// Emitted into the client: as a plain `@inlinable` function, the optimizer left it a call
    /// into this module from a drag's reply (callgrind).
    @_alwaysEmitIntoClient @inline(__always)
    package mutating func number(_ value: Double) {
        p += NumberText.write(value, to: p)
    }
}

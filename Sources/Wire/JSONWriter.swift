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

    public init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Empties the buffer but keeps its storage, to build the next line without allocating.
    public mutating func reset() {
        bytes.removeAll(keepingCapacity: true)
    }

    /// The line terminator of the protocol.
    public mutating func newline() {
        bytes.append(0x0A)
    }

    @inline(__always)
    mutating func separate() {
        guard let last = bytes.last else { return }
        switch last {
        case 0x7B, 0x5B, 0x3A, 0x0A: return  // { [ : newline
        default: bytes.append(0x2C)
        }
    }

    // MARK: Structure

    public mutating func beginObject() {
        separate()
        bytes.append(0x7B)
    }

    public mutating func endObject() {
        bytes.append(0x7D)
    }

    public mutating func beginArray() {
        separate()
        bytes.append(0x5B)
    }

    public mutating func endArray() {
        bytes.append(0x5D)
    }

    /// A member name and its colon; the next value call writes the member's value.
    public mutating func key(_ name: String) {
        separate()
        appendString(name)
        bytes.append(0x3A)
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

    public mutating func string(_ value: String) {
        separate()
        appendString(value)
    }

    public mutating func bool(_ value: Bool) {
        separate()
        appendStatic(value ? "true" : "false")
    }

    public mutating func null() {
        separate()
        appendStatic("null")
    }

    public mutating func int(_ value: Int) {
        int64(Int64(value))
    }

    public mutating func int64(_ value: Int64) {
        separate()
        if value < 0 {
            bytes.append(0x2D)
            appendDigits(value.magnitude)
        } else {
            appendDigits(UInt64(value))
        }
    }

    public mutating func uint64(_ value: UInt64) {
        separate()
        appendDigits(value)
    }

    /// Integral values within ±2^53 as integers (`-70`, not `-70.0`); others as the shortest
    /// representation that parses back to the same double (Swift's `description`, e.g. `0.1`,
    /// `1e-05`, `1e+20`: always valid JSON). NaN and infinities have no JSON form: `null`.
    public mutating func double(_ value: Double) {
        if let exact = JSONNumber.exactInteger(value) {
            int64(exact)
            return
        }
        separate()
        guard value.isFinite else {
            appendStatic("null")
            return
        }
        bytes.append(contentsOf: value.description.utf8)
    }

    /// A parsed number: its exact integer when it has one, else its double. Writing and parsing
    /// again gives an equal JSONNumber (see JSONNumber).
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
                key(member.key)
                self.value(member.value)
            }
            endObject()
        }
    }

    // MARK: Members, for replies that read like their JSON

    public mutating func field(_ name: String, _ value: String) { key(name); string(value) }
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
    @inline(__always)
    mutating func appendStatic(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Decimal digits, most significant first, without a sign.
    @inline(__always)
    mutating func appendDigits(_ value: UInt64) {
        if value < 10 {
            bytes.append(0x30 &+ UInt8(truncatingIfNeeded: value))
            return
        }
        let start = bytes.count
        var v = value
        repeat {
            let (q, r) = v.quotientAndRemainder(dividingBy: 10)
            bytes.append(0x30 &+ UInt8(truncatingIfNeeded: r))
            v = q
        } while v != 0
        bytes[start...].reverse()
    }

    /// A quoted string. Swift strings are valid UTF-8, so only `"`, `\` and control characters
    /// need escaping; everything else (including U+2028) is copied as is. Strings without any
    /// (nearly all keys and values) are copied in one piece.
    mutating func appendString(_ value: String) {
        var value = value
        value.withUTF8 { utf8 in
            guard let base = utf8.baseAddress else {
                appendStatic("\"\"")
                return
            }
            let count = utf8.count
            bytes.append(0x22)
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
    }

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

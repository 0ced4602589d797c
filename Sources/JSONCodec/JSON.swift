// The JSON value model. Plain enums and structs, Equatable so tests and the fuzzer compare
// values directly.

/// A JSON value.
public enum JSON: Equatable, Sendable {
    case null
    case bool(Bool)
    case number(JSONNumber)
    case string(String)
    case array([JSON])
    case object(JSONObject)
}

/// A JSON number: its correctly rounded `Double`, and an exact `Int64` when it has one.
///
/// `int` is not nil when
/// - the literal is a plain integer (no fraction, no exponent) within Int64: exactly that value,
///   even beyond 2^53 where `double` is rounded (`9007199254740993`); `-0` gives 0;
/// - otherwise, when `double` is integral and |double| ≤ 2^53, where doubles are exact integers:
///   `1.0`, `1e2` and `-0.0` all give an `int`.
/// So `int` depends only on the value, never on spelling, except for plain integer literals beyond
/// 2^53 that keep their exact value. JSONWriter writes a number with an `int` as that integer and
/// one without as the shortest round-trip double (which always has a `.` or an exponent), so
/// writing and parsing again gives an equal JSONNumber.
public struct JSONNumber: Equatable, Hashable, Sendable, CustomStringConvertible {
    public var double: Double
    public var int: Int64?

    public init(_ value: Int64) {
        double = Double(value)
        int = value
    }

    public init(_ value: Int) { self.init(Int64(value)) }

    /// A number from a double; `int` follows the rule above. Non-finite doubles are allowed here
    /// but never come out of the parser; JSONWriter writes them as `null`.
    public init(_ value: Double) {
        double = value
        int = JSONNumber.exactInteger(value)
    }

    /// The constructor the parsers use for numbers they have scanned.
    @inlinable @inline(__always)
    package init(double: Double, int: Int64?) {
        self.double = double
        self.int = int
    }

    /// `Int64(exactly:)` limited to ±2^53, the range where every integer has its own double.
    @inlinable @inline(__always)
    package static func exactInteger(_ value: Double) -> Int64? {
        guard value.magnitude <= 9_007_199_254_740_992 else { return nil }
        return Int64(exactly: value)
    }

    public var description: String {
        if let int { return String(int) }
        return double.description
    }
}

/// A JSON object: its members in input order, duplicates kept (the request layer decides what a
/// duplicate means; a dictionary would silently keep one of them).
public struct JSONObject: Equatable, Sendable, ExpressibleByDictionaryLiteral {
    public typealias Member = (key: String, value: JSON)

    public var members: [Member]

    public init(_ members: [Member] = []) { self.members = members }

    public init(dictionaryLiteral elements: (String, JSON)...) {
        members = elements.map { (key: $0.0, value: $0.1) }
    }

    /// The value of the first member named `key`.
    public subscript(key: String) -> JSON? {
        for member in members where member.key == key { return member.value }
        return nil
    }

    public var keys: [String] { members.map(\.key) }
    public var count: Int { members.count }
    public var isEmpty: Bool { members.isEmpty }

    public mutating func append(_ key: String, _ value: JSON) {
        members.append((key: key, value: value))
    }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.members.count == rhs.members.count else { return false }
        for (l, r) in zip(lhs.members, rhs.members) where l.key != r.key || l.value != r.value {
            return false
        }
        return true
    }
}

// Literals, so tests and message builders read like the JSON they mean.
extension JSON: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .number(JSONNumber(value)) }
    public init(floatLiteral value: Double) { self = .number(JSONNumber(value)) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSON...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSON)...) {
        self = .object(JSONObject(elements.map { (key: $0.0, value: $0.1) }))
    }
}

// Accessors for the request layer: nil when the value has another type.
extension JSON {
    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }
    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }
    public var numberValue: JSONNumber? {
        if case .number(let n) = self { return n }
        return nil
    }
    public var objectValue: JSONObject? {
        if case .object(let o) = self { return o }
        return nil
    }
    public var arrayValue: [JSON]? {
        if case .array(let a) = self { return a }
        return nil
    }
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}

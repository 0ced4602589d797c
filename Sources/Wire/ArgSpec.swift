// The words protocol 1 is declared in: an argument's (or an object field's) type with its range,
// whether it is required, its default. The op table (Ops.swift) and the objects and events
// (Schema.swift) are written in these; the request decoder (Request.swift) checks arguments
// against them and `help` (Help.swift) prints them, so a range is written once.
import JSONCodec

/// The limits shared by many arguments, each written once. The fast path (RequestFastPath.swift)
/// reads the same constants, so its acceptance rules cannot drift from the table's.
public enum Limits {
    /// A string argument's length in UTF-8 bytes, unless its declaration says otherwise.
    public static let stringBytes: ClosedRange<Int> = 1...1024
    /// An idempotency `key`'s length in bytes.
    public static let keyBytes: ClosedRange<Int> = 1...128
    /// The values a number argument may have, unless its declaration is narrower: bounds what the
    /// engine sees (the parser already refuses non-finite literals).
    public static let number: ClosedRange<Double> = -1e9...1e9
    /// A field of an action object, in bytes.
    public static let actionFieldBytes: ClosedRange<Int> = 1...200
    /// Actions per edge in `configure`.
    public static let actionsPerEdge = 8
}

/// What a value may be.
public enum ArgType: Sendable, Equatable {
    /// A string; `bytes`: its length in UTF-8 bytes; `values`: the only strings accepted.
    case string(bytes: ClosedRange<Int>? = nil, values: [String]? = nil)
    /// A whole number within `min...max` (a bound left nil: up to what an Int64 holds).
    case integer(min: Int64? = nil, max: Int64? = nil)
    case number(ClosedRange<Double>? = nil)
    case boolean
    /// An array of at most `maxItems` action objects (`Schema.action`).
    case actions(maxItems: Int)
    /// Any JSON value.
    case any
    /// An object of the protocol, by its name in `Schema.objects`.
    case object(String)
    /// An array of objects of the protocol, by name.
    case array(of: String)

    /// The name `help` gives the type.
    public var name: String {
        switch self {
        case .string: "string"
        case .integer: "integer"
        case .number: "number"
        case .boolean: "boolean"
        case .actions: "actions"
        case .any: "any"
        case .object(let name): name
        case .array: "array"
        }
    }
}

/// An argument of an op, or a field of an object or an event.
public struct ArgSpec: Sendable {
    public let name: String
    public let type: ArgType
    /// An argument: it must be given. A field: it is always present.
    public let required: Bool
    /// A field that may be `null`.
    public let nullable: Bool
    /// The value the server takes when the argument is left out, when that is a value (when
    /// leaving it out means something else, the summary says what).
    public let defaultValue: JSON?
    public let summary: String

    public init(
        _ name: String, _ type: ArgType, required: Bool = false, nullable: Bool = false,
        default defaultValue: JSON? = nil, _ summary: String
    ) {
        self.name = name
        self.type = type
        self.required = required
        self.nullable = nullable
        self.defaultValue = defaultValue
        self.summary = summary
    }

    /// A string argument within the usual length (`Limits.stringBytes`).
    static func text(_ name: String, required: Bool = false, _ summary: String) -> ArgSpec {
        ArgSpec(name, .string(bytes: Limits.stringBytes), required: required, summary)
    }

    /// A number argument within the usual bounds (`Limits.number`).
    static func number(_ name: String, required: Bool = false, _ summary: String) -> ArgSpec {
        ArgSpec(name, .number(Limits.number), required: required, summary)
    }

    /// A sequence number: a whole number ≥ 0.
    static func sequence(_ name: String, default defaultValue: JSON? = nil, _ summary: String) -> ArgSpec {
        ArgSpec(name, .integer(min: 0), default: defaultValue, summary)
    }
}

// The ranges as messages say them, for the decoder's refusals (Request.swift) and for a client
// that checks its arguments before sending them (swipectl): one wording of one declaration.
extension ArgSpec {
    /// A whole number's bounds as a message says them: " from 1 to 1000", " ≥ 0", or "".
    public var integerBounds: String {
        guard case .integer(let min, let max) = type else { preconditionFailure("\(name) is not an integer") }
        return switch (min, max) {
        case (let min?, let max?): " from \(min) to \(max)"
        case (let min?, nil): " ≥ \(min)"
        case (nil, let max?): " ≤ \(max)"
        case (nil, nil): ""
        }
    }

    /// Whether `n` is within a whole-number argument's declared bounds.
    public func admits(_ n: Int64) -> Bool {
        guard case .integer(let min, let max) = type else { preconditionFailure("\(name) is not an integer") }
        return n >= min ?? .min && n <= max ?? .max
    }

    /// A number argument's declared range, as a message says it: "from -1000000000 to 1000000000",
    /// or nil when it has none.
    public var numberBounds: String? {
        guard case .number(let range) = type else { preconditionFailure("\(name) is not a number") }
        return range.map { "from \(format($0.lowerBound)) to \(format($0.upperBound))" }
    }

    /// Whether `x` is within a number argument's declared range.
    public func admits(_ x: Double) -> Bool {
        guard case .number(let range) = type else { preconditionFailure("\(name) is not a number") }
        return range?.contains(x) ?? true
    }
}

extension OpSpec {
    /// The declaration of this op's argument `name`, which it must have.
    public func arg(_ name: String) -> ArgSpec {
        guard let arg = args.first(where: { $0.name == name }) else {
            preconditionFailure("op \(self.name) declares no argument \(name)")
        }
        return arg
    }
}

// The conversions of an option's value that more than one parser needs, each with the one
// message its mistake gets: a whole number in a range, one of a few names, a duration.

public enum ArgumentValues {
    /// A whole number within `range` (decimal digits, an optional sign); else "OPTION must be a
    /// whole number from LOW to HIGH, not 'TEXT'".
    public static func integer(_ option: String, _ text: String, in range: ClosedRange<Int>)
        throws(ArgumentError) -> Int
    {
        guard let number = Int(text), range.contains(number) else {
            throw .invalid(
                "\(option) must be a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'"
            )
        }
        return number
    }

    /// The value of `choices` that `text` names; else "OPTION must be A, B or C, not 'TEXT'".
    public static func oneOf<Value>(_ option: String, _ text: String, _ choices: [(String, Value)])
        throws(ArgumentError) -> Value
    {
        if let (_, value) = choices.first(where: { $0.0 == text }) { return value }
        throw .invalid("\(option) must be \(list(choices.map(\.0))), not '\(text)'")
    }

    /// "a", "a or b", "a, b or c".
    public static func list(_ names: [String]) -> String {
        guard let last = names.last else { return "" }
        return names.count == 1 ? last : names.dropLast().joined(separator: ", ") + " or " + last
    }

    /// Why `seconds(fromDuration:)` did not read a duration.
    public enum DurationError: Error, Equatable, Sendable {
        /// Not digits and an optional unit.
        case malformed
        /// More seconds than an Int64 holds.
        case tooLong
    }

    /// The units a duration takes, in seconds: `s`, `m`, `h`, `d`, `w`.
    public static let durationUnits: [(unit: Character, seconds: Int64)] = [
        ("s", 1), ("m", 60), ("h", 3600), ("d", 86_400), ("w", 7 * 86_400),
    ]

    /// A duration as a whole number of ASCII digits with a unit (`30d`, `12h`, `90m`, `3600s`,
    /// `2w`), or alone in seconds; in seconds. No sign, no fraction, no spaces, one unit.
    public static func seconds(fromDuration text: String) throws(DurationError) -> Int64 {
        var digits = Substring(text)
        var unit: Int64 = 1
        if let last = text.last, let known = durationUnits.first(where: { $0.unit == last }) {
            digits = digits.dropLast()
            unit = known.seconds
        }
        guard !digits.isEmpty, digits.allSatisfy({ ("0"..."9").contains($0) }) else { throw .malformed }
        // Too many digits for an Int64 is too long a time all the same.
        guard let count = Int64(digits) else { throw .tooLong }
        let seconds = count.multipliedReportingOverflow(by: unit)
        if seconds.overflow { throw .tooLong }
        return seconds.partialValue
    }
}

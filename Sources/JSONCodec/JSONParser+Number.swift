// Numbers, for the parser (JSONParser.swift): RFC 8259's grammar, read by hand into a mantissa
// and a power of ten, exact where a Double can be, and correctly rounded where it cannot.

/// Powers of ten a Double holds exactly: the range of the exact fast path for decimals.
@usableFromInline let exactPowersOfTen: [Double] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
]

extension Parser {
    // Long: one pass over the grammar's four parts (sign, integer, fraction, exponent) that keeps
    // the cursor and five accumulators in registers; split into functions, each part would take
    // them all inout, and this is the codec's hottest loop after strings.
    /// At `-` or a digit: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, finite.
    @inlinable
    package mutating func parseNumber() throws(JSONError) -> JSONNumber {
        let start = i
        let negative = p[i] == minus
        if negative {
            i += 1
            guard i < end else { throw .endOfInput(i) }
        }
        // Up to 19 significant digits go into `mantissa` (10^19 - 1 < 2^64); `exponent` is the
        // power of ten that scales it. More digits than that take the slow path.
        var mantissa: UInt64 = 0
        var significant = 0
        var exponent = 0
        var inexact = false
        var plainInteger = true

        let first = p[i]
        if first == zero {
            i += 1
            if i < end && isDigit(p[i]) { throw .at(start, "leading zero in number") }
        } else if isDigit(first) {
            while i < end && isDigit(p[i]) {
                if significant < 19 {
                    mantissa = mantissa &* 10 &+ UInt64(p[i] &- zero)
                    significant += 1
                } else {
                    inexact = true
                    exponent += 1
                }
                i += 1
            }
        } else {
            throw .at(i, "expected a digit after '-'")
        }

        if i < end && p[i] == dot {
            plainInteger = false
            i += 1
            guard i < end else { throw .endOfInput(i) }
            guard isDigit(p[i]) else { throw .at(i, "expected a digit after the decimal point") }
            while i < end && isDigit(p[i]) {
                let digit = p[i] &- zero
                if significant < 19 {
                    mantissa = mantissa &* 10 &+ UInt64(digit)
                    if mantissa != 0 { significant += 1 }  // leading zeros of 0.000x are free
                    exponent -= 1
                } else if digit != 0 {
                    inexact = true
                }
                i += 1
            }
        }

        if i < end && (p[i] == UInt8(ascii: "e") || p[i] == UInt8(ascii: "E")) {
            plainInteger = false
            i += 1
            guard i < end else { throw .endOfInput(i) }
            var negativeExponent = false
            if p[i] == minus || p[i] == plus {
                negativeExponent = p[i] == minus
                i += 1
                guard i < end else { throw .endOfInput(i) }
            }
            guard isDigit(p[i]) else { throw .at(i, "expected a digit in the exponent") }
            var e = 0
            // Saturates: 1e999999999 is out of range anyway, and `e` cannot overflow.
            while i < end && isDigit(p[i]) {
                if e < 1_000_000 { e = e * 10 + Int(p[i] &- zero) }
                i += 1
            }
            exponent += negativeExponent ? -e : e
        }

        if plainInteger && !inexact {
            // An integer literal of at most 19 digits: exact Int64 when it fits.
            if negative {
                if mantissa <= UInt64(Int64.max) {
                    let value = -Int64(mantissa)
                    // -0 keeps its sign in the double, as the literal says; the int is 0.
                    return JSONNumber(double: mantissa == 0 ? -0.0 : Double(value), int: value)
                }
                if mantissa == UInt64(Int64.max) + 1 {
                    return JSONNumber(double: -Double(mantissa), int: Int64.min)
                }
                return JSONNumber(double: -Double(mantissa), int: nil)
            }
            if mantissa <= UInt64(Int64.max) {
                return JSONNumber(double: Double(mantissa), int: Int64(mantissa))
            }
            return JSONNumber(double: Double(mantissa), int: nil)
        }

        let magnitude: Double
        if mantissa == 0 && !inexact {
            magnitude = 0
        } else if !inexact && mantissa <= 1 << 53 && exponent >= -22 && exponent <= 22 {
            // Clinger's fast path: both operands exact, so one IEEE operation rounds correctly.
            magnitude =
                exponent < 0
                ? Double(mantissa) / exactPowersOfTen[-exponent]
                : Double(mantissa) * exactPowersOfTen[exponent]
        } else {
            // Long mantissas and large exponents: the standard library rounds correctly.
            let text = String(
                decoding: UnsafeBufferPointer(start: p + start, count: i - start),
                as: UTF8.self)
            guard let parsed = Double(text) else { throw .at(start, "invalid number") }
            guard parsed.isFinite else { throw .at(start, "number out of range") }
            return JSONNumber(double: parsed, int: JSONNumber.exactInteger(parsed))
        }
        let value = negative ? -magnitude : magnitude
        return JSONNumber(double: value, int: JSONNumber.exactInteger(value))
    }
}

// RFC 3339 timestamps for events ("at"), without Foundation: UTC, microseconds, `Z`.

public enum RFC3339 {
    /// `2026-11-30T04:43:34.123456Z` for microseconds since 1970-01-01T00:00:00Z (negative
    /// values are before the epoch). Years outside 0000–9999 are written with more digits or a
    /// sign, which RFC 3339 does not cover; the daemon's clock never gets there.
    public static func format(microsecondsSinceEpoch: Int64) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(27)
        append(microsecondsSinceEpoch: microsecondsSinceEpoch, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The same text appended to a buffer, e.g. a JSONWriter's, without a String in between.
    /// Assembled on the stack and appended once (each Array append has a fixed cost).
    public static func append(microsecondsSinceEpoch us: Int64, to bytes: inout [UInt8]) {
        // Floor division, so times before the epoch land in the right second and day.
        let (seconds, micros) = floorDivide(us, 1_000_000)
        let (days, secondOfDay) = floorDivide(seconds, 86_400)
        let (year, month, day) = civil(fromDays: days)

        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 48) { staging in
            let base = staging.baseAddress!
            var k = 0
            func put(_ byte: UInt8) {
                base[k] = byte
                k += 1
            }
            func put(_ value: UInt64, width: Int) {
                var digits = 1
                var v = value / 10
                while v != 0 || digits < width {
                    digits += 1
                    v /= 10
                }
                v = value
                for i in stride(from: k + digits - 1, through: k, by: -1) {
                    base[i] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: v % 10)
                    v /= 10
                }
                k += digits
            }
            if year < 0 { put(UInt8(ascii: "-")) }
            put(year.magnitude, width: 4)
            put(UInt8(ascii: "-"))
            put(UInt64(month), width: 2)
            put(UInt8(ascii: "-"))
            put(UInt64(day), width: 2)
            put(UInt8(ascii: "T"))
            put(UInt64(secondOfDay / 3600), width: 2)
            put(UInt8(ascii: ":"))
            put(UInt64(secondOfDay / 60 % 60), width: 2)
            put(UInt8(ascii: ":"))
            put(UInt64(secondOfDay % 60), width: 2)
            put(UInt8(ascii: "."))
            put(UInt64(micros), width: 6)
            put(UInt8(ascii: "Z"))
            bytes.append(contentsOf: UnsafeBufferPointer(start: base, count: k))
        }
    }

    /// Howard Hinnant's `civil_from_days`: proleptic Gregorian (year, month, day) of a day count
    /// from 1970-01-01, exact for every Int64 day this file can be given. Eras are 400-year
    /// cycles of 146,097 days starting on March 1, so the leap day falls at the end of a year.
    static func civil(fromDays days: Int64) -> (year: Int64, month: Int, day: Int) {
        let z = days + 719_468  // days since 0000-03-01
        let era = floorDivide(z, 146_097).quotient
        let dayOfEra = z - era * 146_097  // [0, 146096]
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)  // [0, 365]
        let mp = (5 * dayOfYear + 2) / 153  // March = 0
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, Int(month), Int(day))
    }

    static func floorDivide(_ a: Int64, _ b: Int64) -> (quotient: Int64, remainder: Int64) {
        var (q, r) = a.quotientAndRemainder(dividingBy: b)
        if r < 0 {
            q -= 1
            r += b
        }
        return (q, r)
    }
}

// Reading back what `RFC3339.format` writes (`2026-11-30T04:43:34.123456Z`), for clients.

extension RFC3339 {
    /// µs since the Unix epoch of a UTC timestamp `YYYY-MM-DDTHH:MM:SS[.ffffff]Z`; nil otherwise.
    public static func parse(_ text: String) -> Int64? {
        let b = Array(text.utf8)
        func digits(_ from: Int, _ count: Int) -> Int64? {
            guard from + count <= b.count else { return nil }
            var v: Int64 = 0
            for i in from..<(from + count) {
                guard b[i] >= 48, b[i] <= 57 else { return nil }
                v = v * 10 + Int64(b[i] - 48)
            }
            return v
        }
        guard b.count >= 20, b[4] == 45, b[7] == 45, b[10] == 84 || b[10] == 116, b[13] == 58, b[16] == 58,
            let year = digits(0, 4), let month = digits(5, 2), let day = digits(8, 2),
            let hour = digits(11, 2), let minute = digits(14, 2), let second = digits(17, 2),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var index = 19
        var micros: Int64 = 0
        if index < b.count, b[index] == 46 {
            index += 1
            var scale: Int64 = 100_000
            let first = index
            while index < b.count, b[index] >= 48, b[index] <= 57 {
                micros += Int64(b[index] - 48) * scale
                scale /= 10
                index += 1
            }
            guard index > first else { return nil }
        }
        guard index == b.count - 1, b[index] == 90 || b[index] == 122 else { return nil }
        // Days from civil (Howard Hinnant's algorithm).
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146_097 + doe - 719_468
        return ((days * 24 + hour) * 60 + minute) * 60_000_000 + second * 1_000_000 + micros
    }
}

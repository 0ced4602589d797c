import XCTest

@testable import JSONCodec

final class RFC3339Tests: XCTestCase {
    func testEpoch() {
        XCTAssertEqual(RFC3339.format(microsecondsSinceEpoch: 0), "1970-01-01T00:00:00.000000Z")
    }

    func testExampleFromTheProtocol() {
        // 2026-11-30T04:43:34.123456Z: 20,787 days after the epoch.
        let seconds: Int64 = 20_787 * 86_400 + 4 * 3600 + 43 * 60 + 34
        XCTAssertEqual(
            RFC3339.format(microsecondsSinceEpoch: seconds * 1_000_000 + 123_456),
            "2026-11-30T04:43:34.123456Z")
    }

    func testBeforeTheEpoch() {
        XCTAssertEqual(RFC3339.format(microsecondsSinceEpoch: -1), "1969-12-31T23:59:59.999999Z")
        XCTAssertEqual(
            RFC3339.format(microsecondsSinceEpoch: -86_400_000_000),
            "1969-12-31T00:00:00.000000Z")
    }

    func testLeapYears() {
        // 2000 is a leap year (divisible by 400), 1900 and 2100 are not, 2024 is.
        XCTAssertEqual(
            RFC3339.format(microsecondsSinceEpoch: 951_782_400 * 1_000_000),
            "2000-02-29T00:00:00.000000Z")
        XCTAssertEqual(
            RFC3339.format(microsecondsSinceEpoch: 951_868_800 * 1_000_000),
            "2000-03-01T00:00:00.000000Z")
        XCTAssertEqual(
            RFC3339.format(microsecondsSinceEpoch: 1_709_164_800 * 1_000_000),
            "2024-02-29T00:00:00.000000Z")
        XCTAssertEqual(
            RFC3339.format(microsecondsSinceEpoch: 4_107_542_400 * 1_000_000),
            "2100-03-01T00:00:00.000000Z")  // the day after 2100-02-28
        XCTAssertEqual(
            RFC3339.format(microsecondsSinceEpoch: -2_203_891_200 * 1_000_000),
            "1900-03-01T00:00:00.000000Z")
        XCTAssertEqual(
            RFC3339.format(microsecondsSinceEpoch: 1_735_603_200 * 1_000_000 + 999_999),
            "2024-12-31T00:00:00.999999Z")
    }

    func testEveryDayAgainstASimpleCalendar() {
        // Walk day by day from 1900 to 2200 with the textbook leap-year rule.
        var year = 1900, month = 1, day = 1
        var days: Int64 = -25_567  // 1900-01-01
        func daysIn(_ m: Int, _ y: Int) -> Int {
            if m == 2 { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 ? 29 : 28 }
            return [4, 6, 9, 11].contains(m) ? 30 : 31
        }
        while year < 2200 {
            let civil = RFC3339.civil(fromDays: days)
            if civil.year != Int64(year) || civil.month != month || civil.day != day {
                XCTFail("day \(days): \(civil) != \(year)-\(month)-\(day)")
                return
            }
            days += 1
            day += 1
            if day > daysIn(month, year) { day = 1; month += 1 }
            if month > 12 { month = 1; year += 1 }
        }
    }

    func testAppendsToABuffer() {
        var bytes: [UInt8] = Array("at:".utf8)
        RFC3339.append(microsecondsSinceEpoch: 1, to: &bytes)
        XCTAssertEqual(String(decoding: bytes, as: UTF8.self), "at:1970-01-01T00:00:00.000001Z")
    }

    func testExtremesDoNotTrap() {
        XCTAssertEqual(RFC3339.format(microsecondsSinceEpoch: .max), "294247-01-10T04:00:54.775807Z")
        XCTAssertEqual(RFC3339.format(microsecondsSinceEpoch: .min), "-290308-12-21T19:59:05.224192Z")
        XCTAssertEqual(
            RFC3339.format(microsecondsSinceEpoch: 253_402_300_799_999_999),
            "9999-12-31T23:59:59.999999Z")
    }
}

import XCTest

@testable import swipectl

final class TableTests: XCTestCase {
    private func table() -> Table {
        var table = Table("ID", "TITLE", "WATCHED")
        table.append("godfather", "The Godfather", "👁 👥")
        table.append("tokyo", "東京物語 — Tokyo Story, a film by Yasujirō Ozu", "")
        return table
    }

    func testColumnsAreAlignedByCells() {
        XCTAssertEqual(
            table().text,
            """
            ID         TITLE                                           WATCHED
            godfather  The Godfather                                   👁 👥
            tokyo      東京物語 — Tokyo Story, a film by Yasujirō Ozu

            """)
    }

    func testFitCutsTheTitleColumnWithAnEllipsis() {
        var narrow = table()
        narrow.fit(columns: [1], toWidth: 40)
        let lines = narrow.text.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines[2], "tokyo      東京物語 — Tokyo St…")
        for line in lines { XCTAssertLessThanOrEqual(TerminalText.width(line), 40, line) }
        // Wide enough: nothing changes.
        var wide = table()
        wide.fit(columns: [1], toWidth: 200)
        XCTAssertEqual(wide.text, table().text)
        // Never narrower than 10 cells, however small the terminal.
        var tiny = table()
        tiny.fit(columns: [1], toWidth: 5)
        XCTAssertEqual(tiny.rows.map { TerminalText.width($0[1]) }, [10, 10])
        // A second column narrows only when the first one is not enough.
        var both = table()
        both.append("a_very_long_id_made_from_a_long_title", "Short", "")
        both.fit(columns: [1, 0], toWidth: 60)
        XCTAssertEqual(
            both.rows.map { $0[0] }, ["godfather", "tokyo", "a_very_long_id_made_from_a_long_title"])
        both.fit(columns: [1, 0], toWidth: 40)
        XCTAssertEqual(both.rows.map { $0[0] }, ["godfather", "tokyo", "a_very_long_id_mad…"])
        XCTAssertEqual(both.rows.map { $0[1] }, ["The Godfa…", "東京物語 …", "Short"])
    }
}

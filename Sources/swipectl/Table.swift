// Plain-text tables for a terminal: columns padded to their widest cell, measured in terminal
// cells (TerminalText.width: a CJK character or an emoji takes two, a combining mark none), two
// spaces apart. The last column is never padded, so a long title or an emoji there cannot shift
// anything. One column may be narrowed so that the lines fit a terminal (`fit`).

struct Table {
    var header: [String]
    var rows: [[String]] = []

    init(_ header: String...) { self.header = header }

    mutating func append(_ row: String...) { rows.append(row) }

    /// Narrows `columns`, in that order, each only as far as needed (cutting its cells with
    /// "…"), so that every line takes at most `cells` cells; a column never gets narrower than
    /// its header or 10 cells, whichever is more.
    mutating func fit(columns: [Int], toWidth cells: Int) {
        for column in columns {
            let widths = header.indices.map { index in
                ([header] + rows).map { TerminalText.width($0[index]) }.max() ?? 0
            }
            let total = widths.reduce(0, +) + 2 * (header.count - 1)
            guard total > cells else { return }
            let target = max(10, TerminalText.width(header[column]), widths[column] - (total - cells))
            for index in rows.indices {
                rows[index][column] = TerminalText.truncated(rows[index][column], toWidth: target)
            }
        }
    }

    var text: String {
        let all = [header] + rows
        var widths = [Int](repeating: 0, count: header.count)
        for row in all {
            for (column, cell) in row.enumerated() {
                widths[column] = max(widths[column], TerminalText.width(cell))
            }
        }
        var out = ""
        for row in all {
            var line = ""
            for (column, cell) in row.enumerated() {
                line += cell
                if column < row.count - 1 {
                    line += String(repeating: " ", count: widths[column] - TerminalText.width(cell) + 2)
                }
            }
            while line.hasSuffix(" ") { line.removeLast() }
            out += line + "\n"
        }
        return out
    }
}

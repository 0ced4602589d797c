// Plain-text tables for a terminal: columns padded to their widest cell, measured in terminal
// cells (a CJK character or an emoji takes two, a combining mark none), two spaces apart.
// The last column is never padded, so a long title or an emoji there cannot shift anything.

struct Table {
    var header: [String]
    var rows: [[String]] = []

    init(_ header: String...) { self.header = header }

    mutating func append(_ row: String...) { rows.append(row) }

    var text: String {
        let all = [header] + rows
        var widths = [Int](repeating: 0, count: header.count)
        for row in all {
            for (column, cell) in row.enumerated() { widths[column] = max(widths[column], Table.width(cell)) }
        }
        var out = ""
        for row in all {
            var line = ""
            for (column, cell) in row.enumerated() {
                line += cell
                if column < row.count - 1 {
                    line += String(repeating: " ", count: widths[column] - Table.width(cell) + 2)
                }
            }
            while line.hasSuffix(" ") { line.removeLast() }
            out += line + "\n"
        }
        return out
    }

    /// The number of terminal cells `text` takes (wcwidth(3), roughly, without the locale).
    static func width(_ text: String) -> Int {
        var total = 0
        for scalar in text.unicodeScalars {
            let v = scalar.value
            switch scalar.properties.generalCategory {
            case .nonspacingMark, .enclosingMark, .format: continue
            default: break
            }
            if v == 0xFE0F || v == 0xFE0E { continue }
            if scalar.properties.isEmojiPresentation
                || (0x1100...0x115F).contains(v) || (0x2E80...0xA4CF).contains(v)
                || (0xAC00...0xD7A3).contains(v) || (0xF900...0xFAFF).contains(v)
                || (0xFE30...0xFE4F).contains(v) || (0xFF00...0xFF60).contains(v)
                || (0xFFE0...0xFFE6).contains(v) || (0x20000...0x3FFFD).contains(v)
            {
                total += 2
            } else {
                total += 1
            }
        }
        return total
    }
}

// The screen model to a grid of cells: a header, the rows (three lines each: title,
// indicators, a rule), a status line and the keys. Pure: the same model and size always give
// the same cells, which is what the snapshot tests compare.
import SwipeEngine

public enum ScreenLayout {
    public static let linesPerRow = 3
    /// Lines above the list (the header and its rule) and below it (status, keys).
    public static let headerLines = 2
    public static let footerLines = 2
    /// The smallest terminal the list is drawn in; smaller ones get a notice.
    public static let minimumWidth = 20
    public static let minimumHeight = 8

    /// Points per column for a terminal `columns` wide: 5, so that a 70-point button is 14
    /// columns, unless the row would then be narrower than the protocol's 100 points or wider
    /// than its 4,000.
    public static func scale(columns: Int) -> Double {
        let c = Double(max(1, columns))
        return min(max(5, 100 / c), 4000 / c)
    }

    /// The row width in points sent as the viewport.
    public static func viewportWidth(columns: Int) -> Double {
        Double(max(1, columns)) * scale(columns: columns)
    }

    /// How many whole rows the list shows in a terminal `lines` high.
    public static func visibleRows(lines: Int) -> Int {
        max(1, (lines - headerLines - footerLines) / linesPerRow)
    }

    public static func render(_ model: ScreenModel, width: Int, height: Int) -> Grid {
        var grid = Grid(width: width, height: height)
        guard width >= minimumWidth, height >= minimumHeight else {
            let notice = TextWidth.truncated("swiped: the terminal is too small", to: width)
            grid.put(notice, x: 0, y: 0)
            return grid
        }
        header(model, &grid)
        let placed = placements(model, height: height)
        for (index, top, lines) in placed {
            row(model, index, top: top, lines: lines, &grid)
        }
        if let drop = model.drop { self.drop(before: drop, placed, model, &grid) }
        footer(model, &grid)
        if model.help { help(model, &grid) }
        return grid
    }

    /// The lines a row of this height takes (a collapsing row takes fewer).
    public static func lines(height: Double) -> Int {
        min(linesPerRow, Int((Double(linesPerRow) * height).rounded(.up)))
    }

    /// The rows on screen: list index, first line, lines shown (a collapsing row has fewer).
    /// Only rows the model holds (from `firstRow`) are placed.
    public static func placements(_ model: ScreenModel, height: Int) -> [(index: Int, top: Int, lines: Int)] {
        var result: [(Int, Int, Int)] = []
        var line = headerLines
        let bottom = height - footerLines
        var index = max(0, model.scroll, model.firstRow)
        while index < model.firstRow + model.rows.count, line < bottom {
            let lines = lines(height: model.rows[index - model.firstRow].height)
            if lines > 0 { result.append((index, line, min(lines, bottom - line))) }
            line += lines
            index += 1
        }
        return result
    }

    /// The revealed strip of a row drawn at its current offset: each button's columns.
    public static func buttonColumns(_ row: RowView, width: Int, scale: Double) -> [(
        button: ButtonRender, columns: Range<Int>
    )] {
        buttonColumns(
            offset: row.offset, buttons: row.buttons, buttonsOffset: row.buttonsOffset, width: width,
            scale: scale)
    }

    /// A ghost's buttons' columns: they are laid out for its offset, so nothing stretches.
    public static func buttonColumns(_ ghost: Ghost, width: Int, scale: Double) -> [(
        button: ButtonRender, columns: Range<Int>
    )] {
        buttonColumns(
            offset: ghost.offset, buttons: ghost.buttons, buttonsOffset: ghost.offset, width: width,
            scale: scale)
    }

    private static func buttonColumns(
        offset: Double, buttons: [ButtonRender], buttonsOffset: Double, width: Int, scale: Double
    ) -> [(button: ButtonRender, columns: Range<Int>)] {
        let shift = Int((offset / scale).rounded())
        guard shift != 0, !buttons.isEmpty, buttonsOffset != 0, (offset < 0) == (buttonsOffset < 0)
        else { return [] }
        let rowWidth = Double(width) * scale
        let factor = offset / buttonsOffset
        let strip = shift < 0 ? max(0, width + shift)..<width : 0..<min(width, shift)
        var result: [(ButtonRender, Range<Int>)] = []
        for (i, button) in buttons.enumerated() {
            let x = shift < 0 ? rowWidth + (button.x - rowWidth) * factor : button.x * factor
            var start = Int((x / scale).rounded())
            var end = Int(((x + button.width * factor) / scale).rounded())
            if i == 0 { start = strip.lowerBound }
            if i == buttons.count - 1 { end = strip.upperBound }
            start = max(strip.lowerBound, min(start, strip.upperBound))
            end = max(start, min(end, strip.upperBound))
            result.append((button, start..<end))
        }
        return result
    }

    /// What is under column `x` of line `y`.
    public static func hit(_ model: ScreenModel, width: Int, height: Int, x: Int, y: Int) -> Hit {
        guard width >= minimumWidth, height >= minimumHeight else { return .none }
        for (index, top, lines) in placements(model, height: height) where y >= top && y < top + lines {
            let row = model.rows[index - model.firstRow]
            let button = buttonColumns(row, width: width, scale: scale(columns: width)).first {
                $0.columns.contains(x)
            }
            if y - top < 2, button == nil, x == gripColumn(row, model.direction, width: width) {
                return .grip(index: index)
            }
            return .row(index: index, button: y - top < 2 ? button?.button.action : nil)
        }
        return .none
    }

    /// The row under line `y`, when a row is there: its list index.
    public static func row(at y: Int, _ model: ScreenModel, height: Int) -> Int? {
        placements(model, height: height).first { y >= $0.top && y < $0.top + $0.lines }?.index
    }

    /// The column of a row's grip (issue 48), on its first two lines: the content's trailing
    /// edge (its right in ltr, its left in rtl), the column that a title cut short leaves
    /// spare, where the reorder control of a list is on iOS; it slides with the content. Nil
    /// when no content shows.
    public static func gripColumn(_ row: RowView, _ direction: Direction, width: Int) -> Int? {
        let content = contentColumns(row, width: width)
        guard !content.isEmpty else { return nil }
        return direction == .rtl ? content.lowerBound : content.upperBound - 1
    }

    /// The columns a row's content covers at its offset. A spring may carry the content past
    /// either edge (overshoot after a full swipe).
    static func contentColumns(_ row: RowView, width: Int) -> Range<Int> {
        let shift = Int((row.offset / scale(columns: width)).rounded())
        return min(width, max(0, shift))..<max(0, min(width, width + shift))
    }

    // MARK: - Parts

    private static func faint(_ model: ScreenModel) -> Style { Style(faint: true) }

    private static func header(_ model: ScreenModel, _ grid: inout Grid) {
        let dot = model.ascii ? "*" : "●"
        let state: (String, Color?) =
            switch model.connection {
            case .connecting: ("connecting…", .indexed(214))
            case .connected: ("\(dot) connected", .indexed(34))
            case .reconnecting: ("reconnecting…", .indexed(196))
            }
        // The socket goes last: in a narrow terminal it is what gets cut.
        var x = grid.put(" swiped  ", x: 0, y: 0, Style(bold: true))
        x = grid.put(state.0, x: x, y: 0, Style(foreground: state.1, bold: true))
        x = grid.put("  seq \(model.seq)", x: x, y: 0)
        x = who(model, x: x, &grid)
        // What this connection records and shares, and whether others' fingers show (issue 18).
        switch model.recording {
        case .off: break
        case .on:
            x = grid.put("\(dot) recording…  ", x: x, y: 0, Style(foreground: .indexed(196), bold: true))
        case .saving: x = grid.put("saving…  ", x: x, y: 0, Style(bold: true))
        case .lost: x = grid.put("recording lost  ", x: x, y: 0, Style(foreground: .indexed(196)))
        }
        if model.sharing { x = grid.put("sharing  ", x: x, y: 0, Style(bold: true)) }
        if model.confirmDelete { x = grid.put("confirm delete  ", x: x, y: 0, Style(bold: true)) }
        if model.fullSwipeStyle != .fill {
            x = grid.put("full swipe \(model.fullSwipeStyle.rawValue)  ", x: x, y: 0, Style(bold: true))
        }
        if let peers = model.ghosts { x = grid.put("ghosts \(peers)  ", x: x, y: 0, Style(faint: true)) }
        grid.put(TextWidth.truncated(SafeText.plain(model.daemon), to: max(0, grid.width - x)), x: x, y: 0)
        let rule = String(repeating: model.ascii ? "-" : "─", count: grid.width)
        grid.put(rule, x: 0, y: 1, faint(model))
    }

    /// Who the connection is and whether it may change the list (issue 45): `alice (writer)`,
    /// `bob (reader)  read-only`, `reader` for nobody in particular; `writer` or `read-only`
    /// alone from a daemon before roles. Returns the column after it.
    private static func who(_ model: ScreenModel, x: Int, _ grid: inout Grid) -> Int {
        if model.signingIn { return grid.put("  signing in…  ", x: x, y: 0, Style(faint: true)) }
        guard let role = model.role else {
            return grid.put(
                model.writer ? "  writer  " : "  read-only  ", x: x, y: 0, Style(faint: !model.writer))
        }
        let name = model.user.map { "\(SafeText.plain($0)) (\(role))" } ?? role
        var x = grid.put("  \(name)  ", x: x, y: 0)
        if !model.writer {
            x = grid.put("read-only  ", x: x, y: 0, Style(foreground: .indexed(214), bold: true))
        }
        return x
    }

    private static func row(_ model: ScreenModel, _ index: Int, top: Int, lines: Int, _ grid: inout Grid) {
        let row = model.rows[index - model.firstRow]
        let width = grid.width
        let scale = scale(columns: width)
        let content = contentColumns(row, width: width)
        let selected = model.selected == index
        let base = Style(background: selected ? .indexed(236) : nil)
        // Line 0: the title; line 1: the indicators; line 2: the rule under the row.
        for l in 0..<min(lines, 2) {
            grid.fill(line: top + l, from: content.lowerBound, to: content.upperBound, base)
        }
        let tile = rowText(
            model, row, selected: selected, top: top, lines: lines, content: content, &grid)
        if let x = gripColumn(row, model.direction, width: width) {
            // Faint at rest; lit while it is held.
            let held = model.dragged == index
            let style = Style(
                foreground: held ? dropColor : nil, background: base.background, bold: held, faint: !held)
            for l in 0..<min(lines, 2) { grid.put(model.ascii ? "=" : "⠿", x: x, y: top + l, style) }
        }
        for (button, columns) in buttonColumns(row, width: width, scale: scale) where !columns.isEmpty {
            let fill = Style(
                foreground: Palette.onTint(button.tint, trueColor: model.trueColor),
                background: Palette.color(button.tint, trueColor: model.trueColor), bold: true)
            for l in 0..<min(lines, 2) {
                grid.fill(line: top + l, from: columns.lowerBound, to: columns.upperBound, fill)
            }
            let icon = button.icon.map { Palette.icon($0, ascii: model.ascii) }
            let label = button.label.map(SafeText.plain) ?? button.action
            let parts =
                lines >= 2 ? [icon ?? "", label] : [[icon, label].compactMap { $0 }.joined(separator: " ")]
            for (l, part) in parts.enumerated() where !part.isEmpty {
                let text = TextWidth.truncated(part, to: columns.count)
                let x = columns.lowerBound + (columns.count - TextWidth.width(text)) / 2
                grid.put(text, x: x, y: top + l, fill, clip: columns)
            }
        }
        let own = buttonColumns(row, width: width, scale: scale).map(\.columns)
        for ghost in row.ghosts {
            self.ghost(ghost, model, top: top, lines: min(lines, 2), under: own, tile: tile, &grid)
        }
        if lines >= 3 {
            grid.put(String(repeating: model.ascii ? "." : "·", count: width), x: 0, y: top + 2, faint(model))
        }
    }

    /// Line 0: the selection marker, the poster tile and the title; line 1: the indicators,
    /// under the title. In rtl a line reads from the right: the marker and the tile are on
    /// that side. Returns the tile's columns on line 0.
    @discardableResult
    private static func rowText(
        _ model: ScreenModel, _ row: RowView, selected: Bool, top: Int, lines: Int, content: Range<Int>,
        _ grid: inout Grid
    ) -> Range<Int> {
        let rtl = model.direction == .rtl
        let background = selected ? Color.indexed(236) : nil
        let marker = selected ? (model.ascii ? (rtl ? "<" : ">") : (rtl ? "◀" : "▶")) : " "
        let tile = PosterTile(image: row.image)
        // The marker's three columns, the tile's two and a blank before the title.
        let indent = 6
        let titleStyle = Style(background: background, bold: true)
        // The text keeps to what the content still covers: the background slides with the
        // finger, but an open row keeps its marker and the start of its title in view, cut
        // with "…" before its buttons (one column spare, as in a closed row).
        let room = content.count - 1
        let title = TextWidth.truncated(
            rtl ? SafeText.escaped(row.title) + " " : " " + SafeText.escaped(row.title), to: room - 5)
        // Where the line starts: the content's left edge in ltr; in rtl, right-aligned at its
        // right edge.
        var x = rtl ? content.upperBound - 5 - TextWidth.width(title) : content.lowerBound
        let parts =
            rtl
            ? [
                (title, titleStyle), (tile.text, tile.style(trueColor: model.trueColor)),
                (" \(marker) ", titleStyle),
            ]
            : [
                (" \(marker) ", titleStyle), (tile.text, tile.style(trueColor: model.trueColor)),
                (title, titleStyle),
            ]
        var tileColumns = 0..<0
        for (i, (text, style)) in parts.enumerated() {
            let start = x
            x = grid.put(text, x: x, y: top, style, clip: content)
            if i == 1 { tileColumns = (start..<x).clamped(to: content) }  // the tile, in either order
        }
        guard lines >= 2 else { return tileColumns }
        var indicators: [String] = []
        if row.watched { indicators.append((model.ascii ? "[w]" : "◉") + " Watched") }
        if row.watchedWithFriends { indicators.append((model.ascii ? "[f]" : "👥") + " With friends") }
        let pad = String(repeating: " ", count: indent)
        let text = TextWidth.truncated(
            rtl ? indicators.joined(separator: "  ") + pad : pad + indicators.joined(separator: "  "),
            to: room)
        grid.put(
            text, x: rtl ? content.upperBound - TextWidth.width(text) : content.lowerBound, y: top + 1,
            Style(background: background, faint: true), clip: content)
        return tileColumns
    }

    /// Another person's finger, faintly: the strip their offset reveals takes their buttons'
    /// tints as faint text colour (the cells keep what this row shows there), their labels
    /// where this row is blank, and a faint ┆ at their content's edge (where blank too). This
    /// row's own buttons and its poster tile stay on top: a ghost is never drawn over them, nor
    /// hides a letter.
    private static func ghost(
        _ ghost: Ghost, _ model: ScreenModel, top: Int, lines: Int, under own: [Range<Int>],
        tile: Range<Int>, _ grid: inout Grid
    ) {
        let width = grid.width
        let scale = scale(columns: width)
        func free(_ x: Int, _ line: Int) -> Bool {
            x >= 0 && x < width && !own.contains { $0.contains(x) } && !(line == 0 && tile.contains(x))
        }
        var edgeTint: String?
        for (button, columns) in buttonColumns(ghost, width: width, scale: scale) where !columns.isEmpty {
            let style = Style(foreground: Palette.color(button.tint, trueColor: model.trueColor), faint: true)
            for l in 0..<lines {
                for x in columns where free(x, l) {
                    // A wide character takes one style for both its cells, even when the strip
                    // cuts it in half (a terminal draws both halves with its lead's).
                    let lead = grid[x, top + l].isContinuation ? x - 1 : x
                    let wide = lead + 1 < width && grid[lead + 1, top + l].isContinuation
                    for c in lead...(wide ? lead + 1 : lead) where c >= 0 {
                        var cell = grid[c, top + l]
                        cell.style = Style(
                            foreground: style.foreground, background: cell.style.background, faint: true)
                        grid[c, top + l] = cell
                    }
                }
            }
            let icon = button.icon.map { Palette.icon($0, ascii: model.ascii) }
            let label = button.label.map(SafeText.plain) ?? button.action
            let parts =
                lines >= 2 ? [icon ?? "", label] : [[icon, label].compactMap { $0 }.joined(separator: " ")]
            for (l, part) in parts.enumerated() where !part.isEmpty {
                let text = TextWidth.truncated(part, to: columns.count)
                let x = columns.lowerBound + (columns.count - TextWidth.width(text)) / 2
                let span = x..<(x + TextWidth.width(text))
                // Only where this row shows nothing: a ghost never hides a title.
                guard span.allSatisfy({ free($0, l) && grid[$0, top + l].text == " " }) else { continue }
                var style = style
                style.background = grid[x, top + l].style.background
                grid.put(text, x: x, y: top + l, style, clip: span)
            }
            edgeTint = ghost.offset < 0 ? (edgeTint ?? button.tint) : button.tint
        }
        let x = Int((ghost.offset / scale).rounded()) + (ghost.offset < 0 ? width - 1 : 0)
        guard ghost.offset != 0 else { return }
        let color = edgeTint.map { Palette.color($0, trueColor: model.trueColor) }
        for l in 0..<lines where free(x, l) && grid[x, top + l].text == " " {
            let background = grid[x, top + l].style.background
            grid.put(
                model.ascii ? ":" : "┆", x: x, y: top + l,
                Style(foreground: color, background: background, faint: true))
        }
    }

    /// The colour of a held grip and of the line where its row would go.
    static let dropColor = Color.indexed(39)

    /// Where a dragged row would go (issue 48): a bold line across the rule between the rows
    /// at `before - 1` and `before` (the header's rule above the first row shown), when on
    /// screen.
    private static func drop(
        before: Int, _ placed: [(index: Int, top: Int, lines: Int)], _ model: ScreenModel, _ grid: inout Grid
    ) {
        var line: Int?
        if let above = placed.first(where: { $0.index == before - 1 }), above.lines == linesPerRow {
            line = above.top + linesPerRow - 1
        } else if placed.first?.index == before {
            line = headerLines - 1
        }
        guard let line else { return }
        grid.put(
            String(repeating: model.ascii ? "=" : "━", count: grid.width), x: 0, y: line,
            Style(foreground: dropColor, bold: true))
    }

    private static func footer(_ model: ScreenModel, _ grid: inout Grid) {
        let statusLine = grid.height - 2
        let keysLine = grid.height - 1
        if let prompt = model.prompt {
            self.prompt(" Add a movie: ", prompt, ascii: model.ascii, line: statusLine, &grid)
        } else if let search = model.search, search.typing {
            self.prompt(" Search: ", search.text, ascii: model.ascii, line: statusLine, &grid)
        } else if let status = model.status {
            let style = Style(foreground: model.statusIsError ? .indexed(196) : nil, bold: true)
            grid.put(
                TextWidth.truncated(" " + SafeText.plain(status), to: grid.width), x: 0, y: statusLine, style)
        }
        let keys =
            model.prompt != nil
            ? " Enter adds  Esc cancels"
            : model.search.map { searchKeys($0, ascii: model.ascii) } ?? self.keys(model, width: grid.width)
        grid.put(TextWidth.truncated(keys, to: grid.width), x: 0, y: keysLine, Style(faint: true))
    }

    /// A line being typed, its end in view, with a cursor after it.
    private static func prompt(_ label: String, _ text: String, ascii: Bool, line: Int, _ grid: inout Grid) {
        let x = grid.put(label, x: 0, y: line, Style(bold: true))
        let shown =
            TextWidth.width(text) > grid.width - x - 2 ? "…" + String(text.suffix(grid.width - x - 3)) : text
        let end = grid.put(SafeText.plain(shown), x: x, y: line)
        grid.put(ascii ? "_" : "▏", x: end, y: line)
    }

    /// The footer's keys during a search: how many titles match, which of them is selected,
    /// and the keys that go on.
    public static func searchKeys(_ search: SearchLine, ascii: Bool) -> String {
        let count =
            search.text.isEmpty
            ? "" : search.count == 0 ? "no match" : search.count == 1 ? "1 match" : "\(search.count) matches"
        let found = search.position.map { "\($0) of \(search.count)" } ?? count
        if search.typing {
            return " " + (found.isEmpty ? "" : found + "  ") + (ascii ? "Enter" : "⏎") + " done  Esc ends"
        }
        let quoted = ascii ? "\"\(SafeText.plain(search.text))\"" : "“\(SafeText.plain(search.text))”"
        return " \(quoted): \(found)  n next  N previous  / again  Esc ends"
    }

    /// The keys the footer names, in their order, and which to leave out first when the line
    /// is too narrow for all of them (1 first, then 2…; 0: never). `?` names them all.
    /// (PgUp, PgDn, Home and End are in `?` only.) Moving a row (⇧ with ↑ ↓, issue 48) makes
    /// way last, after the recording: in 80 columns it takes r's place.
    private static func footerKeys(ascii: Bool) -> [(text: String, dropOrder: Int)] {
        [
            (ascii ? "j/k select" : "↑↓ select", 0), (ascii ? "J/K move" : "⇧ move", 5),
            (ascii ? "h/l open" : "←→ open", 0),
            (ascii ? "Enter fire" : "⏎ fire", 0), ("/ search", 0), ("w f d", 2), ("a add", 3), ("r rec", 4),
            ("s share", 0),
            ("g ghosts", 0),
            ("c confirm", 1), ("? help", 0), ("q quit", 0),
        ]
    }

    /// The footer's line of keys for a terminal `width` columns wide.
    public static func keys(_ model: ScreenModel, width: Int) -> String {
        var keys = footerKeys(ascii: model.ascii)
        var line: String { " " + keys.map(\.text).joined(separator: "  ") }
        for order in 1...5 where TextWidth.width(line) > width {
            keys.removeAll { $0.dropOrder == order }
        }
        return line
    }

    public static let helpLines = [
        "Mouse: drag a row sideways, let go to open it",
        "       or (far enough) to fire its outer button;",
        "       click a button to fire it, elsewhere to close;",
        "       drag its ⠿ grip up or down to move it.",
        "↑ ↓  j k   select a row      wheel  scroll",
        "⇧↑ ⇧↓ K J  move the row up, down",
        "PgUp PgDn  a page up, down   Home End  first, last",
        "/          search titles: n N next, previous match",
        "← →  h l   open the right / left buttons",
        "Enter      fire the outer showing button",
        "w  f  d    watched, with friends, delete",
        "u          undo a delete, anyone's (for 5 s)",
        "a          add a movie       Esc  close rows",
        "r          record; again: stop, save to a file",
        "s          share your rows with others",
        "g          show others' rows faintly (ghosts)",
        "c          ask before deleting (on / off)",
        "F          full swipe: fill, close, dismiss",
        "?          this help         q Ctrl-C  quit",
    ]

    private static func help(_ model: ScreenModel, _ grid: inout Grid) {
        let lines = model.ascii ? helpLines.map(asciiHelp) : helpLines
        let inner = min(grid.width - 4, (lines.map(TextWidth.width).max() ?? 0) + 2)
        let height = min(grid.height - 2, lines.count + 2)
        let left = max(0, (grid.width - inner - 2) / 2)
        let top = max(0, (grid.height - height) / 2)
        let box = Style(inverse: true)
        for l in 0..<height {
            grid.fill(line: top + l, from: left, to: left + inner + 2, box)
        }
        grid.put(" Help — any key closes ", x: left + 2, y: top, Style(bold: true, inverse: true))
        for (i, line) in lines.prefix(height - 2).enumerated() {
            grid.put(
                TextWidth.truncated(line, to: inner - 1), x: left + 2, y: top + 1 + i, box,
                clip: left..<(left + inner + 1))
        }
    }

    private static func asciiHelp(_ line: String) -> String {
        line.replacingOccurrences("⇧↑ ⇧↓", "S-^ v").replacingOccurrences("↑ ↓", "^ v")
            .replacingOccurrences("← →", "< >").replacingOccurrences("—", "-").replacingOccurrences(
                "⠿", "=")
    }
}

extension String {
    fileprivate func replacingOccurrences(_ target: String, _ replacement: String) -> String {
        var out = ""
        var rest = Substring(self)
        while let range = rest.firstRange(of: target) {
            out += rest[..<range.lowerBound] + replacement
            rest = rest[range.upperBound...]
        }
        return out + rest
    }
}

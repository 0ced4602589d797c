// Two frames to the bytes that turn the first into the second on a terminal: only the cells
// that changed are written, with cursor moves and style changes only where needed.

public enum FrameWriter {
    /// The bytes that turn `old` (what the terminal shows; nil: unknown, as after a resize) into
    /// `new`. Empty when nothing changed. `synchronized` wraps the frame in mode 2026 (the
    /// terminal shows it at once, never half drawn; terminals without it ignore the mode).
    public static func diff(from old: Grid?, to new: Grid, synchronized: Bool = false) -> [UInt8] {
        var out: [UInt8] = []
        let full = old == nil || old!.width != new.width || old!.height != new.height
        if full { out += Array("\u{1B}[0m\u{1B}[2J".utf8) }
        // Every frame ends with the attributes reset, so the terminal starts each one plain.
        var style = Style.plain
        var cursor: (x: Int, y: Int)? = nil
        for y in 0..<new.height {
            var x = 0
            while x < new.width {
                let cell = new[x, y]
                if cell.isContinuation {
                    x += 1
                    continue
                }
                // (A grid never holds half a wide character, so an unchanged wide lead has an
                // unchanged right half: comparing leads is enough.)
                var changed = full || old![x, y] != cell
                if full && cell == .blank {
                    changed = false  // a cleared screen is blank already
                }
                if !changed {
                    x += 1
                    continue
                }
                if cursor == nil || cursor! != (x, y) {
                    out += Array("\u{1B}[\(y + 1);\(x + 1)H".utf8)
                }
                if style != cell.style {
                    out += sgr(cell.style)
                    style = cell.style
                }
                out += Array(cell.text.utf8)
                let w = x + 1 < new.width && new[x + 1, y].isContinuation ? 2 : 1
                x += w
                cursor = x < new.width ? (x, y) : nil  // past the margin the cursor stays put
            }
        }
        if out.isEmpty { return [] }
        if style != .plain { out += Array("\u{1B}[0m".utf8) }
        if synchronized { out = Array("\u{1B}[?2026h".utf8) + out + Array("\u{1B}[?2026l".utf8) }
        return out
    }

    /// Select Graphic Rendition for `style`, from a reset.
    public static func sgr(_ style: Style) -> [UInt8] {
        var codes = ["0"]
        if style.bold { codes.append("1") }
        if style.faint { codes.append("2") }
        if style.underline { codes.append("4") }
        if style.inverse { codes.append("7") }
        if let color = style.foreground { codes.append(code(color, base: 38)) }
        if let color = style.background { codes.append(code(color, base: 48)) }
        return Array("\u{1B}[\(codes.joined(separator: ";"))m".utf8)
    }

    private static func code(_ color: Color, base: Int) -> String {
        switch color {
        case .indexed(let n): return "\(base);5;\(n)"
        case .rgb(let r, let g, let b): return "\(base);2;\(r);\(g);\(b)"
        }
    }
}

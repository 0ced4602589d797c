// Text for cells: how many columns a character takes, and titles with nothing in them that could
// reorder, hide or break the screen around them. Pure: widths come from Unicode properties
// (the Swift standard library's tables), not from the C library's locale, so that a layout is
// the same on every machine and in every test.
import Movies

public enum TextWidth {
    /// The columns `character` takes in a terminal: 0 for controls, marks and invisible
    /// characters, 2 for East Asian wide and fullwidth characters and emoji shown as emoji,
    /// 1 otherwise. A grapheme cluster is as wide as its first visible scalar, or 2 when it asks
    /// for emoji presentation (U+FE0F) or joins emoji (ZWJ sequences).
    public static func width(_ character: Character) -> Int {
        let scalars = character.unicodeScalars
        guard let first = scalars.first else { return 0 }
        var w = width(first)
        if scalars.count > 1, w == 1, first.properties.isEmoji,
            scalars.contains(where: { $0.value == 0xFE0F || $0.value == 0x200D })
        {
            w = 2
        }
        return w
    }

    /// The columns of one scalar on its own.
    public static func width(_ scalar: Unicode.Scalar) -> Int {
        let v = scalar.value
        if v < 0x7F { return v >= 0x20 ? 1 : 0 }
        let properties = scalar.properties
        switch properties.generalCategory {
        case .control, .nonspacingMark, .enclosingMark, .format, .lineSeparator, .paragraphSeparator:
            return 0
        default: break
        }
        if properties.isDefaultIgnorableCodePoint || (0x1160...0x11FF).contains(v) { return 0 }
        if properties.isEmojiPresentation || (0x1100...0x115F).contains(v) || (0x2E80...0x303E).contains(v)
            || (0x3041...0x33FF).contains(v) || (0x3400...0x4DBF).contains(v) || (0x4E00...0x9FFF).contains(v)
            || (0xA000...0xA4CF).contains(v) || (0xAC00...0xD7A3).contains(v) || (0xF900...0xFAFF).contains(v)
            || (0xFE30...0xFE4F).contains(v) || (0xFF00...0xFF60).contains(v) || (0xFFE0...0xFFE6).contains(v)
            || (0x20000...0x3FFFD).contains(v)
        {
            return 2
        }
        return 1
    }

    /// The columns of `text`.
    public static func width(_ text: String) -> Int { text.reduce(0) { $0 + width($1) } }

    /// `text` cut to at most `columns`, ending with "…" when something was cut; whole
    /// characters only.
    public static func truncated(_ text: String, to columns: Int) -> String {
        if width(text) <= columns { return text }
        guard columns >= 1 else { return "" }
        var out = ""
        var used = 0
        for character in text {
            let w = width(character)
            if used + w > columns - 1 { break }
            out.append(character)
            used += w
        }
        return out + "…"
    }
}

public enum SafeText {
    /// `title` with every code point no title needs (Movies' title rule: control characters,
    /// line and paragraph separators, bidi controls, zero-width spaces…) written as `\u{202E}`,
    /// so that a title stored before the rule cannot reorder, hide or break the line it is on.
    public static func escaped(_ title: String) -> String {
        let scalars = MovieState.titleScalars(title)
        guard scalars.contains(where: { $0.refused }) else { return title }
        var out = ""
        for (scalar, refused) in scalars {
            if refused {
                out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Any text from the daemon (a label, a message) with control and format characters
    /// escaped the same way, whatever the title rule says.
    public static func plain(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator:
                if scalar.value == 0x200D || scalar.value == 0x200C {
                    out.unicodeScalars.append(scalar)
                } else {
                    out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
                }
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}

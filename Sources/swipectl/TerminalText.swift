// Text for a terminal: titles with nothing that could reorder, hide or break the line around
// them, and widths in terminal cells, so that a table fits the window.
import Terminal

#if canImport(Glibc)
    import Glibc
#endif

enum TerminalText {
    /// `title` with every code point that no title needs written as `\u{202E}` (the terminal
    /// front end's rule, `SafeText.escaped`: one rule for every screen swipectl draws).
    static func escaped(_ title: String) -> String { SafeText.escaped(title) }

    /// The terminal cells `text` takes: the sum of its code points' widths (`wcwidth(3)`, as
    /// terminals count; a CJK character or an emoji takes two, a combining mark none).
    static func width(_ text: String) -> Int {
        text.unicodeScalars.reduce(0) { $0 + width($1) }
    }

    /// `wcwidth(3)` in the user's locale; where it knows nothing (-1: a locale that is not UTF-8,
    /// or a code point it does not print), `fallbackWidth`.
    static func width(_ scalar: Unicode.Scalar) -> Int {
        if scalar.value < 0x7F { return scalar.value >= 0x20 ? 1 : 0 }
        let cells = wcwidth.map { Int($0(wchar_t(bitPattern: scalar.value))) } ?? -1
        return cells >= 0 ? cells : fallbackWidth(scalar)
    }

    /// wcwidth(3). Swift's Glibc module leaves it out (it needs _XOPEN_SOURCE), so it is looked
    /// up with dlsym, as signalfd is (Watch.swift).
    private static let wcwidth: (@convention(c) (wchar_t) -> Int32)? = {
        guard let symbol = dlsym(nil, "wcwidth") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (wchar_t) -> Int32).self)
    }()

    /// The width of a code point without the C library: the terminal front end's table
    /// (`TextWidth`, from Unicode properties).
    static func fallbackWidth(_ scalar: Unicode.Scalar) -> Int { TextWidth.width(scalar) }

    /// `text` cut to at most `cells` cells, ending with "…" when something was cut; whole
    /// characters only (an emoji and its modifiers, a letter and its marks stay together).
    static func truncated(_ text: String, toWidth cells: Int) -> String {
        if width(text) <= cells { return text }
        guard cells >= 1 else { return "" }
        var out = ""
        var used = 0
        for character in text {
            let w = width(String(character))
            if used + w > cells - 1 { break }
            out.append(character)
            used += w
        }
        return out + "…"
    }

    /// Standard output's width in cells when it is a terminal that says (TIOCGWINSZ); nil
    /// otherwise (a pipe or a file: nothing is cut).
    static func terminalColumns() -> Int? {
        guard isatty(1) == 1 else { return nil }
        var size = winsize()
        guard ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }

    /// Makes `wcwidth` use the user's locale (LC_CTYPE), as any terminal program does.
    static func useLocale() { setlocale(LC_CTYPE, "") }
}

// The rule for a movie's title (protocol.md, `add`): what a title may contain is a domain rule,
// checked when `add` is decided. Titles end up in terminals, lists and logs; a title must not
// be able to reorder, hide or break the text around it.
import Foundation

extension MovieState {
    /// The title `add` stores for `title`, or why none: NFC; refused when blank, or when it
    /// contains a code point that no title needs (`refusedCodePoint`); leading and trailing
    /// white space trimmed; 1 to `maxTitleLength` characters.
    public static func checkedTitle(_ title: String) throws(CommandError) -> String {
        if title.isEmpty { throw .badRequest("title is empty; it needs 1 to \(maxTitleLength) characters") }
        let nfc = title.precomposedStringWithCanonicalMapping
        if nfc.unicodeScalars.allSatisfy({
            $0.properties.isWhitespace || $0.properties.isDefaultIgnorableCodePoint
        }
        ) {
            throw .badRequest("title is blank")
        }
        if let scalar = refusedCodePoint(in: nfc) {
            throw .badRequest("title contains \(describe(scalar)), which no title needs")
        }
        let scalars = nfc.unicodeScalars
        let start = scalars.firstIndex { !$0.properties.isWhitespace }!
        let end = scalars.lastIndex { !$0.properties.isWhitespace }!
        let trimmed = String(scalars[start...end])
        let n = trimmed.count
        if n > maxTitleLength {
            throw .badRequest("title has \(n) characters; at most \(maxTitleLength) are allowed")
        }
        return trimmed
    }

    /// The first code point of `title` that no title needs, or nil:
    /// - control characters (general category Cc: C0, DEL, C1);
    /// - U+2028 LINE SEPARATOR and U+2029 PARAGRAPH SEPARATOR;
    /// - invisible characters: format characters (Cf: the bidi controls U+202A–U+202E and
    ///   U+2066–U+2069, U+200B ZERO WIDTH SPACE, U+FEFF, U+00AD SOFT HYPHEN, U+200E/U+200F…) and
    ///   the other default-ignorable code points that are not combining marks (such as U+3164
    ///   HANGUL FILLER) — except U+200C ZERO WIDTH NON-JOINER and U+200D ZERO WIDTH JOINER, which
    ///   emoji and some scripts need, and the tag characters (U+E0020–U+E007F) of an emoji tag
    ///   sequence (U+1F3F4 WAVING BLACK FLAG, tags, U+E007F CANCEL TAG: 🏴󠁧󠁢󠁳󠁣󠁴󠁿).
    ///
    /// Combining marks that are default-ignorable (variation selectors such as U+FE0F, which
    /// make ❤️ an emoji) attach to the character before them and are kept.
    public static func refusedCodePoint(in title: String) -> Unicode.Scalar? {
        titleScalars(title).first { $0.refused }?.scalar
    }

    /// Every scalar of `title`, each with whether no title needs it (see `refusedCodePoint`):
    /// what a front end escapes when it shows a title stored before the rule.
    public static func titleScalars(_ title: String) -> [(scalar: Unicode.Scalar, refused: Bool)] {
        let scalars = Array(title.unicodeScalars)
        var result: [(scalar: Unicode.Scalar, refused: Bool)] = []
        result.reserveCapacity(scalars.count)
        var i = 0
        while i < scalars.count {
            if scalars[i].value == 0x1F3F4, let end = tagSequenceEnd(scalars, from: i + 1) {
                for scalar in scalars[i..<end] { result.append((scalar, false)) }
                i = end
                continue
            }
            result.append((scalars[i], isRefused(scalars[i])))
            i += 1
        }
        return result
    }

    private static func isRefused(_ scalar: Unicode.Scalar) -> Bool {
        let properties = scalar.properties
        switch properties.generalCategory {
        case .control, .lineSeparator, .paragraphSeparator:
            return true
        case .format:
            return scalar.value != 0x200C && scalar.value != 0x200D
        case .nonspacingMark, .spacingMark, .enclosingMark:
            return false
        default:
            return properties.isDefaultIgnorableCodePoint
        }
    }

    /// The index just past the U+E007F ending the tags that start at `start`; nil when there is
    /// no such tag sequence there.
    private static func tagSequenceEnd(_ scalars: [Unicode.Scalar], from start: Int) -> Int? {
        var i = start
        while i < scalars.count, (0xE0020...0xE007E).contains(scalars[i].value) { i += 1 }
        guard i > start, i < scalars.count, scalars[i].value == 0xE007F else { return nil }
        return i + 1
    }

    /// "U+202E RIGHT-TO-LEFT OVERRIDE", or "U+000A (a control character)" for one with no name.
    static func describe(_ scalar: Unicode.Scalar) -> String {
        var hex = String(scalar.value, radix: 16, uppercase: true)
        if hex.count < 4 { hex = String(repeating: "0", count: 4 - hex.count) + hex }
        if let name = scalar.properties.name { return "U+\(hex) \(name)" }
        return scalar.properties.generalCategory == .control
            ? "U+\(hex) (a control character)" : "U+\(hex) (an unassigned code point)"
    }
}

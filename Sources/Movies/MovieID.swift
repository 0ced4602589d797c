// A new movie's id, made from its title once, when it is added. Ids stay in the log for ever,
// so the rule is written once, here, and an id already stored keeps its spelling even if this
// rule changes (ids from before issue 13 are lowercase ASCII, which this rule still produces for
// ASCII titles).
import Foundation

extension MovieState {
    /// The most bytes of an id made from a title (before any `_2`, `_3`… suffix).
    public static let maxSlugBytes = 64

    /// The id `title` gives, before uniqueness (protocol.md, `add`):
    /// - NFC; then Latin letters lose their combining marks ("Amélie" → `amelie`, "İ" → `i`);
    /// - letters and numbers of every script are kept, lowercased ("日本" → `日本`, "Σ" → `σ`), with
    ///   the combining marks of letters other than Latin ones (Devanagari vowel signs, kana
    ///   voicing marks);
    /// - apostrophes (' and ’) are dropped ("Schindler's" → `schindlers`), as are invisible
    ///   format characters (ZWJ, ZWNJ); anything else is a separator: runs of separators become
    ///   one `_`, and none is kept at either end;
    /// - at most `maxSlugBytes` bytes of UTF-8, cut at a character boundary;
    /// - `movie` when nothing is left.
    ///
    /// Only Unicode scalar properties of the toolchain's standard library and Foundation's
    /// canonical (de)composition are used: no locale, no transliteration.
    public static func slug(_ title: String) -> String {
        var out = String.UnicodeScalarView()
        var separator = false
        // Whether the last scalar kept was a letter other than Latin, or a mark kept after one.
        var keepsMarks = false
        for scalar in title.precomposedStringWithCanonicalMapping.decomposedStringWithCanonicalMapping
            .unicodeScalars
        {
            let properties = scalar.properties
            switch SlugClass(properties) {
            case .letter, .number:
                if separator && !out.isEmpty { out.append("_") }
                separator = false
                out.append(contentsOf: properties.lowercaseMapping.unicodeScalars)
                keepsMarks = properties.isAlphabetic && !(properties.name ?? "").contains("LATIN ")
            case .mark:
                if keepsMarks && !separator { out.append(scalar) }
            case .dropped:
                break
            case .separator:
                separator = true
                keepsMarks = false
            }
        }
        let id = String(out).precomposedStringWithCanonicalMapping
        var cut = ""
        for character in id {
            if cut.utf8.count + character.utf8.count > maxSlugBytes { break }
            cut.append(character)
        }
        while cut.hasSuffix("_") { cut.removeLast() }
        return cut.isEmpty ? "movie" : cut
    }

    /// A slug of `title` that no movie ever had: `base`, else `base_2`, `base_3`, …
    public func freshID(for title: String) -> String {
        let base = MovieState.slug(title)
        if !isUsed(base) { return base }
        var n = max(2, nextSuffix(for: base) ?? 2)
        while isUsed("\(base)_\(n)") { n += 1 }
        return "\(base)_\(n)"
    }

    /// Whether `id` can be a movie id: 1 to 128 bytes of `_`, letters (none that lowercasing
    /// would change), numbers and combining marks. Every id the slug rule makes, from before
    /// issue 13 or after, is one.
    public static func isValidID(_ id: String) -> Bool {
        // One pass over the bytes (the fold of a long log checks every event's id): every id
        // before issue 13, and most after, is ASCII, and for an ASCII byte the rule is the
        // scalar rule's answer (`isValidIDByScalars`, tested against it); an id with any other
        // byte goes to the scalar rule.
        var id = id
        let ascii: Bool? = id.withUTF8 { b in
            guard b.count > 0, b.count <= 128 else { return false }
            for c in b {
                if c >= 0x80 { return nil }
                guard (c >= 0x61 && c <= 0x7A) || (c >= 0x30 && c <= 0x39) || c == 0x5F else { return false }
            }
            return true
        }
        return ascii ?? isValidIDByScalars(id)
    }

    /// `isValidID`'s rule, one scalar at a time (its slow path, and its reference in tests).
    static func isValidIDByScalars(_ id: String) -> Bool {
        let bytes = id.utf8.count
        guard bytes > 0, bytes <= 128 else { return false }
        return id.unicodeScalars.allSatisfy { scalar in
            if scalar == "_" { return true }
            switch SlugClass(scalar.properties) {
            case .letter: return !scalar.properties.changesWhenLowercased
            case .number, .mark: return true
            case .dropped, .separator: return false
            }
        }
    }
}

/// What the slug rule does with one scalar of a title in NFD.
private enum SlugClass {
    case letter, number, mark, dropped, separator

    init(_ properties: Unicode.Scalar.Properties) {
        switch properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter:
            self = .letter
        case .decimalNumber, .letterNumber, .otherNumber:
            self = .number
        case .nonspacingMark, .spacingMark, .enclosingMark:
            self = .mark
        case .format:
            self = .dropped
        case .otherPunctuation where properties.name == "APOSTROPHE",
            .finalPunctuation where properties.name == "RIGHT SINGLE QUOTATION MARK":
            self = .dropped
        default:
            self = .separator
        }
    }
}

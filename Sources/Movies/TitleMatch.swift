// `list`'s `match` (protocol.md): which titles contain a text, ignoring case. Titles are NFC
// (`checkedTitle`); the text is made NFC the same way, then both are lowercased scalar by scalar
// with Unicode's full lowercase mapping (what `String.lowercased()` does: "İ" becomes "i̇") and
// the text is looked for as a run of the title's scalars. Lowercasing is not full case folding:
// "ß" does not match "ss", nor "ς" "σ". It runs over every title of a `list`, so ASCII, most
// titles, is lowercased byte by byte without a String per title.
import Foundation

public struct TitleMatch: Equatable, Sendable {
    /// The text, NFC and lowercased, in UTF-8. UTF-8 is self-synchronising: a run of bytes of a
    /// valid text found in a valid title starts and ends on scalar boundaries.
    public let needle: [UInt8]

    public init(_ text: String) {
        var folded: [UInt8] = []
        TitleMatch.lowercased(text.precomposedStringWithCanonicalMapping, into: &folded)
        needle = folded
    }

    /// Whether `title` contains the text, ignoring case. `scratch` is a buffer kept between
    /// calls, so that a scan of 100,000 titles allocates once.
    public func matches(_ title: String, scratch: inout [UInt8]) -> Bool {
        if needle.isEmpty { return true }
        scratch.removeAll(keepingCapacity: true)
        TitleMatch.lowercased(title, into: &scratch)
        let n = needle.count
        guard scratch.count >= n else { return false }
        let first = needle[0]
        var i = 0
        let last = scratch.count - n
        while i <= last {
            if scratch[i] == first {
                var j = 1
                while j < n && scratch[i + j] == needle[j] { j += 1 }
                if j == n { return true }
            }
            i += 1
        }
        return false
    }

    static func lowercased(_ text: String, into out: inout [UInt8]) {
        var ascii = true
        for byte in text.utf8 {
            if byte >= 0x80 {
                ascii = false
                break
            }
            out.append(byte &+ (byte >= 0x41 && byte <= 0x5A ? 0x20 : 0))
        }
        if ascii { return }
        out.removeAll(keepingCapacity: true)
        for scalar in text.unicodeScalars {
            if scalar.isASCII {
                let byte = UInt8(scalar.value)
                out.append(byte &+ (byte >= 0x41 && byte <= 0x5A ? 0x20 : 0))
            } else if scalar.properties.changesWhenLowercased {
                out.append(contentsOf: scalar.properties.lowercaseMapping.utf8)
            } else {
                out.append(contentsOf: UTF8.encode(scalar)!)
            }
        }
    }
}

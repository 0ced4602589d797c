// Byte strings as bytea literals (the schema's seed rows, snapshots), and back.

/// Byte strings as the hex form of bytea, and back.
enum PGBytes {
    private static let digits = Array("0123456789abcdef".utf8)

    /// `'\x…'::bytea`, a literal needing no escaping.
    static func literal(_ bytes: [UInt8]) -> String {
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2 + 12)
        out += Array("'\\x".utf8)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 15)])
        }
        out += Array("'::bytea".utf8)
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of a bytea column's text (`\x…`), nil when it is not that form.
    static func decode(_ text: String) -> [UInt8]? {
        let u = Array(text.utf8)
        guard u.count >= 2, u[0] == UInt8(ascii: "\\"), u[1] == UInt8(ascii: "x"), u.count % 2 == 0 else {
            return nil
        }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var out = [UInt8]()
        out.reserveCapacity((u.count - 2) / 2)
        var i = 2
        while i < u.count {
            guard let h = nibble(u[i]), let l = nibble(u[i + 1]) else { return nil }
            out.append(h << 4 | l)
            i += 2
        }
        return out
    }
}

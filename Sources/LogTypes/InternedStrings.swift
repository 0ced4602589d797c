// A log's kinds repeat on every row: a fold of a million events made a million Strings of a
// handful of values. Both stores read them through one of these.
#if canImport(Glibc)
    import Glibc
#endif

/// The Strings of a few byte values that repeat, each made once.
public struct InternedStrings {
    private var known: [(bytes: [UInt8], string: String)] = []
    /// How many values are kept; others are made each time.
    private let limit: Int

    public init(limit: Int = 32) { self.limit = limit }

    /// `raw` (UTF-8) as a String, the one made before when these bytes came before.
    public mutating func string(_ raw: UnsafeRawBufferPointer) -> String {
        // memcmp, not `elementsEqual` (a generic loop: 6 % of a million-event fold's samples).
        for k in known where k.bytes.count == raw.count {
            if raw.isEmpty
                || k.bytes.withUnsafeBytes({ memcmp($0.baseAddress!, raw.baseAddress!, raw.count) }) == 0
            {
                return k.string
            }
        }
        let string = String(decoding: raw, as: UTF8.self)
        if known.count < limit { known.append((Array(raw), string)) }
        return string
    }
}

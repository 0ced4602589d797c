// A statement's parameters in PostgreSQL's binary form, written in place.

/// A parameter in PostgreSQL's binary form.
package enum PGParam {
    case int64(Int64)
    /// A text's bytes (its length is the parameter's).
    case text(String)
    case int64s([Int64])
    case texts([String?])
    case byteas([[UInt8]])

    // The binary forms: an int8 is 8 bytes big-endian, text and bytea their bytes; an array is
    // its dimensions, a null flag and the element type, then each element's length (-1: NULL)
    // and bytes (PostgreSQL's array_send). Measured first, then written in place: built as an
    // array per element and joined, the append's parameters were a third of the store thread's
    // instructions (callgrind, 16 events a transaction), and appended byte by byte still a
    // twelfth.

    /// The length of the binary form.
    var encodedCount: Int {
        switch self {
        case .int64: 8
        case .text(let s): s.utf8.count
        case .int64s(let a): PGParam.arrayHeaderCount + a.count * 12
        case .texts(let a): a.reduce(PGParam.arrayHeaderCount) { $0 + 4 + ($1?.utf8.count ?? 0) }
        case .byteas(let a): a.reduce(PGParam.arrayHeaderCount) { $0 + 4 + $1.count }
        }
    }

    /// Writes the binary form at `p`, which has room for `encodedCount` bytes; returns the
    /// bytes written (the caller checks them against what it measured).
    func encode(to p: UnsafeMutableRawPointer) -> Int {
        var at = 0
        func put(_ v: Int32) {
            p.storeBytes(of: v.bigEndian, toByteOffset: at, as: Int32.self)
            at += 4
        }
        func put(_ v: Int64) {
            p.storeBytes(of: v.bigEndian, toByteOffset: at, as: Int64.self)
            at += 8
        }
        func put(_ bytes: UnsafeRawBufferPointer) {
            put(Int32(bytes.count))
            if let base = bytes.baseAddress { (p + at).copyMemory(from: base, byteCount: bytes.count) }
            at += bytes.count
        }
        func header(oid: Int32, count: Int, hasNull: Bool) {
            put(Int32(1))  // dimensions
            put(Int32(hasNull ? 1 : 0))
            put(oid)
            put(Int32(count))
            put(Int32(1))  // the lower bound
        }
        switch self {
        case .int64(let v):
            put(v)
        case .text(var s):
            s.withUTF8 { bytes in
                if let base = bytes.baseAddress { p.copyMemory(from: base, byteCount: bytes.count) }
                at = bytes.count
            }
        case .int64s(let a):
            header(oid: 20, count: a.count, hasNull: false)
            for v in a {
                put(Int32(8))
                put(v)
            }
        case .texts(let a):
            header(oid: 25, count: a.count, hasNull: a.contains(nil))
            for e in a {
                guard var e else {
                    put(Int32(-1))
                    continue
                }
                e.withUTF8 { put(UnsafeRawBufferPointer($0)) }
            }
        case .byteas(let a):
            header(oid: 17, count: a.count, hasNull: false)
            for e in a { e.withUnsafeBytes { put($0) } }
        }
        return at
    }

    private static let arrayHeaderCount = 20
}

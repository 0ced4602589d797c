// What PostgreSQL sends back: a prepared statement's rows in binary, a simple query's rows as
// text, a binary COPY's rows.
import CLibPQ

/// The rows of one statement's result, as text (NULL is nil).
struct PGRows {
    var rows: [[String?]]
}

/// The rows of one prepared statement, in binary (freed with it).
package final class PGResult {
    private let raw: OpaquePointer
    let count: Int

    init(_ raw: OpaquePointer) {
        self.raw = raw
        count = Int(PQntuples(raw))
    }

    deinit { PQclear(raw) }

    private func value(_ row: Int, _ column: Int) -> UnsafeRawBufferPointer? {
        let (i, j) = (Int32(row), Int32(column))
        guard PQgetisnull(raw, i, j) == 0, let p = PQgetvalue(raw, i, j) else { return nil }
        return UnsafeRawBufferPointer(start: p, count: Int(PQgetlength(raw, i, j)))
    }

    /// An int8 column.
    func int64(_ row: Int, _ column: Int) -> Int64? {
        guard let v = value(row, column), v.count == 8 else { return nil }
        return Int64(bigEndian: v.loadUnaligned(as: Int64.self))
    }

    /// A text column (the database's encoding is UTF-8).
    func text(_ row: Int, _ column: Int) -> String? {
        value(row, column).map { String(decoding: $0, as: UTF8.self) }
    }

    /// A bytea column.
    func bytes(_ row: Int, _ column: Int) -> [UInt8]? {
        value(row, column).map { Array($0) }
    }
}

/// One row of a binary COPY: its fields, each nil for NULL, valid while the row's bytes are.
/// Up to `CopyRow.maxFields` fields, kept inline: a million rows make no allocation here.
struct CopyRow {
    static let maxFields = 8
    private let bytes: UnsafeRawBufferPointer
    /// Each field's offset and length (-1: NULL).
    private var offsets = InlineArray<8, Int>(repeating: 0)
    private var lengths = InlineArray<8, Int>(repeating: -1)
    let count: Int

    /// Nil when the bytes are not one row (a field count, then each field's length and bytes)
    /// or the row has more than `maxFields` fields.
    init?(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
        guard bytes.count >= 2 else { return nil }
        let count = Int(Int16(bitPattern: UInt16(bytes[0]) << 8 | UInt16(bytes[1])))
        guard count >= 0, count <= CopyRow.maxFields else { return nil }
        self.count = count
        var at = 2
        for i in 0..<count {
            guard let n = CopyRow.int32(bytes, at) else { return nil }
            at += 4
            offsets[i] = at
            guard n >= 0 else { continue }
            guard bytes.count - at >= Int(n) else { return nil }
            lengths[i] = Int(n)
            at += Int(n)
        }
        guard at == bytes.count else { return nil }
    }

    /// Field `i`'s bytes, nil for NULL or a field the row does not have.
    func field(_ i: Int) -> UnsafeRawBufferPointer? {
        guard i >= 0, i < count, lengths[i] >= 0 else { return nil }
        return UnsafeRawBufferPointer(rebasing: bytes[offsets[i]..<offsets[i] + lengths[i]])
    }

    /// Field `i` as a bigint.
    func int64(_ i: Int) -> Int64? {
        guard let f = field(i), f.count == 8 else { return nil }
        return Int64(bigEndian: f.loadUnaligned(as: Int64.self))
    }

    /// Field `i` as text (UTF-8, as the connection's client encoding is).
    func text(_ i: Int) -> String? { field(i).map { String(decoding: $0, as: UTF8.self) } }

    static func int32(_ bytes: UnsafeRawBufferPointer, _ at: Int) -> Int32? {
        guard at >= 0, bytes.count - at >= 4 else { return nil }
        return Int32(bigEndian: bytes.loadUnaligned(fromByteOffset: at, as: Int32.self))
    }
}

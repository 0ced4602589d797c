// The rows a list tracks, by id. A dictionary keyed by the id's own cheap hash: a drag looks its
// row up twice (the reducer, then the geometry), and hashing a String runs every byte of it
// through SipHash after a Unicode check, about half of such a lookup's cost. `RowKey` feeds the
// hasher one word folded from the id's ends and length instead; ids that fold alike still work
// (the dictionary compares whole ids), they only share a bucket chain.

/// A row id as a dictionary key: rows are told apart by their ids' exact UTF-8 bytes (an id is
/// an opaque name here, not text: no Unicode canonical equivalence, which String's `==` applies
/// and which would make a byte hash unsound). A host that finds ids by equivalence (the daemon's
/// store does) hands the engine one spelling per row.
@usableFromInline
struct RowKey: Hashable, Sendable {
    @usableFromInline let id: RowID

    @inlinable init(_ id: RowID) { self.id = id }

    @inlinable static func == (a: RowKey, b: RowKey) -> Bool {
        // On the bytes in place (String's UTF-8 view, compared as a sequence, costs a call per byte).
        let inPlace: Bool?? = a.id.utf8.withContiguousStorageIfAvailable { x in
            b.id.utf8.withContiguousStorageIfAvailable { y in sameBytes(x, y) }
        }
        return (inPlace ?? nil) ?? a.id.utf8.elementsEqual(b.id.utf8)
    }

    /// Byte equality, eight bytes at a time.
    @inlinable static func sameBytes(_ x: UnsafeBufferPointer<UInt8>, _ y: UnsafeBufferPointer<UInt8>) -> Bool
    {
        let n = x.count
        guard n == y.count else { return false }
        guard n > 0, let xp = x.baseAddress, let yp = y.baseAddress else { return true }
        let xr = UnsafeRawPointer(xp)
        let yr = UnsafeRawPointer(yp)
        var i = 0
        while i + 8 <= n {
            if xr.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                != yr.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            {
                return false
            }
            i += 8
        }
        while i < n {
            if xp[i] != yp[i] { return false }
            i += 1
        }
        return true
    }

    @inlinable func hash(into hasher: inout Hasher) {
        let folded: UInt64? = id.utf8.withContiguousStorageIfAvailable(RowKey.fold)
        hasher.combine(folded ?? RowKey.fold(Array(id.utf8)))
    }

    @inlinable static func fold(_ bytes: [UInt8]) -> UInt64 {
        bytes.withUnsafeBufferPointer { fold($0) }
    }

    /// One word from the id: its first and last eight bytes (which overlap for short ids) and
    /// its length, so ids that differ near either end or in length differ here.
    @inlinable static func fold(_ utf8: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var first: UInt64 = 0
        var last: UInt64 = 0
        let n = utf8.count
        withUnsafeMutableBytes(of: &first) {
            $0.copyMemory(from: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: utf8.prefix(8))))
        }
        withUnsafeMutableBytes(of: &last) {
            $0.copyMemory(from: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: utf8.suffix(8))))
        }
        return first ^ (last << 29 | last >> 35) ^ UInt64(truncatingIfNeeded: n) &* 0x9E37_79B9_7F4A_7C15
    }
}

/// The tracked rows: a dictionary from id to state, with the dictionary operations the reducer
/// uses, keyed by `RowKey`.
@usableFromInline
struct RowTable: Equatable, Sendable, Sequence {
    @usableFromInline typealias Storage = [RowKey: RowState]
    @usableFromInline var storage: Storage = [:]

    @inlinable init() {}

    @inlinable subscript(row: RowID) -> RowState? {
        get { storage[RowKey(row)] }
        _modify { yield &storage[RowKey(row)] }
    }

    @inlinable func index(forKey row: RowID) -> Storage.Index? { storage.index(forKey: RowKey(row)) }

    @inlinable var values: Storage.Values {
        get { storage.values }
        _modify { yield &storage.values }
    }

    @inlinable var isEmpty: Bool { storage.isEmpty }

    /// The ids, in no particular order.
    var keys: [RowID] { storage.keys.map(\.id) }

    @discardableResult
    @inlinable mutating func removeValue(forKey row: RowID) -> RowState? {
        storage.removeValue(forKey: RowKey(row))
    }

    @inlinable mutating func removeAll() { storage.removeAll() }

    /// The rows as a plain dictionary by id (where two spellings of one text are two rows here,
    /// the dictionary keeps one of them: String keys cannot tell them apart).
    var dictionary: [RowID: RowState] {
        Dictionary(storage.map { ($0.key.id, $0.value) }, uniquingKeysWith: { first, _ in first })
    }

    @usableFromInline
    func makeIterator() -> AnyIterator<(key: RowID, value: RowState)> {
        var inner = storage.makeIterator()
        return AnyIterator { inner.next().map { (key: $0.key.id, value: $0.value) } }
    }
}

// Values by a number the daemon hands out itself: connections by client number, what the store
// owes by token. A toggle looked these up five times (insert and remove its token, find its
// connection twice) and each lookup paid SipHash, about 180 instructions (callgrind). These
// numbers are sequential and never chosen by a peer, so there is no flooding to defend against:
// a multiply spreads them over the table instead.

/// A number the daemon hands out, as a dictionary key with a cheap hash.
struct SerialKey: Hashable {
    let raw: UInt64

    func hash(into hasher: inout Hasher) { hasher.combine(raw) }

    /// What Dictionary uses: the number times an odd constant (Fibonacci hashing), folded so
    /// that the low bits (the bucket) depend on every bit; the table's seed keeps two tables'
    /// orders apart, as it does for SipHash.
    func _rawHashValue(seed: Int) -> Int {
        let h = (raw ^ UInt64(UInt(bitPattern: seed))) &* 0x9E37_79B9_7F4A_7C15
        return Int(truncatingIfNeeded: h ^ (h >> 32))
    }
}

/// A dictionary keyed by `SerialKey`, spoken to in plain numbers.
struct SerialTable<Value> {
    private var table: [SerialKey: Value] = [:]

    subscript(key: UInt64) -> Value? {
        get { table[SerialKey(raw: key)] }
        set { table[SerialKey(raw: key)] = newValue }
    }

    @discardableResult
    mutating func removeValue(forKey key: UInt64) -> Value? {
        table.removeValue(forKey: SerialKey(raw: key))
    }

    var count: Int { table.count }
    var isEmpty: Bool { table.isEmpty }
    var values: Dictionary<SerialKey, Value>.Values { table.values }
}

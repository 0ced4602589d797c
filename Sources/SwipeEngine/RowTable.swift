// The rows a list tracks (every row that is not closed), by id.
//
// Why not a Dictionary: a list tracks few rows at a time — rule 8 closes the open ones when a
// gesture starts, a fired row lives half a second — and the hot path (a drag, 60 to 120 a
// second per finger) looks one up each time. Hashing the id cost more than everything else the
// engine does for a drag. Two arrays searched front to back need no hash: a row id of up to 15
// UTF-8 bytes is a small string, compared as two machine words, and a longer one usually is the
// very String the host keeps for that row, compared by identity first. Past `indexedAbove` rows
// (a client dragging many rows at once) a dictionary of positions keeps each look-up O(1); it is
// dropped again below half that.
//
// Order is not kept (a removal moves the last row into the gap): every caller that reports rows
// sorts them by id, and equality ignores order.

@usableFromInline
struct RowTable: Sendable {
    private(set) var ids: [RowID] = []
    private var states: [RowState] = []
    /// Each id's position, while there are more than `indexedAbove` rows.
    private var positions: [RowID: Int]?

    static let indexedAbove = 16

    init() {}

    var isEmpty: Bool { ids.isEmpty }
    var count: Int { ids.count }

    /// The ids, in no particular order.
    var keys: [RowID] { ids }

    func index(forKey id: RowID) -> Int? {
        if let positions { return positions[id] }
        var k = 0
        while k < ids.count {
            if ids[k] == id { return k }
            k += 1
        }
        return nil
    }

    /// The state at a position `index(forKey:)` gave, read and written in place.
    subscript(at i: Int) -> RowState {
        get { states[i] }
        _modify { yield &states[i] }
    }

    /// The row's state; setting nil removes it.
    subscript(id: RowID) -> RowState? {
        get { index(forKey: id).map { states[$0] } }
        set {
            if let i = index(forKey: id) {
                if let newValue { states[i] = newValue } else { remove(at: i) }
            } else if let newValue {
                append(id, newValue)
            }
        }
    }

    @discardableResult
    mutating func removeValue(forKey id: RowID) -> RowState? {
        guard let i = index(forKey: id) else { return nil }
        let state = states[i]
        remove(at: i)
        return state
    }

    mutating func removeAll() {
        ids.removeAll()
        states.removeAll()
        positions = nil
    }

    /// Every row and its state, as a dictionary (for hosts and tests; not on the hot path).
    var dictionary: [RowID: RowState] { Dictionary(uniqueKeysWithValues: zip(ids, states)) }

    private mutating func append(_ id: RowID, _ state: RowState) {
        ids.append(id)
        states.append(state)
        if positions != nil {
            positions![id] = ids.count - 1
        } else if ids.count > RowTable.indexedAbove {
            positions = Dictionary(uniqueKeysWithValues: zip(ids, ids.indices))
        }
    }

    private mutating func remove(at i: Int) {
        let last = ids.count - 1
        positions?[ids[i]] = nil
        if i != last {
            ids.swapAt(i, last)
            states.swapAt(i, last)
            positions?[ids[i]] = i
        }
        ids.removeLast()
        states.removeLast()
        if positions != nil && ids.count <= RowTable.indexedAbove / 2 { positions = nil }
    }
}

extension RowTable: Sequence {
    @usableFromInline
    func makeIterator() -> Zip2Sequence<[RowID], [RowState]>.Iterator { zip(ids, states).makeIterator() }
}

extension RowTable: Equatable {
    /// The same rows in the same states, in whatever order.
    @usableFromInline
    static func == (a: RowTable, b: RowTable) -> Bool {
        guard a.count == b.count else { return false }
        for (id, state) in a where b[id] != state { return false }
        return true
    }
}

// A finger moving on a row: rules 1, 2, 3, 8, 12 and 13. The hot path — a drag of a row already
// `dragging`, 60 to 120 times a second per finger — is one look-up (no hashing: RowTable.swift),
// one in-place write, and, when the host asked for threshold events, two zones compared; it
// returns no effect and allocates nothing, also when it crosses a threshold (`Crossings` is one
// integer) or when the touch is a scroll.

/// What one drag did: the effects it asks of the host, and its crossings (rule 12) and whether
/// its touch is a scroll (rule 13), which `send` spells out as effects after them.
struct DragStep {
    var effects: [Effect] = []
    var crossings = Crossings()
    var scroll = false

    /// The effects as `send` reports them: the drag's own, then `.crossed` for each crossing, in
    /// order, then `.scroll`.
    func all(_ row: RowID) -> [Effect] {
        if crossings.isEmpty && !scroll { return effects }
        var all = effects
        for crossing in crossings { all.append(.crossed(row: row, crossing)) }
        if scroll { all.append(.scroll(row: row)) }
        return all
    }
}

extension SwipeList {
    /// Rules 1, 2, 3, 8, 12 and 13.
    mutating func drag(_ row: RowID, dx: Double, dy: Double?) -> DragStep {
        guard dx.isFinite else { return DragStep() }
        if let i = rows.index(forKey: row) {
            switch rows[at: i].phase {
            case .dragging:  // Rule 2 (+ rules 3 and 12): the hot path; dy is ignored (rule 13).
                return DragStep(crossings: moveDragging(at: i, dx: dx))
            case .fired, .dismissed:  // Acting: the finger is ignored until the close timer.
                return DragStep()
            case .confirming:  // Rule 10: any drag cancels the confirmation.
                return DragStep(effects: close(row))
            case .open, .peeking:  // Rule 1, then a new gesture from where the row rests (rule 2).
                return start(row, dx: dx, dy: dy, from: rows[at: i])
            case .closed:
                preconditionFailure("closed rows are not stored: \(row)")
            }
        }
        if scrolling == row { return DragStep(scroll: true) }  // Rule 13: the touch scrolls.
        return start(row, dx: dx, dy: dy, from: nil)
    }

    /// Rules 1, 13, 8 and 2 for a row whose gesture has not started: closed (`state` nil), open or
    /// peeking. A drag past the minimum distance starts the gesture, or a scroll.
    mutating func start(_ row: RowID, dx: Double, dy: Double?, from state: RowState?) -> DragStep {
        let vertical = dy.map { $0.isFinite ? abs($0) : 0 } ?? 0
        guard max(abs(dx), vertical) >= Rules.minimumDistance else { return DragStep() }  // Rule 1.
        // Rule 14: a peek gives way to the finger; its timer would be stale.
        var effects: [Effect] = state?.phase == .peeking ? [.cancel(.close(row: row))] : []
        if vertical > abs(dx) {  // Rule 13: the touch is a scroll; the row stays closed.
            rows[row] = nil
            effects += closeOpenRows(except: row)
            scrolling = row
            return DragStep(effects: effects, scroll: true)
        }
        effects += closeOpenRows(except: row)  // Rule 8.
        let resting = state?.restingOffset ?? 0
        let offset = clamp(dx + resting)
        rows[row] = RowState(offset: offset, restingOffset: resting, phase: .dragging)
        let crossings = reportsCrossings ? Crossings.between(zone(resting), zone(offset)) : Crossings()
        return DragStep(effects: effects, crossings: crossings)
    }

    /// Rule 2 (+ rule 3) for the row at `i`, which is `dragging`: it follows the finger from
    /// where it rested; and rule 12: the thresholds that move crossed.
    @inline(__always)
    mutating func moveDragging(at i: Int, dx: Double) -> Crossings {
        // One step at a time: `clamp` reads `self`, and a read of `rows` inside its argument, or
        // a write to `rows` around it, would make Swift copy the whole list.
        let before = rows[at: i].offset
        let resting = rows[at: i].restingOffset
        let offset = clamp(dx + resting)
        rows[at: i].offset = offset
        guard reportsCrossings else { return Crossings() }
        return Crossings.between(zone(before), zone(offset))
    }

    /// `send(.dragChanged(row:dx:dy:))` then `geometry(row)`, with one lookup of the row instead
    /// of two: the hot path (a drag of a row already `dragging`, 60 to 120 times a second per
    /// finger). It cannot throw: a drag never fires an action (rules 1, 2, 3, 8, 12 and 13 only).
    /// `effects` are `send`'s without its `.crossed` and `.scroll`, which come as `crossings`
    /// and `scroll` instead: a value, not an array, so that a drag that crosses a threshold, or
    /// that scrolls, allocates nothing.
    public mutating func dragThenGeometry(of row: RowID, dx: Double, dy: Double? = nil) -> (
        effects: [Effect], geometry: RowGeometry, crossings: Crossings, scroll: Bool
    ) {
        if dx.isFinite, let i = rows.index(forKey: row), rows[at: i].phase == .dragging {
            let crossings = moveDragging(at: i, dx: dx)
            // Read first, then call: `geometry(of: rows[at: i])` made Swift copy the whole
            // list (a retain and a release per field) to lend `self` while `rows` was read.
            let state = rows[at: i]
            return ([], geometry(of: state), crossings, false)
        }
        let step = drag(row, dx: dx, dy: dy)
        return (step.effects, geometry(row), step.crossings, step.scroll)
    }

    /// Rule 8: a gesture started on `row` (or a scroll, rule 13, or a peek, rule 14); close every
    /// other `open`, `dragging`, `confirming` or `peeking` row, by row id (one row moves at a
    /// time), then cancel the timers among them, by row id (rules 10 and 14). `fired` and
    /// `dismissed` rows close on their own timer.
    mutating func closeOpenRows(except row: RowID) -> [Effect] {
        var others: [RowID] = []
        for (id, state) in rows where state.phase != .fired && state.phase != .dismissed && id != row {
            others.append(id)
        }
        if others.isEmpty { return [] }
        others.sort()
        var effects: [Effect] = others.map { .closed(row: $0) }
        for id in others {
            if let timer = rows[id].flatMap({ SwipeList.timer(of: id, $0) }) {
                effects.append(.cancel(timer))
            }
            rows[id] = nil
        }
        return effects
    }
}

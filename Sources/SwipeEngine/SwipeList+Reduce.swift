// The reducer: one input in, the new state and the effects out. Each case cites the rule (see
// Rules.swift) it implements. Hot path: a drag of a row already `dragging` is one look-up (no
// hashing: RowTable.swift), one in-place write, and returns the empty array (no allocation).

extension SwipeList {
    /// Applies one input. On throw the list is unchanged. Effects are in the order the host should
    /// perform them.
    public mutating func send(_ input: Input) throws(SwipeError) -> [Effect] {
        switch input {
        case let .dragChanged(row, dx):
            return drag(row, dx: dx)
        case let .released(row, dx, vx):
            return release(row, dx: dx, vx: vx)
        case let .tapped(row, action):
            return try tap(row, action: action)
        case let .close(row):
            return close(row: row)
        case let .timerFired(row):
            return timerFired(row: row)
        case let .rowRemoved(row):
            return rowRemoved(row: row)
        }
    }

    /// `send(.close(row:))`, which cannot fail: one row, or every row when `row` is nil.
    public mutating func close(row: RowID?) -> [Effect] {
        guard let row else { return closeAll() }
        return close(row)
    }

    /// `send(.timerFired(row:))`, which cannot fail. A stale timer (row closed, removed, or
    /// reopened since) is ignored.
    public mutating func timerFired(row: RowID) -> [Effect] {
        guard rows[row]?.phase == .fired else { return [] }
        rows[row] = nil
        return []
    }

    /// `send(.rowRemoved(row:))`, which cannot fail. Rule 9: the data is gone; a pending close
    /// timer would be stale, so it is cancelled.
    public mutating func rowRemoved(row: RowID) -> [Effect] {
        close(row)
    }

    /// Rules 1, 2, 3 and 8.
    mutating func drag(_ row: RowID, dx: Double) -> [Effect] {
        guard dx.isFinite else { return [] }
        if let i = rows.index(forKey: row) {
            switch rows[at: i].phase {
            case .dragging:  // Rule 2 (+ rule 3): the hot path.
                moveDragging(at: i, dx: dx)
                return []
            case .fired:  // Acting: the finger is ignored until the close timer.
                return []
            case .open:  // Rule 1, then a new gesture from where the row rests (rule 2).
                guard abs(dx) >= Rules.minimumDistance else { return [] }
                let effects = closeOpenRows(except: row)
                rows[row]!.phase = .dragging
                rows[row]!.offset = clamp(dx + rows[row]!.restingOffset)
                return effects
            case .closed:
                preconditionFailure("closed rows are not stored: \(row)")
            }
        }
        guard abs(dx) >= Rules.minimumDistance else { return [] }  // Rule 1.
        let effects = closeOpenRows(except: row)  // Rule 8.
        rows[row] = RowState(offset: clamp(dx), restingOffset: 0, phase: .dragging)
        return effects
    }

    /// Rule 2 (+ rule 3) for the row at `i`, which is `dragging`: it follows the finger from
    /// where it rested.
    @inline(__always)
    mutating func moveDragging(at i: Int, dx: Double) {
        // One step at a time: `clamp` reads `self`, and a read of `rows` inside its argument, or
        // a write to `rows` around it, would make Swift copy the whole list.
        let resting = rows[at: i].restingOffset
        let offset = clamp(dx + resting)
        rows[at: i].offset = offset
    }

    /// `send(.dragChanged(row:dx:))` then `geometry(row)`, with one lookup of the row instead of
    /// two: the hot path (a drag of a row already `dragging`, 60 to 120 times a second per
    /// finger). It cannot throw: a drag never fires an action (rules 1, 2, 3 and 8 only).
    public mutating func dragThenGeometry(of row: RowID, dx: Double) -> (
        effects: [Effect], geometry: RowGeometry
    ) {
        if dx.isFinite, let i = rows.index(forKey: row), rows[at: i].phase == .dragging {
            moveDragging(at: i, dx: dx)
            // Read first, then call: `geometry(of: rows[at: i])` made Swift copy the whole
            // list (a retain and a release per field) to lend `self` while `rows` was read.
            let state = rows[at: i]
            return ([], geometry(of: state))
        }
        let effects = drag(row, dx: dx)
        return (effects, geometry(row))
    }

    /// Rule 8: a gesture started on `row`; close every other `open` or `dragging` row, by row id
    /// (one row moves at a time). `fired` rows close on their own timer.
    mutating func closeOpenRows(except row: RowID) -> [Effect] {
        var others: [RowID] = []
        for (id, state) in rows where state.phase != .fired && id != row {
            others.append(id)
        }
        if others.isEmpty { return [] }
        others.sort()
        for id in others { rows[id] = nil }
        return others.map { .closed(row: $0) }
    }

    /// Rules 5 and 6.
    mutating func release(_ row: RowID, dx: Double?, vx: Double?) -> [Effect] {
        var effects = dx.map { drag(row, dx: $0) } ?? []
        guard let state = rows[row], state.phase == .dragging else {
            return effects  // Never started (rule 1), or fired: nothing to end.
        }
        guard let reveal = reveal(state.offset) else {
            rows[row] = nil  // s == 0: nothing revealed, the row closes.
            return effects
        }
        // Rule 6: a flick decides by its direction; without one, rule 5's 0.8·W threshold.
        var past = reveal.extent > Rules.openFraction * layout.buttonWidth
        if let vx, vx.isFinite, abs(vx) >= Rules.flickVelocity {
            let towardEdge = (vx * viewport.direction.sign > 0) == (reveal.edge == .leading)
            past = towardEdge
        }
        guard past else {
            rows[row] = nil  // Rule 5: anything else closes.
            return effects
        }
        if reveal.fullSwipe {  // Rule 5: fire the outermost action; close 0.5 s later.
            let offset = physical(reveal.edge, viewport.width)
            rows[row] = RowState(offset: offset, restingOffset: offset, phase: .fired)
            effects.append(.fire(row: row, action: layout.actions(reveal.edge)[0].action))
            effects.append(.schedule(.close(row: row), after: Rules.closeDelay))
        } else {  // Rule 5: snap open at L·W / −T·W.
            let offset = physical(reveal.edge, openExtent(reveal.edge))
            rows[row] = RowState(offset: offset, restingOffset: offset, phase: .open)
        }
        return effects
    }

    /// Rule 7. In `fired`, a tap on the (only) showing button is refused (`firing`): the gesture
    /// already fired once, and a second fire would break "at most one fire per gesture".
    mutating func tap(_ row: RowID, action: String) throws(SwipeError) -> [Effect] {
        guard layout.edge(of: action) != nil else {
            throw .unknownAction(row: row, action: action)
        }
        let state = rows[row] ?? .closed
        guard showing(state.offset, action) else {
            throw .notRevealed(row: row, action: action)
        }
        if state.phase == .fired { throw .firing(row: row, action: action) }
        rows[row] = nil
        return [.fire(row: row, action: action)]
    }

    /// Whether `action`'s button is drawn at this offset (same rule 4 as the renderer).
    func showing(_ offset: Double, _ action: String) -> Bool {
        guard let reveal = reveal(offset) else { return false }
        let actions = layout.actions(reveal.edge)
        if reveal.fullSwipe { return actions[0].action == action }
        return actions.contains { $0.action == action }
    }

    /// Closes one row: nothing for a closed row; `.cancel` of its timer when it was fired.
    mutating func close(_ row: RowID) -> [Effect] {
        guard let state = rows.removeValue(forKey: row) else { return [] }
        return state.phase == .fired ? [.cancel(.close(row: row))] : []
    }
}

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
        case let .open(row, edge):
            return try open(row, edge: edge)
        case let .perform(row, action):
            return try perform(row, action: action)
        case let .confirmTimedOut(row):
            return confirmTimedOut(row: row)
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

    /// `send(.confirmTimedOut(row:))`, which cannot fail. Rule 10: a `confirming` row closes,
    /// nothing fires. A stale timer (the row confirmed, cancelled or removed since) is ignored.
    public mutating func confirmTimedOut(row: RowID) -> [Effect] {
        guard rows[row]?.phase == .confirming else { return [] }
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
            case .confirming:  // Rule 10: any drag cancels the confirmation.
                return close(row)
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

    /// Rule 8: a gesture started on `row`; close every other `open`, `dragging` or `confirming`
    /// row, by row id (one row moves at a time), then cancel the confirmations among them (rule
    /// 10). `fired` rows close on their own timer.
    mutating func closeOpenRows(except row: RowID) -> [Effect] {
        var others: [RowID] = []
        for (id, state) in rows where state.phase != .fired && id != row {
            others.append(id)
        }
        if others.isEmpty { return [] }
        others.sort()
        var effects: [Effect] = others.map { .closed(row: $0) }
        for id in others {
            if rows[id]?.phase == .confirming { effects.append(.cancel(.confirmTimeout(row: id))) }
            rows[id] = nil
        }
        return effects
    }

    /// Rules 5 and 6 (and 10: a release cancels a confirmation; a fire may start one).
    mutating func release(_ row: RowID, dx: Double?, vx: Double?) -> [Effect] {
        if rows[row]?.phase == .confirming { return close(row) }
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
        if reveal.fullSwipe && layout.actions(reveal.edge)[0].confirm {  // Rule 10.
            effects += confirm(row, reveal.edge, 0)
        } else if reveal.fullSwipe {  // Rule 5: fire the outermost action; close 0.5 s later.
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
    /// already fired once, and a second fire would break "at most one fire per gesture". In
    /// `confirming` (rule 10), a tap confirms the waiting action or cancels.
    mutating func tap(_ row: RowID, action: String) throws(SwipeError) -> [Effect] {
        guard let (edge, index) = layout.position(of: action) else {
            throw .unknownAction(row: row, action: action)
        }
        let state = rows[row] ?? .closed
        if state.phase == .confirming { return confirmOrCancel(row, state, action) }
        guard showing(state.offset, action) else {
            throw .notRevealed(row: row, action: action)
        }
        if state.phase == .fired { throw .firing(row: row, action: action) }
        return fire(row, edge, index)
    }

    /// Rule 11: `action` fires as a tap on its showing button would, whether it shows or not.
    mutating func perform(_ row: RowID, action: String) throws(SwipeError) -> [Effect] {
        guard let (edge, index) = layout.position(of: action) else {
            throw .unknownAction(row: row, action: action)
        }
        var effects: [Effect] = []
        if let state = rows[row] {
            switch state.phase {
            case .fired:
                throw .firing(row: row, action: action)
            case .confirming:  // Rule 10: confirms, or cancels and performs the other action.
                if pendingAction(state) == action { return confirmOrCancel(row, state, action) }
                effects = close(row)
            case .open, .dragging:
                break
            case .closed:
                preconditionFailure("closed rows are not stored: \(row)")
            }
        }
        return effects + fire(row, edge, index)
    }

    /// Rule 11: opens the row on `edge` at rule 5's snap-open offset.
    mutating func open(_ row: RowID, edge: Edge) throws(SwipeError) -> [Effect] {
        guard !layout.actions(edge).isEmpty else { throw .noButtons(row: row, edge: edge) }
        var effects: [Effect] = []
        switch rows[row]?.phase {
        case .fired?:
            return []
        case .confirming?:
            effects = close(row)
        case .open?, .dragging?, nil:
            break
        case .closed?:
            preconditionFailure("closed rows are not stored: \(row)")
        }
        effects += closeOpenRows(except: row)  // Rule 8.
        let offset = physical(edge, openExtent(edge))
        rows[row] = RowState(offset: offset, restingOffset: offset, phase: .open)
        return effects
    }

    /// Rules 7 and 10: `action` (at `index` on `edge`) fires and the row closes, or, when it asks
    /// to confirm, the row starts confirming it.
    mutating func fire(_ row: RowID, _ edge: Edge, _ index: Int) -> [Effect] {
        let spec = layout.actions(edge)[index]
        if spec.confirm { return confirm(row, edge, index) }
        rows[row] = nil
        return [.fire(row: row, action: spec.action)]
    }

    /// Rule 10: the row rests at `edge`'s open offset, confirming the action at `index`.
    mutating func confirm(_ row: RowID, _ edge: Edge, _ index: Int) -> [Effect] {
        var effects = closeOpenRows(except: row)
        let offset = physical(edge, openExtent(edge))
        rows[row] = RowState(offset: offset, restingOffset: offset, phase: .confirming, pending: index)
        effects.append(.pending(row: row, action: layout.actions(edge)[index].action))
        effects.append(.schedule(.confirmTimeout(row: row), after: Rules.confirmTimeout))
        return effects
    }

    /// Rule 10, on a `confirming` row: a tap (or perform) of the waiting action fires it;
    /// anything else cancels. Either way the row closes.
    mutating func confirmOrCancel(_ row: RowID, _ state: RowState, _ action: String) -> [Effect] {
        rows[row] = nil
        let cancel = Effect.cancel(.confirmTimeout(row: row))
        guard pendingAction(state) == action else { return [cancel] }
        return [.fire(row: row, action: action), cancel]
    }

    /// The action a `confirming` row waits for.
    func pendingAction(_ state: RowState) -> String? {
        guard let index = state.pending, let reveal = reveal(state.offset) else { return nil }
        return layout.actions(reveal.edge)[index].action
    }

    /// Whether `action`'s button is drawn at this offset (same rule 4 as the renderer).
    func showing(_ offset: Double, _ action: String) -> Bool {
        guard let reveal = reveal(offset) else { return false }
        let actions = layout.actions(reveal.edge)
        if reveal.fullSwipe { return actions[0].action == action }
        return actions.contains { $0.action == action }
    }

    /// Closes one row: nothing for a closed row; `.cancel` of its timer when it was fired or
    /// confirming.
    mutating func close(_ row: RowID) -> [Effect] {
        guard let state = rows.removeValue(forKey: row) else { return [] }
        return SwipeList.timer(of: row, state).map { [.cancel($0)] } ?? []
    }

    /// The timer a row in `state` has pending: the close of a fired row, the timeout of a
    /// confirming one.
    static func timer(of row: RowID, _ state: RowState) -> TimerRequest? {
        switch state.phase {
        case .fired: .close(row: row)
        case .confirming: .confirmTimeout(row: row)
        case .closed, .dragging, .open: nil
        }
    }
}

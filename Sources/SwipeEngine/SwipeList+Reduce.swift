// The reducer: one input in, the new state and the effects out. Each case cites the rule (see
// Rules.swift) it implements. A finger's drags (the hot path) are in SwipeList+Drag.swift.

extension SwipeList {
    /// Applies one input. On throw the list is unchanged. Effects are in the order the host should
    /// perform them.
    public mutating func send(_ input: Input) throws(SwipeError) -> [Effect] {
        switch input {
        case let .dragChanged(row, dx, dy):
            return drag(row, dx: dx, dy: dy).all(row)
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
        case let .peek(row, edge):
            return try peek(row, edge: edge)
        }
    }

    /// `send(.close(row:))`, which cannot fail: one row, or every row when `row` is nil.
    public mutating func close(row: RowID?) -> [Effect] {
        guard let row else { return closeAll() }
        return close(row)
    }

    /// `send(.timerFired(row:))`, which cannot fail: a `fired` or `dismissed` row closes (rules 5
    /// and 15), and so does a `peeking` one (rule 14). A stale timer (row closed, removed, or
    /// reopened since) is ignored.
    public mutating func timerFired(row: RowID) -> [Effect] {
        switch rows[row]?.phase {
        case .fired?, .dismissed?, .peeking?:
            rows[row] = nil
        case .dragging?, .open?, .confirming?, nil:
            break
        case .closed?:
            preconditionFailure("closed rows are not stored: \(row)")
        }
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

    /// Rules 5 and 6 (and 10: a release cancels a confirmation; a fire may start one; 12: its dx
    /// may cross; 13: it ends a scrolling touch; 15: the full swipe's style).
    mutating func release(_ row: RowID, dx: Double?, vx: Double?) -> [Effect] {
        if scrolling == row {  // Rule 13: the scrolling touch ends; the row stays closed.
            scrolling = nil
            return [.scroll(row: row)]
        }
        if rows[row]?.phase == .confirming { return close(row) }
        var effects = dx.map { drag(row, dx: $0, dy: nil).all(row) } ?? []
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
        } else if reveal.fullSwipe {  // Rules 5 and 15: fire the outermost action, in the edge's style.
            effects += fullSwipe(row, reveal.edge)
        } else {  // Rule 5: snap open at L·W / −T·W.
            let offset = physical(reveal.edge, openExtent(reveal.edge))
            rows[row] = RowState(offset: offset, restingOffset: offset, phase: .open)
        }
        return effects
    }

    /// Rules 5 and 15: the full swipe on `edge` fires its outermost action: the row fills and
    /// closes 0.5 s later, closes at once, or slides out until its data goes.
    mutating func fullSwipe(_ row: RowID, _ edge: Edge) -> [Effect] {
        let fire = Effect.fire(row: row, action: layout.actions(edge)[0].action)
        let offset = physical(edge, viewport.width)
        switch layout.fullSwipeStyle(edge) {
        case .fill:
            rows[row] = RowState(offset: offset, restingOffset: offset, phase: .fired)
            return [fire, .schedule(.close(row: row), after: Rules.closeDelay)]
        case .close:
            rows[row] = nil
            return [fire]
        case .dismiss:
            rows[row] = RowState(offset: offset, restingOffset: offset, phase: .dismissed)
            return [fire, .schedule(.close(row: row), after: Rules.dismissTimeout)]
        }
    }

    /// Rule 7. In `fired` (or `dismissed`, rule 15), a tap on the (only) showing button is refused
    /// (`firing`): the gesture already fired once, and a second fire would break "at most one fire
    /// per gesture". In `confirming` (rule 10), a tap confirms the waiting action or cancels. In
    /// `peeking` (rule 14), no button is offered: `notRevealed`.
    mutating func tap(_ row: RowID, action: String) throws(SwipeError) -> [Effect] {
        guard let (edge, index) = layout.position(of: action) else {
            throw .unknownAction(row: row, action: action)
        }
        let state = rows[row] ?? .closed
        if state.phase == .confirming { return confirmOrCancel(row, state, action) }
        guard state.phase != .peeking, showing(state.offset, action) else {
            throw .notRevealed(row: row, action: action)
        }
        if state.phase == .fired || state.phase == .dismissed { throw .firing(row: row, action: action) }
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
            case .fired, .dismissed:
                throw .firing(row: row, action: action)
            case .confirming:  // Rule 10: confirms, or cancels and performs the other action.
                if pendingAction(state) == action { return confirmOrCancel(row, state, action) }
                effects = close(row)
            case .peeking:  // Rule 14: the peek ends (its timer is cancelled), then as from closed.
                effects = close(row)
            case .open, .dragging:
                break
            case .closed:
                preconditionFailure("closed rows are not stored: \(row)")
            }
        }
        if scrolling == row { scrolling = nil }  // Rule 13.
        return effects + fire(row, edge, index)
    }

    /// Rule 11: opens the row on `edge` at rule 5's snap-open offset.
    mutating func open(_ row: RowID, edge: Edge) throws(SwipeError) -> [Effect] {
        guard !layout.actions(edge).isEmpty else { throw .noButtons(row: row, edge: edge) }
        var effects: [Effect] = []
        switch rows[row]?.phase {
        case .fired?, .dismissed?:
            return []
        case .confirming?, .peeking?:  // Rules 10 and 14: cancelled, then opened.
            effects = close(row)
        case .open?, .dragging?, nil:
            break
        case .closed?:
            preconditionFailure("closed rows are not stored: \(row)")
        }
        if scrolling == row { scrolling = nil }  // Rule 13.
        effects += closeOpenRows(except: row)  // Rule 8.
        let offset = physical(edge, openExtent(edge))
        rows[row] = RowState(offset: offset, restingOffset: offset, phase: .open)
        return effects
    }

    /// Rule 14: shows the row's buttons on `edge` part-way, and springs it back on a timer.
    mutating func peek(_ row: RowID, edge asked: Edge?) throws(SwipeError) -> [Effect] {
        let edge = asked ?? (layout.trailing.isEmpty && !layout.leading.isEmpty ? .leading : .trailing)
        guard !layout.actions(edge).isEmpty else { throw .noButtons(row: row, edge: edge) }
        var effects: [Effect] = []
        switch rows[row]?.phase {
        case nil:
            break
        case .peeking?:  // Again: the running peek's timer goes, a new one starts.
            effects = close(row)
        case .open?, .dragging?, .confirming?, .fired?, .dismissed?:
            return []  // The row shows its buttons already, or is busy: nothing to hint.
        case .closed?:
            preconditionFailure("closed rows are not stored: \(row)")
        }
        if scrolling == row { scrolling = nil }  // Rule 13.
        effects += closeOpenRows(except: row)  // Rule 8.
        let offset = physical(edge, Rules.peekFraction * openExtent(edge))
        rows[row] = RowState(offset: offset, restingOffset: 0, phase: .peeking)
        effects.append(.schedule(.close(row: row), after: Rules.peekDuration))
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

    /// Closes one row: nothing for a closed row (whose scrolling touch, if any, ends: rule 13);
    /// `.cancel` of its timer when it had one.
    mutating func close(_ row: RowID) -> [Effect] {
        guard let state = rows.removeValue(forKey: row) else {
            if scrolling == row { scrolling = nil }
            return []
        }
        return SwipeList.timer(of: row, state).map { [.cancel($0)] } ?? []
    }

    /// The timer a row in `state` has pending: the close of a fired, dismissed or peeking row,
    /// the timeout of a confirming one.
    static func timer(of row: RowID, _ state: RowState) -> TimerRequest? {
        switch state.phase {
        case .fired, .dismissed, .peeking: .close(row: row)
        case .confirming: .confirmTimeout(row: row)
        case .closed, .dragging, .open: nil
        }
    }
}

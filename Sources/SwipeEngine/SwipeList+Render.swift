// Rule 4 drawn, and rule 9's second half: the row's data (flags) only changes labels and icons.

extension SwipeList {
    /// What the row looks like. Pure; `flags` is the row's data (see `ActionSpec.activeLabel`).
    ///
    /// Placement: the revealed strip is at the row's left (x from 0) when the revealed edge is on
    /// the left (leading in ltr, trailing in rtl), at its right (up to R) otherwise. The outermost
    /// button sits at the row's outer edge: leftmost for leading in ltr and trailing in rtl,
    /// rightmost for trailing in ltr and leading in rtl. Widths: rule 4 (|offset|/count, or the
    /// outermost alone |offset| wide in full swipe; R wide while `fired`; while `confirming`, the
    /// waiting action alone, labelled with its `confirmLabel`, without icon: rule 10).
    public func render(_ row: RowID, flags: RowFlags) -> RowRender {
        let g = geometry(row)
        let spring = g.spring
        return RowRender(
            row: row, offset: g.offset, phase: g.shape.phase, edge: g.shape.edge,
            fullSwipe: g.shape.fullSwipe, buttons: buttons(g, flags: flags),
            spring: spring, accessibilityActions: accessibilityActions(flags: flags))
    }

    /// The row's numbers and shape: `render` without the looks, and without allocating (the drag
    /// path of a host that keeps the looks encoded, such as the daemon's row templates).
    public func geometry(_ row: RowID) -> RowGeometry {
        geometry(of: state(of: row))
    }

    /// The geometry of a row in `state`.
    func geometry(of state: RowState) -> RowGeometry {
        guard let reveal = reveal(state.offset) else {
            return RowGeometry(
                offset: state.offset,
                shape: RowShape(phase: state.phase, edge: nil, fullSwipe: false, shown: 0, onLeft: true),
                start: 0, width: 0)
        }
        // Rule 10: a confirming row shows its one waiting button across the strip.
        let confirming = state.phase == .confirming
        let fullSwipe = reveal.fullSwipe && !confirming
        let shown = fullSwipe || confirming ? 1 : layout.actions(reveal.edge).count
        let onLeft = (reveal.edge == .leading) == (viewport.direction == .ltr)
        return RowGeometry(
            offset: state.offset,
            shape: RowShape(
                phase: state.phase, edge: reveal.edge, fullSwipe: fullSwipe, shown: shown,
                onLeft: onLeft, pending: confirming ? state.pending : nil),
            start: onLeft ? 0 : viewport.width - reveal.extent, width: reveal.extent / Double(shown))
    }

    func buttons(_ g: RowGeometry, flags: RowFlags) -> [ButtonRender] {
        guard let edge = g.shape.edge else { return [] }
        if let pending = g.shape.pending {  // Rule 10: the confirming button.
            let spec = layout.actions(edge)[pending]
            return [
                ButtonRender(
                    action: spec.action, label: spec.effectiveConfirmLabel, icon: nil,
                    tint: spec.effectiveTint, role: spec.role, x: g.x(0), width: g.width)
            ]
        }
        let shown = layout.actions(edge)[..<g.shape.shown]
        // Outermost first from the outer edge: on the left that is left-to-right order already.
        let ordered = g.shape.onLeft ? Array(shown) : shown.reversed()
        return ordered.enumerated().map { i, spec in
            ButtonRender(
                action: spec.action, label: spec.label(for: flags), icon: spec.icon(for: flags),
                tint: spec.effectiveTint, role: spec.role, x: g.x(i), width: g.width)
        }
    }

    /// Every action, leading outermost first, then trailing outermost first.
    public func accessibilityActions(flags: RowFlags) -> [AccessibilityAction] {
        var result: [AccessibilityAction] = []
        result.reserveCapacity(layout.leading.count + layout.trailing.count)
        for edge in Edge.allCases {
            for spec in layout.actions(edge) {
                let label = spec.label(for: flags) ?? spec.icon(for: flags) ?? spec.action
                result.append(
                    AccessibilityAction(
                        action: spec.action, label: label, destructive: spec.role == .destructive,
                        edge: edge))
            }
        }
        return result
    }
}

// Rule 4 drawn, and rule 9's second half: the row's data (flags) only changes labels and icons.

extension SwipeList {
    /// What the row looks like. Pure; `flags` is the row's data (see `ActionSpec.activeLabel`).
    ///
    /// Placement: the revealed strip is at the row's left (x from 0) when the revealed edge is on
    /// the left (leading in ltr, trailing in rtl), at its right (up to R) otherwise. The outermost
    /// button sits at the row's outer edge: leftmost for leading in ltr and trailing in rtl,
    /// rightmost for trailing in ltr and leading in rtl. Widths: rule 4 (|offset|/count, or the
    /// outermost alone |offset| wide in full swipe; R wide while `fired`).
    public func render(_ row: RowID, flags: RowFlags) -> RowRender {
        let state = state(of: row)
        var spring = state.phase == .dragging ? Rules.interactiveSpring : Rules.settleSpring
        spring.target = state.offset
        let reveal = reveal(state.offset)
        return RowRender(
            row: row, offset: state.offset, phase: state.phase, edge: reveal?.edge,
            fullSwipe: reveal?.fullSwipe ?? false,
            buttons: reveal.map { buttons($0, flags: flags) } ?? [],
            spring: spring, accessibilityActions: accessibilityActions(flags: flags))
    }

    func buttons(_ reveal: Reveal, flags: RowFlags) -> [ButtonRender] {
        let all = layout.actions(reveal.edge)
        let shown = reveal.fullSwipe ? all[..<1] : all[...]
        let width = reveal.extent / Double(shown.count)
        let onLeft = (reveal.edge == .leading) == (viewport.direction == .ltr)
        let start = onLeft ? 0 : viewport.width - reveal.extent
        // Outermost first from the outer edge: on the left that is left-to-right order already.
        let ordered = onLeft ? Array(shown) : shown.reversed()
        return ordered.enumerated().map { i, spec in
            ButtonRender(
                action: spec.action, label: spec.label(for: flags), icon: spec.icon(for: flags),
                tint: spec.effectiveTint, role: spec.role, x: start + Double(i) * width,
                width: width)
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

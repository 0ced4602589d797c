// Rules 3 and 4 as pure functions of an offset: the clamp, and what an offset reveals. Both the
// reducer and the renderer use these, so a button is "showing" for a tap (rule 7) exactly when the
// renderer draws it.

/// What an offset reveals: one edge, how many of its buttons show, and whether it is a full swipe.
@usableFromInline
struct Reveal: Equatable {
    var edge: Edge
    /// |s|: how far the row has moved, i.e. the total width of the visible buttons.
    var extent: Double
    /// Rule 4: only the outermost button shows.
    var fullSwipe: Bool
}

extension SwipeList {
    /// Rule 3, on a physical offset: an edge without buttons stays shut, an edge without full
    /// swipe stops at count·W, and nothing passes R. Never returns −0.
    @inlinable
    func clamp(_ offset: Double) -> Double {
        let sign = viewport.direction.sign
        var s = offset * sign
        if s > 0 {
            s = min(s, limit(.leading))
        } else if s < 0 {
            s = -min(-s, limit(.trailing))
        }
        return s == 0 ? 0 : s * sign
    }

    /// How far an edge may be revealed (rule 3): 0 without buttons, count·W without full swipe
    /// (the edge's OWN count: the seed's bug used the leading width for both), never past R.
    @inlinable
    func limit(_ edge: Edge) -> Double {
        let count = layout.actions(edge).count
        if count == 0 { return 0 }
        let r = viewport.width
        return layout.allowsFullSwipe(edge) ? r : min(Double(count) * layout.buttonWidth, r)
    }

    /// Where rule 5 snaps an edge open: count·W, capped at R (rule 3 wins over a silly layout).
    func openExtent(_ edge: Edge) -> Double {
        min(Double(layout.actions(edge).count) * layout.buttonWidth, viewport.width)
    }

    /// Rule 4: the edge a physical offset reveals, nil at 0.
    func reveal(_ offset: Double) -> Reveal? {
        let s = offset * viewport.direction.sign
        if s == 0 { return nil }
        let edge: Edge = s > 0 ? .leading : .trailing
        let extent = abs(s)
        let full = layout.allowsFullSwipe(edge) && extent > Rules.fullSwipeFraction * viewport.width
        return Reveal(edge: edge, extent: extent, fullSwipe: full)
    }

    /// The physical offset that shows `edge` revealed by `extent` (leading = + in ltr, − in rtl).
    func physical(_ edge: Edge, _ extent: Double) -> Double {
        (edge == .leading ? extent : -extent) * viewport.direction.sign
    }
}

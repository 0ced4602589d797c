// The words for sides and directions. `Edge` is LOGICAL (leading/trailing, as in SwiftUI);
// `Direction` says which PHYSICAL side the leading edge is on.

/// One of the two sides of a row that hold buttons. Leading is the left edge in `ltr`, the right
/// edge in `rtl`.
public enum Edge: String, Sendable, Hashable, CaseIterable {
    case leading, trailing
}

/// The layout direction of the list.
public enum Direction: String, Sendable, Hashable, CaseIterable {
    case ltr, rtl

    /// +1 in ltr, −1 in rtl: multiplies a logical offset (s > 0 = leading revealed) into a
    /// physical one (+ = moved right), and back (the map is its own inverse).
    @inlinable public var sign: Double { self == .ltr ? 1 : -1 }
}

/// The role of an action; only `destructive` exists (it changes the default tint and is announced).
public enum Role: String, Sendable, Hashable {
    case destructive
}

/// Where a row is in its gesture. A row that is `closed` is not stored at all.
public enum Phase: String, Sendable, Hashable, CaseIterable {
    /// At rest, offset 0, no buttons.
    case closed
    /// The finger is down and the gesture has passed the minimum distance (rule 1).
    case dragging
    /// Released and snapped open at ±L·W / ±T·W (rule 5); rests there until the next gesture.
    case open
    /// A full swipe fired the outermost action; the row waits for its close timer (rule 5).
    case fired
    /// An action that asks to confirm would have fired: the row rests at its edge's open offset
    /// with that one button, labelled `confirmLabel`, until a tap confirms it or anything else
    /// (or `Rules.confirmTimeout`) cancels it (rule 10).
    case confirming
    /// `peek` showed the row's buttons part-way, firing nothing; it springs back closed on its
    /// timer (rule 14). Its buttons take no tap.
    case peeking
    /// A full swipe fired the outermost action on an edge whose style is `dismiss`: the row slid
    /// out with it and waits for its data to go (rule 15).
    case dismissed
}

/// Facts the host reports to a list. Every input names a row except `close(row: nil)`.
public enum Input: Equatable, Sendable {
    /// The finger moved. dx = translation since touch-down, physical, + = right. Ignored when not
    /// finite, and in phase `fired` or `dismissed` (the row is acting; it ignores the finger until
    /// it closes). dy (+ = down), when given, lets the engine tell a swipe from a scroll before
    /// the gesture starts (rule 13); a non-finite dy counts as absent.
    case dragChanged(row: RowID, dx: Double, dy: Double? = nil)
    /// The finger lifted. A given dx is applied first exactly like `dragChanged`; vx (pt/s,
    /// physical) feeds rule 6 (a non-finite vx counts as absent). A release of a gesture that never
    /// started (rule 1) changes nothing, as does a release in `fired`.
    case released(row: RowID, dx: Double?, vx: Double?)
    /// A button was tapped (rule 7).
    case tapped(row: RowID, action: String)
    /// Close one row (no effect for that row, except `.cancel` of a pending timer when it was
    /// `fired`), or with nil every row (`.closed` for each, plus `.cancel` for fired ones).
    /// Closing a closed row does nothing. Closing a `dragging` row ends its gesture: later drags
    /// of the same touch start a new one from offset 0 (rule 1 applies again).
    case close(row: RowID?)
    /// The host's timer for `.schedule(.close(row:))` elapsed: a `fired`, `dismissed` or `peeking`
    /// row closes. A stale timer (the row is in none of these phases) is ignored.
    case timerFired(row: RowID)
    /// The row's data is gone: drop its state (`.cancel` of its timer when it was `fired` or
    /// `confirming`).
    case rowRemoved(row: RowID)
    /// Open the row on `edge` without a finger (rule 11): phase `open` at rule 5's offset,
    /// closing the other rows as a drag does (rule 8). `noButtons` when `edge` has none.
    case open(row: RowID, edge: Edge)
    /// Fire any action of the layout as a tap on its showing button would (rule 11), without it
    /// showing; an action that asks to confirm starts its confirmation (rule 10).
    case perform(row: RowID, action: String)
    /// The host's timer for `.schedule(.confirmTimeout(row:))` elapsed: a `confirming` row
    /// closes and nothing fires (rule 10). A stale timer is ignored.
    case confirmTimedOut(row: RowID)
    /// Show the row's buttons part-way and spring it back (rule 14): phase `peeking`, closing the
    /// other rows as a drag does (rule 8). `edge` nil: the trailing edge when it has buttons, else
    /// the leading one. `noButtons` when that edge has none.
    case peek(row: RowID, edge: Edge? = nil)
}

extension Input {
    /// The row the input names; nil for `close(row: nil)` (every row). A host checks that the
    /// row's data exists before sending.
    public var row: RowID? {
        switch self {
        case let .dragChanged(row, _, _), let .released(row, _, _), let .tapped(row, _),
            let .timerFired(row), let .rowRemoved(row), let .open(row, _), let .perform(row, _),
            let .confirmTimedOut(row), let .peek(row, _):
            return row
        case let .close(row):
            return row
        }
    }
}

/// Something the host must do for the engine; the engine never does I/O nor reads a clock.
public enum Effect: Equatable, Sendable {
    /// Perform the action on the row's data (rules 5, 7, 10 and 11).
    case fire(row: RowID, action: String)
    /// The action would have fired but asks to confirm: the row is now `confirming` (rule 10).
    case pending(row: RowID, action: String)
    /// Start a timer; when it elapses, send the matching input (`.close(row:)` → `.timerFired`,
    /// `.confirmTimeout(row:)` → `.confirmTimedOut`).
    case schedule(TimerRequest, after: Double)
    /// Drop a timer scheduled earlier; it must not be delivered (if it is, it is ignored anyway).
    case cancel(TimerRequest)
    /// The engine closed a row other than the one the input named (rule 8, close-all, reconfigure,
    /// a scroll starting: rule 13).
    case closed(row: RowID)
    /// The drag moved the row across a threshold (rule 12; only when `reportsCrossings`).
    case crossed(row: RowID, Crossing)
    /// The touch on the row is a scroll, not a swipe (rule 13): the host scrolls the list; the row
    /// stays closed until the touch ends.
    case scroll(row: RowID)
}

/// A timer the engine asks the host for.
public enum TimerRequest: Equatable, Hashable, Sendable {
    /// Close a `fired`, `dismissed` or `peeking` row: answer with `Input.timerFired(row:)`.
    case close(row: RowID)
    /// Cancel a `confirming` row's confirmation: answer with `Input.confirmTimedOut(row:)`.
    case confirmTimeout(row: RowID)
}

/// Why an input was refused; the list is unchanged when `send` throws.
public enum SwipeError: Error, Equatable, Sendable {
    /// Rule 7: the action exists in the layout but its button is not showing on this row.
    case notRevealed(row: RowID, action: String)
    /// The layout has no such action.
    case unknownAction(row: RowID, action: String)
    /// Rule 7: the row is `fired` (its action already fired; it closes on its timer): its
    /// showing button takes no tap.
    case firing(row: RowID, action: String)
    /// Rule 11: `open` on an edge that has no buttons; rule 14: `peek` on one, or a peek without
    /// an edge of a layout without buttons (`edge` is then `trailing`).
    case noButtons(row: RowID, edge: Edge)
}

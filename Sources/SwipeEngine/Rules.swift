// The rules of the swipe-actions gesture, numbered as in issue 2 (12 to 15: issue 47), and every
// constant they use.
// A newcomer looking for "why does the row do that?" starts here; the reducer (`SwipeList+Reduce`)
// cites these numbers next to the code that implements each one.
//
// Vocabulary. W = `Layout.buttonWidth`, R = `Viewport.width`, L and T = the counts of leading and
// trailing buttons. `offset` is PHYSICAL (what a front end draws: + = the row's content moved
// right). The rules are stated on the LOGICAL offset s: s = offset in `ltr`, s = −offset in `rtl`,
// so that s > 0 always reveals the leading edge (the left edge in ltr, the right edge in rtl).
//
//  1. Minimum distance. While the gesture has not started, a drag with |dx| < 10 changes nothing
//     (no state, no effect). The first drag with |dx| ≥ 10 starts it: phase becomes `dragging`.
//  2. offset = dx + restingOffset (the offset at the end of the previous gesture), so an open row
//     continues from where it rests. dx is NOT reduced by the minimum distance.
//  3. Clamp. If full swipe is off on the leading edge, s ≤ L·W; on the trailing edge s ≥ −T·W (the
//     TRAILING width: the seed clamped with the leading one, a bug). An edge without buttons cannot
//     be revealed at all (s stays 0 on that side). |offset| ≤ R always.
//  4. While dragging, s > 0 reveals the leading buttons, s < 0 the trailing ones. Full swipe =
//     full swipe allowed on that edge and |s| > R/2 (strictly): only the outermost button shows,
//     |s| wide. Otherwise every button of that edge is |s|/count wide.
//  5. Release. If |s| > 0.8·W (strictly) toward an edge that has buttons: in full swipe, fire that
//     edge's outermost action, phase `fired`, offset ±R (the outermost button fills the row), and
//     schedule a close 0.5 s later (the host owns the clock; rule 15 for the edge's other
//     full-swipe styles); otherwise snap open at s = min(L·W, R)
//     or s = −min(T·W, R). Anything else closes (offset 0, state dropped).
//  6. Velocity. With vx given (pt/s, physical), |vx| ≥ 300 in the direction of s counts as "past
//     0.8·W" (then rule 5 decides open or fire); |vx| ≥ 300 against s closes, whatever |s|.
//  7. Tap on a showing button fires its action and closes the row. Tap on an action of the layout
//     that is not showing throws `notRevealed`; on an action not in the layout, `unknownAction`;
//     on a `fired` row (whose one button still shows), `firing`: at most one fire per gesture.
//  8. One row moves at a time: when a row's gesture starts (rule 1), every OTHER row in phase
//     `open`, `dragging`, `confirming` or `peeking` closes, each with a `.closed(row:)` effect
//     (ordered by row id), then the cancel of each one's timer, by row id:
//     `.cancel(.confirmTimeout(row:))` for a `confirming` one, `.cancel(.close(row:))` for a
//     `peeking` one (rule 14), as in UIKit and SwipeCellKit. A `fired` or `dismissed` row is left
//     alone: it closes on its own timer.
//  9. Removing a row's data (`rowRemoved`) drops its state. A change of the row's data only
//     changes what `render(_:flags:)` shows (e.g. the Watched icon flips); it never moves the row.
// 10. Confirm (issue 14). Where an action whose `ActionSpec.confirm` is set would fire — a
//     full-swipe or velocity release (rules 5, 6), a tap (rule 7), a perform (rule 11) — it does
//     not fire: the row enters phase `confirming`, at its edge's open offset (rule 5's snap-open
//     offset), showing that one button across the revealed strip, labelled `confirmLabel`
//     ("Confirm" by default), without its icon. Effects: the other `open`, `dragging` or
//     `confirming` rows close as in rule 8, then `.pending(row:action:)` and
//     `.schedule(.confirmTimeout(row:), after: 3)`. While `confirming`, a tap or perform of THAT
//     action fires it: `.fire`, then `.cancel(.confirmTimeout)`, and the row closes. Anything else
//     on the row cancels: the row closes, nothing fires, `.cancel(.confirmTimeout)` — a drag (of
//     any size), a release, a close, an open (which then opens the row, rule 11), a tap of another
//     action of the layout, a perform of another action (which then performs it from the closed
//     row), the row's removal, another row's gesture starting (rule 8: `.closed` then `.cancel`),
//     and `confirmTimedOut`, the timer (no effect). A tap of an action not in the layout is still
//     `unknownAction`, and changes nothing.
// 11. On command (issue 14). `open(row, edge)`: phase `open` at rule 5's snap-open offset on that
//     edge, closing this client's other rows as a drag starting would (rule 8); a `confirming`
//     row first cancels (rule 10: `.cancel(.confirmTimeout)` before rule 8's effects); a `fired`
//     row is left as it is (no effect); an edge without buttons throws `noButtons`. `perform(row,
//     action)`: fires any action of the layout as a tap on its showing button would (rule 7:
//     `.fire`, the row closes; rule 10 for an action that asks to confirm), whether it shows or
//     not; `unknownAction` when the layout has no such action, `firing` on a `fired` row.
// 12. Threshold events (issue 47). When the host asks for them (`reportsCrossings`, off by
//     default), a drag — a `dragChanged`, or a `released`'s dx — that moves s across rule 5's open
//     threshold (|s| > 0.8·W) or rule 4's full-swipe threshold (|s| > R/2 on an edge that allows
//     full swipe), either way, reports it once: `.crossed(row:, Crossing(threshold, direction))`,
//     `out` when the row is now past it and was not, `back` the other way; after the drag's other
//     effects (rule 8's), in the order crossed: the edge left, full then open, then the edge
//     reached, open then full. The row was where the drag's last offset put it while `dragging`,
//     and at its resting offset before its gesture starts (0 for a closed or peeking row, the
//     open offset for an open one). Only a finger crosses: a release's snap, a fire, an open, a
//     peek, a timer or a close move the row without one and report nothing.
// 13. Scroll arbitration (issue 47). A drag with dy (+ = down, since touch-down) on a row whose
//     gesture has not started (closed, open or peeking): nothing while max(|dx|, |dy|) < 10
//     (rule 1); at the first that reaches 10, vertical wins when |dy| > |dx| (strictly): the touch
//     is a scroll. Every row of this client that is `open`, `dragging`, `confirming` or `peeking`
//     closes — the others with rule 8's effects, the touched row itself silently (a peek's timer
//     cancelled) — as UIKit closes a swiped row when its table scrolls, and `.scroll(row:)`
//     follows. Until the touch ends, every drag of that row changes nothing and answers
//     `.scroll(row:)`, and so does its release, which ends the touch. Otherwise (|dx| ≥ |dy|, so
//     |dx| ≥ 10) rule 1 starts the gesture exactly as without dy; once started, dy is ignored. A
//     drag without dy is horizontal. One touch scrolls at a time: a scroll starting on another row
//     ends it; so do the row's `close`, `open`, `peek`, `perform` and removal, and a close of
//     every row, a new layout or viewport. A scroll moves nothing, so it crosses nothing.
// 14. Peek (issue 47). `peek(row, edge)` on a closed row: phase `peeking` at s = ±peekFraction ·
//     rule 5's open offset of `edge` (half of L·W or T·W: every button half shown), the other
//     rows closing as rule 8 says, then `.schedule(.close(row:), after: peekDuration)`; the
//     timer closes it (the host animates there and back). Nothing fires. `edge` nil: trailing
//     when it has buttons, else leading; an edge without buttons throws `noButtons`. On a peeking
//     row it starts again (`.cancel(.close)`, then as on a closed row); on any other phase it does
//     nothing (the row shows its buttons already, or is busy). While peeking: a drag below the
//     minimum distance changes nothing; one past it starts a gesture (or a scroll, rule 13) from
//     offset 0 after `.cancel(.close)`; a release without a gesture changes nothing; a tap throws
//     `notRevealed` (a peek shows the buttons, it does not offer them); `open`, `perform`, `close`
//     and removal cancel the timer first and go on as from a closed row; rule 8 closes it with
//     `.closed` then `.cancel(.close)`.
// 15. Full-swipe styles (issue 47), per edge (`Layout.fullSwipeStyle`), where rule 5 fires a
//     full swipe: `fill` as rule 5 says; `close`: `.fire` and the row closes at once, with no
//     timer; `dismiss`: phase `dismissed` at ±R (the outermost button R wide: the row slid out),
//     `.fire`, then `.schedule(.close(row:), after: dismissTimeout)`: the row goes when its data
//     does (rule 9, which cancels the timer), and springs back closed on the timer if it does not
//     (a custom action, a failed delete). A `dismissed` row is treated as a `fired` one in every
//     rule (it ignores the finger, refuses taps with `firing`, is left alone by rule 8 and `open`).
//     An action that asks to confirm does so first whatever the style (rule 10).
public enum Rules {
    /// Rule 1: |dx| below this does not start a gesture (SwiftUI `DragGesture(minimumDistance: 10)`).
    public static let minimumDistance: Double = 10
    /// Rule 5: the release opens (or fires) when |s| > openFraction · W.
    public static let openFraction: Double = 0.8
    /// Rule 4/5: full swipe when |s| > fullSwipeFraction · R.
    public static let fullSwipeFraction: Double = 0.5
    /// Rule 6: a flick at least this fast (pt/s) decides the release by its direction.
    public static let flickVelocity: Double = 300
    /// Rule 5: seconds between a full-swipe fire and the row closing.
    public static let closeDelay: Double = 0.5
    /// Rule 14: a peek shows this fraction of the edge's open offset.
    public static let peekFraction: Double = 0.5
    /// Rule 14: seconds a peeking row rests before its timer springs it back closed.
    public static let peekDuration: Double = 0.6
    /// Rule 15: seconds a `dismissed` row waits for its data to go before it springs back.
    public static let dismissTimeout: Double = 3
    /// Rule 10: seconds a `confirming` row waits for its confirmation before it closes.
    public static let confirmTimeout: Double = 3
    /// Rule 10: the confirming button's label when the action gives none.
    public static let defaultConfirmLabel = "Confirm"
    /// Default button width W (points), as in the seed.
    public static let defaultButtonWidth: Double = 70
    /// Default row width R (points): an iPhone's width.
    public static let defaultRowWidth: Double = 390
    /// Default tint of an action without one, and of a destructive action without one.
    public static let defaultTint = "gray"
    public static let destructiveTint = "red"

    /// Spring hints (see `SpringHint`). While the finger drives the row it must follow closely:
    /// SwiftUI's `.interactiveSpring()` (response 0.15, damping 0.86).
    public static let interactiveSpring = SpringHint(target: 0, response: 0.15, dampingFraction: 0.86)
    /// Once released the row settles on its own: SwiftUI's `.snappy` (response 0.5, damping 0.85).
    public static let settleSpring = SpringHint(target: 0, response: 0.5, dampingFraction: 0.85)
}

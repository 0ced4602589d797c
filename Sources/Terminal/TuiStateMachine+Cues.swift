// Issue 47 in the terminal: a cue for each threshold a drag crosses (the daemon says which, rule
// 12: the status line says what letting go would do now), the full-swipe style (`F`), and what
// keys do on a row that only peeks (rule 14).
import SwipeEngine

extension TuiStateMachine {
    /// The drag of `row` crossed these thresholds: the status line says what letting go does now,
    /// named by the button that would fire. A terminal has no haptic; the words are the cue.
    mutating func crossing(_ crossed: [Crossing], _ row: RowRender, _ now: Double) {
        guard let last = crossed.last else { return }
        let outermost = row.offset < 0 ? row.buttons.last : row.buttons.first
        let action = outermost.map { $0.label ?? $0.action } ?? "its action"
        let text: String
        switch (last.threshold, last.direction) {
        case (.full, .out): text = "Let go: \(action) fires"
        case (.full, .back), (.open, .out): text = "Let go: the row opens"
        case (.open, .back): text = "Let go: the row closes"
        }
        say(text, now)
    }

    /// `F`: the next full-swipe style, for both edges (rule 15).
    mutating func nextFullSwipeStyle(_ now: Double) {
        let all = FullSwipeStyle.allCases
        let next = all[(all.firstIndex(of: state.fullSwipeStyle)! + 1) % all.count]
        send(.configure(confirmDelete: state.confirmDelete, quiet: false, style: next), now)
    }

    /// What a full swipe does in `style`, as the status line says it.
    static func describe(_ style: FullSwipeStyle) -> String {
        switch style {
        case .fill: "fill (the button fills the row, which springs back)"
        case .close: "close (the row closes as its action fires)"
        case .dismiss: "dismiss (the row slides out; a delete takes it away)"
        }
    }

    /// The offset a key reads a row at: a peeking row only hints, so it counts as closed.
    func restingOffset(_ movie: String) -> Double {
        guard let render = state.renders[movie], render.phase != .peeking else { return 0 }
        return render.offset
    }
}

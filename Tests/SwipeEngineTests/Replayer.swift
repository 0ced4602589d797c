import SwipeEngine

/// Replays a `Recording` through a fresh `SwipeList` and checks every expectation (see the format in
/// Recording.swift). Time only matters for timers: a `schedule` effect becomes a pending timer due
/// at (time of the input + after); a `cancel` drops it. A `timer` line must match a pending timer
/// due at exactly its time (±1 ns), and no input may pass a due timer that was not replayed.
/// Failures are collected (with line numbers), not thrown, so a test can also check that a wrong
/// fixture is caught.
struct Replayer {
    /// What the engine did at one step: the tracked rows after it, and its effects or error.
    struct Outcome: Equatable {
        var rows: [RowID: RowState]
        var effects: [Effect]
        var error: SwipeError?
    }

    private(set) var outcomes: [Outcome] = []
    private(set) var failures: [String] = []
    private(set) var list: SwipeList
    private(set) var pending: [RowID: Double] = [:]
    /// The confirmation timers (rule 10), by row, kept like `pending`.
    private(set) var confirms: [RowID: Double] = [:]
    let recording: Recording

    static let tolerance = 1e-9

    init(_ recording: Recording) throws {
        self.recording = recording
        list = SwipeList(layout: try recording.layout, viewport: recording.viewport)
        list.reportsCrossings = recording.crossings
    }

    static func replay(_ recording: Recording) throws -> Replayer {
        var replayer = try Replayer(recording)
        for step in recording.steps { replayer.run(step) }
        return replayer
    }

    mutating func run(_ step: Recording.Step) {
        func fail(_ message: String) { failures.append("line \(step.line): \(message)") }
        let input: Input
        switch step.event {
        case let .timer(row):
            guard let due = pending[row], abs(due - step.time) <= Self.tolerance else {
                fail("no close timer of \(row) due at \(step.time) (pending: \(pending))")
                return
            }
            pending[row] = nil
            input = .timerFired(row: row)
        case let .confirmTimer(row):
            guard let due = confirms[row], abs(due - step.time) <= Self.tolerance else {
                fail("no confirm timer of \(row) due at \(step.time) (pending: \(confirms))")
                return
            }
            confirms[row] = nil
            input = .confirmTimedOut(row: row)
        case let .input(recorded):
            input = recorded
        }
        // An input must come after every timer due by its time; a timer, after those due before it
        // (two timers may be due at the same instant).
        let timerStep: Bool
        switch step.event {
        case .timer, .confirmTimer: timerStep = true
        case .input: timerStep = false
        }
        func overdue(_ due: Double) -> Bool {
            timerStep ? due < step.time - Self.tolerance : due <= step.time + Self.tolerance
        }
        for (row, due) in pending.sorted(by: { $0.key < $1.key }) where overdue(due) {
            fail("the close timer of \(row), due at \(due), was not replayed before this input")
        }
        for (row, due) in confirms.sorted(by: { $0.key < $1.key }) where overdue(due) {
            fail("the confirm timer of \(row), due at \(due), was not replayed before this input")
        }

        let before = list.trackedRows
        let scrollingBefore = list.scrolling
        var outcome = Outcome(rows: [:], effects: [], error: nil)
        do {
            outcome.effects = try list.send(input)
        } catch {
            outcome.error = error
        }
        outcome.rows = list.trackedRows
        for effect in outcome.effects {
            switch effect {
            case let .schedule(.close(row), after): pending[row] = step.time + after
            case let .cancel(.close(row)): pending[row] = nil
            case let .schedule(.confirmTimeout(row), after): confirms[row] = step.time + after
            case let .cancel(.confirmTimeout(row)): confirms[row] = nil
            case .fire, .closed, .pending, .crossed, .scroll: break
            }
        }
        outcomes.append(outcome)

        // Exhaustive checks.
        var effects: [Effect] = []
        var errors: [SwipeError] = []
        var asserted: Set<RowID> = []
        var scrollingAsserted = false
        for expectation in step.expectations {
            switch expectation {
            case let .effect(effect): effects.append(effect)
            case let .error(error): errors.append(error)
            case let .row(row, state):
                asserted.insert(row)
                if list.state(of: row) != state {
                    fail(
                        "row \(row): expected \(describe(.row(row, state))), got \(describe(.row(row, list.state(of: row))))"
                    )
                }
            case let .scrolling(row):
                scrollingAsserted = true
                if list.scrolling != row {
                    fail("expected \(describe(expectation)), got \(describe(.scrolling(list.scrolling)))")
                }
            case let .render(row, edge, full, buttons):
                let render = list.render(row, flags: recording.flags[row] ?? [])
                let actual = render.buttons.map {
                    "\($0.action)@\(Recording.format($0.x))+\(Recording.format($0.width))"
                }
                if render.edge != edge || render.fullSwipe != full || actual != buttons {
                    let got = Recording.Expectation.render(
                        row: row, edge: render.edge, fullSwipe: render.fullSwipe, buttons: actual)
                    fail("expected \(describe(expectation)), got \(describe(got))")
                }
            }
        }
        if outcome.effects != effects {
            fail(
                "effects: expected \(effects.map { describe(.effect($0)) }), got \(outcome.effects.map { describe(.effect($0)) })"
            )
        }
        if errors != (outcome.error.map { [$0] } ?? []) {
            fail("error: expected \(errors), got \(outcome.error.map { "\($0)" } ?? "none")")
        }
        for row in Set(before.keys).union(outcome.rows.keys).sorted()
        where before[row] != outcome.rows[row] && !asserted.contains(row) {
            fail("row \(row) changed to \(describe(.row(row, list.state(of: row)))) without a row line")
        }
        if list.scrolling != scrollingBefore && !scrollingAsserted {
            fail(
                "the scrolling row changed to \(describe(.scrolling(list.scrolling))) without a scrolling line"
            )
        }
    }

    private func describe(_ expectation: Recording.Expectation) -> String {
        Recording.describe(expectation)
    }
}

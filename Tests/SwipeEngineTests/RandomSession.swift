import Movies
import SwipeEngine
import TestSupport

/// Random gesture sequences for the property and replay tests. The session drives a real
/// `SwipeList` like a host would (timers from `schedule` effects fire when time passes them) and
/// records everything as a `Recording` with exhaustive expectations, so it can be written out as
/// text and replayed.
struct RandomSession {
    var rng: SplitMix64
    var list: SwipeList
    var recording: Recording
    var time = 0.0
    var pending: [RowID: Double] = [:]
    /// Confirmation timers (rule 10) by row.
    var confirms: [RowID: Double] = [:]
    let rows: [RowID] = ["a", "b", "c"]
    /// Also issue 47's inputs and settings: drags with dy, peeks, full-swipe styles, crossings.
    let issue47: Bool

    /// Called after every step with (state before, input, result, state after).
    var observe: (SwipeList, Input, Result<[Effect], SwipeError>, SwipeList) -> Void = { _, _, _, _ in }

    init(seed: UInt64, issue47: Bool = false) {
        self.issue47 = issue47
        rng = SplitMix64(seed: seed)
        recording = Recording()
        recording.layoutName = ["standard", "demo000", "confirm"].randomElement(using: &rng)!
        if Int.random(in: 0..<3, using: &rng) == 0 {
            recording.buttonWidth = [44, 90, 150, 300].randomElement(using: &rng)!
        }
        for edge in Edge.allCases where Bool.random(using: &rng) {
            recording.fullSwipe[edge] = Bool.random(using: &rng)
        }
        recording.viewport = Viewport(
            width: [320, 390, 430].randomElement(using: &rng)!,
            direction: Direction.allCases.randomElement(using: &rng)!)
        if issue47 {
            for edge in Edge.allCases {
                recording.styles[edge] = FullSwipeStyle.allCases.randomElement(using: &rng)!
            }
            recording.crossings = Bool.random(using: &rng)
        }
        list = SwipeList(layout: try! recording.layout, viewport: recording.viewport)
        list.reportsCrossings = recording.crossings
    }

    /// A random dy for a drag of issue 47's sessions: none, small, or past the minimum distance.
    mutating func dy() -> Double? {
        switch Int.random(in: 0..<4, using: &rng) {
        case 0: return nil
        case 1: return (Double.random(in: -12...12, using: &rng) * 4).rounded() / 4
        default: return (Double.random(in: -300...300, using: &rng) * 4).rounded() / 4
        }
    }

    /// A random physical dx: sometimes below the minimum distance, sometimes past the row.
    mutating func dx() -> Double {
        let r = list.viewport.width
        switch Int.random(in: 0..<4, using: &rng) {
        case 0: return (Double.random(in: -10...10, using: &rng) * 4).rounded() / 4
        default: return (Double.random(in: -1.2 * r...1.2 * r, using: &rng) * 4).rounded() / 4
        }
    }

    mutating func randomInput() -> Input {
        let row = rows.randomElement(using: &rng)!
        let actions = (list.layout.leading + list.layout.trailing).map(\.action) + ["bogus"]
        if issue47 {
            switch Int.random(in: 0..<10, using: &rng) {
            case 0..<3: return .dragChanged(row: row, dx: dx(), dy: dy())
            case 3:
                let edge = Bool.random(using: &rng) ? nil : Edge.allCases.randomElement(using: &rng)
                return .peek(row: row, edge: edge)
            default: break
            }
        }
        switch Int.random(in: 0..<100, using: &rng) {
        case 0..<52: return .dragChanged(row: row, dx: dx())
        case 52..<72:
            let vx: Double? =
                Bool.random(using: &rng) ? nil : Double(Int.random(in: -1000...1000, using: &rng))
            return .released(row: row, dx: Bool.random(using: &rng) ? nil : dx(), vx: vx)
        case 72..<82: return .tapped(row: row, action: actions.randomElement(using: &rng)!)
        case 82..<86: return .perform(row: row, action: actions.randomElement(using: &rng)!)
        case 86..<89: return .open(row: row, edge: Edge.allCases.randomElement(using: &rng)!)
        case 89..<93: return .close(row: row)
        case 93..<95: return .close(row: nil)
        default: return .rowRemoved(row: row)
        }
    }

    /// One random input at a later time, after replaying every timer it passes.
    mutating func step() {
        time += Double(Int.random(in: 0...300, using: &rng)) / 1000
        // Every timer due by now, in time order (a close before a confirmation at the same time).
        while true {
            let close = pending.min(by: { ($0.value, $0.key) < ($1.value, $1.key) })
            let confirm = confirms.min(by: { ($0.value, $0.key) < ($1.value, $1.key) })
            if let (row, due) = close, due <= time + Replayer.tolerance, due <= confirm?.value ?? .infinity {
                pending[row] = nil
                apply(.timerFired(row: row), at: due, event: .timer(row: row))
            } else if let (row, due) = confirm, due <= time + Replayer.tolerance {
                confirms[row] = nil
                apply(.confirmTimedOut(row: row), at: due, event: .confirmTimer(row: row))
            } else {
                break
            }
        }
        let input = randomInput()
        apply(input, at: time, event: .input(input))
    }

    mutating func apply(_ input: Input, at time: Double, event: Recording.Event) {
        let before = list
        let result = Result { () throws(SwipeError) -> [Effect] in try list.send(input) }
        observe(before, input, result, list)
        var step = Recording.Step(time: time, event: event)
        switch result {
        case let .success(effects):
            for row in Set(before.trackedRows.keys).union(list.trackedRows.keys).sorted()
            where before.state(of: row) != list.state(of: row) {
                step.expectations.append(.row(row, list.state(of: row)))
            }
            if before.scrolling != list.scrolling { step.expectations.append(.scrolling(list.scrolling)) }
            step.expectations += effects.map { .effect($0) }
            for effect in effects {
                switch effect {
                case let .schedule(.close(row), after): pending[row] = time + after
                case let .cancel(.close(row)): pending[row] = nil
                case let .schedule(.confirmTimeout(row), after): confirms[row] = time + after
                case let .cancel(.confirmTimeout(row)): confirms[row] = nil
                case .fire, .closed, .pending, .crossed, .scroll: break
                }
            }
        case let .failure(error):
            step.expectations.append(.error(error))
        }
        recording.steps.append(step)
    }
}

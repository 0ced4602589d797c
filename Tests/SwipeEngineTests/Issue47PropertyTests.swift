import SwipeEngine
import XCTest

/// Rules 12 to 15 over random sessions that also drag with dy, peek, and use every full-swipe
/// style with and without crossings (seeded: a failure names its seed).
final class Issue47PropertyTests: XCTestCase {
    static let seeds: ClosedRange<UInt64> = 1...200

    /// Whether a row at `offset` is past the open threshold and past the full-swipe one, and on
    /// which edge: read from the render (rule 4's `fullSwipe`), not from the engine's zones.
    static func past(_ list: SwipeList, _ row: RowID, offset: Double) -> (edge: Edge?, open: Bool, full: Bool)
    {
        var probe = list
        _ = probe.close(row: row)
        // A row dragged to `offset` from 0 (rule 3 keeps any offset the list gave it).
        _ = probe.dragThenGeometry(of: row, dx: offset)
        let geometry = probe.geometry(row)
        let extent = abs(geometry.offset)
        guard extent > 0, geometry.offset == offset else { return (nil, false, false) }
        return (
            geometry.shape.edge, extent > Rules.openFraction * list.layout.buttonWidth,
            geometry.shape.fullSwipe
        )
    }

    /// The crossings between two offsets, from `past`: what rule 12 says a drag reports.
    static func expectedCrossings(_ list: SwipeList, _ row: RowID, from a: Double, to b: Double) -> [Crossing]
    {
        let before = past(list, row, offset: a)
        let after = past(list, row, offset: b)
        let same = before.edge == nil || after.edge == nil || before.edge == after.edge
        var result: [Crossing] = []
        if before.full && !(same && after.full) { result.append(Crossing(.full, .back)) }
        if before.open && !(same && after.open) { result.append(Crossing(.open, .back)) }
        if after.open && !(same && before.open) { result.append(Crossing(.open, .out)) }
        if after.full && !(same && before.full) { result.append(Crossing(.full, .out)) }
        return result
    }

    func testRandomSessionsKeepTheRules() {
        var crossings = 0
        var scrolls = 0
        var peeks = 0
        var dismissals = 0
        for seed in Self.seeds {
            var session = RandomSession(seed: seed, issue47: true)
            var failures: [String] = []
            session.observe = { before, input, result, after in
                let at = "seed \(seed) input \(input)"
                failures += PropertyTests.invariants(after).map { "\(at): \($0)" }
                if let row = after.scrolling, after.state(of: row) != .closed {
                    failures.append("\(at): the scrolling row \(row) is not closed")
                }
                let moving = after.trackedRows.filter {
                    $0.value.phase != .fired && $0.value.phase != .dismissed
                }
                if moving.count > 1 { failures.append("\(at): \(moving.keys) move at once") }
                guard case let .success(effects) = result else {
                    if before != after { failures.append("\(at): a refused input changed the list") }
                    return
                }
                let reported = effects.compactMap { effect -> Crossing? in
                    if case let .crossed(_, crossing) = effect { return crossing }
                    return nil
                }
                crossings += reported.count
                scrolls += effects.filter { if case .scroll = $0 { true } else { false } }.count
                if case .peek = input, after.trackedRows.count > 0 { peeks += 1 }
                dismissals += after.trackedRows.values.filter { $0.phase == .dismissed }.count
                if !before.reportsCrossings && !reported.isEmpty {
                    failures.append("\(at): crossings while off")
                }
                switch input {
                case let .dragChanged(row, dx, dy):
                    // The daemon's path gives the same, crossings and scroll as values.
                    var hot = before
                    let got = hot.dragThenGeometry(of: row, dx: dx, dy: dy)
                    var all = got.effects + got.crossings.map { Effect.crossed(row: row, $0) }
                    if got.scroll { all.append(.scroll(row: row)) }
                    if hot != after || all != effects || got.geometry != after.geometry(row) {
                        failures.append("\(at): dragThenGeometry gave \(all), send \(effects)")
                    }
                    // Rule 12: what a finger moving the row from where it was to where it is crosses.
                    let was = before.state(of: row)
                    let now = after.state(of: row)
                    if before.reportsCrossings && now.phase == .dragging && was.phase != .fired {
                        let from = was.phase == .dragging ? was.offset : was.restingOffset
                        let expected = Self.expectedCrossings(before, row, from: from, to: now.offset)
                        if reported != expected {
                            failures.append("\(at): crossed \(reported), expected \(expected)")
                        }
                    } else if !reported.isEmpty {
                        failures.append("\(at): crossed \(reported) without a drag moving the row")
                    }
                case .released:
                    break
                case .peek, .open, .tapped, .perform, .close, .timerFired, .rowRemoved, .confirmTimedOut:
                    if !reported.isEmpty { failures.append("\(at): crossed \(reported) without a finger") }
                    if case .peek = input,
                        effects.contains(where: { if case .fire = $0 { true } else { false } })
                    {
                        failures.append("\(at): a peek fired")
                    }
                }
            }
            for _ in 0..<300 { session.step() }
            XCTAssertEqual(failures, [], "seed \(seed)")
            if !failures.isEmpty { return }
        }
        XCTAssertGreaterThan(crossings, 1_000)
        XCTAssertGreaterThan(scrolls, 1_000)
        XCTAssertGreaterThan(peeks, 500)
        XCTAssertGreaterThan(dismissals, 100)
    }

    /// Issue 47's random sessions written as fixtures' text replay to the same states and effects.
    func testRandomSessionsRoundTripThroughText() throws {
        for seed: UInt64 in 1...60 {
            var session = RandomSession(seed: seed, issue47: true)
            var outcomes: [Replayer.Outcome] = []
            session.observe = { _, _, result, after in
                switch result {
                case let .success(effects):
                    outcomes.append(.init(rows: after.trackedRows, effects: effects, error: nil))
                case let .failure(error):
                    outcomes.append(.init(rows: after.trackedRows, effects: [], error: error))
                }
            }
            for _ in 0..<200 { session.step() }
            var parsed = try Recording(parsing: session.recording.text)
            for i in parsed.steps.indices { parsed.steps[i].line = 0 }
            XCTAssertEqual(parsed, session.recording, "seed \(seed)")
            let replay = try Replayer.replay(parsed)
            XCTAssertEqual(replay.failures, [], "seed \(seed)")
            XCTAssertEqual(replay.outcomes, outcomes, "seed \(seed)")
            if !replay.failures.isEmpty { return }
        }
    }
}

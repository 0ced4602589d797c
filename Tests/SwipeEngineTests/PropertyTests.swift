import SwipeEngine
import XCTest

/// Properties over random gesture sequences (seeded, so a failure names a reproducible seed):
/// offset bounds always hold, a release always ends closed, open at exactly L·W / −T·W, or fired,
/// a gesture fires at most once, rule 8 leaves no other row open or dragging, a refused input changes nothing,
/// and the render always tiles the revealed strip.
final class PropertyTests: XCTestCase {
    static let seeds: ClosedRange<UInt64> = 1...300
    static let stepsPerSeed = 300

    /// `dragThenGeometry(of:dx:)`, the daemon's drag path, is `send(.dragChanged)` then
    /// `geometry` for every drag of every random session.
    func testDragThenGeometryIsSendAndGeometry() {
        var hot = 0
        for seed in 1...UInt64(60) {
            var session = RandomSession(seed: seed)
            session.observe = { before, input, result, after in
                guard case .dragChanged(let dragged, let dx, let dy) = input else { return }
                var list = before
                let got = list.dragThenGeometry(of: dragged, dx: dx, dy: dy)
                XCTAssertEqual(list, after, "seed \(seed) \(input)")
                XCTAssertEqual(got.effects, try? result.get(), "seed \(seed) \(input)")
                XCTAssertEqual(got.geometry, after.geometry(dragged), "seed \(seed) \(input)")
                if before.state(of: dragged).phase == .dragging { hot += 1 }
            }
            for _ in 0..<200 { session.step() }
        }
        XCTAssertGreaterThan(hot, 500)  // the hot path itself was taken, not only the fallback
    }

    func testInvariantsHoldOverRandomSequences() {
        var releases = 0
        var fires = 0
        var confirmations = 0
        for seed in Self.seeds {
            var session = RandomSession(seed: seed)
            var firedThisGesture: Set<RowID> = []
            var failures: [String] = []
            session.observe = { before, input, result, after in
                let where_ = "seed \(seed) input \(input)"
                failures += Self.invariants(after).map { "\(where_): \($0)" }
                switch result {
                case .failure:
                    if before != after { failures.append("\(where_): a refused input changed the list") }
                case let .success(effects):
                    // Only a fired row's gesture has already fired; it must ignore every input
                    // (but close, removal and its timer) until it closes.
                    for row in firedThisGesture where before.state(of: row).phase != .fired {
                        firedThisGesture.remove(row)
                    }
                    for (row, state) in after.trackedRows
                    where state.phase == .dragging && before.state(of: row).phase != .dragging {
                        let moving = after.trackedRows.filter { $0.key != row && $0.value.phase != .fired }
                        if !moving.isEmpty { failures.append("\(where_): rule 8 left \(moving.keys) open") }
                    }
                    // One row moves at a time: never two rows open or dragging.
                    let moving = after.trackedRows.filter { $0.value.phase != .fired }
                    if moving.count > 1 {
                        failures.append("\(where_): \(moving.keys) open or dragging at once")
                    }
                    for case .pending in effects { confirmations += 1 }
                    for case let .fire(row, _) in effects {
                        fires += 1
                        if firedThisGesture.contains(row) {
                            failures.append("\(where_): second fire of \(row)")
                        }
                        firedThisGesture.insert(row)
                    }
                    if effects.filter({ if case .fire = $0 { true } else { false } }).count > 1 {
                        failures.append("\(where_): several fires")
                    }
                }
                if case let .released(row, _, _) = input {
                    releases += 1
                    // Ends closed, open or fired (the exact offsets are checked by `invariants`).
                    if after.state(of: row).phase == .dragging {
                        failures.append("\(where_): still dragging")
                    }
                }
            }
            for _ in 0..<Self.stepsPerSeed { session.step() }
            XCTAssertEqual(failures, [], "seed \(seed)")
            if !failures.isEmpty { return }
        }
        XCTAssertGreaterThan(releases, 10_000)
        XCTAssertGreaterThan(fires, 1_000)
        XCTAssertGreaterThan(confirmations, 500, "rule 10 was exercised")
    }

    /// What must hold of any list between two inputs.
    static func invariants(_ list: SwipeList) -> [String] {
        var problems: [String] = []
        let r = list.viewport.width
        let w = list.layout.buttonWidth
        let sign = list.viewport.direction.sign
        for (row, state) in list.trackedRows.sorted(by: { $0.key < $1.key }) {
            func check(_ ok: Bool, _ what: String) { if !ok { problems.append("\(row) \(state): \(what)") } }
            let s = state.offset * sign
            let l = Double(list.layout.leading.count)
            let t = Double(list.layout.trailing.count)
            check(state.phase != .closed, "a closed row is tracked")
            check(abs(state.offset) <= r, "|offset| > R")
            check(s <= 0 || l > 0, "leading revealed without leading buttons")
            check(s >= 0 || t > 0, "trailing revealed without trailing buttons")
            check(s <= 0 || list.layout.allowsFullSwipeLeading || s <= l * w, "past L·W without full swipe")
            check(
                s >= 0 || list.layout.allowsFullSwipeTrailing || s >= -t * w, "past −T·W without full swipe")
            switch state.phase {
            case .open:
                check(s == min(l * w, r) || s == -min(t * w, r), "open away from L·W / −T·W")
                check(state.restingOffset == state.offset, "open but not resting")
            case .fired:
                check(abs(state.offset) == r, "fired but not at ±R")
                check(state.restingOffset == state.offset, "fired but not resting")
            case .confirming:
                check(s == min(l * w, r) || s == -min(t * w, r), "confirming away from L·W / −T·W")
                check(state.pending != nil, "confirming without its action")
            case .peeking:
                check(
                    s == Rules.peekFraction * min(l * w, r) || s == -Rules.peekFraction * min(t * w, r),
                    "peeking away from half the open offset")
                check(state.restingOffset == 0, "peeking but resting away from 0")
            case .dismissed:
                check(abs(state.offset) == r, "dismissed but not at ±R")
                check(state.restingOffset == state.offset, "dismissed but not resting")
            case .dragging, .closed:
                break
            }
            // The render tiles the revealed strip, left to right, inside the row.
            let render = list.render(row, flags: [])
            let total = render.buttons.reduce(0) { $0 + $1.width }
            check(abs(total - abs(state.offset)) < 1e-9, "buttons do not add up to |offset|")
            var x = render.buttons.first?.x ?? 0
            for button in render.buttons {
                check(abs(button.x - x) < 1e-9, "buttons are not contiguous")
                x = button.x + button.width
            }
            check((render.buttons.first?.x ?? 0) >= -1e-9 && x <= r + 1e-9, "buttons outside the row")
            check((render.edge == nil) == (s == 0), "edge vs offset")
        }
        return problems
    }
}

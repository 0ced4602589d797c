import Movies
import SwipeEngine
import XCTest

/// Rule 12 (threshold events), exhaustively, with the seed's numbers: W 70 (the open threshold
/// is 56), R 390 (the full-swipe threshold is 195), the movie layout (L 2, T 1), in both
/// directions. `L(x)` / `T(x)` as in SwipeListTests.
final class SwipeListCrossingTests: XCTestCase {
    let g = "godfather"
    let h = "heat"

    func each(
        _ layout: Layout = MovieLayout.standard, width: Double = 390, crossings: Bool = true,
        _ body: (inout TestStore, _ L: (Double) -> Double, _ T: (Double) -> Double) -> Void
    ) {
        for direction in Direction.allCases {
            var store = TestStore(layout, width: width, direction: direction, crossings: crossings)
            let d = direction.sign
            body(&store, { $0 * d }, { -$0 * d })
        }
    }

    func crossed(_ row: RowID, _ threshold: Crossing.Threshold, _ direction: Crossing.Direction) -> Effect {
        .crossed(row: row, Crossing(threshold, direction))
    }

    func testRule12_offByDefault() {
        each(crossings: false) { s, L, T in
            s.send(.dragChanged(row: g, dx: L(300))) { $0[g] = dragging(L(300)) }
            s.send(.dragChanged(row: g, dx: T(300))) { $0[g] = dragging(T(300)) }
            s.send(.dragChanged(row: g, dx: 0)) { $0[g] = dragging(0) }
        }
    }

    func testRule12_eachThresholdOnceEachWay() {
        each { s, L, T in
            s.send(.dragChanged(row: g, dx: L(56))) { $0[g] = dragging(L(56)) }  // at 0.8·W: not past
            s.send(.dragChanged(row: g, dx: L(56.5)), [crossed(g, .open, .out)]) { $0[g] = dragging(L(56.5)) }
            s.send(.dragChanged(row: g, dx: L(100))) { $0[g] = dragging(L(100)) }
            s.send(.dragChanged(row: g, dx: L(195))) { $0[g] = dragging(L(195)) }  // at R/2: not past
            s.send(.dragChanged(row: g, dx: L(196)), [crossed(g, .full, .out)]) { $0[g] = dragging(L(196)) }
            s.send(.dragChanged(row: g, dx: L(390))) { $0[g] = dragging(L(390)) }
            s.send(.dragChanged(row: g, dx: L(195)), [crossed(g, .full, .back)]) { $0[g] = dragging(L(195)) }
            s.send(.dragChanged(row: g, dx: L(56)), [crossed(g, .open, .back)]) { $0[g] = dragging(L(56)) }
            s.send(.dragChanged(row: g, dx: L(3))) { $0[g] = dragging(L(3)) }
            // The trailing edge: the same thresholds.
            s.send(.dragChanged(row: g, dx: T(60)), [crossed(g, .open, .out)]) { $0[g] = dragging(T(60)) }
            s.send(.dragChanged(row: g, dx: T(200)), [crossed(g, .full, .out)]) { $0[g] = dragging(T(200)) }
            s.send(.dragChanged(row: g, dx: T(100)), [crossed(g, .full, .back)]) { $0[g] = dragging(T(100)) }
        }
    }

    func testRule12_oneDragCrossesSeveralInTheOrderCrossed() {
        each { s, L, T in
            // From the rest (0) past both at once: open, then full.
            s.send(.dragChanged(row: g, dx: L(300)), [crossed(g, .open, .out), crossed(g, .full, .out)]) {
                $0[g] = dragging(L(300))
            }
            // To past both on the other edge: those of the edge left, full then open, back; then
            // those of the edge reached, open then full, out.
            s.send(
                .dragChanged(row: g, dx: T(300)),
                [
                    crossed(g, .full, .back), crossed(g, .open, .back), crossed(g, .open, .out),
                    crossed(g, .full, .out),
                ]
            ) { $0[g] = dragging(T(300)) }
            s.send(
                .dragChanged(row: g, dx: L(60)),
                [crossed(g, .full, .back), crossed(g, .open, .back), crossed(g, .open, .out)]
            ) {
                $0[g] = dragging(L(60))
            }
            s.send(.dragChanged(row: g, dx: T(10)), [crossed(g, .open, .back)]) { $0[g] = dragging(T(10)) }
        }
    }

    func testRule12_crossingsComeAfterRule8sCloses() {
        each { s, L, T in
            s.send(.released(row: h, dx: T(60), vx: nil), [crossed(h, .open, .out)]) { $0[h] = open(T(70)) }
            s.send(.dragChanged(row: g, dx: L(60)), [.closed(row: h), crossed(g, .open, .out)]) {
                $0[h] = nil
                $0[g] = dragging(L(60))
            }
        }
    }

    func testRule12_anOpenRowsGestureStartsFromItsRestingOffset() {
        each { s, L, T in
            s.send(.released(row: g, dx: L(100), vx: nil), [crossed(g, .open, .out)]) { $0[g] = open(L(140)) }
            // The row rests past the open threshold: moving within it crosses nothing.
            s.send(.dragChanged(row: g, dx: T(30))) { $0[g] = dragging(L(110), from: L(140)) }
            s.send(.dragChanged(row: g, dx: T(100)), [crossed(g, .open, .back)]) {
                $0[g] = dragging(L(40), from: L(140))
            }
            s.send(.dragChanged(row: g, dx: L(60)), [crossed(g, .open, .out), crossed(g, .full, .out)]) {
                $0[g] = dragging(L(200), from: L(140))
            }
            s.send(
                .released(row: g, dx: nil, vx: nil),
                [.fire(row: g, action: "watched"), .schedule(.close(row: g), after: 0.5)]
            ) {
                $0[g] = fired(L(390))
            }
        }
    }

    func testRule12_aReleasesDxCrossesBeforeTheReleaseActs() {
        each { s, L, T in
            s.send(
                .released(row: g, dx: T(300), vx: nil),
                [
                    crossed(g, .open, .out), crossed(g, .full, .out), .fire(row: g, action: "delete"),
                    .schedule(.close(row: g), after: 0.5),
                ]
            ) { $0[g] = fired(T(390)) }
            s.send(.timerFired(row: g)) { $0[g] = nil }
            s.send(.dragChanged(row: g, dx: L(100)), [crossed(g, .open, .out)]) { $0[g] = dragging(L(100)) }
            // Back under the threshold by the release's dx: crossed, then the row closes.
            s.send(.released(row: g, dx: L(20), vx: nil), [crossed(g, .open, .back)]) { $0[g] = nil }
        }
    }

    func testRule12_onlyAFingerCrosses() {
        each { s, L, T in
            // A snap open, a fire, its timer, an open, a close: the row moves, nothing is crossed.
            s.send(.dragChanged(row: g, dx: L(50))) { $0[g] = dragging(L(50)) }
            s.send(.released(row: g, dx: nil, vx: L(500))) { $0[g] = open(L(140)) }
            s.send(.close(row: g)) { $0[g] = nil }
            s.send(.open(row: g, edge: .trailing)) { $0[g] = open(T(70)) }
            s.send(.dragChanged(row: g, dx: T(130)), [crossed(g, .full, .out)]) {
                $0[g] = dragging(T(200), from: T(70))
            }
            s.send(
                .released(row: g, dx: nil, vx: nil),
                [.fire(row: g, action: "delete"), .schedule(.close(row: g), after: 0.5)]
            ) {
                $0[g] = fired(T(390))
            }
            s.send(.dragChanged(row: g, dx: L(10)))  // fired: the finger is ignored
            s.send(.timerFired(row: g)) { $0[g] = nil }
        }
    }

    func testRule12_theFullSwipeThresholdOnlyWhereFullSwipeIsAllowed() {
        var layout = MovieLayout.standard
        layout.allowsFullSwipeLeading = false
        each(layout) { s, L, T in
            // Clamped at L·W = 140: past 0.8·W, never a full swipe.
            s.send(.dragChanged(row: g, dx: L(300)), [crossed(g, .open, .out)]) { $0[g] = dragging(L(140)) }
            s.send(
                .dragChanged(row: g, dx: T(300)),
                [crossed(g, .open, .back), crossed(g, .open, .out), crossed(g, .full, .out)]
            ) {
                $0[g] = dragging(T(300))
            }
        }
    }

    func testRule12_aNarrowRowIsPastFullBeforeOpen() {
        // R 100: the full-swipe threshold (50) comes before the open one (56); each is its own.
        each(width: 100) { s, L, T in
            s.send(.dragChanged(row: g, dx: L(52)), [crossed(g, .full, .out)]) { $0[g] = dragging(L(52)) }
            s.send(.dragChanged(row: g, dx: L(60)), [crossed(g, .open, .out)]) { $0[g] = dragging(L(60)) }
            s.send(.dragChanged(row: g, dx: L(40)), [crossed(g, .full, .back), crossed(g, .open, .back)]) {
                $0[g] = dragging(L(40))
            }
        }
    }

    func testRule12_anEdgeWithoutButtonsIsNeverCrossed() {
        let layout = Layout(trailing: MovieLayout.standard.trailing)
        each(layout) { s, L, T in
            s.send(.dragChanged(row: g, dx: L(300))) { $0[g] = dragging(0) }
            s.send(.dragChanged(row: g, dx: T(300)), [crossed(g, .open, .out), crossed(g, .full, .out)]) {
                $0[g] = dragging(T(300))
            }
        }
    }

    /// The daemon's drag path gives the same crossings, as a value, without the effects array.
    func testRule12_dragThenGeometryCarriesTheCrossings() {
        var list = SwipeList(layout: MovieLayout.standard)
        list.reportsCrossings = true
        var got = list.dragThenGeometry(of: g, dx: 100)
        XCTAssertEqual(got.effects, [])
        XCTAssertEqual(Array(got.crossings), [Crossing(.open, .out)])
        got = list.dragThenGeometry(of: g, dx: -300)
        XCTAssertEqual(
            Array(got.crossings),
            [Crossing(.open, .back), Crossing(.open, .out), Crossing(.full, .out)])
        XCTAssertEqual(got.geometry, list.geometry(g))
        XCTAssertFalse(got.scroll)
        got = list.dragThenGeometry(of: g, dx: -250)
        XCTAssertTrue(got.crossings.isEmpty)
        XCTAssertEqual(Crossings([Crossing(.full, .back)]).count, 1)
    }
}

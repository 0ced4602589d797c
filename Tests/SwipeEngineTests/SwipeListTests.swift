import Movies
import SwipeEngine
import XCTest

/// Every rule of Rules.swift with the seed's numbers (W 70, R 390, movie layout: L 2, T 1), in
/// both directions. `L(x)` / `T(x)` turn a logical extent toward the leading / trailing edge into
/// the physical offset (or dx, or vx) for the direction under test.
final class SwipeListTests: XCTestCase {
    let g = "godfather"
    let h = "heat"

    /// Runs `body` once per direction with the sign helpers.
    func each(
        _ layout: Layout = MovieLayout.standard,
        _ body: (inout TestStore, _ L: (Double) -> Double, _ T: (Double) -> Double) -> Void
    ) {
        for direction in Direction.allCases {
            var store = TestStore(layout, direction: direction)
            let d = direction.sign
            body(&store, { $0 * d }, { -$0 * d })
        }
    }

    // MARK: Rule 1: minimum distance

    func testRule1_dragBelowMinimumDistanceChangesNothing() {
        each { s, L, T in
            s.send(.dragChanged(row: g, dx: L(9.99)))
            s.send(.dragChanged(row: g, dx: T(9.99)))
            s.send(.released(row: g, dx: nil, vx: nil))
        }
    }

    func testRule1_dragAtMinimumDistanceStartsTheGesture() {
        each { s, L, T in
            s.send(.dragChanged(row: g, dx: L(10))) { $0[g] = dragging(L(10)) }
            // Once started, small translations move the row (no minimum any more).
            s.send(.dragChanged(row: g, dx: L(3))) { $0[g] = dragging(L(3)) }
            s.send(.dragChanged(row: g, dx: T(10))) { $0[g] = dragging(T(10)) }
        }
    }

    func testRule1_openRowIgnoresSmallDragsThenContinues() {
        each { s, L, T in
            s.send(.dragChanged(row: g, dx: T(60))) { $0[g] = dragging(T(60)) }
            s.send(.released(row: g, dx: nil, vx: nil)) { $0[g] = open(T(70)) }
            s.send(.dragChanged(row: g, dx: L(9)))
            s.send(.released(row: g, dx: nil, vx: nil))
            s.send(.dragChanged(row: g, dx: L(10))) { $0[g] = dragging(T(60), from: T(70)) }
        }
    }

    // MARK: Rule 2: offset = dx + resting offset

    func testRule2_openRowContinuesFromWhereItRests() {
        each { s, L, T in
            s.send(.dragChanged(row: g, dx: L(100))) { $0[g] = dragging(L(100)) }
            s.send(.released(row: g, dx: nil, vx: nil)) { $0[g] = open(L(140)) }
            s.send(.dragChanged(row: g, dx: T(30))) { $0[g] = dragging(L(110), from: L(140)) }
            s.send(.dragChanged(row: g, dx: T(200))) { $0[g] = dragging(T(60), from: L(140)) }
            s.send(.released(row: g, dx: nil, vx: nil)) { $0[g] = open(T(70)) }
        }
    }

    // MARK: Rule 3: clamps

    func testRule3_offsetNeverExceedsRowWidth() {
        each { s, L, T in
            s.send(.dragChanged(row: g, dx: L(1000))) { $0[g] = dragging(L(390)) }
            s.send(.dragChanged(row: g, dx: T(1000))) { $0[g] = dragging(T(390)) }
        }
    }

    func testRule3_withoutFullSwipeEachEdgeStopsAtItsOwnWidth() {
        var layout = MovieLayout.standard
        layout.allowsFullSwipeLeading = false
        layout.allowsFullSwipeTrailing = false
        each(layout) { s, L, T in
            s.send(.dragChanged(row: g, dx: L(500))) { $0[g] = dragging(L(140)) }  // L·W = 2·70
            // The seed clamped with the leading width (140); the trailing width is T·W = 70.
            s.send(.dragChanged(row: g, dx: T(500))) { $0[g] = dragging(T(70)) }
        }
    }

    func testRule3_anEdgeWithoutButtonsCannotBeRevealed() {
        let layout = Layout(trailing: MovieLayout.standard.trailing)
        each(layout) { s, L, T in
            s.send(.dragChanged(row: g, dx: L(100))) { $0[g] = dragging(0) }
            s.send(.released(row: g, dx: nil, vx: L(1000))) { $0[g] = nil }
            s.send(.dragChanged(row: g, dx: T(100))) { $0[g] = dragging(T(100)) }
        }
    }

    // MARK: Rule 5: release

    func testRule5_releaseAtExactly80PercentCloses() {
        each { s, L, T in
            s.send(.dragChanged(row: g, dx: L(56))) { $0[g] = dragging(L(56)) }
            s.send(.released(row: g, dx: nil, vx: nil)) { $0[g] = nil }
            s.send(.dragChanged(row: g, dx: T(56))) { $0[g] = dragging(T(56)) }
            s.send(.released(row: g, dx: nil, vx: nil)) { $0[g] = nil }
        }
    }

    func testRule5_releasePast80PercentSnapsOpen() {
        each { s, L, T in
            s.send(.released(row: g, dx: L(56.5), vx: nil)) { $0[g] = open(L(140)) }
            s.send(.close(row: g)) { $0[g] = nil }
            s.send(.released(row: g, dx: T(56.5), vx: nil)) { $0[g] = open(T(70)) }
        }
    }

    func testRule5_releaseAtExactlyHalfTheRowOpensWithoutFiring() {
        each { s, L, T in
            s.send(.released(row: g, dx: L(195), vx: nil)) { $0[g] = open(L(140)) }
            s.send(.close(row: g)) { $0[g] = nil }
            s.send(.released(row: g, dx: T(195), vx: nil)) { $0[g] = open(T(70)) }
        }
    }

    func testRule5_fullSwipeFiresTheOutermostActionAndClosesLater() {
        each { s, L, T in
            s.send(.dragChanged(row: g, dx: L(196))) { $0[g] = dragging(L(196)) }
            s.send(
                .released(row: g, dx: nil, vx: nil),
                [.fire(row: g, action: "watched"), .schedule(.close(row: g), after: 0.5)]
            ) { $0[g] = fired(L(390)) }
            // Fired: the finger is ignored, and so are releases.
            s.send(.dragChanged(row: g, dx: T(300)))
            s.send(.released(row: g, dx: T(300), vx: T(1000)))
            s.send(.timerFired(row: g)) { $0[g] = nil }
            s.send(.timerFired(row: g))  // stale: ignored

            s.send(
                .released(row: g, dx: T(300), vx: nil),
                [.fire(row: g, action: "delete"), .schedule(.close(row: g), after: 0.5)]
            ) { $0[g] = fired(T(390)) }
            s.send(.timerFired(row: g)) { $0[g] = nil }
        }
    }

    func testRule5_noFullSwipeWhenTheEdgeDisallowsIt() {
        var layout = MovieLayout.demo000
        layout.allowsFullSwipeTrailing = false
        each(layout) { s, L, T in
            s.send(.released(row: g, dx: T(300), vx: nil)) { $0[g] = open(T(140)) }
            s.send(.close(row: g)) { $0[g] = nil }
            s.send(
                .released(row: g, dx: L(300), vx: nil),
                [.fire(row: g, action: "text"), .schedule(.close(row: g), after: 0.5)]
            ) { $0[g] = fired(L(390)) }
        }
    }

    func testRule5_releaseOfAGestureThatNeverStartedDoesNothing() {
        each { s, L, T in
            s.send(.released(row: g, dx: L(5), vx: L(5000)))
            s.send(.released(row: g, dx: T(60), vx: nil)) { $0[g] = open(T(70)) }
            s.send(.released(row: g, dx: L(5), vx: L(5000)))  // touch on the open row: stays open
        }
    }

    // MARK: Rule 6: velocity

    func testRule6_flickTowardTheEdgeOpensBelowTheThreshold() {
        each { s, L, T in
            s.send(.released(row: g, dx: L(20), vx: L(300))) { $0[g] = open(L(140)) }
            s.send(.close(row: g)) { $0[g] = nil }
            s.send(.released(row: g, dx: T(20), vx: T(300))) { $0[g] = open(T(70)) }
            s.send(.close(row: g)) { $0[g] = nil }
            s.send(.released(row: g, dx: T(20), vx: T(299.9))) { $0[g] = nil }
        }
    }

    func testRule6_flickBackTowardClosedCloses() {
        each { s, L, T in
            s.send(.released(row: g, dx: L(100), vx: T(300))) { $0[g] = nil }
            s.send(.released(row: g, dx: T(100), vx: L(300))) { $0[g] = nil }
            // Even from a full swipe: the flick back cancels it.
            s.send(.released(row: g, dx: T(300), vx: L(300))) { $0[g] = nil }
            // A slow move back does not: rule 5 decides.
            s.send(.released(row: g, dx: T(100), vx: L(299))) { $0[g] = open(T(70)) }
        }
    }

    func testRule6_flickTowardTheEdgeInFullSwipeFires() {
        each { s, L, T in
            s.send(
                .released(row: g, dx: L(200), vx: L(800)),
                [.fire(row: g, action: "watched"), .schedule(.close(row: g), after: 0.5)]
            ) { $0[g] = fired(L(390)) }
        }
    }

    // MARK: Rule 7: taps

    func testRule7_tapOnARevealedButtonFiresAndCloses() {
        each { s, L, T in
            s.send(.released(row: g, dx: T(60), vx: nil)) { $0[g] = open(T(70)) }
            s.send(.tapped(row: g, action: "delete"), [.fire(row: g, action: "delete")]) { $0[g] = nil }
            s.send(.released(row: g, dx: L(100), vx: nil)) { $0[g] = open(L(140)) }
            s.send(
                .tapped(row: g, action: "watched-with-friends"),
                [.fire(row: g, action: "watched-with-friends")]
            ) { $0[g] = nil }
            // While dragging, the buttons that show can be tapped too.
            s.send(.dragChanged(row: g, dx: L(40))) { $0[g] = dragging(L(40)) }
            s.send(.tapped(row: g, action: "watched"), [.fire(row: g, action: "watched")]) { $0[g] = nil }
        }
    }

    func testRule7_tapOnAButtonThatIsNotShowingIsAnError() {
        each { s, L, T in
            s.fail(.tapped(row: g, action: "delete"), .notRevealed(row: g, action: "delete"))
            s.send(.released(row: g, dx: T(60), vx: nil)) { $0[g] = open(T(70)) }
            s.fail(.tapped(row: g, action: "watched"), .notRevealed(row: g, action: "watched"))
            s.fail(.tapped(row: g, action: "play"), .unknownAction(row: g, action: "play"))
            // In full swipe only the outermost button shows.
            s.send(.dragChanged(row: g, dx: L(270))) { $0[g] = dragging(L(200), from: T(70)) }
            s.fail(
                .tapped(row: g, action: "watched-with-friends"),
                .notRevealed(row: g, action: "watched-with-friends"))
            // Dragged back to exactly 0: nothing shows.
            s.send(.dragChanged(row: g, dx: L(70))) { $0[g] = dragging(0, from: T(70)) }
            s.fail(.tapped(row: g, action: "delete"), .notRevealed(row: g, action: "delete"))
        }
    }

    func testRule7_tapWhileFiredIsRefusedEvenOnTheShowingButton() {
        each { s, L, T in
            s.send(
                .released(row: g, dx: T(300), vx: nil),
                [.fire(row: g, action: "delete"), .schedule(.close(row: g), after: 0.5)]
            ) { $0[g] = fired(T(390)) }
            // At most one fire per gesture: the button still shows, but takes no tap.
            s.fail(.tapped(row: g, action: "delete"), .firing(row: g, action: "delete"))
            s.fail(.tapped(row: g, action: "watched"), .notRevealed(row: g, action: "watched"))
        }
    }

    // MARK: Rule 8: one open row per list

    func testRule8_startingToDragAnotherRowClosesTheOpenOne() {
        each { s, L, T in
            s.send(.released(row: g, dx: T(60), vx: nil)) { $0[g] = open(T(70)) }
            s.send(.dragChanged(row: h, dx: L(9)))  // not started yet: g stays open
            s.send(.dragChanged(row: h, dx: L(10)), [.closed(row: g)]) {
                $0[g] = nil
                $0[h] = dragging(L(10))
            }
            s.send(.released(row: h, dx: nil, vx: nil)) { $0[h] = nil }
        }
    }

    func testRule8_closesADraggingRowButLeavesAFiredOneAlone() {
        each { s, L, T in
            s.send(
                .released(row: g, dx: T(300), vx: nil),
                [.fire(row: g, action: "delete"), .schedule(.close(row: g), after: 0.5)]
            ) { $0[g] = fired(T(390)) }
            s.send(.dragChanged(row: "a", dx: L(20))) { $0["a"] = dragging(L(20)) }
            // One row moves at a time: a second finger's gesture closes the first row.
            s.send(.dragChanged(row: h, dx: L(20)), [.closed(row: "a")]) {
                $0["a"] = nil
                $0[h] = dragging(L(20))
            }
            s.send(.released(row: "a", dx: nil, vx: nil))
        }
    }

    func testRule8_closesOnlyOtherRows() {
        each { s, L, T in
            // At most one row is open or dragging at any time, so a start closes at most one.
            s.send(.released(row: "b", dx: T(60), vx: nil)) { $0["b"] = open(T(70)) }
            s.send(.dragChanged(row: "a", dx: T(60)), [.closed(row: "b")]) {
                $0 = ["a": dragging(T(60))]
            }
            s.send(.released(row: "b", dx: T(60), vx: nil), [.closed(row: "a")]) {
                $0 = ["b": open(T(70))]
            }
            s.send(.dragChanged(row: "c", dx: T(10)), [.closed(row: "b")]) {
                $0 = ["c": dragging(T(10))]
            }
            // A new gesture on the open row itself does not close it.
            s.send(.released(row: "c", dx: nil, vx: nil)) { $0["c"] = nil }
            s.send(.released(row: "c", dx: T(60), vx: nil)) { $0["c"] = open(T(70)) }
            s.send(.dragChanged(row: "c", dx: L(10))) { $0["c"] = dragging(T(60), from: T(70)) }
        }
    }

    // MARK: Rule 9: removing a row

    func testRule9_removingARowDropsItsState() {
        each { s, L, T in
            s.send(.rowRemoved(row: g))
            s.send(.released(row: g, dx: T(60), vx: nil)) { $0[g] = open(T(70)) }
            s.send(.rowRemoved(row: g)) { $0[g] = nil }
            s.send(
                .released(row: g, dx: T(300), vx: nil),
                [.fire(row: g, action: "delete"), .schedule(.close(row: g), after: 0.5)]
            ) { $0[g] = fired(T(390)) }
            s.send(.rowRemoved(row: g), [.cancel(.close(row: g))]) { $0[g] = nil }
            s.send(.timerFired(row: g))
        }
    }

    // MARK: close, reconfigure, bad numbers

    func testCloseOneRow() {
        each { s, L, T in
            s.send(.close(row: g))  // closed: no-op
            s.send(.dragChanged(row: g, dx: L(30))) { $0[g] = dragging(L(30)) }
            s.send(.close(row: g)) { $0[g] = nil }
            s.send(
                .released(row: g, dx: L(300), vx: nil),
                [.fire(row: g, action: "watched"), .schedule(.close(row: g), after: 0.5)]
            ) { $0[g] = fired(L(390)) }
            s.send(.close(row: g), [.cancel(.close(row: g))]) { $0[g] = nil }
        }
    }

    func testCloseEveryRow() {
        each { s, L, T in
            s.send(.close(row: nil))
            s.send(
                .released(row: h, dx: T(300), vx: nil),
                [.fire(row: h, action: "delete"), .schedule(.close(row: h), after: 0.5)]
            ) { $0[h] = fired(T(390)) }
            s.send(.released(row: g, dx: T(60), vx: nil)) { $0[g] = open(T(70)) }
            s.send(.dragChanged(row: "a", dx: L(30)), [.closed(row: g)]) {
                $0[g] = nil
                $0["a"] = dragging(L(30))
            }
            s.send(.released(row: g, dx: T(60), vx: nil), [.closed(row: "a")]) {
                $0["a"] = nil
                $0[g] = open(T(70))
            }
            s.send(.dragChanged(row: "a", dx: L(30)), [.closed(row: g)]) {
                $0[g] = nil
                $0["a"] = dragging(L(30))
            }
            s.send(
                .close(row: nil),
                [.closed(row: "a"), .closed(row: h), .cancel(.close(row: h))]
            ) { $0 = [:] }
        }
    }

    func testNonFiniteNumbersAreIgnored() {
        each { s, L, T in
            s.send(.dragChanged(row: g, dx: .nan))
            s.send(.dragChanged(row: g, dx: .infinity))
            s.send(.dragChanged(row: g, dx: L(30))) { $0[g] = dragging(L(30)) }
            s.send(.dragChanged(row: g, dx: .nan))
            s.send(.released(row: g, dx: .nan, vx: .nan)) { $0[g] = nil }  // 30 < 56: closes
        }
    }

    func testReconfigureClosesEveryRowAndSaysSo() {
        var list = SwipeList(layout: MovieLayout.standard)
        XCTAssertEqual(try list.send(.released(row: "b", dx: -300, vx: nil)).count, 2)
        XCTAssertEqual(try list.send(.released(row: "a", dx: 60, vx: nil)), [])
        XCTAssertEqual(list.openRows, ["a", "b"])
        XCTAssertEqual(list.reconfigure(layout: MovieLayout.standard), [])  // no change
        XCTAssertEqual(list.openRows, ["a", "b"])
        XCTAssertEqual(
            list.reconfigure(viewport: Viewport(width: 320, direction: .rtl)),
            [.closed(row: "a"), .closed(row: "b"), .cancel(.close(row: "b"))])
        XCTAssertEqual(list.trackedRows, [:])
        XCTAssertEqual(list.viewport, Viewport(width: 320, direction: .rtl))
        XCTAssertEqual(try list.send(.released(row: "a", dx: 60, vx: nil)), [])
        list.layout = MovieLayout.demo000  // plain assignment: closes silently
        XCTAssertEqual(list.trackedRows, [:])
        XCTAssertEqual(list.layout, MovieLayout.demo000)
    }

    func testStateOfAnUntrackedRowIsClosed() {
        let list = SwipeList()
        XCTAssertEqual(list.state(of: "x"), .closed)
        XCTAssertEqual(list.state(of: "x").phase, .closed)
        XCTAssertFalse(list.state(of: "x").started)
        XCTAssertTrue(dragging(5).started)
        XCTAssertFalse(open(70).started)
    }
}

final class InputTests: XCTestCase {
    func testRowNamedByAnInput() {
        XCTAssertEqual(Input.dragChanged(row: "a", dx: 1).row, "a")
        XCTAssertEqual(Input.released(row: "b", dx: nil, vx: nil).row, "b")
        XCTAssertEqual(Input.tapped(row: "c", action: "x").row, "c")
        XCTAssertEqual(Input.close(row: "d").row, "d")
        XCTAssertNil(Input.close(row: nil).row)
        XCTAssertEqual(Input.timerFired(row: "e").row, "e")
        XCTAssertEqual(Input.rowRemoved(row: "f").row, "f")
    }
}

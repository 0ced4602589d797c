import Movies
import SwipeEngine
import XCTest

/// Rules 10 (confirm) and 11 (open and perform on command), exhaustively, with the seed's numbers
/// (W 70, R 390) and the movie layout where `delete` (trailing, outermost) and
/// `watched-with-friends` (leading, inner) ask to confirm, in both directions.
final class SwipeListConfirmTests: XCTestCase {
    let g = "godfather"
    let h = "heat"

    /// The movie layout, with `delete` confirmed as "Delete?" and `watched-with-friends` with
    /// the default label.
    static let layout: Layout = {
        var layout = MovieLayout.standard
        layout.trailing[0].confirm = true
        layout.trailing[0].confirmLabel = "Delete?"
        layout.leading[1].confirm = true
        return layout
    }()

    func each(
        _ layout: Layout = SwipeListConfirmTests.layout,
        _ body: (inout TestStore, _ L: (Double) -> Double, _ T: (Double) -> Double) -> Void
    ) {
        for direction in Direction.allCases {
            var store = TestStore(layout, direction: direction)
            let d = direction.sign
            body(&store, { $0 * d }, { -$0 * d })
        }
    }

    /// The effects of a confirmation starting on `row` for `action`.
    func pending(_ row: RowID, _ action: String) -> [Effect] {
        [.pending(row: row, action: action), .schedule(.confirmTimeout(row: row), after: 3)]
    }

    func cancel(_ row: RowID) -> Effect { .cancel(.confirmTimeout(row: row)) }

    // MARK: Rule 10: where a confirmed action would fire, the row asks first

    func testRule10_fullSwipeReleaseConfirmsInsteadOfFiring() {
        each { s, L, T in
            s.send(.dragChanged(row: g, dx: T(300))) { $0[g] = dragging(T(300)) }
            s.send(.released(row: g, dx: nil, vx: nil), pending(g, "delete")) {
                $0[g] = confirming(T(70), 0)
            }
            // A full swipe of an edge whose outermost action does not confirm fires as before.
            s.send(.close(row: g), [cancel(g)]) { $0[g] = nil }
            s.send(
                .released(row: g, dx: L(300), vx: nil),
                [.fire(row: g, action: "watched"), .schedule(.close(row: g), after: 0.5)]
            ) { $0[g] = fired(L(390)) }
        }
    }

    func testRule10_velocityReleaseConfirmsToo() {
        each { s, L, T in
            // Past R/2 by a flick's decision (rule 6), not by the 0.8·W threshold alone.
            s.send(.dragChanged(row: g, dx: T(200))) { $0[g] = dragging(T(200)) }
            s.send(.released(row: g, dx: nil, vx: T(500)), pending(g, "delete")) {
                $0[g] = confirming(T(70), 0)
            }
        }
    }

    func testRule10_tapOnAConfirmedButtonConfirmsThenASecondTapFires() {
        each { s, L, T in
            s.send(.released(row: g, dx: L(100), vx: nil)) { $0[g] = open(L(140)) }
            s.send(.tapped(row: g, action: "watched-with-friends"), pending(g, "watched-with-friends")) {
                $0[g] = confirming(L(140), 1)
            }
            s.send(
                .tapped(row: g, action: "watched-with-friends"),
                [.fire(row: g, action: "watched-with-friends"), cancel(g)]
            ) { $0[g] = nil }
            // Trailing: the only button, confirmed by a tap on it.
            s.send(.released(row: g, dx: T(60), vx: nil)) { $0[g] = open(T(70)) }
            s.send(.tapped(row: g, action: "delete"), pending(g, "delete")) { $0[g] = confirming(T(70), 0) }
            s.send(.tapped(row: g, action: "delete"), [.fire(row: g, action: "delete"), cancel(g)]) {
                $0[g] = nil
            }
        }
    }

    func testRule10_theConfirmingRowRendersOneButtonWithTheConfirmLabel() {
        for direction in Direction.allCases {
            var list = SwipeList(layout: Self.layout, viewport: Viewport(direction: direction))
            let d = direction.sign
            _ = try? list.send(.released(row: g, dx: -300 * d, vx: nil))
            let r = list.render(g, flags: [])
            XCTAssertEqual(r.phase, .confirming)
            XCTAssertEqual(r.offset, -70 * d)
            XCTAssertEqual(r.edge, .trailing)
            XCTAssertFalse(r.fullSwipe)
            let x: Double = direction == .ltr ? 320 : 0
            XCTAssertEqual(
                r.buttons,
                [
                    ButtonRender(
                        action: "delete", label: "Delete?", icon: nil, tint: "red", role: .destructive, x: x,
                        width: 70)
                ])
            XCTAssertEqual(r.spring, SpringHint(target: -70 * d, response: 0.5, dampingFraction: 0.85))
            XCTAssertEqual(r.accessibilityActions.count, 3)
            // The inner leading action: one button across the whole leading strip, "Confirm".
            _ = list.close(row: g)
            _ = try? list.send(.perform(row: g, action: "watched-with-friends"))
            let l = list.render(g, flags: [])
            XCTAssertEqual(l.phase, .confirming)
            XCTAssertEqual(
                l.buttons,
                [
                    ButtonRender(
                        action: "watched-with-friends", label: "Confirm", icon: nil, tint: "indigo",
                        role: nil,
                        x: direction == .ltr ? 0 : 250, width: 140)
                ])
            XCTAssertEqual(list.geometry(g).shape.shown, 1)
            XCTAssertEqual(list.geometry(g).shape.pending, 1)
        }
    }

    func testRule10_anyOtherInputOnTheRowCancels() {
        each { s, L, T in
            func confirm(_ s: inout TestStore) {
                s.send(.released(row: g, dx: T(300), vx: nil), pending(g, "delete")) {
                    $0[g] = confirming(T(70), 0)
                }
            }
            confirm(&s)  // a drag, even below the minimum distance
            s.send(.dragChanged(row: g, dx: L(1)), [cancel(g)]) { $0[g] = nil }
            s.send(.dragChanged(row: g, dx: L(1)))  // and only cancels: no gesture starts
            confirm(&s)  // a release
            s.send(.released(row: g, dx: nil, vx: nil), [cancel(g)]) { $0[g] = nil }
            confirm(&s)
            s.send(.released(row: g, dx: T(300), vx: nil), [cancel(g)]) { $0[g] = nil }
            confirm(&s)  // a close
            s.send(.close(row: g), [cancel(g)]) { $0[g] = nil }
            confirm(&s)  // a tap elsewhere (another action, not showing)
            s.send(.tapped(row: g, action: "watched"), [cancel(g)]) { $0[g] = nil }
            confirm(&s)  // an action the layout does not have is still an error
            s.fail(.tapped(row: g, action: "play"), .unknownAction(row: g, action: "play"))
            s.fail(.perform(row: g, action: "play"), .unknownAction(row: g, action: "play"))
            s.send(.rowRemoved(row: g), [cancel(g)]) { $0[g] = nil }  // its removal
            confirm(&s)  // the timer
            s.send(.confirmTimedOut(row: g)) { $0[g] = nil }
            s.send(.confirmTimedOut(row: g))  // stale: ignored
            s.send(.timerFired(row: g))
        }
    }

    func testRule10_anotherRowsGestureCancels() {
        each { s, L, T in
            s.send(.released(row: g, dx: T(300), vx: nil), pending(g, "delete")) {
                $0[g] = confirming(T(70), 0)
            }
            s.send(.dragChanged(row: h, dx: L(9)))  // not started: g keeps waiting
            s.send(.dragChanged(row: h, dx: L(10)), [.closed(row: g), cancel(g)]) {
                $0[g] = nil
                $0[h] = dragging(L(10))
            }
            // Confirming h closes the dragging g... and a fired row is left alone.
            s.send(
                .released(row: g, dx: L(300), vx: nil),
                [.closed(row: h), .fire(row: g, action: "watched"), .schedule(.close(row: g), after: 0.5)]
            ) {
                $0[h] = nil
                $0[g] = fired(L(390))
            }
            s.send(.perform(row: h, action: "delete"), pending(h, "delete")) { $0[h] = confirming(T(70), 0) }
            s.send(.close(row: nil), [.closed(row: g), .closed(row: h), .cancel(.close(row: g)), cancel(h)]) {
                $0 = [:]
            }
        }
    }

    func testRule10_confirmationClosesTheOtherOpenRow() {
        each { s, L, T in
            s.send(.released(row: h, dx: L(100), vx: nil)) { $0[h] = open(L(140)) }
            s.send(.perform(row: g, action: "delete"), [.closed(row: h)] + pending(g, "delete")) {
                $0[h] = nil
                $0[g] = confirming(T(70), 0)
            }
        }
    }

    func testRule10_reconfigureCancelsAConfirmation() {
        var list = SwipeList(layout: Self.layout)
        XCTAssertEqual(try list.send(.perform(row: "a", action: "delete")), pending("a", "delete"))
        XCTAssertEqual(list.reconfigure(layout: MovieLayout.standard), [.closed(row: "a"), cancel("a")])
        XCTAssertEqual(list.trackedRows, [:])
    }

    // MARK: Rule 11: open and perform on command

    func testRule11_openOpensAtTheSnapOffsetAndClosesTheOthers() {
        each { s, L, T in
            s.send(.open(row: g, edge: .leading)) { $0[g] = open(L(140)) }
            s.send(.open(row: g, edge: .leading))  // already open there: unchanged
            s.send(.open(row: g, edge: .trailing)) { $0[g] = open(T(70)) }
            s.send(.open(row: h, edge: .trailing), [.closed(row: g)]) {
                $0[g] = nil
                $0[h] = open(T(70))
            }
            // A dragging row opens too, its gesture over.
            s.send(.dragChanged(row: g, dx: L(30)), [.closed(row: h)]) {
                $0[h] = nil
                $0[g] = dragging(L(30))
            }
            s.send(.open(row: g, edge: .trailing)) { $0[g] = open(T(70)) }
            s.send(.dragChanged(row: g, dx: L(10))) { $0[g] = dragging(T(60), from: T(70)) }
        }
    }

    func testRule11_openLeavesAFiredRowAndCancelsAConfirmingOne() {
        each { s, L, T in
            s.send(
                .released(row: g, dx: L(300), vx: nil),
                [.fire(row: g, action: "watched"), .schedule(.close(row: g), after: 0.5)]
            ) { $0[g] = fired(L(390)) }
            s.send(.open(row: g, edge: .trailing))
            s.send(.timerFired(row: g)) { $0[g] = nil }
            s.send(.open(row: h, edge: .leading)) { $0[h] = open(L(140)) }
            s.send(.perform(row: g, action: "delete"), [.closed(row: h)] + pending(g, "delete")) {
                $0[h] = nil
                $0[g] = confirming(T(70), 0)
            }
            s.send(.open(row: g, edge: .leading), [cancel(g)]) { $0[g] = open(L(140)) }
        }
    }

    func testRule11_openOnAnEdgeWithoutButtonsIsAnError() {
        each(Layout(trailing: MovieLayout.standard.trailing)) { s, L, T in
            s.fail(.open(row: g, edge: .leading), .noButtons(row: g, edge: .leading))
            s.send(.open(row: g, edge: .trailing)) { $0[g] = open(T(70)) }
            s.fail(.open(row: g, edge: .leading), .noButtons(row: g, edge: .leading))
        }
    }

    func testRule11_performFiresAnyActionWhetherItShowsOrNot() {
        each { s, L, T in
            s.send(.perform(row: g, action: "watched"), [.fire(row: g, action: "watched")])  // closed
            s.send(.open(row: g, edge: .trailing)) { $0[g] = open(T(70)) }
            s.send(.perform(row: g, action: "watched"), [.fire(row: g, action: "watched")]) { $0[g] = nil }
            s.send(.dragChanged(row: g, dx: L(30))) { $0[g] = dragging(L(30)) }
            s.send(.perform(row: g, action: "watched"), [.fire(row: g, action: "watched")]) { $0[g] = nil }
            s.fail(.perform(row: g, action: "play"), .unknownAction(row: g, action: "play"))
            // A fired row fires at most once.
            s.send(
                .released(row: g, dx: L(300), vx: nil),
                [.fire(row: g, action: "watched"), .schedule(.close(row: g), after: 0.5)]
            ) { $0[g] = fired(L(390)) }
            s.fail(.perform(row: g, action: "watched"), .firing(row: g, action: "watched"))
            s.fail(.perform(row: g, action: "delete"), .firing(row: g, action: "delete"))
        }
    }

    func testRule11_performConfirmsThenConfirmsOrPerformsAnotherAction() {
        each { s, L, T in
            s.send(.perform(row: g, action: "delete"), pending(g, "delete")) { $0[g] = confirming(T(70), 0) }
            s.send(.perform(row: g, action: "delete"), [.fire(row: g, action: "delete"), cancel(g)]) {
                $0[g] = nil
            }
            // Another action while confirming: the confirmation is cancelled, the other performed.
            s.send(.perform(row: g, action: "delete"), pending(g, "delete")) { $0[g] = confirming(T(70), 0) }
            s.send(.perform(row: g, action: "watched"), [cancel(g), .fire(row: g, action: "watched")]) {
                $0[g] = nil
            }
            s.send(.perform(row: g, action: "delete"), pending(g, "delete")) { $0[g] = confirming(T(70), 0) }
            s.send(
                .perform(row: g, action: "watched-with-friends"),
                [cancel(g)] + pending(g, "watched-with-friends")
            ) { $0[g] = confirming(L(140), 1) }
            // A tap confirms what a perform started.
            s.send(
                .tapped(row: g, action: "watched-with-friends"),
                [.fire(row: g, action: "watched-with-friends"), cancel(g)]
            ) { $0[g] = nil }
        }
    }

    func testInputsNameTheirRow() {
        XCTAssertEqual(Input.open(row: "a", edge: .leading).row, "a")
        XCTAssertEqual(Input.perform(row: "b", action: "x").row, "b")
        XCTAssertEqual(Input.confirmTimedOut(row: "c").row, "c")
    }
}

func confirming(_ offset: Double, _ pending: Int) -> RowState {
    RowState(offset: offset, restingOffset: offset, phase: .confirming, pending: pending)
}

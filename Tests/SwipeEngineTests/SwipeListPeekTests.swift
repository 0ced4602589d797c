import Movies
import SwipeEngine
import XCTest

/// Rule 14 (peek), exhaustively: a peek shows the row's buttons at half its edge's open offset
/// and springs back on its timer, firing nothing. The movie layout (W 70, R 390: leading open
/// at 140, peeking at 70; trailing open at 70, peeking at 35), in both directions.
final class SwipeListPeekTests: XCTestCase {
    let g = "godfather"
    let h = "heat"

    func each(
        _ layout: Layout = MovieLayout.standard, crossings: Bool = false,
        _ body: (inout TestStore, _ L: (Double) -> Double, _ T: (Double) -> Double) -> Void
    ) {
        for direction in Direction.allCases {
            var store = TestStore(layout, direction: direction, crossings: crossings)
            let d = direction.sign
            body(&store, { $0 * d }, { -$0 * d })
        }
    }

    let timer: (RowID) -> Effect = { .schedule(.close(row: $0), after: 0.6) }
    let cancel: (RowID) -> Effect = { .cancel(.close(row: $0)) }

    func testRule14_aPeekShowsHalfTheButtonsAndItsTimerClosesIt() {
        each { s, L, T in
            s.send(.peek(row: g, edge: .leading), [timer(g)]) { $0[g] = peeking(L(70)) }
            let render = s.list.render(g, flags: [])
            XCTAssertEqual(render.phase, .peeking)
            XCTAssertEqual(render.edge, .leading)
            XCTAssertFalse(render.fullSwipe)
            XCTAssertEqual(render.buttons.map(\.width), [35, 35])  // both buttons, half shown
            XCTAssertEqual(render.spring.target, L(70))
            XCTAssertEqual(render.spring.response, Rules.settleSpring.response)
            s.send(.timerFired(row: g)) { $0[g] = nil }
            s.send(.timerFired(row: g))  // stale: ignored
            s.send(.peek(row: g, edge: .trailing), [timer(g)]) { $0[g] = peeking(T(35)) }
            s.send(.timerFired(row: g)) { $0[g] = nil }
        }
    }

    func testRule14_withoutAnEdgeTrailingFirstThenLeading() {
        each { s, L, T in
            s.send(.peek(row: g), [timer(g)]) { $0[g] = peeking(T(35)) }
        }
        each(Layout(leading: MovieLayout.standard.leading)) { s, L, T in
            s.send(.peek(row: g), [timer(g)]) { $0[g] = peeking(L(70)) }
            s.fail(.peek(row: h, edge: .trailing), .noButtons(row: h, edge: .trailing))
        }
        each(Layout()) { s, L, T in
            s.fail(.peek(row: g), .noButtons(row: g, edge: .trailing))
            s.fail(.peek(row: g, edge: .leading), .noButtons(row: g, edge: .leading))
        }
    }

    func testRule14_aPeekClosesTheOtherRowsAsRule8DoesButNotAFiredOne() {
        var layout = MovieLayout.standard
        layout.trailing[0].confirm = true
        each(layout) { s, L, T in
            s.send(
                .released(row: "f", dx: L(300), vx: nil),
                [.fire(row: "f", action: "watched"), .schedule(.close(row: "f"), after: 0.5)]
            ) {
                $0["f"] = fired(L(390))
            }
            s.send(
                .perform(row: h, action: "delete"),
                [.pending(row: h, action: "delete"), .schedule(.confirmTimeout(row: h), after: 3)]
            ) {
                $0[h] = confirming(T(70), 0)
            }
            s.send(
                .peek(row: g, edge: .leading), [.closed(row: h), .cancel(.confirmTimeout(row: h)), timer(g)]
            ) {
                $0[h] = nil
                $0[g] = peeking(L(70))
            }
            // Another row's gesture closes the peeking one and cancels its timer (rule 8).
            s.send(.dragChanged(row: h, dx: T(20)), [.closed(row: g), cancel(g)]) {
                $0[g] = nil
                $0[h] = dragging(T(20))
            }
            s.send(.peek(row: g), [.closed(row: h), timer(g)]) {
                $0[h] = nil
                $0[g] = peeking(T(35))
            }
        }
    }

    func testRule14_aPeekOfAPeekingRowStartsAgain() {
        each { s, L, T in
            s.send(.peek(row: g), [timer(g)]) { $0[g] = peeking(T(35)) }
            s.send(.peek(row: g, edge: .leading), [cancel(g), timer(g)]) { $0[g] = peeking(L(70)) }
        }
    }

    func testRule14_aPeekOfARowThatShowsItsButtonsOrIsBusyDoesNothing() {
        var layout = MovieLayout.standard
        layout.trailing[0].confirm = true
        layout.fullSwipeStyleLeading = .dismiss
        each(layout) { s, L, T in
            s.send(.open(row: g, edge: .leading)) { $0[g] = open(L(140)) }
            s.send(.peek(row: g))
            s.send(.dragChanged(row: g, dx: T(20))) { $0[g] = dragging(L(120), from: L(140)) }
            s.send(.peek(row: g))
            s.send(
                .perform(row: h, action: "delete"),
                [
                    .closed(row: g), .pending(row: h, action: "delete"),
                    .schedule(.confirmTimeout(row: h), after: 3),
                ]
            ) {
                $0[g] = nil
                $0[h] = confirming(T(70), 0)
            }
            s.send(.peek(row: h))
            s.send(
                .released(row: g, dx: L(300), vx: nil),
                [
                    .closed(row: h), .cancel(.confirmTimeout(row: h)), .fire(row: g, action: "watched"),
                    .schedule(.close(row: g), after: 3),
                ]
            ) {
                $0[h] = nil
                $0[g] = dismissed(L(390))
            }
            s.send(.peek(row: g))
            s.send(.peek(row: h, edge: .leading), [timer(h)]) { $0[h] = peeking(L(70)) }  // g left alone
        }
    }

    func testRule14_whilePeekingTheFingerTakesOverFromZero() {
        each(crossings: true) { s, L, T in
            s.send(.peek(row: g, edge: .leading), [timer(g)]) { $0[g] = peeking(L(70)) }
            s.send(.dragChanged(row: g, dx: L(9)))  // below the minimum distance: the peek goes on
            s.send(.released(row: g, dx: nil, vx: nil))  // no gesture started: nothing to end
            // Past it: the peek's timer goes, and the gesture starts from 0, not from the peek's
            // 70 (crossings count from 0 too).
            s.send(.dragChanged(row: g, dx: L(60)), [cancel(g), .crossed(row: g, Crossing(.open, .out))]) {
                $0[g] = dragging(L(60))
            }
            s.send(.released(row: g, dx: nil, vx: nil)) { $0[g] = open(L(140)) }
        }
    }

    func testRule14_aPeekOffersNoButtonAndEndsForOpenPerformCloseAndRemoval() {
        each { s, L, T in
            s.send(.peek(row: g, edge: .leading), [timer(g)]) { $0[g] = peeking(L(70)) }
            s.fail(.tapped(row: g, action: "watched"), .notRevealed(row: g, action: "watched"))
            s.fail(.tapped(row: g, action: "bogus"), .unknownAction(row: g, action: "bogus"))
            s.send(.open(row: g, edge: .trailing), [cancel(g)]) { $0[g] = open(T(70)) }
            s.send(.peek(row: g))  // open: nothing to hint
            s.send(.close(row: g)) { $0[g] = nil }
            s.send(.peek(row: g), [timer(g)]) { $0[g] = peeking(T(35)) }
            s.send(.perform(row: g, action: "watched"), [cancel(g), .fire(row: g, action: "watched")]) {
                $0[g] = nil
            }
            s.send(.peek(row: g), [timer(g)]) { $0[g] = peeking(T(35)) }
            s.send(.close(row: g), [cancel(g)]) { $0[g] = nil }
            s.send(.peek(row: g), [timer(g)]) { $0[g] = peeking(T(35)) }
            s.send(.rowRemoved(row: g), [cancel(g)]) { $0[g] = nil }
            s.send(.peek(row: g), [timer(g)]) { $0[g] = peeking(T(35)) }
            s.send(.confirmTimedOut(row: g))  // not its timer: ignored
            s.send(.close(row: nil), [.closed(row: g), cancel(g)]) { $0[g] = nil }
        }
    }

    func testRule14_aNewLayoutClosesAPeekingRowAndCancelsItsTimer() {
        var list = SwipeList(layout: MovieLayout.standard)
        XCTAssertEqual(try list.send(.peek(row: g)), [.schedule(.close(row: g), after: 0.6)])
        XCTAssertEqual(
            list.reconfigure(layout: MovieLayout.demo000), [.closed(row: g), .cancel(.close(row: g))])
        XCTAssertEqual(list.state(of: g), .closed)
    }

    func testRule14_aPeekOfAWideEdgeStopsAtHalfTheRow() {
        // Six buttons of 100 on a row of 390: open at 390 (rule 3), peeking at 195, never full.
        let actions = (1...6).map { ActionSpec(action: "a\($0)") }
        each(Layout(trailing: actions, buttonWidth: 100)) { s, L, T in
            s.send(.peek(row: g), [timer(g)]) { $0[g] = peeking(T(195)) }
            XCTAssertFalse(s.list.render(g, flags: []).fullSwipe)
        }
    }
}

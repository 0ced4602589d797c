import Movies
import SwipeEngine
import XCTest

/// Rule 13 (scroll arbitration), exhaustively: a drag that carries dy decides, when the finger
/// first passes the minimum distance on either axis, between a swipe (as without dy) and a
/// scroll (the row stays closed for the rest of the touch). The movie layout, W 70, R 390, in
/// both directions; dy is physical and the same in ltr and rtl.
final class SwipeListScrollTests: XCTestCase {
    let g = "godfather"
    let h = "heat"
    let m = "matrix"

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

    func testRule13_verticalWinsWhenDyExceedsDxAtTheMinimumDistance() {
        each { s, L, T in
            s.send(.dragChanged(row: g, dx: L(3), dy: 9.99))  // neither axis at 10: undecided
            s.send(.dragChanged(row: g, dx: L(4), dy: -10), [.scroll(row: g)], scrolling: .now(g))
            // For the rest of the touch: nothing moves, whatever the finger does.
            s.send(.dragChanged(row: g, dx: L(200), dy: -12), [.scroll(row: g)])
            s.send(.dragChanged(row: g, dx: T(300)), [.scroll(row: g)])
            s.send(.dragChanged(row: g, dx: .infinity))  // not finite: ignored as always
            // The release ends the touch, whatever its dx and vx.
            s.send(.released(row: g, dx: L(300), vx: L(1000)), [.scroll(row: g)], scrolling: .now(nil))
            // The next touch decides afresh.
            s.send(.dragChanged(row: g, dx: L(60), dy: 5)) { $0[g] = dragging(L(60)) }
        }
    }

    func testRule13_horizontalStartsTheGestureAsWithoutDy() {
        each { s, L, T in
            s.send(.dragChanged(row: g, dx: L(9.5), dy: 9.5))  // the finger has not gone 10 yet
            // A tie is horizontal (vertical must win strictly); |dx| = 10: rule 1 starts it.
            s.send(.dragChanged(row: g, dx: T(10), dy: 10)) { $0[g] = dragging(T(10)) }
            // Once started, dy is ignored.
            s.send(.dragChanged(row: g, dx: T(60), dy: 400)) { $0[g] = dragging(T(60)) }
            s.send(.released(row: g, dx: nil, vx: nil)) { $0[g] = open(T(70)) }
            // An open row: its next gesture is decided the same way, from where it rests.
            s.send(.dragChanged(row: g, dx: L(12), dy: -11)) { $0[g] = dragging(T(58), from: T(70)) }
        }
    }

    func testRule13_withoutDyADragIsHorizontal() {
        each { s, L, T in
            s.send(.dragChanged(row: g, dx: L(9)))
            s.send(.dragChanged(row: g, dx: L(10))) { $0[g] = dragging(L(10)) }
            s.send(.close(row: g)) { $0[g] = nil }
            // A dy that is not finite counts as absent.
            s.send(.dragChanged(row: g, dx: L(10), dy: .infinity)) { $0[g] = dragging(L(10)) }
            s.send(.close(row: g)) { $0[g] = nil }
            s.send(.dragChanged(row: g, dx: L(10), dy: .nan)) { $0[g] = dragging(L(10)) }
        }
    }

    func testRule13_aScrollClosesTheOtherRowsAsRule8Does() {
        var layout = MovieLayout.standard
        layout.trailing[0].confirm = true
        let f = "fired"
        let scroll: Input = .dragChanged(row: g, dx: 0, dy: 30)
        each(layout) { s, L, T in
            s.send(
                .released(row: f, dx: L(300), vx: nil),
                [.fire(row: f, action: "watched"), .schedule(.close(row: f), after: 0.5)]
            ) {
                $0[f] = fired(L(390))
            }
            s.send(
                .perform(row: h, action: "delete"),
                [.pending(row: h, action: "delete"), .schedule(.confirmTimeout(row: h), after: 3)]
            ) {
                $0[h] = confirming(T(70), 0)
            }
            // The list moves under the other rows: they close; a fired row closes on its timer.
            s.send(
                scroll, [.closed(row: h), .cancel(.confirmTimeout(row: h)), .scroll(row: g)],
                scrolling: .now(g)
            ) {
                $0[h] = nil
            }
            s.send(.released(row: g, dx: nil, vx: nil), [.scroll(row: g)], scrolling: .now(nil))
            s.send(.peek(row: m), [.schedule(.close(row: m), after: 0.6)]) { $0[m] = peeking(T(35)) }
            s.send(scroll, [.closed(row: m), .cancel(.close(row: m)), .scroll(row: g)], scrolling: .now(g)) {
                $0[m] = nil
            }
            s.send(.released(row: g, dx: nil, vx: nil), [.scroll(row: g)], scrolling: .now(nil))
            s.send(.open(row: h, edge: .leading)) { $0[h] = open(L(140)) }
            s.send(scroll, [.closed(row: h), .scroll(row: g)], scrolling: .now(g)) { $0[h] = nil }
        }
    }

    func testRule13_aScrollOnAnOpenOrPeekingRowClosesIt() {
        each { s, L, T in
            s.send(.open(row: g, edge: .leading)) { $0[g] = open(L(140)) }
            s.send(.dragChanged(row: g, dx: L(2), dy: 15), [.scroll(row: g)], scrolling: .now(g)) {
                $0[g] = nil
            }
            s.send(.released(row: g, dx: nil, vx: nil), [.scroll(row: g)], scrolling: .now(nil))
            s.send(.peek(row: g), [.schedule(.close(row: g), after: 0.6)]) { $0[g] = peeking(T(35)) }
            s.send(
                .dragChanged(row: g, dx: 0, dy: -15), [.cancel(.close(row: g)), .scroll(row: g)],
                scrolling: .now(g)
            ) {
                $0[g] = nil
            }
        }
    }

    func testRule13_aConfirmationOrAFiredRowIsNotDecidedOn() {
        var layout = MovieLayout.standard
        layout.trailing[0].confirm = true
        each(layout) { s, L, T in
            s.send(
                .perform(row: g, action: "delete"),
                [.pending(row: g, action: "delete"), .schedule(.confirmTimeout(row: g), after: 3)]
            ) {
                $0[g] = confirming(T(70), 0)
            }
            // Rule 10: any drag cancels; that drag decides nothing else.
            s.send(.dragChanged(row: g, dx: 0, dy: 50), [.cancel(.confirmTimeout(row: g))]) { $0[g] = nil }
            s.send(
                .released(row: g, dx: L(300), vx: nil),
                [.fire(row: g, action: "watched"), .schedule(.close(row: g), after: 0.5)]
            ) {
                $0[g] = fired(L(390))
            }
            s.send(.dragChanged(row: g, dx: 0, dy: 50))  // fired: the finger is ignored
        }
    }

    func testRule13_oneTouchScrollsAtATime() {
        each { s, L, T in
            s.send(.dragChanged(row: g, dx: 0, dy: 20), [.scroll(row: g)], scrolling: .now(g))
            s.send(.dragChanged(row: h, dx: 0, dy: 20), [.scroll(row: h)], scrolling: .now(h))
            // g's touch is no longer held: its next drag is decided afresh (a swipe, here).
            s.send(.dragChanged(row: g, dx: L(60), dy: 20)) { $0[g] = dragging(L(60)) }
            // A gesture elsewhere leaves h's scroll alone.
            s.send(.dragChanged(row: h, dx: L(100)), [.scroll(row: h)])
        }
    }

    func testRule13_theScrollEndsWithTheRowsCloseRemovalOpenPeekPerformAndEveryRowsClose() {
        each { s, L, T in
            let start: Input = .dragChanged(row: g, dx: 0, dy: 30)
            s.send(start, [.scroll(row: g)], scrolling: .now(g))
            s.send(.close(row: g), scrolling: .now(nil))
            s.send(start, [.scroll(row: g)], scrolling: .now(g))
            s.send(.rowRemoved(row: g), scrolling: .now(nil))
            s.send(start, [.scroll(row: g)], scrolling: .now(g))
            s.send(.open(row: g, edge: .trailing), scrolling: .now(nil)) { $0[g] = open(T(70)) }
            s.send(.close(row: g)) { $0[g] = nil }
            s.send(start, [.scroll(row: g)], scrolling: .now(g))
            s.send(
                .peek(row: g, edge: .leading), [.schedule(.close(row: g), after: 0.6)], scrolling: .now(nil)
            ) {
                $0[g] = peeking(L(70))
            }
            s.send(.close(row: g), [.cancel(.close(row: g))]) { $0[g] = nil }
            s.send(start, [.scroll(row: g)], scrolling: .now(g))
            s.send(
                .perform(row: g, action: "delete"), [.fire(row: g, action: "delete")], scrolling: .now(nil))
            s.send(start, [.scroll(row: g)], scrolling: .now(g))
            s.send(.close(row: nil), scrolling: .now(nil))
            // A refused input leaves the scroll as it was (the engine changes nothing on a throw).
            s.send(start, [.scroll(row: g)], scrolling: .now(g))
            s.fail(.tapped(row: g, action: "delete"), .notRevealed(row: g, action: "delete"))
            s.fail(.perform(row: g, action: "bogus"), .unknownAction(row: g, action: "bogus"))
        }
    }

    func testRule13_aNewLayoutOrViewportEndsTheScroll() {
        var list = SwipeList(layout: MovieLayout.standard)
        XCTAssertEqual(try list.send(.dragChanged(row: g, dx: 0, dy: 30)), [.scroll(row: g)])
        XCTAssertEqual(list.reconfigure(viewport: Viewport(width: 320)), [])
        XCTAssertNil(list.scrolling)
        XCTAssertEqual(try list.send(.dragChanged(row: g, dx: 0, dy: 30)), [.scroll(row: g)])
        list.layout = MovieLayout.demo000
        XCTAssertNil(list.scrolling)
        XCTAssertEqual(try list.send(.dragChanged(row: g, dx: 0, dy: 30)), [.scroll(row: g)])
        XCTAssertEqual(list.reconfigure(layout: MovieLayout.standard), [])
        XCTAssertNil(list.scrolling)
    }

    func testRule13_aScrollCrossesNothing() {
        each(crossings: true) { s, L, T in
            s.send(.dragChanged(row: g, dx: L(100), dy: 101), [.scroll(row: g)], scrolling: .now(g))
            s.send(.dragChanged(row: g, dx: L(300), dy: 0), [.scroll(row: g)])
            s.send(.released(row: g, dx: L(300), vx: nil), [.scroll(row: g)], scrolling: .now(nil))
        }
    }

    /// The daemon's drag path says "scroll" as a value: a scrolling finger's drags allocate nothing.
    func testRule13_dragThenGeometrySaysScroll() {
        var list = SwipeList(layout: MovieLayout.standard)
        var got = list.dragThenGeometry(of: g, dx: 2, dy: 40)
        XCTAssertTrue(got.scroll)
        XCTAssertEqual(got.effects, [])
        XCTAssertEqual(got.geometry, list.geometry(g))
        XCTAssertEqual(got.geometry.offset, 0)
        got = list.dragThenGeometry(of: g, dx: 200, dy: 40)
        XCTAssertTrue(got.scroll)
        XCTAssertEqual(list.state(of: g), .closed)
    }
}

import Movies
import SwipeEngine
import XCTest

/// Rule 15 (full-swipe styles), exhaustively: per edge, `fill` (rule 5 as before), `close` (the
/// row closes as the action fires) and `dismiss` (the row slides out and waits for its data to
/// go). The movie layout, W 70, R 390, in both directions.
final class SwipeListStyleTests: XCTestCase {
    let g = "godfather"
    let h = "heat"

    func layout(leading: FullSwipeStyle, trailing: FullSwipeStyle) -> Layout {
        var layout = MovieLayout.standard
        layout.fullSwipeStyleLeading = leading
        layout.fullSwipeStyleTrailing = trailing
        return layout
    }

    func each(
        _ layout: Layout, _ body: (inout TestStore, _ L: (Double) -> Double, _ T: (Double) -> Double) -> Void
    ) {
        for direction in Direction.allCases {
            var store = TestStore(layout, direction: direction)
            let d = direction.sign
            body(&store, { $0 * d }, { -$0 * d })
        }
    }

    func testRule15_fillIsTheDefaultAndRule5AsBefore() {
        XCTAssertEqual(MovieLayout.standard.fullSwipeStyleLeading, .fill)
        XCTAssertEqual(Layout().fullSwipeStyleTrailing, .fill)
        each(layout(leading: .fill, trailing: .fill)) { s, L, T in
            s.send(
                .released(row: g, dx: T(300), vx: nil),
                [.fire(row: g, action: "delete"), .schedule(.close(row: g), after: 0.5)]
            ) { $0[g] = fired(T(390)) }
            s.send(.timerFired(row: g)) { $0[g] = nil }
        }
    }

    func testRule15_closeFiresAndClosesAtOnce() {
        each(layout(leading: .close, trailing: .close)) { s, L, T in
            s.send(.dragChanged(row: g, dx: L(200))) { $0[g] = dragging(L(200)) }
            s.send(.released(row: g, dx: nil, vx: nil), [.fire(row: g, action: "watched")]) { $0[g] = nil }
            // No timer, no lingering: the next gesture starts at once.
            s.send(.dragChanged(row: g, dx: T(60))) { $0[g] = dragging(T(60)) }
            // A flick decides past (rule 6); the full swipe then closes as well.
            s.send(.dragChanged(row: g, dx: T(200))) { $0[g] = dragging(T(200)) }
            s.send(.released(row: g, dx: nil, vx: T(800)), [.fire(row: g, action: "delete")]) { $0[g] = nil }
            // Short of a full swipe the row opens as ever.
            s.send(.released(row: g, dx: L(100), vx: nil)) { $0[g] = open(L(140)) }
        }
    }

    func testRule15_dismissSlidesOutAndWaitsForItsDataToGo() {
        each(layout(leading: .fill, trailing: .dismiss)) { s, L, T in
            s.send(
                .released(row: g, dx: T(300), vx: nil),
                [.fire(row: g, action: "delete"), .schedule(.close(row: g), after: 3)]
            ) { $0[g] = dismissed(T(390)) }
            let render = s.list.render(g, flags: [])
            XCTAssertEqual(render.phase, .dismissed)
            XCTAssertTrue(render.fullSwipe)
            XCTAssertEqual(render.buttons.map(\.width), [390])
            XCTAssertEqual(render.offset, T(390))
            // The delete's data goes: the row is dropped and its timer cancelled (rule 9).
            s.send(.rowRemoved(row: g), [.cancel(.close(row: g))]) { $0[g] = nil }
            // Data that does not go (a custom action, a failed delete): back on the timer.
            s.send(
                .released(row: h, dx: T(300), vx: nil),
                [.fire(row: h, action: "delete"), .schedule(.close(row: h), after: 3)]
            ) { $0[h] = dismissed(T(390)) }
            s.send(.timerFired(row: h)) { $0[h] = nil }
            // The other edge keeps its own style.
            s.send(
                .released(row: h, dx: L(300), vx: nil),
                [.fire(row: h, action: "watched"), .schedule(.close(row: h), after: 0.5)]
            ) { $0[h] = fired(L(390)) }
        }
    }

    func testRule15_aDismissedRowIsTreatedAsAFiredOne() {
        each(layout(leading: .dismiss, trailing: .dismiss)) { s, L, T in
            s.send(
                .released(row: g, dx: L(300), vx: nil),
                [.fire(row: g, action: "watched"), .schedule(.close(row: g), after: 3)]
            ) { $0[g] = dismissed(L(390)) }
            s.send(.dragChanged(row: g, dx: T(100)))
            s.send(.dragChanged(row: g, dx: 0, dy: 100))  // no scroll decision either (rule 13)
            s.send(.released(row: g, dx: T(300), vx: T(1000)))
            s.fail(.tapped(row: g, action: "watched"), .firing(row: g, action: "watched"))
            s.fail(
                .tapped(row: g, action: "watched-with-friends"),
                .notRevealed(row: g, action: "watched-with-friends"))
            s.fail(.perform(row: g, action: "delete"), .firing(row: g, action: "delete"))
            s.send(.open(row: g, edge: .trailing))
            s.send(.peek(row: g))
            // Rule 8 leaves it alone.
            s.send(.dragChanged(row: h, dx: T(60))) { $0[h] = dragging(T(60)) }
            s.send(.confirmTimedOut(row: g))  // not its timer
            s.send(.close(row: g), [.cancel(.close(row: g))]) { $0[g] = nil }
        }
    }

    func testRule15_anActionThatAsksToConfirmAsksWhateverTheStyle() {
        var asking = layout(leading: .close, trailing: .dismiss)
        asking.trailing[0].confirm = true
        asking.leading[0].confirm = true
        each(asking) { s, L, T in
            s.send(
                .released(row: g, dx: T(300), vx: nil),
                [.pending(row: g, action: "delete"), .schedule(.confirmTimeout(row: g), after: 3)]
            ) { $0[g] = confirming(T(70), 0) }
            // The confirming tap fires and closes the row, as any tap does (rule 7).
            s.send(
                .tapped(row: g, action: "delete"),
                [.fire(row: g, action: "delete"), .cancel(.confirmTimeout(row: g))]
            ) { $0[g] = nil }
            s.send(
                .released(row: g, dx: L(300), vx: nil),
                [.pending(row: g, action: "watched"), .schedule(.confirmTimeout(row: g), after: 3)]
            ) { $0[g] = confirming(L(140), 0) }
        }
    }

    func testRule15_aTapOrPerformIsNotAFullSwipe() {
        each(layout(leading: .dismiss, trailing: .dismiss)) { s, L, T in
            s.send(.released(row: g, dx: T(60), vx: nil)) { $0[g] = open(T(70)) }
            s.send(.tapped(row: g, action: "delete"), [.fire(row: g, action: "delete")]) { $0[g] = nil }
            s.send(.perform(row: g, action: "watched"), [.fire(row: g, action: "watched")])
        }
    }
}

import Movies
import SwipeEngine
import XCTest

/// Rule 4 as drawn: visible buttons left to right, x from the row's left edge, in both directions.
final class RenderTests: XCTestCase {
    let g = "godfather"

    func list(_ direction: Direction = .ltr, _ layout: Layout = MovieLayout.standard) -> SwipeList {
        SwipeList(layout: layout, viewport: Viewport(width: 390, direction: direction))
    }

    /// The buttons as `action@x+width`, left to right.
    func strip(_ render: RowRender) -> [String] {
        render.buttons.map { "\($0.action)@\(fmt($0.x))+\(fmt($0.width))" }
    }

    func fmt(_ v: Double) -> String { v == v.rounded() ? String(Int(v)) : String(v) }

    func testIssueExample_trailingOpenShowsDeleteAtTheRight() throws {
        var l = list()
        _ = try l.send(.dragChanged(row: g, dx: -60))
        _ = try l.send(.released(row: g, dx: nil, vx: nil))
        let r = l.render(g, flags: [])
        XCTAssertEqual(r.offset, -70)
        XCTAssertEqual(r.phase, .open)
        XCTAssertEqual(r.edge, .trailing)
        XCTAssertFalse(r.fullSwipe)
        XCTAssertEqual(
            r.buttons,
            [
                ButtonRender(
                    action: "delete", label: "Delete", icon: "trash", tint: "red",
                    role: .destructive, x: 320, width: 70)
            ])
        XCTAssertEqual(r.spring, SpringHint(target: -70, response: 0.5, dampingFraction: 0.85))
    }

    func testIssueExample_leadingDragSplitsTheOffsetOutermostLeftmost() throws {
        var l = list()
        _ = try l.send(.dragChanged(row: g, dx: 100))
        let r = l.render(g, flags: [])
        XCTAssertEqual(r.edge, .leading)
        XCTAssertEqual(r.phase, .dragging)
        XCTAssertEqual(
            r.buttons,
            [
                ButtonRender(
                    action: "watched", label: "Watched", icon: "eye", tint: "green",
                    role: nil, x: 0, width: 50),
                ButtonRender(
                    action: "watched-with-friends", label: "With Friends", icon: "person.3",
                    tint: "indigo", role: nil, x: 50, width: 50),
            ])
        XCTAssertEqual(r.spring, SpringHint(target: 100, response: 0.15, dampingFraction: 0.86))
    }

    func testRTLMirrors() throws {
        var l = list(.rtl)
        _ = try l.send(.released(row: g, dx: 60, vx: nil))  // + reveals trailing in rtl
        XCTAssertEqual(strip(l.render(g, flags: [])), ["delete@0+70"])
        XCTAssertEqual(l.render(g, flags: []).offset, 70)
        _ = try l.send(.dragChanged(row: g, dx: -170))  // from +70: −100, leading
        XCTAssertEqual(l.render(g, flags: []).edge, .leading)
        XCTAssertEqual(strip(l.render(g, flags: [])), ["watched-with-friends@290+50", "watched@340+50"])
    }

    func testTrailingOutermostIsRightmostInLTRAndLeftmostInRTL() throws {
        for (direction, dx, expected) in [
            (Direction.ltr, -140.0, ["read@250+70", "trash@320+70"]),
            (.rtl, 140, ["trash@0+70", "read@70+70"]),
            (.ltr, 100, ["text@0+50", "flag@50+50"]),
            (.rtl, -100, ["flag@290+50", "text@340+50"]),
        ] {
            var l = list(direction, MovieLayout.demo000)
            _ = try l.send(.dragChanged(row: g, dx: dx))
            XCTAssertEqual(strip(l.render(g, flags: [])), expected, "\(direction) \(dx)")
        }
    }

    func testFullSwipeShowsOnlyTheOutermostAsWideAsTheOffset() throws {
        for (direction, dx, expected) in [
            (Direction.ltr, 195.0, ["watched@0+97.5", "watched-with-friends@97.5+97.5"]),  // not past R/2
            (.ltr, 200, ["watched@0+200"]),
            (.ltr, -200, ["delete@190+200"]),
            (.rtl, -200, ["watched@190+200"]),
            (.rtl, 200, ["delete@0+200"]),
        ] {
            var l = list(direction)
            _ = try l.send(.dragChanged(row: g, dx: dx))
            let r = l.render(g, flags: [])
            XCTAssertEqual(strip(r), expected, "\(direction) \(dx)")
            XCTAssertEqual(r.fullSwipe, abs(dx) > 195)
        }
    }

    func testFiredRowIsFilledByTheFiredButton() throws {
        for direction in Direction.allCases {
            var l = list(direction)
            _ = try l.send(.released(row: g, dx: -300 * direction.sign, vx: nil))
            let r = l.render(g, flags: [])
            XCTAssertEqual(r.phase, .fired)
            XCTAssertTrue(r.fullSwipe)
            XCTAssertEqual(strip(r), ["delete@0+390"])
            XCTAssertEqual(r.spring.target, -390 * direction.sign)
        }
    }

    func testClosedRowRendersNothingButItsAccessibilityActions() {
        let r = list().render(g, flags: [])
        XCTAssertEqual(r.offset, 0)
        XCTAssertEqual(r.phase, .closed)
        XCTAssertNil(r.edge)
        XCTAssertFalse(r.fullSwipe)
        XCTAssertEqual(r.buttons, [])
        XCTAssertEqual(r.spring, SpringHint(target: 0, response: 0.5, dampingFraction: 0.85))
        XCTAssertEqual(
            r.accessibilityActions,
            [
                AccessibilityAction(action: "watched", label: "Watched", destructive: false, edge: .leading),
                AccessibilityAction(
                    action: "watched-with-friends", label: "With Friends",
                    destructive: false, edge: .leading),
                AccessibilityAction(action: "delete", label: "Delete", destructive: true, edge: .trailing),
            ])
    }

    func testDraggedToZeroRevealsNothing() throws {
        var l = list()
        _ = try l.send(.dragChanged(row: g, dx: 20))
        _ = try l.send(.dragChanged(row: g, dx: 0))
        let r = l.render(g, flags: [])
        XCTAssertEqual(r.phase, .dragging)
        XCTAssertNil(r.edge)
        XCTAssertEqual(r.buttons, [])
    }

    /// Rule 9: the row's data changes the buttons, never the row.
    func testFlagsFlipTheWatchedIconWithoutMovingTheRow() throws {
        var l = list()
        _ = try l.send(.released(row: g, dx: 100, vx: nil))
        let before = l
        let unwatched = l.render(g, flags: MovieLayout.flags(watched: false, watchedWithFriends: false))
        let watched = l.render(g, flags: MovieLayout.flags(watched: true, watchedWithFriends: false))
        XCTAssertEqual(l, before)
        XCTAssertEqual(unwatched.buttons.map(\.icon), ["eye", "person.3"])
        XCTAssertEqual(watched.buttons.map(\.icon), ["eye.slash", "person.3"])
        XCTAssertEqual(watched.offset, unwatched.offset)
        XCTAssertEqual(watched.buttons.map(\.x), unwatched.buttons.map(\.x))
        XCTAssertEqual(watched.buttons.map(\.label), ["Watched", "With Friends"])
    }

    func testAccessibilityLabelFallsBackToIconThenActionName() {
        let layout = Layout(
            leading: [ActionSpec(action: "pin", icon: "pin"), ActionSpec(action: "mark")],
            trailing: [ActionSpec(action: "x", label: "Remove", role: .destructive, activeLabel: "Undo")])
        let l = SwipeList(layout: layout)
        XCTAssertEqual(
            l.render("r", flags: ["x"]).accessibilityActions,
            [
                AccessibilityAction(action: "pin", label: "pin", destructive: false, edge: .leading),
                AccessibilityAction(action: "mark", label: "mark", destructive: false, edge: .leading),
                AccessibilityAction(action: "x", label: "Undo", destructive: true, edge: .trailing),
            ])
    }

    func testDefaultTints() {
        XCTAssertEqual(ActionSpec(action: "a").effectiveTint, "gray")
        XCTAssertEqual(ActionSpec(action: "a", role: .destructive).effectiveTint, "red")
        XCTAssertEqual(ActionSpec(action: "a", tint: "blue", role: .destructive).effectiveTint, "blue")
    }

    /// A silly layout wider than the row opens at R, the buttons sharing it.
    func testOpenExtentIsCappedAtTheRowWidth() throws {
        let six = (1...6).map { ActionSpec(action: "a\($0)") }
        var l = SwipeList(layout: Layout(leading: six, allowsFullSwipeLeading: false))
        _ = try l.send(.released(row: g, dx: 100, vx: nil))
        XCTAssertEqual(l.state(of: g).offset, 390)
        XCTAssertEqual(l.render(g, flags: []).buttons.map(\.width), Array(repeating: 65, count: 6))
    }
}

import Movies
import SwipeEngine
import Terminal
import XCTest

/// The keys and the mouse, without a terminal: each fact's actions and every change of state.
/// (Frames fill `model.rows`, which the mouse's hit test reads: tests that click draw one first.)
final class TuiStateMachineInputTests: XCTestCase {
    func testSelectionMovesScrollsAndStaysInTheList() {
        let movies = (0..<8).map { Movie(id: "m\($0)", title: "Movie \($0)", image: "m\($0)", version: 1) }
        var store = Fixture.listed(movies)  // 24 lines: 6 rows show
        store.check({ $0.input(.key(.down), at: 1) }, [.redraw]) { $0.model.selected = 1 }
        store.check({ $0.input(.char("j"), at: 1) }, [.redraw]) { $0.model.selected = 2 }
        store.check({ $0.input(.key(.up), at: 1) }, [.redraw]) { $0.model.selected = 1 }
        store.check({ $0.input(.char("k"), at: 1) }, [.redraw]) { $0.model.selected = 0 }
        store.check({ $0.input(.key(.up), at: 1) }, [.redraw])
        store.check({ $0.input(.key(.end), at: 1) }, [.redraw]) {
            $0.model.selected = 7
            $0.model.scroll = 2
        }
        store.check({ $0.input(.key(.pageUp), at: 1) }, [.redraw]) {
            $0.model.selected = 1
            $0.model.scroll = 1
        }
        store.check({ $0.input(.key(.home), at: 1) }, [.redraw]) {
            $0.model.selected = 0
            $0.model.scroll = 0
        }
        store.check({ $0.input(.key(.pageDown), at: 1) }, [.redraw]) {
            $0.model.selected = 6
            $0.model.scroll = 1
        }
        let wheelUp = InputEvent.mouse(MouseEvent(.wheelUp, column: 3, line: 5))
        let wheelDown = InputEvent.mouse(MouseEvent(.wheelDown, column: 3, line: 5))
        store.check({ $0.input(wheelUp, at: 1) }, [.redraw]) { $0.model.scroll = 0 }
        store.check({ $0.input(wheelDown, at: 1) }, [.redraw]) { $0.model.scroll = 1 }
        store.check({ $0.input(wheelDown, at: 1) }, [.redraw]) { $0.model.scroll = 2 }
        store.check({ $0.input(wheelDown, at: 1) }, [.redraw])
        store.check({ $0.input(.key(.tab), at: 1) }, [.redraw])
        store.check({ $0.input(.alt(.character("x")), at: 1) }, [.redraw])
    }

    func testKeysThatNeedARowSaySoInAnEmptyList() {
        var store = Fixture.listed([])
        store.check({ $0.input(.key(.down), at: 1) }, [.redraw])
        for key in [Key.character("w"), .character("d"), .enter, .left, .right] {
            store.check({ $0.input(.key(key), at: 2) }, [.redraw]) {
                $0.model.status = "Select a row first (↑ ↓)"
                $0.statusUntil = 6
            }
        }
        store.check({ $0.input(.key(.escape), at: 3) }, [.redraw])
    }

    func testArrowsOpenAndCloseTheSelectedRowAndEscapeClosesAll() throws {
        var store = Fixture.listed()
        store.check(
            { $0.input(.char("l"), at: 1) }, [.redraw, .send(.open(movie: "matrix", edge: .leading))])
        let open = try Fixture.render("matrix", [.open(row: "matrix", edge: .leading)])
        XCTAssertEqual(open.offset, 140)
        store.check({ $0.replied(to: .open(movie: "matrix", edge: .leading), .row(open), at: 1) }, [.redraw])
        {
            $0.renders["matrix"] = open
            $0.lastButtons["matrix"] = .init(open.buttons, offset: 140)
            $0.motions["matrix"] = Fixture.motion(open, at: 1)
        }
        // ← on a row open to the right closes it; → opens it again.
        store.check(
            { $0.input(.key(.right), at: 1.5) }, [.redraw, .send(.open(movie: "matrix", edge: .leading))])
        store.check({ $0.input(.key(.left), at: 1.5) }, [.redraw, .send(.close(movie: "matrix"))])
        let closed = try Fixture.render(
            "matrix", [.open(row: "matrix", edge: .leading), .close(row: "matrix")])
        XCTAssertEqual(closed.phase, .closed)
        store.check({ $0.replied(to: .close(movie: "matrix"), .row(closed), at: 2) }, [.redraw]) {
            $0.renders["matrix"] = nil
            $0.motions["matrix"] = Fixture.motion(closed, at: 2, from: Fixture.motion(open, at: 1))
        }
        XCTAssertTrue(store.machine.isAnimating(at: 2.1))
        // Once it is back at rest, its buttons are no longer drawn.
        store.check({ $0.tick(at: 2.1) }, [])
        store.check({ $0.tick(at: 10) }, []) { $0.lastButtons["matrix"] = nil }
        XCTAssertFalse(store.machine.isAnimating(at: 10))
        // Esc with nothing open sends nothing; with a row open, closes every row.
        store.check({ $0.input(.key(.escape), at: 10) }, [.redraw])
        store.check(
            { $0.input(.key(.left), at: 10) }, [.redraw, .send(.open(movie: "matrix", edge: .trailing))])
        let trailing = try Fixture.render("matrix", [.open(row: "matrix", edge: .trailing)])
        store.check(
            { $0.replied(to: .open(movie: "matrix", edge: .trailing), .row(trailing), at: 10) }, [.redraw]
        ) {
            $0.renders["matrix"] = trailing
            $0.lastButtons["matrix"] = .init(trailing.buttons, offset: -70)
            $0.motions["matrix"] = Fixture.motion(trailing, at: 10, from: $0.motions["matrix"]!)
        }
        store.check({ $0.input(.key(.escape), at: 11) }, [.redraw, .send(.closeAll)])
        store.check({ $0.replied(to: .closeAll, .closed(["matrix"]), at: 11) }, [.redraw]) {
            $0.renders["matrix"] = nil
            $0.motions["matrix"]!.retarget(0, spring: Fixture.settle, at: 11)
        }
    }

    func testInRightToLeftTheArrowsRevealTheOtherEdges() {
        var store = TuiTestStore(TuiOptions(socket: "s", direction: .rtl))
        store.check(
            { $0.hello(writer: false, seq: 0, at: 0) },
            [
                .redraw, .send(.viewport(width: 400, direction: .rtl)), .send(.list),
            ]
        ) {
            $0.model.connection = .connected
            $0.model.writer = false
        }
        store.check(
            { $0.replied(to: .list, .list(seq: 0, movies: [Fixture.seven]), at: 0) },
            [
                .redraw, .send(.subscribe(from: 0)),
            ]
        ) {
            $0.entries = [.init(movie: Fixture.seven)]
            $0.lastSeq = 0
            $0.model.selected = 0
        }
        store.check(
            { $0.input(.key(.right), at: 1) }, [.redraw, .send(.open(movie: "seven", edge: .trailing))])
        store.check(
            { $0.input(.key(.left), at: 1) }, [.redraw, .send(.open(movie: "seven", edge: .leading))])
    }

    func testEnterFiresTheOutermostShowingButtonAndLettersPerform() throws {
        var store = Fixture.listed()
        store.check({ $0.input(.key(.enter), at: 1) }, [.redraw]) {
            $0.model.status = "Open the row first (← →), or press w, f or d"
            $0.statusUntil = 5
        }
        let leading = try Fixture.render("matrix", [.open(row: "matrix", edge: .leading)])
        store.check(
            { $0.replied(to: .open(movie: "matrix", edge: .leading), .row(leading), at: 2) }, [.redraw]
        ) {
            $0.renders["matrix"] = leading
            $0.lastButtons["matrix"] = .init(leading.buttons, offset: 140)
            $0.motions["matrix"] = Fixture.motion(leading, at: 2)
        }
        store.check(
            { $0.input(.key(.enter), at: 2) }, [.redraw, .send(.tap(movie: "matrix", action: "watched"))])
        store.check({ $0.input(.char("j"), at: 2) }, [.redraw]) { $0.model.selected = 1 }
        store.check(
            { $0.input(.char("w"), at: 2) },
            [.redraw, .send(.perform(movie: "godfather", action: "watched"))])
        store.check(
            { $0.input(.char("f"), at: 2) },
            [
                .redraw, .send(.perform(movie: "godfather", action: "watched-with-friends")),
            ])
        store.check(
            { $0.input(.char("d"), at: 2) }, [.redraw, .send(.perform(movie: "godfather", action: "delete"))])
        let trailing = try Fixture.render("godfather", [.open(row: "godfather", edge: .trailing)])
        store.check(
            { $0.replied(to: .open(movie: "godfather", edge: .trailing), .row(trailing), at: 3) }, [.redraw]
        ) {
            $0.renders["godfather"] = trailing
            $0.lastButtons["godfather"] = .init(trailing.buttons, offset: -70)
            $0.motions["godfather"] = Fixture.motion(trailing, at: 3)
        }
        store.check(
            { $0.input(.key(.enter), at: 3) }, [.redraw, .send(.tap(movie: "godfather", action: "delete"))])
    }

    func testDraggingSendsEachNewOffsetAndTheReleaseItsVelocity() throws {
        var store = Fixture.listed()
        _ = store.machine.frame(at: 0)  // rows on screen: Se7en on lines 8 to 10
        store.check({ $0.input(.press(40, 8), at: 0) }, [.redraw]) {
            $0.model.selected = 2
            $0.press = .init(movie: "seven", column: 40, button: nil)
        }
        store.check({ $0.input(.drag(34, 8), at: 0.01) }, [.redraw, .send(.drag(movie: "seven", dx: -30))]) {
            $0.press!.dragged = true
            $0.press!.lastDX = -30
            $0.press!.samples = [.init(time: 0.01, dx: -30)]
        }
        // The same column (another line) is no new offset.
        store.check({ $0.input(.drag(34, 9), at: 0.02) }, [.redraw])
        let dragging = try Fixture.render("seven", [.dragChanged(row: "seven", dx: -30)])
        store.check({ $0.replied(to: .drag(movie: "seven", dx: -30), .row(dragging), at: 0.02) }, [.redraw]) {
            $0.renders["seven"] = dragging
            $0.lastButtons["seven"] = .init(dragging.buttons, offset: -30)
            $0.motions["seven"] = Fixture.motion(dragging, at: 0.02)
        }
        XCTAssertEqual(
            store.state.motions["seven"]!.state(at: 0.02).position, -30, "a dragged row follows at once")
        store.check({ $0.input(.drag(28, 8), at: 0.05) }, [.redraw, .send(.drag(movie: "seven", dx: -60))]) {
            $0.press!.lastDX = -60
            $0.press!.samples.append(.init(time: 0.05, dx: -60))
        }
        store.check(
            { $0.input(.release(28, 8), at: 0.06) },
            [
                .redraw, .send(.release(movie: "seven", vx: (-60.0 - -30.0) / (0.05 - 0.01))),
            ]
        ) { $0.press = nil }
        // A finger that rested before letting go: only the last 0.1 s count, and the samples
        // kept are those of the last 0.2 s.
        store.check({ $0.input(.press(40, 8), at: 1) }, [.redraw]) {
            $0.press = .init(movie: "seven", column: 40, button: nil)
        }
        store.check({ $0.input(.drag(36, 8), at: 1.0) }, [.redraw, .send(.drag(movie: "seven", dx: -20))]) {
            $0.press!.dragged = true
            $0.press!.lastDX = -20
            $0.press!.samples = [.init(time: 1.0, dx: -20)]
        }
        store.check({ $0.input(.drag(35, 8), at: 1.3) }, [.redraw, .send(.drag(movie: "seven", dx: -25))]) {
            $0.press!.lastDX = -25
            $0.press!.samples = [.init(time: 1.3, dx: -25)]
        }
        store.check(
            { $0.input(.release(35, 8), at: 1.35) }, [.redraw, .send(.release(movie: "seven", vx: 0))]
        ) {
            $0.press = nil
        }
    }

    func testClicksTapAButtonCloseRowsOrDoNothing() throws {
        var store = Fixture.listed()
        let trailing = try Fixture.render("seven", [.open(row: "seven", edge: .trailing)])
        store.check(
            { $0.replied(to: .open(movie: "seven", edge: .trailing), .row(trailing), at: 0) }, [.redraw]
        ) {
            $0.renders["seven"] = trailing
            $0.lastButtons["seven"] = .init(trailing.buttons, offset: -70)
            $0.motions["seven"] = Fixture.motion(trailing, at: 0)
        }
        _ = store.machine.frame(at: 5)  // Delete shows in columns 66 to 79 of lines 8 and 9
        store.check({ $0.input(.press(70, 8), at: 5) }, [.redraw]) {
            $0.model.selected = 2
            $0.press = .init(movie: "seven", column: 70, button: "delete")
        }
        store.check(
            { $0.input(.release(70, 8), at: 5.1) }, [.redraw, .send(.tap(movie: "seven", action: "delete"))]
        ) {
            $0.press = nil
        }
        // Elsewhere on a row: close the open rows.
        store.check({ $0.input(.press(10, 3), at: 6) }, [.redraw]) {
            $0.model.selected = 0
            $0.press = .init(movie: "matrix", column: 10, button: nil)
        }
        store.check({ $0.input(.release(10, 3), at: 6.1) }, [.redraw, .send(.closeAll)]) { $0.press = nil }
        // Off the rows, or a release without a press: nothing.
        store.check({ $0.input(.press(10, 0), at: 7) }, [.redraw])
        store.check({ $0.input(.release(10, 0), at: 7) }, [.redraw])
        store.check(
            { $0.input(.mouse(MouseEvent(.press(button: 2), column: 10, line: 3)), at: 7) }, [.redraw])
    }

    func testTheAddPromptEditsALineAndAddsItsTrimmedTitle() {
        var store = Fixture.listed()
        store.check({ $0.input(.char("a"), at: 1) }, [.redraw]) { $0.model.prompt = "" }
        store.check({ $0.input(.char("q"), at: 1) }, [.redraw]) { $0.model.prompt = "q" }
        store.check({ $0.input(.key(.backspace), at: 1) }, [.redraw]) { $0.model.prompt = "" }
        store.check({ $0.input(.key(.backspace), at: 1) }, [.redraw])
        store.check({ $0.input(.char("x"), at: 1) }, [.redraw]) { $0.model.prompt = "x" }
        store.check({ $0.input(.key(.control("u")), at: 1) }, [.redraw]) { $0.model.prompt = "" }
        for c in " Heat ".unicodeScalars {
            store.check({ $0.input(.char(c), at: 1) }, [.redraw]) { $0.model.prompt! += String(c) }
        }
        store.check({ $0.input(.key(.up), at: 1) }, [.redraw])
        store.check({ $0.input(.press(10, 3), at: 1) }, [.redraw])
        store.check({ $0.input(.key(.enter), at: 1) }, [.redraw, .send(.add(title: "Heat"))]) {
            $0.model.prompt = nil
        }
        store.check({ $0.replied(to: .add(title: "Heat"), .ok, at: 2) }, [.redraw]) {
            $0.model.status = "Added “Heat”"
            $0.statusUntil = 6
        }
        let heat = Movie(id: "heat", title: "Heat", image: "", version: 8)
        store.check({ $0.received(Fixture.event(8, "added", heat), at: 2) }, [.redraw]) {
            $0.entries.append(.init(movie: heat))
            $0.lastSeq = 8
            $0.model.seq = 8
        }
        // Blank: nothing to add. Esc and Ctrl-C cancel.
        store.check({ $0.input(.char("a"), at: 3) }, [.redraw]) { $0.model.prompt = "" }
        store.check({ $0.input(.char(" "), at: 3) }, [.redraw]) { $0.model.prompt = " " }
        store.check({ $0.input(.key(.enter), at: 3) }, [.redraw]) { $0.model.prompt = nil }
        store.check({ $0.input(.char("a"), at: 3) }, [.redraw]) { $0.model.prompt = "" }
        store.check({ $0.input(.key(.escape), at: 3) }, [.redraw]) { $0.model.prompt = nil }
        store.check({ $0.input(.char("a"), at: 3) }, [.redraw]) { $0.model.prompt = "" }
        store.check({ $0.input(.key(.control("c")), at: 3) }, [.redraw]) { $0.model.prompt = nil }
    }

    func testHelpQuitAndTheTerminalsAnswers() {
        var store = Fixture.listed()
        store.check({ $0.input(.char("?"), at: 1) }, [.redraw]) { $0.model.help = true }
        store.check({ $0.input(.drag(3, 3), at: 1) }, [.redraw])
        store.check({ $0.input(.char("q"), at: 1) }, [.redraw]) { $0.model.help = false }
        store.check({ $0.input(.modeReport(mode: 2026, value: 2), at: 1) }, [.redraw]) {
            $0.synchronizedOutput = true
        }
        store.check({ $0.input(.modeReport(mode: 2026, value: 0), at: 1) }, [.redraw]) {
            $0.synchronizedOutput = false
        }
        store.check({ $0.input(.modeReport(mode: 25, value: 1), at: 1) }, [.redraw])
        store.check({ $0.input(.char("q"), at: 1) }, [.redraw, .quit])
        store.check({ $0.input(.key(.control("c")), at: 1) }, [.redraw, .quit])
    }

    func testAResizeSendsTheViewportOnlyWhenTheWidthChanged() {
        var store = Fixture.listed()
        store.check({ $0.resized(columns: 80, lines: 30, at: 1) }, [.redraw]) { $0.lines = 30 }
        store.check(
            { $0.resized(columns: 100, lines: 30, at: 1) },
            [
                .redraw, .send(.viewport(width: 500, direction: .ltr)),
            ]
        ) { $0.columns = 100 }
    }
}

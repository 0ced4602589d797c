import Movies
import SwipeEngine
import Terminal
import XCTest

/// Issue 47 in the terminal front end: the peek on first use (once a run), the crossing cues
/// (the daemon's `crossed`), and the full-swipe style (`F`, `--full-swipe`); each fact's actions
/// and every change of state.
final class TuiStateMachineCueTests: XCTestCase {
    static let options = TuiOptions(
        socket: "./swiped.sock", peekHint: true, crossingCues: true, fullSwipeStyle: .dismiss)

    /// A front end with issue 47's options, greeted and listed.
    func listed() -> TuiTestStore {
        var store = TuiTestStore(Self.options)
        store.check(
            { $0.hello(writer: true, seq: 7, at: 0) },
            [
                .redraw, .send(.viewport(width: 400, direction: .ltr)),
                .send(.configure(confirmDelete: false, quiet: true, style: .dismiss)),
                .send(.crossings(on: true)), .send(.list),
            ]
        ) {
            $0.model.connection = .connected
        }
        // The first list: the first row peeks, once.
        store.check(
            { $0.replied(to: .list, .list(seq: 7, movies: Fixture.movies), at: 0) },
            [.redraw, .send(.subscribe(from: 7)), .send(.peek(movie: "matrix"))]
        ) {
            $0.entries = Fixture.movies.map { TuiState.Entry(movie: $0) }
            $0.lastSeq = 7
            $0.model.seq = 7
            $0.model.selected = 0
            $0.peeked = true
        }
        store.check({ $0.replied(to: .crossings(on: true), .ok, at: 0) }, [.redraw])
        return store
    }

    func testThePeekOnFirstUseComesOnceARunAndTheRowSpringsBack() throws {
        var store = listed()
        XCTAssertEqual(store.state.model.fullSwipeStyle, .dismiss)
        let peeking = try Fixture.render("matrix", [.peek(row: "matrix")])
        XCTAssertEqual(peeking.phase, .peeking)
        store.check({ $0.replied(to: .peek(movie: "matrix"), .row(peeking), at: 0.1) }, [.redraw]) {
            $0.renders["matrix"] = peeking
            $0.lastButtons["matrix"] = .init(peeking.buttons, offset: peeking.offset)
            $0.motions["matrix"] = Fixture.motion(peeking, at: 0.1)
        }
        // Its timer's row event: closed, springing back.
        let closed = try Fixture.render("matrix", [])
        store.check({ $0.received(.row(closed, removed: false, cancelled: nil), at: 0.7) }, [.redraw]) {
            $0.renders["matrix"] = nil
            $0.motions["matrix"] = Fixture.motion(closed, at: 0.7, from: Fixture.motion(peeking, at: 0.1))
        }
        // A list again (after a restored movie, or a reconnect to another log): no second peek.
        store.check(
            { $0.replied(to: .list, .list(seq: 8, movies: Fixture.movies), at: 1) }, [.redraw]
        ) {
            $0.lastSeq = 8
            $0.model.seq = 8
        }
    }

    func testAPeekADaemonBeforeIssue47RefusesIsNotWorthAMessage() {
        var store = listed()
        store.check(
            {
                $0.replied(
                    to: .peek(movie: "matrix"), .refused(description: "unknown-op: …", message: "unknown op"),
                    at: 0.1)
            }, [.redraw])
        store.check(
            {
                $0.replied(
                    to: .crossings(on: true), .refused(description: "bad-request: …", message: "…"), at: 0.1)
            }, [.redraw])
    }

    func testKeysReadAPeekingRowAsClosed() throws {
        var store = listed()
        let peeking = try Fixture.render("matrix", [.peek(row: "matrix")])
        store.check({ $0.replied(to: .peek(movie: "matrix"), .row(peeking), at: 0.1) }, [.redraw]) {
            $0.renders["matrix"] = peeking
            $0.lastButtons["matrix"] = .init(peeking.buttons, offset: peeking.offset)
            $0.motions["matrix"] = Fixture.motion(peeking, at: 0.1)
        }
        // → opens the left side's buttons (it would close a row open on the right).
        store.check(
            { $0.input(.key(.right), at: 0.2) }, [.redraw, .send(.open(movie: "matrix", edge: .leading))])
        // Enter: nothing is open to fire.
        store.check({ $0.input(.key(.enter), at: 0.3) }, [.redraw]) {
            $0.model.status = "Open the row first (← →), or press w, f or d"
            $0.statusUntil = 0.3 + TuiStateMachine.statusTime
        }
    }

    func testEachCrossingSaysWhatLettingGoWouldDo() throws {
        var store = listed()
        let drag = TuiRequest.drag(movie: "seven", dx: -60)
        let row = try Fixture.render("seven", [.dragChanged(row: "seven", dx: -60)])
        store.check(
            { $0.replied(to: drag, .row(row, crossed: [Crossing(.open, .out)]), at: 1) }, [.redraw]
        ) {
            $0.renders["seven"] = row
            $0.lastButtons["seven"] = .init(row.buttons, offset: row.offset)
            $0.motions["seven"] = Fixture.motion(row, at: 1)
            $0.model.status = "Let go: the row opens"
            $0.statusUntil = 1 + TuiStateMachine.statusTime
        }
        let far = try Fixture.render("seven", [.dragChanged(row: "seven", dx: -300)])
        store.check(
            { $0.replied(to: drag, .row(far, crossed: [Crossing(.full, .out)]), at: 1.1) }, [.redraw]
        ) {
            $0.renders["seven"] = far
            $0.lastButtons["seven"] = .init(far.buttons, offset: far.offset)
            $0.motions["seven"] = Fixture.motion(far, at: 1.1, from: $0.motions["seven"]!)
            $0.model.status = "Let go: Delete fires"
            $0.statusUntil = 1.1 + TuiStateMachine.statusTime
        }
        let near = try Fixture.render("seven", [.dragChanged(row: "seven", dx: -20)])
        store.check(
            {
                $0.replied(
                    to: drag, .row(near, crossed: [Crossing(.full, .back), Crossing(.open, .back)]), at: 1.2)
            }, [.redraw]
        ) {
            $0.renders["seven"] = near
            $0.lastButtons["seven"] = .init(near.buttons, offset: near.offset)
            $0.motions["seven"] = Fixture.motion(near, at: 1.2, from: $0.motions["seven"]!)
            $0.model.status = "Let go: the row closes"
            $0.statusUntil = 1.2 + TuiStateMachine.statusTime
        }
    }

    func testFCyclesTheFullSwipeStyleAndTheHeaderSaysIt() {
        var store = listed()
        // dismiss → fill: the next of fill, close, dismiss.
        let next = TuiRequest.configure(confirmDelete: false, quiet: false, style: .fill)
        store.check({ $0.input(.char("F"), at: 1) }, [.redraw, .send(next)])
        store.check({ $0.replied(to: next, .closed([]), at: 1) }, [.redraw]) {
            $0.fullSwipeStyle = .fill
            $0.model.fullSwipeStyle = .fill
            $0.model.status = "Full swipe: fill (the button fills the row, which springs back)"
            $0.statusUntil = 1 + TuiStateMachine.statusTime
        }
        let close = TuiRequest.configure(confirmDelete: false, quiet: false, style: .close)
        store.check({ $0.input(.char("F"), at: 2) }, [.redraw, .send(close)])
        store.check({ $0.replied(to: close, .closed([]), at: 2) }, [.redraw]) {
            $0.fullSwipeStyle = .close
            $0.model.fullSwipeStyle = .close
            $0.model.status = "Full swipe: close (the row closes as its action fires)"
            $0.statusUntil = 2 + TuiStateMachine.statusTime
        }
        let header = ScreenLayout.render(store.state.model, width: 80, height: 24)
        let top = header.text.split(separator: "\n").first.map(String.init) ?? ""
        XCTAssertTrue(top.contains("full swipe close"), top)
        // c keeps the style it sends the layout with.
        store.check(
            { $0.input(.char("c"), at: 3) },
            [.redraw, .send(.configure(confirmDelete: true, quiet: false, style: .close))])
        XCTAssertEqual(
            TuiRequest.layout(confirmDelete: true, style: .close).fullSwipeStyleTrailing, .close)
        XCTAssertTrue(ScreenLayout.helpLines.contains("F          full swipe: fill, close, dismiss"))
    }
}

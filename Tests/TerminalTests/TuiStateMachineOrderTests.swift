import Movies
import SwipeEngine
import Terminal
import XCTest

/// The order of the list (issue 48): Shift+↑ ↓ and K J, a drag on a row's grip, anyone's
/// `moved` event and a `restored` event that says where; each fact's actions and every change of
/// state.
final class TuiStateMachineOrderTests: XCTestCase {
    /// A `moved` event: `movie` (at version `seq`) now right after `to`, by `by`.
    private func moved(_ seq: UInt64, _ movie: Movie, to: ListPlace, by: String? = nil) -> TuiEvent {
        var movie = movie
        movie.version = seq
        return .movie(
            CommittedEvent(seq: seq, kind: MovieEvent.Kind.moved, movie: movie, at: 0, by: by, to: to))
    }

    private func restored(_ seq: UInt64, _ movie: Movie, to: ListPlace?) -> TuiEvent {
        var movie = movie
        movie.version = seq
        return .movie(CommittedEvent(seq: seq, kind: MovieEvent.Kind.restored, movie: movie, at: 0, to: to))
    }

    private func version(_ movie: Movie, _ seq: UInt64) -> Movie {
        var movie = movie
        movie.version = seq
        return movie
    }

    private let matrix = Fixture.matrix
    private let godfather = Fixture.godfather
    private let seven = Fixture.seven

    func testShiftDownAndJMoveTheSelectedRowOncePerEventAndTheSelectionFollowsIt() {
        var store = Fixture.listed()
        let first = TuiRequest.move(movie: "matrix", after: "godfather", expect: 1)
        store.check({ $0.input(.shift(.down), at: 1) }, [.redraw, .send(first)]) {
            $0.moves["matrix"] = .init()
        }
        // The reply first: the row moves when its event comes, never before.
        store.check({ $0.replied(to: first, .moved(seq: 8), at: 1) }, [.redraw]) {
            $0.moves["matrix"]?.seq = 8
        }
        store.check({ $0.received(self.moved(8, self.matrix, to: .after("godfather")), at: 1) }, [.redraw]) {
            $0.entries = [
                .init(movie: self.godfather), .init(movie: self.version(self.matrix, 8)),
                .init(movie: self.seven),
            ]
            $0.model.selected = 1
            $0.lastSeq = 8
            $0.model.seq = 8
            $0.moves = [:]
        }
        // The event first: the move ends with its reply, whose seq the list has seen.
        let second = TuiRequest.move(movie: "matrix", after: "seven", expect: 8)
        store.check({ $0.input(.char("J"), at: 2) }, [.redraw, .send(second)]) {
            $0.moves["matrix"] = .init()
        }
        store.check({ $0.received(self.moved(9, self.matrix, to: .after("seven")), at: 2) }, [.redraw]) {
            $0.entries = [
                .init(movie: self.godfather), .init(movie: self.seven),
                .init(movie: self.version(self.matrix, 9)),
            ]
            $0.model.selected = 2
            $0.lastSeq = 9
            $0.model.seq = 9
        }
        store.check({ $0.replied(to: second, .moved(seq: 9), at: 2) }, [.redraw]) { $0.moves = [:] }
        // Last already: said, nothing sent.
        store.check({ $0.input(.char("J"), at: 3) }, [.redraw]) {
            $0.model.status = "“The Matrix” is already last"
            $0.statusUntil = 7
        }
        // Up: right after the row before the one it passes (first when there is none).
        store.check(
            { $0.input(.char("K"), at: 4) },
            [.redraw, .send(.move(movie: "matrix", after: "godfather", expect: 9))]
        ) { $0.moves["matrix"] = .init() }
        store.check({ $0.received(self.moved(10, self.matrix, to: .after("godfather")), at: 4) }, [.redraw]) {
            $0.entries = [
                .init(movie: self.godfather), .init(movie: self.version(self.matrix, 10)),
                .init(movie: self.seven),
            ]
            $0.model.selected = 1
            $0.lastSeq = 10
            $0.model.seq = 10
        }
        store.check(
            { $0.replied(to: .move(movie: "matrix", after: "godfather", expect: 9), .moved(seq: 10), at: 4) },
            [.redraw]
        ) { $0.moves = [:] }
        store.check(
            { $0.input(.shift(.up), at: 5) },
            [.redraw, .send(.move(movie: "matrix", after: nil, expect: 10))]
        ) { $0.moves["matrix"] = .init() }
        // Without a selection there is nothing to move.
        var empty = Fixture.listed([])
        empty.check({ $0.input(.shift(.down), at: 1) }, [.redraw]) {
            $0.model.status = "Select a row first (↑ ↓)"
            $0.statusUntil = 5
        }
    }

    func testKeysPressedWhileAMoveIsOnItsWayGoAsOneMoveFromWhereItLands() {
        var store = Fixture.listed()
        let first = TuiRequest.move(movie: "matrix", after: "godfather", expect: 1)
        store.check({ $0.input(.char("J"), at: 1) }, [.redraw, .send(first)]) { $0.moves["matrix"] = .init() }
        store.check({ $0.input(.char("J"), at: 1.01) }, [.redraw]) { $0.moves["matrix"]?.steps = 1 }
        store.check({ $0.input(.shift(.down), at: 1.02) }, [.redraw]) { $0.moves["matrix"]?.steps = 2 }
        store.check({ $0.replied(to: first, .moved(seq: 8), at: 1.03) }, [.redraw]) {
            $0.moves["matrix"]?.seq = 8
        }
        // Landed, it goes on as far as the list goes, with the version the move gave it.
        let rest = TuiRequest.move(movie: "matrix", after: "seven", expect: 8)
        store.check(
            { $0.received(self.moved(8, self.matrix, to: .after("godfather")), at: 1.04) },
            [.redraw, .send(rest)]
        ) {
            $0.entries = [
                .init(movie: self.godfather), .init(movie: self.version(self.matrix, 8)),
                .init(movie: self.seven),
            ]
            $0.model.selected = 1
            $0.lastSeq = 8
            $0.model.seq = 8
            $0.moves["matrix"] = .init()
        }
        // Refused (someone changed the movie meanwhile): said; what waited for it goes too.
        store.check({ $0.input(.char("K"), at: 1.05) }, [.redraw]) { $0.moves["matrix"]?.steps = -1 }
        let conflict = "movie \"matrix\" is at version 9, not 8 as expected"
        store.check(
            {
                $0.replied(
                    to: rest, .refused(description: "conflict: \(conflict)", message: conflict), at: 1.1)
            },
            [.redraw]
        ) {
            $0.moves = [:]
            $0.model.status = conflict
            $0.model.statusIsError = true
            $0.statusUntil = 5.1
        }
        // A reply that cannot be read ends the move too, in words.
        store.check({ $0.input(.char("J"), at: 2) }, [.redraw, .send(rest)]) { $0.moves["matrix"] = .init() }
        store.check({ $0.replied(to: rest, .unreadable("a move reply without seq"), at: 2) }, [.redraw]) {
            $0.moves = [:]
            $0.model.status = "The daemon sent a reply this client cannot read: a move reply without seq"
            $0.statusUntil = 6
        }
        // The connection lost: the moves on their way go with it.
        store.check({ $0.input(.char("J"), at: 3) }, [.redraw, .send(rest)]) { $0.moves["matrix"] = .init() }
        _ = store.machine.lost("it closed the connection", at: 3.1)
        XCTAssertEqual(store.state.moves, [:])
        // Not connected: said, and no move is waited for.
        store.check({ $0.input(.char("J"), at: 3.2) }, [.redraw]) {
            $0.model.status = "Not connected: reconnecting…"
            $0.statusUntil = 7.2
        }
    }

    func testADragOnTheGripMovesTheRowWhereItIsLetGoAndMarksWhereItWouldGo() {
        var store = Fixture.listed()
        _ = store.machine.frame(at: 0)  // The Matrix on lines 2 to 4, The Godfather 5 to 7, Se7en 8 to 10
        // The grip is the last column of a row's first two lines.
        store.check({ $0.input(.press(79, 3), at: 1) }, [.redraw]) {
            $0.grip = .init(movie: "matrix", target: 0)
        }
        store.check({ $0.input(.drag(79, 6), at: 1.1) }, [.redraw]) { $0.grip?.target = 1 }
        store.check({ $0.input(.drag(60, 9), at: 1.2) }, [.redraw]) { $0.grip?.target = 2 }
        // The held grip lit, and a line under Se7en where the row would go.
        let grid = store.machine.frame(at: 1.2)
        XCTAssertEqual(store.state.model.dragged, 0)
        XCTAssertEqual(store.state.model.drop, 3)
        XCTAssertEqual(gridLine(grid, 10), String(repeating: "━", count: 80))
        XCTAssertEqual(grid[79, 2].text, "⠿")
        XCTAssertEqual(grid[79, 2].style.foreground, .indexed(39))
        XCTAssertTrue(grid[79, 2].style.bold)
        XCTAssertTrue(grid[79, 5].style.faint, "the others' grips are faint")
        store.check(
            { $0.input(.release(60, 9), at: 1.3) },
            [.redraw, .send(.move(movie: "matrix", after: "seven", expect: 1))]
        ) {
            $0.grip = nil
            $0.moves["matrix"] = .init()
        }
        _ = store.machine.frame(at: 1.3)
        XCTAssertNil(store.state.model.drop)
        XCTAssertNil(store.state.model.dragged)

        // Above the list: the first row's place (the list scrolls up, when it can); marked on
        // the header's rule.
        store.check({ $0.input(.press(79, 8), at: 2) }, [.redraw]) {
            $0.model.selected = 2
            $0.grip = .init(movie: "seven", target: 2)
        }
        store.check({ $0.input(.drag(79, 0), at: 2.1) }, [.redraw]) { $0.grip?.target = 0 }
        XCTAssertEqual(gridLine(store.machine.frame(at: 2.1), 1), String(repeating: "━", count: 80))
        store.check(
            { $0.input(.release(79, 0), at: 2.2) },
            [.redraw, .send(.move(movie: "seven", after: nil, expect: 3))]
        ) {
            $0.grip = nil
            $0.moves["seven"] = .init()
        }
        // Below the rows, and on the footer: the last row's place.
        store.check({ $0.input(.press(79, 6), at: 3) }, [.redraw]) {
            $0.model.selected = 1
            $0.grip = .init(movie: "godfather", target: 1)
        }
        store.check({ $0.input(.drag(79, 15), at: 3.1) }, [.redraw]) { $0.grip?.target = 2 }
        store.check({ $0.input(.drag(79, 23), at: 3.2) }, [.redraw]) { $0.grip?.target = 2 }
        // Let go where it was: nothing.
        store.check({ $0.input(.drag(79, 5), at: 3.3) }, [.redraw]) { $0.grip?.target = 1 }
        XCTAssertNil(store.machine.frame(at: 3.3).text.firstRange(of: "━"), "no mark where it stays")
        store.check({ $0.input(.release(79, 5), at: 3.4) }, [.redraw]) { $0.grip = nil }
        // Off the grip, a press on a row is a swipe's, as ever.
        store.check({ $0.input(.press(78, 3), at: 4) }, [.redraw]) {
            $0.model.selected = 0
            $0.press = .init(movie: "matrix", column: 78, button: nil)
        }
    }

    func testAGripDraggedPastTheEdgesScrollsTheList() {
        let movies = (0..<20).map { Movie(id: "m\($0)", title: "Movie \($0)", image: "", version: 1) }
        var store = Fixture.listed(movies)
        store.check({ $0.input(.key(.end), at: 1) }, [.redraw]) {
            $0.model.selected = 19
            $0.model.scroll = 14
        }
        _ = store.machine.frame(at: 1)  // Movie 14 to Movie 19, from line 2
        store.check({ $0.input(.press(79, 2), at: 2) }, [.redraw]) {
            $0.model.selected = 14
            $0.grip = .init(movie: "m14", target: 14)
        }
        // Each report above the list scrolls it a row; the row first in view is the place.
        store.check({ $0.input(.drag(79, 1), at: 2.1) }, [.redraw]) {
            $0.model.scroll = 13
            $0.grip?.target = 13
        }
        store.check({ $0.input(.drag(79, 0), at: 2.2) }, [.redraw]) {
            $0.model.scroll = 12
            $0.grip?.target = 12
        }
        _ = store.machine.frame(at: 2.2)
        XCTAssertEqual(store.state.model.drop, 12)
        // Below it, down again, to the row last in view.
        store.check({ $0.input(.drag(79, 22), at: 2.3) }, [.redraw]) {
            $0.model.scroll = 13
            $0.grip?.target = 18
        }
        store.check(
            { $0.input(.release(79, 22), at: 2.4) },
            [.redraw, .send(.move(movie: "m14", after: "m18", expect: 1))]
        ) {
            $0.grip = nil
            $0.moves["m14"] = .init()
        }
    }

    func testAnotherPersonsMoveMovesTheRowAtOnceAndAnOpenRowStaysOpen() throws {
        var store = Fixture.listed()
        let open = try Fixture.render("godfather", [.open(row: "godfather", edge: .trailing)])
        store.check(
            { $0.replied(to: .open(movie: "godfather", edge: .trailing), .row(open), at: 0) }, [.redraw]
        ) {
            $0.renders["godfather"] = open
            $0.lastButtons["godfather"] = .init(open.buttons, offset: -70)
            $0.motions["godfather"] = Fixture.motion(open, at: 0)
        }
        // alice puts Se7en first: the rows move, the selection stays on The Matrix, The
        // Godfather stays open, and the line above the keys says who did what.
        store.check({ $0.received(self.moved(8, self.seven, to: .first, by: "alice"), at: 1) }, [.redraw]) {
            $0.entries = [
                .init(movie: self.version(self.seven, 8)), .init(movie: self.matrix),
                .init(movie: self.godfather),
            ]
            $0.model.selected = 1
            $0.lastSeq = 8
            $0.model.seq = 8
            $0.model.status = "alice moved “Se7en” to the top"
            $0.statusIsNews = true
            $0.statusUntil = 5
        }
        let grid = store.machine.frame(at: 1)
        XCTAssertTrue(gridLine(grid, 2).hasPrefix("   S  Se7en"), gridLine(grid, 2))
        XCTAssertTrue(gridLine(grid, 8).hasPrefix("   G  The Godfather"), gridLine(grid, 8))
        XCTAssertTrue(gridLine(grid, 9).hasSuffix("Delete    "), "still open:\n\(grid.text)")
        store.check(
            { $0.received(self.moved(9, self.matrix, to: .after("godfather"), by: "bob"), at: 2) }, [.redraw]
        ) {
            $0.entries = [
                .init(movie: self.version(self.seven, 8)), .init(movie: self.godfather),
                .init(movie: self.version(self.matrix, 9)),
            ]
            $0.model.selected = 2
            $0.lastSeq = 9
            $0.model.seq = 9
            $0.model.status = "bob moved “The Matrix” after “The Godfather”"
            $0.statusUntil = 6
        }
        // A move this list cannot place (a movie or a place it does not know): the list again.
        let heat = Movie(id: "heat", title: "Heat", image: "", version: 1)
        store.check({ $0.received(self.moved(10, heat, to: .first), at: 3) }, [.redraw, .send(.list)]) {
            $0.lastSeq = 10
            $0.model.seq = 10
        }
        store.check(
            { $0.received(self.moved(11, self.seven, to: .after("heat")), at: 3) }, [.redraw, .send(.list)]
        ) {
            $0.lastSeq = 11
            $0.model.seq = 11
        }
    }

    func testARestoredEventThatSaysWherePutsTheMovieBackThere() {
        var store = Fixture.listed()
        store.check({ $0.received(Fixture.event(8, "removed", self.godfather), at: 1) }, [.redraw]) {
            $0.entries[1] = .init(movie: self.version(self.godfather, 8), removedAt: 1, removedSeq: 8)
            $0.collapsing = 1
            $0.lastSeq = 8
            $0.model.seq = 8
        }
        // While it collapses, the list is read again (as before issue 48).
        store.check(
            { $0.received(self.restored(9, self.godfather, to: .after("matrix")), at: 1.1) },
            [.redraw, .send(.list)]
        ) {
            $0.lastSeq = 9
            $0.model.seq = 9
        }
        store.check(
            {
                $0.replied(
                    to: .list,
                    .list(seq: 9, movies: [self.matrix, self.version(self.godfather, 9), self.seven]), at: 1.2
                )
            },
            [.redraw]
        ) {
            $0.entries = [
                .init(movie: self.matrix), .init(movie: self.version(self.godfather, 9)),
                .init(movie: self.seven),
            ]
            $0.collapsing = 0
        }
        store.check({ $0.received(Fixture.event(10, "removed", self.matrix), at: 2) }, [.redraw]) {
            $0.entries[0] = .init(movie: self.version(self.matrix, 10), removedAt: 2, removedSeq: 10)
            $0.collapsing = 1
            $0.lastSeq = 10
            $0.model.seq = 10
        }
        store.check({ $0.tick(at: 2.25) }, [.redraw]) {
            $0.entries.removeFirst()
            $0.collapsing = 0
        }
        // Gone: it comes back where the event says, at once; the selection stays on its movie.
        store.check({ $0.input(.key(.down), at: 3) }, [.redraw]) { $0.model.selected = 1 }
        store.check({ $0.received(self.restored(11, self.matrix, to: .first), at: 3) }, [.redraw]) {
            $0.entries.insert(.init(movie: self.version(self.matrix, 11)), at: 0)
            $0.model.selected = 2
            $0.lastSeq = 11
            $0.model.seq = 11
        }
        store.check({ $0.received(Fixture.event(12, "removed", self.seven), at: 4) }, [.redraw]) {
            $0.entries[2] = .init(movie: self.version(self.seven, 12), removedAt: 4, removedSeq: 12)
            $0.collapsing = 1
            $0.lastSeq = 12
            $0.model.seq = 12
        }
        store.check({ $0.tick(at: 4.3) }, [.redraw]) {
            $0.entries.removeLast()
            $0.collapsing = 0
            $0.model.selected = 1
        }
        store.check({ $0.received(self.restored(13, self.seven, to: .after("matrix")), at: 5) }, [.redraw]) {
            $0.entries.insert(.init(movie: self.version(self.seven, 13)), at: 1)
            $0.model.selected = 2
            $0.lastSeq = 13
            $0.model.seq = 13
        }
        // A `restored` event of an older daemon says nowhere: the list is read again.
        store.check({ $0.received(Fixture.event(14, "removed", self.seven), at: 6) }, [.redraw]) {
            $0.entries[1] = .init(movie: self.version(self.seven, 14), removedAt: 6, removedSeq: 14)
            $0.collapsing = 1
            $0.lastSeq = 14
            $0.model.seq = 14
        }
        store.check({ $0.tick(at: 6.3) }, [.redraw]) {
            $0.entries.remove(at: 1)
            $0.collapsing = 0
            $0.model.selected = 1
        }
        store.check({ $0.received(self.restored(15, self.seven, to: nil), at: 7) }, [.redraw, .send(.list)]) {
            $0.lastSeq = 15
            $0.model.seq = 15
        }
    }

    func testTheViewKeepsItsRowsAndTheSearchItsMatchesWhenRowsMove() {
        let movies = (0..<20).map { Movie(id: "m\($0)", title: "Movie \($0)", image: "", version: 1) }
        var store = Fixture.listed(movies)
        store.check({ $0.input(.char("/"), at: 1) }, [.redraw]) { $0.search = .init(origin: 0) }
        store.check({ $0.input(.char("7"), at: 1) }, [.redraw]) {
            $0.search = .init(text: "7", origin: 0, matches: [7, 17])
            $0.model.selected = 7
            $0.model.scroll = 2
        }
        store.check({ $0.input(.key(.enter), at: 1) }, [.redraw]) { $0.search?.typing = false }
        // A row from above the view to below it: the rows in view stay (the view follows its
        // first row), and so do the matches.
        store.check({ $0.received(self.moved(21, movies[0], to: .after("m19")), at: 2) }, [.redraw]) {
            $0.entries = (Array(movies[1...]) + [self.version(movies[0], 21)]).map { .init(movie: $0) }
            $0.model.selected = 6
            $0.model.scroll = 1
            // (Where the search began follows its movie too.)
            $0.search = .init(text: "7", typing: false, origin: 19, matches: [6, 16])
            $0.lastSeq = 21
            $0.model.seq = 21
        }
        // A match moved into the view: it comes in at its place, the rows after it one down,
        // and the view one down too, to keep the selected row, last in view, in it.
        store.check({ $0.received(self.moved(22, movies[17], to: .after("m3")), at: 3) }, [.redraw]) {
            var order = Array(movies[1...]) + [self.version(movies[0], 21)]
            order.removeAll { $0.id == "m17" }
            order.insert(self.version(movies[17], 22), at: 3)
            $0.entries = order.map { .init(movie: $0) }
            $0.model.selected = 7
            $0.model.scroll = 2
            $0.search = .init(text: "7", typing: false, origin: 19, matches: [3, 7])
            $0.lastSeq = 22
            $0.model.seq = 22
        }
        // Into the rows above the view: one more of them, the view one down.
        store.check({ $0.received(self.moved(23, movies[10], to: .first), at: 4) }, [.redraw]) {
            var order = Array(movies[1...]) + [self.version(movies[0], 21)]
            order.removeAll { $0.id == "m17" || $0.id == "m10" }
            order.insert(self.version(movies[17], 22), at: 3)
            order.insert(self.version(movies[10], 23), at: 0)
            $0.entries = order.map { .init(movie: $0) }
            $0.model.selected = 8
            $0.model.scroll = 3
            $0.search = .init(text: "7", typing: false, origin: 19, matches: [4, 8])
            $0.lastSeq = 23
            $0.model.seq = 23
        }
    }

    func testAReadersMoveIsSaidInWordsAndTypingASearchMovesNothing() {
        var store = TuiTestStore()
        _ = store.machine.hello(writer: false, seq: 7, user: "carol", role: "reader", at: 0)
        _ = store.machine.replied(to: .list, .list(seq: 7, movies: Fixture.movies), at: 0)
        _ = store.machine.replied(to: .subscribe(from: 7), .closed([]), at: 0)
        let move = TuiRequest.move(movie: "matrix", after: "godfather", expect: 1)
        store.check({ $0.input(.shift(.down), at: 1) }, [.redraw, .send(move)]) {
            $0.moves["matrix"] = .init()
        }
        let message = "\"move\" needs the role writer; this connection is carol (reader)"
        store.check({ $0.replied(to: move, .forbidden(message: message), at: 1) }, [.redraw]) {
            $0.moves = [:]
            $0.model.status = "Moving a movie needs the role writer: carol (reader) is read-only here"
            $0.model.statusIsError = true
            $0.statusUntil = 5
        }
        // Typing a search, Shift+↓ does nothing; J is a letter of it.
        store.check({ $0.input(.char("/"), at: 2) }, [.redraw]) { $0.search = .init(origin: 0) }
        store.check({ $0.input(.shift(.down), at: 2) }, [.redraw])
        store.check({ $0.input(.char("J"), at: 2) }, [.redraw]) { $0.search?.text = "J" }
    }
}

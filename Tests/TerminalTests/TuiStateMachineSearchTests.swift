import Movies
import SwipeEngine
import Terminal
import XCTest

/// `/` searches the titles: each fact's actions and every change of state, then the footer, then
/// a list of 100,000 movies whose frames hold only the rows on screen.
final class TuiStateMachineSearchTests: XCTestCase {
    static let titles = [
        "Alien", "The Matrix", "Aliens", "Heat", "Matrix Reloaded", "Up", "Amélie", "The Thing",
    ]
    static let movies = titles.enumerated().map { i, title in
        Movie(id: "m\(i)", title: title, image: "m\(i)", version: 1)
    }

    func type(_ store: inout TuiTestStore, _ text: String, at now: Double = 1) -> [TuiAction] {
        var actions: [TuiAction] = []
        for scalar in text.unicodeScalars { actions += store.machine.input(.char(scalar), at: now) }
        return actions
    }

    func testTypingSelectsTheFirstMatchAndNarrowsAndNAndShiftNGoRound() {
        var store = Fixture.listed(Self.movies)  // 24 lines: 6 rows show
        store.check({ $0.input(.char("j"), at: 1) }, [.redraw]) { $0.model.selected = 1 }
        store.check({ $0.input(.char("/"), at: 1) }, [.redraw]) { $0.search = .init(origin: 1) }
        // Letters A to Z match in either case: "M" is in The Matrix, Matrix Reloaded and
        // Amélie. The first match from the row where / was pressed is selected.
        store.check({ $0.input(.char("M"), at: 1) }, [.redraw]) {
            $0.search = .init(text: "M", origin: 1, matches: [1, 4, 6])
        }
        store.check({ $0.input(.char("a"), at: 1) }, [.redraw]) {
            $0.search = .init(text: "Ma", origin: 1, matches: [1, 4])
        }
        // Typing "reloaded" narrows to the one title and selects it, scrolling it into view.
        _ = type(&store, "trix r")
        XCTAssertEqual(store.state.search, .init(text: "Matrix r", origin: 1, matches: [4]))
        XCTAssertEqual(store.state.model.selected, 4)
        // n and N while typing are text.
        store.check({ $0.input(.char("n"), at: 1) }, [.redraw]) {
            $0.search = .init(text: "Matrix rn", origin: 1, matches: [])
            $0.model.selected = 1
        }
        store.check({ $0.input(.key(.backspace), at: 1) }, [.redraw]) {
            $0.search = .init(text: "Matrix r", origin: 1, matches: [4])
            $0.model.selected = 4
        }
        store.check({ $0.input(.key(.control("u")), at: 1) }, [.redraw]) {
            $0.search = .init(text: "", origin: 1, matches: [])
            $0.model.selected = 1
        }
        _ = type(&store, "t")
        XCTAssertEqual(
            store.state.search?.matches, [1, 3, 4, 7], "The Matrix, Heat, Matrix Reloaded, The Thing")
        XCTAssertEqual(store.state.model.selected, 1)
        // Enter keeps the search; n and N go to the next and previous match, round the list.
        store.check({ $0.input(.key(.enter), at: 1) }, [.redraw]) { $0.search?.typing = false }
        store.check({ $0.input(.char("n"), at: 1) }, [.redraw]) { $0.model.selected = 3 }
        store.check({ $0.input(.char("n"), at: 1) }, [.redraw]) { $0.model.selected = 4 }
        store.check({ $0.input(.char("n"), at: 1) }, [.redraw]) {
            $0.model.selected = 7
            $0.model.scroll = 2
        }
        store.check({ $0.input(.char("n"), at: 1) }, [.redraw]) {
            $0.model.selected = 1
            $0.model.scroll = 1
        }
        store.check({ $0.input(.char("N"), at: 1) }, [.redraw]) {
            $0.model.selected = 7
            $0.model.scroll = 2
        }
        // From a row that is not a match, n and N go to the nearest on either side.
        store.check({ $0.input(.key(.up), at: 1) }, [.redraw]) { $0.model.selected = 6 }
        store.check({ $0.input(.char("N"), at: 1) }, [.redraw]) { $0.model.selected = 4 }
        store.check({ $0.input(.key(.down), at: 1) }, [.redraw]) { $0.model.selected = 5 }
        store.check({ $0.input(.char("n"), at: 1) }, [.redraw]) { $0.model.selected = 7 }
        // Escape ends the search where it is; the next closes rows as before (none open).
        store.check({ $0.input(.key(.escape), at: 1) }, [.redraw]) { $0.search = nil }
        store.check({ $0.input(.key(.escape), at: 1) }, [.redraw])
        store.check({ $0.input(.char("n"), at: 2) }, [.redraw]) {
            $0.model.status = "No search: / searches the titles"
            $0.statusUntil = 6
        }
    }

    func testNothingMatchingGoesBackAndEnterOrEscapeOnNothingEndsTheSearch() {
        var store = Fixture.listed(Self.movies)
        store.check({ $0.input(.char("/"), at: 1) }, [.redraw]) { $0.search = .init(origin: 0) }
        store.check({ $0.input(.key(.enter), at: 1) }, [.redraw]) { $0.search = nil }
        store.check({ $0.input(.char("/"), at: 1) }, [.redraw]) { $0.search = .init(origin: 0) }
        store.check({ $0.input(.char("u"), at: 1) }, [.redraw]) {
            $0.search = .init(text: "u", origin: 0, matches: [5])
            $0.model.selected = 5
            $0.model.scroll = 0
        }
        store.check({ $0.input(.char("z"), at: 1) }, [.redraw]) {
            $0.search = .init(text: "uz", origin: 0, matches: [])
            $0.model.selected = 0
        }
        store.check({ $0.input(.key(.enter), at: 1) }, [.redraw]) { $0.search?.typing = false }
        store.check({ $0.input(.char("n"), at: 2) }, [.redraw]) {
            $0.model.status = "No title contains “uz”"
            $0.statusUntil = 6
        }
        // A new / starts again from the selected row.
        store.check({ $0.input(.char("/"), at: 2) }, [.redraw]) { $0.search = .init(origin: 0) }
        store.check({ $0.input(.key(.escape), at: 2) }, [.redraw]) { $0.search = nil }
    }

    func testTheMatchesFollowRowsThatComeAndGo() {
        var store = Fixture.listed(Self.movies)
        _ = type(&store, "/alien")
        store.check({ $0.input(.key(.enter), at: 1) }, [.redraw]) { $0.search?.typing = false }
        XCTAssertEqual(store.state.search?.matches, [0, 2])
        var aliens = Self.movies[2]
        aliens.version = 8
        store.check({ $0.received(Fixture.event(8, "removed", Self.movies[2]), at: 2) }, [.redraw]) {
            $0.entries[2] = .init(movie: aliens, removedAt: 2, removedSeq: 8)
            $0.collapsing = 1
            $0.search?.matches = [0]
            $0.lastSeq = 8
            $0.model.seq = 8
        }
        store.check({ $0.tick(at: 2.3) }, [.redraw]) {
            $0.entries.remove(at: 2)
            $0.collapsing = 0
        }
        let resurrection = Movie(id: "m9", title: "Alien Resurrection", image: "m9", version: 9)
        store.check({ $0.received(Fixture.event(9, "added", resurrection), at: 3) }, [.redraw]) {
            $0.entries.append(.init(movie: resurrection))
            $0.search?.matches = [0, 7]
            $0.lastSeq = 9
            $0.model.seq = 9
        }
        let ronin = Movie(id: "m10", title: "Ronin", image: "m10", version: 10)
        store.check({ $0.received(Fixture.event(10, "added", ronin), at: 3) }, [.redraw]) {
            $0.entries.append(.init(movie: ronin))
            $0.lastSeq = 10
            $0.model.seq = 10
        }
        store.check({ $0.input(.char("N"), at: 3) }, [.redraw]) {
            $0.model.selected = 7
            $0.model.scroll = 2
        }
    }

    /// The footer says what was typed and how many titles match, and which of them is selected.
    func testTheFooterCountsTheMatches() {
        var store = Fixture.listed(Self.movies)
        _ = type(&store, "/mat")
        var grid = store.machine.frame(at: 1)
        XCTAssertEqual(store.state.model.search, SearchLine(text: "mat", typing: true, count: 2, position: 1))
        XCTAssertEqual(gridLine(grid, 22), " Search: mat▏" + String(repeating: " ", count: 67))
        XCTAssertEqual(gridLine(grid, 23), " 1 of 2  ⏎ done  Esc ends" + String(repeating: " ", count: 55))
        _ = store.machine.input(.key(.enter), at: 1)
        _ = store.machine.input(.key(.up), at: 1)
        grid = store.machine.frame(at: 1)
        XCTAssertEqual(
            gridLine(grid, 23).trimmingCharacters(in: .whitespaces),
            "“mat”: 2 matches  n next  N previous  / again  Esc ends")
        _ = store.machine.input(.char("N"), at: 1)
        grid = store.machine.frame(at: 1)
        XCTAssertEqual(
            gridLine(grid, 23).trimmingCharacters(in: .whitespaces),
            "“mat”: 2 of 2  n next  N previous  / again  Esc ends")
        XCTAssertEqual(
            ScreenLayout.searchKeys(SearchLine(text: "x", typing: true, count: 0), ascii: true),
            " no match  Enter done  Esc ends")
        XCTAssertEqual(
            ScreenLayout.searchKeys(SearchLine(text: "x\u{1B}", typing: false, count: 1), ascii: true),
            " \"x\\u{1B}\": 1 match  n next  N previous  / again  Esc ends",
            "a control character is shown escaped")
    }

    /// 100,000 movies: a frame makes the rows on screen (six whole and the top of a seventh),
    /// wherever the list is scrolled to,
    /// and End, Home, PgUp and PgDn move by the list's length and the screen's.
    func testAFrameOfAHundredThousandMoviesMakesOnlyTheRowsOnScreen() {
        let movies = (0..<100_000).map { Movie(id: "m\($0)", title: "Movie \($0)", image: "", version: 1) }
        var store = Fixture.listed(movies)
        _ = store.machine.frame(at: 1)
        XCTAssertEqual(store.state.model.rows.map(\.title), (0..<7).map { "Movie \($0)" })
        XCTAssertEqual(store.state.model.firstRow, 0)
        store.check({ $0.input(.key(.end), at: 1) }, [.redraw]) {
            $0.model.selected = 99_999
            $0.model.scroll = 99_994
        }
        let grid = store.machine.frame(at: 1)
        XCTAssertEqual(store.state.model.rows.count, 6, "the last six")
        XCTAssertEqual(store.state.model.firstRow, 99_994)
        XCTAssertTrue(gridLine(grid, 17).hasPrefix(" ▶ #  Movie 99999"), gridLine(grid, 17))
        store.check({ $0.input(.key(.pageUp), at: 1) }, [.redraw]) {
            $0.model.selected = 99_993
            $0.model.scroll = 99_993
        }
        store.check({ $0.input(.key(.home), at: 1) }, [.redraw]) {
            $0.model.selected = 0
            $0.model.scroll = 0
        }
        store.check({ $0.input(.key(.pageDown), at: 1) }, [.redraw]) {
            $0.model.selected = 6
            $0.model.scroll = 1
        }
        // A search looks through them all, and finds the one.
        _ = type(&store, "/movie 77777")
        XCTAssertEqual(store.state.search?.matches, [77_777])
        XCTAssertEqual(store.state.model.selected, 77_777)
        _ = store.machine.frame(at: 1)
        XCTAssertEqual(store.state.model.firstRow, 77_772)
        XCTAssertEqual(store.state.model.rows.count, 7)
        XCTAssertEqual(store.state.model.rows[5].title, "Movie 77777")
    }
}

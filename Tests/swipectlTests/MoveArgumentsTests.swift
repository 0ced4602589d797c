import Movies
import XCTest

@testable import swipectl

/// `swipectl move` (issue 48) on swipectl's side: the command line, what `history` and `watch`
/// say of a `moved` event, and that `restored` says what it said before.
final class MoveArgumentsTests: XCTestCase {
    func testMoveTakesAMovieAndEitherAfterOrFirst() throws {
        XCTAssertEqual(
            try command("move", "seven", "--after", "the_green_mile"),
            .move(movie: "seven", to: .after("the_green_mile")))
        // Titles as every MOVIE (resolved when it runs), the options anywhere, = or not.
        XCTAssertEqual(
            try command("--after=the green", "move", "se7en"), .move(movie: "se7en", to: .after("the green")))
        XCTAssertEqual(try command("move", "--first", "matrix"), .move(movie: "matrix", to: .first))
        XCTAssertEqual(try command("move", "matrix", "--first"), .move(movie: "matrix", to: .first))
        XCTAssertEqual(try command("move", "--first", "--", "-x"), .move(movie: "-x", to: .first))
    }

    func testBadMoveCommandLinesAreUsageErrorsThatSayWhy() {
        // The op's `after` is required: no place is no "first".
        XCTAssertEqual(usage("move", "seven"), "'move' needs --after MOVIE or --first")
        XCTAssertEqual(
            usage("move", "seven", "--first", "--after", "matrix"), "give one of --after and --first")
        XCTAssertEqual(usage("move", "--first"), "'move' takes MOVIE, not 0 arguments")
        XCTAssertEqual(
            usage("move", "the", "green", "--first"),
            "'move' takes MOVIE, not 2 arguments (quote a title with spaces)")
        XCTAssertEqual(usage("move", "seven", "--after"), "--after needs a value")
        XCTAssertEqual(usage("move", "seven", "--after="), "--after must be 1 to 1024 bytes long, not 0")
        XCTAssertEqual(usage("move", "seven", "--after", "a", "--after", "b"), "--after given twice")
        XCTAssertEqual(usage("move", "seven", "--first=yes"), "--first takes no value")
        XCTAssertEqual(usage("move", " ", "--first"), "MOVIE must not be empty")
        XCTAssertEqual(usage("remove", "seven", "--first"), "--first does not apply to 'remove'")
        XCTAssertEqual(usage("list", "--after", "seven"), "--after does not apply to 'list'")
    }

    private func event(_ kind: EventKind, to: ListPlace? = nil, from: ListPlace? = nil, undoes: UInt64? = nil)
        -> CommittedEvent
    {
        let seven = Movie(id: "seven", title: "Se7en", image: "seven", version: 12)
        return CommittedEvent(
            seq: 12, kind: kind, movie: seven, at: 0, undoes: undoes, by: "root", to: to, from: from)
    }

    func testHistoryAndWatchSayWhereAMovedMovieWent() {
        XCTAssertEqual(
            History.change(event(MovieEvent.Kind.moved, to: .after("matrix"), from: .first)),
            "moved after matrix")
        XCTAssertEqual(
            History.change(event(MovieEvent.Kind.moved, to: .first, from: .after("matrix"))),
            "moved to the top")
        // The undo of a move is a move back.
        XCTAssertEqual(
            History.change(event(MovieEvent.Kind.moved, to: .after("godfather"), undoes: 11)),
            "moved after godfather (undoes 11)")
        // An id is shown escaped, as titles are (an id holds no control character today; an old
        // log's might).
        XCTAssertEqual(
            History.change(event(MovieEvent.Kind.moved, to: .after("a\u{202E}b"))), "moved after a\\u{202E}b")
        // A `restored` event says what it said before moves existed, with or without its place.
        XCTAssertEqual(History.change(event(MovieEvent.Kind.restored, to: .after("matrix"))), "restored")
        XCTAssertEqual(History.change(event(MovieEvent.Kind.restored)), "restored")
        var columns = WatchColumns(latestSeq: 10, ids: ["matrix", "seven"])
        XCTAssertEqual(
            columns.line(event(MovieEvent.Kind.moved, to: .first), at: "2026-12-06T08:31:02.123456Z"),
            "12   2026-12-06T08:31:02Z  root      moved to the top        seven   Se7en")
        XCTAssertEqual(
            columns.line(
                event(MovieEvent.Kind.moved, to: .after("the_green_mile")), at: "2026-12-06T08:31:03Z"),
            "12   2026-12-06T08:31:03Z  root      moved after the_green_mile  seven   Se7en")
    }

    func testTheUsageNamesMove() {
        XCTAssertTrue(Usage.text.contains("\n  move MOVIE --after MOVIE  put the movie right after"))
        XCTAssertTrue(Usage.text.contains("\n  move MOVIE --first        put the movie first"))
    }
}

import Movies
import XCTest

@testable import swipectl

/// Who made each change (issue 46) on swipectl's side: `history --by NAME` parsed and checked
/// as the daemon checks a name, the BY column of `history` and `watch` (`-` when the daemon does
/// not say), and the summary's next page with `--by`.
final class AuthorColumnTests: XCTestCase {
    private static let matrix = Movie(
        id: "matrix", title: "The Matrix", image: "matrix", watched: true, version: 11)

    private func event(_ seq: UInt64, by: String?, undoes: UInt64? = nil) -> CommittedEvent {
        CommittedEvent(
            seq: seq, kind: MovieEvent.Kind.watchedToggled, movie: Self.matrix, at: 0, undoes: undoes, by: by)
    }

    func testHistoryByTakesAPersonsName() throws {
        XCTAssertEqual(try command("history", "--by", "alice"), .history(from: nil, limit: nil, by: "alice"))
        XCTAssertEqual(
            try command("--by=uid:1001", "history", "--from", "12", "--limit", "5"),
            .history(from: 12, limit: 5, by: "uid:1001"))
        XCTAssertEqual(try command("history"), .history(from: nil, limit: nil, by: nil))
        // What no person's name can be is refused before anything is sent, as the daemon words it.
        XCTAssertEqual(
            usage("history", "--by", "a b"),
            "--by: a name has no spaces or control characters (U+20)")
        XCTAssertEqual(
            usage("history", "--by="), "--by: a name is 1 to 64 bytes; this one is empty")
        XCTAssertEqual(
            usage("history", "--by", String(repeating: "n", count: 65)),
            "--by: a name is 1 to 64 bytes; this one is 65")
        XCTAssertEqual(usage("history", "--by", "a", "--by", "b"), "--by given twice")
        XCTAssertEqual(usage("history", "--by"), "--by needs a value")
        XCTAssertEqual(usage("watch", "--by", "alice"), "--by does not apply to 'watch'")
    }

    func testTheByCellIsTheAuthorOrADash() {
        XCTAssertEqual(History.author(event(11, by: "alice")), "alice")
        // An event of an older build, or an anonymous browser's: a word still, for awk and cut.
        XCTAssertEqual(History.author(event(11, by: nil)), "-")
        // A name is shown escaped, as titles are: no bidi control reorders the line.
        XCTAssertEqual(History.author(event(11, by: "eve\u{202E}x")), "eve\\u{202E}x")
    }

    func testWatchLinesHaveTheByColumnAligned() {
        var columns = WatchColumns(latestSeq: 10, ids: ["matrix", "seven"])
        XCTAssertEqual(
            columns.header, "SEQ  TIME                  BY        CHANGE                  ID      TITLE")
        let at = "2026-12-06T08:31:02.123456Z"
        XCTAssertEqual(
            columns.line(event(11, by: "alice"), at: at),
            "11   2026-12-06T08:31:02Z  alice     watched                 matrix  The Matrix")
        XCTAssertEqual(
            columns.line(event(12, by: nil, undoes: 11), at: at),
            "12   2026-12-06T08:31:02Z  -         watched (undoes 11)     matrix  The Matrix")
        // A name longer than a Unix user's 8 widens its column from that line on.
        XCTAssertEqual(
            columns.line(event(13, by: "alexandra.k"), at: at),
            "13   2026-12-06T08:31:02Z  alexandra.k  watched                 matrix  The Matrix")
        XCTAssertEqual(
            columns.line(event(14, by: "bob"), at: at),
            "14   2026-12-06T08:31:02Z  bob          watched                 matrix  The Matrix")
    }

    func testTheSummaryOffersTheNextPageOfOnePersonsChangesOnlyWhenThePageIsFull() {
        // Without --by, as before: more when the last seq shown is before the latest.
        XCTAssertEqual(
            History.summary(2, latest: 14, last: 13, limit: 2, by: nil),
            "\n2 changes; latest seq 14. More with: swipectl history --from 13 --limit 2\n")
        XCTAssertEqual(
            History.summary(1, latest: 14, last: 14, limit: nil, by: nil), "\n1 change; latest seq 14.\n")
        // With --by, a page short of the limit is all of that person's changes.
        XCTAssertEqual(
            History.summary(1, latest: 14, last: 12, limit: 1, by: "alice"),
            "\n1 change by alice; latest seq 14. More with: swipectl history --by alice --from 12 --limit 1\n"
        )
        XCTAssertEqual(
            History.summary(2, latest: 14, last: 13, limit: nil, by: "alice"),
            "\n2 changes by alice; latest seq 14.\n")
        XCTAssertEqual(
            History.summary(0, latest: 14, last: 0, limit: nil, by: "nobody"),
            "\n0 changes by nobody; latest seq 14.\n")
        // The default limit is the daemon's, 100; a name a shell would split is quoted.
        XCTAssertEqual(
            History.summary(100, latest: 900, last: 400, limit: nil, by: "o'neil"),
            "\n100 changes by o'neil; latest seq 900. More with: swipectl history --by 'o'\\''neil' --from 400\n"
        )
    }
}

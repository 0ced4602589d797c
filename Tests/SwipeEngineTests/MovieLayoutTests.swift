import Movies
import SwipeEngine
import XCTest

final class MovieLayoutTests: XCTestCase {
    func testStandardIsSeed002() {
        XCTAssertEqual(
            MovieLayout.standard,
            Layout(
                leading: [
                    ActionSpec(
                        action: "watched", label: "Watched", icon: "eye", tint: "green",
                        activeIcon: "eye.slash"),
                    ActionSpec(
                        action: "watched-with-friends", label: "With Friends", icon: "person.3",
                        tint: "indigo"),
                ],
                trailing: [
                    ActionSpec(
                        action: "delete", label: "Delete", icon: "trash", tint: "red",
                        role: .destructive)
                ],
                allowsFullSwipeLeading: true, allowsFullSwipeTrailing: true, buttonWidth: 70))
        XCTAssertEqual(MovieLayout.standard.trailing[0].effectiveTint, "red")
    }

    func testWatchedIconFlipsWithTheFlag() {
        let watched = MovieLayout.standard.leading[0]
        XCTAssertEqual(watched.icon(for: MovieLayout.flags(watched: false, watchedWithFriends: true)), "eye")
        XCTAssertEqual(
            watched.icon(for: MovieLayout.flags(watched: true, watchedWithFriends: false)), "eye.slash")
        XCTAssertEqual(watched.label(for: ["watched"]), "Watched")
        let friends = MovieLayout.standard.leading[1]
        XCTAssertEqual(friends.icon(for: ["watched-with-friends"]), "person.3")
    }

    func testFlags() {
        XCTAssertEqual(MovieLayout.flags(watched: false, watchedWithFriends: false), [])
        XCTAssertEqual(MovieLayout.flags(watched: true, watchedWithFriends: false), ["watched"])
        XCTAssertEqual(
            MovieLayout.flags(watched: true, watchedWithFriends: true), ["watched", "watched-with-friends"])
    }

    func testDemo000IsSeed000() {
        let demo = MovieLayout.demo000
        // Outermost first: Text is the leftmost leading button, Trash the rightmost trailing one.
        XCTAssertEqual(demo.leading.map(\.action), ["text", "flag"])
        XCTAssertEqual(demo.trailing.map(\.action), ["trash", "read"])
        XCTAssertTrue(demo.allowsFullSwipeLeading)
        XCTAssertTrue(demo.allowsFullSwipeTrailing)
        // Text: text only, default gray.
        XCTAssertEqual(demo.leading[0].label, "Text")
        XCTAssertNil(demo.leading[0].icon)
        XCTAssertEqual(demo.leading[0].effectiveTint, "gray")
        XCTAssertEqual(demo.leading[1].icon, "flag")
        XCTAssertEqual(demo.leading[1].effectiveTint, "green")
        XCTAssertEqual(demo.trailing[1].icon, "envelope.open")
        XCTAssertEqual(demo.trailing[1].effectiveTint, "blue")
        XCTAssertEqual(demo.trailing[0].effectiveTint, "red")
        XCTAssertNil(demo.trailing[0].role)
    }

    /// Seed 000's visible result: trailing Read | Trash and leading Text | Flag, left to right in
    /// ltr; a full swipe fires Trash (trailing) or Text (leading).
    func testDemo000ShowsAndFiresAsSeed000() throws {
        for (dx, shown, fired) in [(-140.0, ["read", "trash"], "trash"), (140, ["text", "flag"], "text")] {
            var list = SwipeList(layout: MovieLayout.demo000)
            _ = try list.send(.dragChanged(row: "a", dx: dx))
            XCTAssertEqual(list.render("a", flags: []).buttons.map(\.action), shown, "\(dx)")
            let effects = try list.send(.released(row: "a", dx: dx * 3, vx: nil))
            XCTAssertTrue(effects.contains(.fire(row: "a", action: fired)), "\(dx): \(effects)")
        }
    }
}

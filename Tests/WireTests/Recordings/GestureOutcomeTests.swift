// What a connection and a replay share about a gesture (GestureOutcome.swift): the bound
// actions, what an input did to the engine, and a gesture as recorded and back.
import Movies
import SwipeEngine
import XCTest

@testable import Wire

final class GestureOutcomeTests: XCTestCase {
    /// The movie layout's actions are exactly the bound ones, and each runs its own command.
    func testTheMovieLayoutsActionsAreTheBoundActionsEachWithItsCommand() {
        let layout = MovieLayout.standard
        XCTAssertEqual(
            Set((layout.leading + layout.trailing).map(\.action)), Set(BoundAction.allCases.map(\.rawValue)))
        XCTAssertEqual(BoundAction.watched.command(movie: "m"), MovieCommand(.toggleWatched(movie: "m")))
        XCTAssertEqual(
            BoundAction.watchedWithFriends.command(movie: "m"),
            MovieCommand(.toggleWatchedWithFriends(movie: "m")))
        XCTAssertEqual(BoundAction.delete.command(movie: "m"), MovieCommand(.remove(movie: "m")))
        XCTAssertNil(BoundAction(rawValue: "flag"))
    }

    /// A tap fires; a tap on a button that asks to confirm waits; a refused input throws and
    /// leaves the list as it was.
    func testAnOutcomeNamesWhatFiredOrWaits() throws {
        let layout = Layout(
            leading: [ActionSpec(action: "watched", label: "W")],
            trailing: [ActionSpec(action: "delete", label: "D", confirm: true), ActionSpec(action: "flag")],
            allowsFullSwipeLeading: true, allowsFullSwipeTrailing: true)
        var list = SwipeList(layout: layout)
        _ = try list.send(.open(row: "a", edge: .leading))
        let fired = try GestureOutcome(applying: .tapped(row: "a", action: "watched"), to: &list)
        XCTAssertEqual(fired.fired, "watched")
        XCTAssertNil(fired.pending)
        XCTAssertTrue(fired.isBound)
        XCTAssertTrue(fired.effects.contains(.fire(row: "a", action: "watched")))

        _ = try list.send(.open(row: "b", edge: .trailing))
        let waiting = try GestureOutcome(applying: .tapped(row: "b", action: "delete"), to: &list)
        XCTAssertEqual(waiting.pending, "delete")
        XCTAssertNil(waiting.fired)
        XCTAssertTrue(waiting.isBound)

        _ = try list.send(.open(row: "c", edge: .trailing))
        let custom = try GestureOutcome(applying: .tapped(row: "c", action: "flag"), to: &list)
        XCTAssertEqual(custom.fired, "flag")
        XCTAssertFalse(custom.isBound)

        let before = list
        XCTAssertThrowsError(try GestureOutcome(applying: .tapped(row: "d", action: "delete"), to: &list))
        XCTAssertEqual(list, before)
    }

    /// Every gesture input is recorded as an entry that gives it back; the engine's other inputs
    /// are not gestures.
    func testAGestureAsRecordedGivesTheSameInputBack() {
        let gestures: [Input] = [
            .dragChanged(row: "a", dx: -60), .released(row: "a", dx: nil, vx: 300),
            .released(row: "a", dx: -80, vx: nil), .tapped(row: "a", action: "delete"),
            .open(row: "a", edge: .trailing), .perform(row: "a", action: "watched"),
        ]
        for input in gestures {
            let recorded = RecordedInput(gesture: input)
            XCTAssertNotNil(recorded, "\(input)")
            XCTAssertEqual(recorded?.gesture?.input, input)
            XCTAssertEqual(recorded?.gesture?.row, "a")
        }
        for input: Input in [
            .close(row: "a"), .timerFired(row: "a"), .rowRemoved(row: "a"), .confirmTimedOut(row: "a"),
        ] {
            XCTAssertNil(RecordedInput(gesture: input), "\(input)")
        }
        XCTAssertNil(RecordedInput.movieChanged(movie: "a").gesture)
    }
}

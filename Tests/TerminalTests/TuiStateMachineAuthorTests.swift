import Movies
import SwipeEngine
import Terminal
import XCTest

/// Who made each change (issue 46): another person's change said on the line above the keys
/// with their name, their removal undone with u (the message saying whose it was), this front
/// end's own changes and messages left as they were; each fact's actions and every change of
/// state.
final class TuiStateMachineAuthorTests: XCTestCase {
    /// A front end greeted as `user` with `role` (nil, nil: a daemon before people) and given the
    /// three movies: The Matrix, The Godfather (watched), Se7en.
    private func listed(_ user: String? = "root", _ role: String? = "admin") -> TuiTestStore {
        var store = TuiTestStore()
        _ = store.machine.hello(
            writer: role == nil || role == "writer" || role == "admin", seq: 7, user: user, role: role, at: 0)
        _ = store.machine.replied(to: .list, .list(seq: 7, movies: Fixture.movies), at: 0)
        _ = store.machine.replied(to: .subscribe(from: 7), .closed([]), at: 0)
        return store
    }

    private func event(_ seq: UInt64, _ kind: String, _ movie: Movie, by: String?) -> TuiEvent {
        var movie = movie
        movie.version = seq
        return .movie(CommittedEvent(seq: seq, kind: EventKind(kind), movie: movie, at: 0, by: by))
    }

    private func status(_ store: inout TuiTestStore, at now: Double) -> String? {
        _ = store.machine.frame(at: now)
        return store.state.model.status
    }

    func testAnotherPersonsChangesAreSaidWithTheirNameEachTakingThePlaceOfTheLast() {
        var store = listed()
        var matrix = Fixture.matrix
        matrix.watched = true
        store.check({ $0.received(self.event(8, "watched-toggled", matrix, by: "bob"), at: 1) }, [.redraw]) {
            matrix.version = 8
            $0.entries[0].movie = matrix
            $0.lastSeq = 8
            $0.model.seq = 8
            $0.model.status = "bob marked “The Matrix” watched"
            $0.statusUntil = 5
            $0.statusIsNews = true
        }
        var godfather = Fixture.godfather
        godfather.watched = false
        godfather.watchedWithFriends = true
        store.check(
            { $0.received(self.event(9, "watched-with-friends-toggled", godfather, by: "alice"), at: 2) },
            [.redraw]
        ) {
            godfather.version = 9
            $0.entries[1].movie = godfather
            $0.lastSeq = 9
            $0.model.seq = 9
            $0.model.status = "alice marked “The Godfather” watched with friends"
            $0.statusUntil = 6
        }
        let heat = Movie(id: "heat", title: "Heat", image: "heat", version: 10)
        store.check({ $0.received(self.event(10, "added", heat, by: "alice"), at: 3) }, [.redraw]) {
            $0.entries.append(.init(movie: heat))
            $0.lastSeq = 10
            $0.model.seq = 10
            $0.model.status = "alice added “Heat”"
            $0.statusUntil = 7
        }
        matrix.watched = false
        store.check({ $0.received(self.event(11, "watched-toggled", matrix, by: "bob"), at: 4) }, [.redraw]) {
            matrix.version = 11
            $0.entries[0].movie = matrix
            $0.lastSeq = 11
            $0.model.seq = 11
            $0.model.status = "bob marked “The Matrix” not watched"
            $0.statusUntil = 8
        }
        godfather.watchedWithFriends = false
        store.check(
            { $0.received(self.event(12, "watched-with-friends-toggled", godfather, by: "bob"), at: 4) },
            [.redraw]
        ) {
            godfather.version = 12
            $0.entries[1].movie = godfather
            $0.lastSeq = 12
            $0.model.seq = 12
            $0.model.status = "bob marked “The Godfather” not watched with friends"
        }
        // A restore reads the list again (its place is the daemon's to say); a kind a later
        // protocol 1 adds is a change all the same.
        store.check(
            { $0.received(self.event(13, "restored", Fixture.seven, by: "bob"), at: 5) },
            [.redraw, .send(.list)]
        ) {
            $0.lastSeq = 13
            $0.model.seq = 13
            $0.model.status = "bob restored “Se7en”"
            $0.statusUntil = 9
        }
        store.check({ $0.received(self.event(14, "retitled", Fixture.seven, by: "eve"), at: 6) }, [.redraw]) {
            var seven = Fixture.seven
            seven.version = 14
            $0.entries[2].movie = seven
            $0.lastSeq = 14
            $0.model.seq = 14
            $0.model.status = "eve changed “Se7en”"
            $0.statusUntil = 10
        }
        // The message ends as any other does; the next comes on a line of its own again.
        XCTAssertEqual(store.machine.nextDeadline(), 10)
        store.check({ $0.tick(at: 10) }, [.redraw]) {
            $0.model.status = nil
            $0.statusUntil = nil
        }
        XCTAssertEqual(
            gridLine(store.machine.frame(at: 10), 22), String(repeating: " ", count: 80), "the line is clear")
    }

    func testOwnChangesAreNotSaidNorAnythingFromADaemonThatNamesNobody() {
        var store = listed("alice", "writer")
        var matrix = Fixture.matrix
        matrix.watched = true
        // alice's own, from this front end or another door (the same name is the same person).
        store.check({ $0.received(self.event(8, "watched-toggled", matrix, by: "alice"), at: 1) }, [.redraw])
        {
            matrix.version = 8
            $0.entries[0].movie = matrix
            $0.lastSeq = 8
            $0.model.seq = 8
        }
        // No `by` from a daemon that names this connection: a person it names nobody for.
        matrix.watched = false
        store.check({ $0.received(self.event(9, "watched-toggled", matrix, by: nil), at: 1) }, [.redraw]) {
            matrix.version = 9
            $0.entries[0].movie = matrix
            $0.lastSeq = 9
            $0.model.seq = 9
            $0.model.status = "Someone marked “The Matrix” not watched"
            $0.statusUntil = 5
            $0.statusIsNews = true
        }

        // A daemon before people names nobody, this connection neither: nothing to say.
        var old = listed(nil, nil)
        old.check({ $0.received(self.event(8, "removed", Fixture.seven, by: nil), at: 1) }, [.redraw]) {
            var seven = Fixture.seven
            seven.version = 8
            $0.entries[2] = .init(movie: seven, removedAt: 1, removedSeq: 8)
            $0.collapsing = 1
            $0.lastSeq = 8
            $0.model.seq = 8
        }
    }

    func testAnotherPersonsRemovalIsUndoneWithUAndTheMessageSaysWhose() {
        var store = listed()
        var removed = Fixture.matrix
        removed.version = 8
        store.check({ $0.received(self.event(8, "removed", Fixture.matrix, by: "alice"), at: 1) }, [.redraw])
        {
            $0.entries[0] = .init(movie: removed, removedAt: 1, removedSeq: 8)
            $0.collapsing = 1
            $0.lastSeq = 8
            $0.model.seq = 8
            $0.undo = .init(movie: "matrix", title: "The Matrix", seq: 8, until: 6, by: .person("alice"))
            $0.statusIsNews = true
        }
        XCTAssertEqual(store.machine.nextDeadline(), 6)
        XCTAssertEqual(status(&store, at: 1.1), "alice removed “The Matrix” — press u to undo")
        XCTAssertEqual(
            gridLine(store.machine.frame(at: 1.1), 22).trimmingTrailingSpaces,
            " alice removed “The Matrix” — press u to undo")
        let restore = TuiRequest.restore(
            movie: "matrix", expect: 8, title: "The Matrix", removedBy: .person("alice"))
        store.check({ $0.input(.char("u"), at: 2) }, [.redraw, .send(restore)]) {
            $0.undo = nil
            $0.model.status = nil
        }
        store.check({ $0.replied(to: restore, .ok, at: 2.1) }, [.redraw]) {
            $0.model.status = "Restored “The Matrix”, which alice removed"
            $0.statusUntil = 6.1
            $0.statusIsNews = false
        }
        // This front end's own restore is not another person's change.
        store.check(
            { $0.received(self.event(9, "restored", Fixture.matrix, by: "root"), at: 2.2) },
            [.redraw, .send(.list)]
        ) {
            $0.lastSeq = 9
            $0.model.seq = 9
        }

        // A removal nobody is named for: "Someone". (The message before it is over: its time
        // has passed, though no tick came to clear it.)
        store.check({ $0.received(self.event(10, "removed", Fixture.seven, by: nil), at: 7) }, [.redraw]) {
            var seven = Fixture.seven
            seven.version = 10
            $0.entries[2] = .init(movie: seven, removedAt: 7, removedSeq: 10)
            $0.collapsing = 2
            $0.lastSeq = 10
            $0.model.seq = 10
            $0.undo = .init(movie: "seven", title: "Se7en", seq: 10, until: 12, by: .someone)
            $0.model.status = nil
            $0.statusIsNews = true
            $0.statusUntil = nil
        }
        XCTAssertEqual(status(&store, at: 7.1), "Someone removed “Se7en” — press u to undo")
        let again = TuiRequest.restore(movie: "seven", expect: 10, title: "Se7en", removedBy: .someone)
        store.check({ $0.input(.char("u"), at: 8) }, [.redraw, .send(again)]) {
            $0.undo = nil
            $0.model.status = nil
        }
        store.check({ $0.replied(to: again, .ok, at: 8) }, [.redraw]) {
            $0.model.status = "Restored “Se7en”, which someone removed"
            $0.statusUntil = 12
            $0.statusIsNews = false
        }
    }

    func testAReaderIsToldOfARemovalWithoutAnUndo() {
        var store = listed("carol", "reader")
        store.check({ $0.received(self.event(8, "removed", Fixture.seven, by: "alice"), at: 1) }, [.redraw]) {
            var seven = Fixture.seven
            seven.version = 8
            $0.entries[2] = .init(movie: seven, removedAt: 1, removedSeq: 8)
            $0.collapsing = 1
            $0.lastSeq = 8
            $0.model.seq = 8
            $0.model.status = "alice removed “Se7en”"
            $0.statusUntil = 5
            $0.statusIsNews = true
        }
        store.check({ $0.input(.char("u"), at: 2) }, [.redraw]) {
            $0.model.status = "Nothing to undo"
            $0.statusUntil = 6
            $0.statusIsNews = false
        }
    }

    /// The line keeps what this front end's person still needs: the undo of their own delete and
    /// a message of the front end's own while it shows. Another person's removal hint goes when
    /// the movie is restored, and this front end's own delete takes its place.
    func testOwnMessagesAndOwnUndoAreNotReplacedByOtherPeoplesChanges() throws {
        var store = listed()
        // A message of the front end's own (what a key did) stays its 4 s.
        store.check({ $0.input(.char("u"), at: 1) }, [.redraw]) {
            $0.model.status = "Nothing to undo"
            $0.statusUntil = 5
        }
        var matrix = Fixture.matrix
        matrix.watched = true
        store.check({ $0.received(self.event(8, "watched-toggled", matrix, by: "bob"), at: 2) }, [.redraw]) {
            matrix.version = 8
            $0.entries[0].movie = matrix
            $0.lastSeq = 8
            $0.model.seq = 8
        }
        // Not even a removal's undo takes its place.
        store.check({ $0.received(self.event(9, "removed", Fixture.seven, by: "bob"), at: 3) }, [.redraw]) {
            var seven = Fixture.seven
            seven.version = 9
            $0.entries[2] = .init(movie: seven, removedAt: 3, removedSeq: 9)
            $0.collapsing = 1
            $0.lastSeq = 9
            $0.model.seq = 9
        }
        store.check({ $0.tick(at: 5) }, [.redraw]) {
            $0.entries.removeLast()
            $0.collapsing = 0
            $0.model.status = nil
            $0.statusUntil = nil
        }

        // This front end's own delete, its event first: its undo hint is not replaced.
        let fired = try Fixture.render("matrix", [.perform(row: "matrix", action: "delete")])
        store.check({ $0.received(self.event(10, "removed", matrix, by: "root"), at: 6) }, [.redraw]) {
            matrix.version = 10
            $0.entries[0] = .init(movie: matrix, removedAt: 6, removedSeq: 10)
            $0.collapsing = 1
            $0.lastSeq = 10
            $0.model.seq = 10
        }
        store.check(
            {
                $0.replied(
                    to: .perform(movie: "matrix", action: "delete"),
                    .row(fired, fired: TuiFired(action: "delete", seq: 10)), at: 6)
            }, [.redraw]
        ) {
            $0.motions["matrix"] = Fixture.motion(fired, at: 6)
            $0.undo = .init(movie: "matrix", title: "The Matrix", seq: 10, until: 11)
        }
        var godfather = Fixture.godfather
        godfather.watched = false
        store.check(
            { $0.received(self.event(11, "watched-toggled", godfather, by: "alice"), at: 7) }, [.redraw]
        ) {
            godfather.version = 11
            $0.entries[1].movie = godfather
            $0.lastSeq = 11
            $0.model.seq = 11
        }
        store.check({ $0.received(self.event(12, "removed", godfather, by: "alice"), at: 7.5) }, [.redraw]) {
            godfather.version = 12
            $0.entries[1] = .init(movie: godfather, removedAt: 7.5, removedSeq: 12)
            $0.collapsing = 2
            $0.lastSeq = 12
            $0.model.seq = 12
        }
        XCTAssertEqual(status(&store, at: 8), "Deleted “The Matrix” — press u to undo")
        // Someone else restoring it ends the hint: there is nothing left to undo.
        store.check(
            { $0.received(self.event(13, "restored", matrix, by: "alice"), at: 9) }, [.redraw, .send(.list)]
        ) {
            $0.lastSeq = 13
            $0.model.seq = 13
            $0.undo = nil
            $0.model.status = "alice restored “The Matrix”"
            $0.statusUntil = 13
            $0.statusIsNews = true
        }
    }
}

extension String {
    fileprivate var trimmingTrailingSpaces: String {
        var s = Substring(self)
        while s.last == " " { s.removeLast() }
        return String(s)
    }
}

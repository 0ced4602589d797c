import Movies
import SwipeEngine
import Terminal
import XCTest

/// The daemon's side, without a socket: replies and events, undo, reconnects, recording,
/// sharing and ghosts; each fact's actions and every change of state.
final class TuiStateMachineDaemonTests: XCTestCase {
    func testADeleteCanBeUndoneWhicheverOfItsReplyAndEventComesFirst() throws {
        var store = Fixture.listed()
        store.check(
            { $0.input(.char("d"), at: 1) }, [.redraw, .send(.perform(movie: "matrix", action: "delete"))])
        let fired = try Fixture.render("matrix", [.perform(row: "matrix", action: "delete")])
        let perform = TuiRequest.perform(movie: "matrix", action: "delete")
        XCTAssertEqual(fired.phase, .closed, "a perform on a closed row fires without moving it")
        // The reply first: the hint waits for the removal.
        store.check(
            { $0.replied(to: perform, .row(fired, fired: TuiFired(action: "delete", seq: 8)), at: 1) },
            [.redraw]
        ) {
            $0.motions["matrix"] = Fixture.motion(fired, at: 1)
            $0.pendingUndo = 8
        }
        var removed = Fixture.matrix
        removed.version = 8
        store.check({ $0.received(Fixture.event(8, "removed", Fixture.matrix), at: 1.1) }, [.redraw]) {
            $0.entries[0] = .init(movie: removed, removedAt: 1.1, removedSeq: 8)
            $0.collapsing = 1
            $0.renders["matrix"] = nil
            $0.pendingUndo = nil
            $0.undo = .init(movie: "matrix", title: "The Matrix", seq: 8, until: 1.1 + 5)
            $0.lastSeq = 8
            $0.model.seq = 8
        }
        XCTAssertEqual(store.machine.nextDeadline(), 1.1 + 5)
        XCTAssertTrue(store.machine.isAnimating(at: 1.2))
        _ = store.machine.frame(at: 1.2)
        XCTAssertEqual(store.state.model.status, "Deleted “The Matrix” — press u to undo")
        assertClose(store.state.model.rows.map(\.height), [0.6, 1, 1], accuracy: 1e-9)
        // Collapsed, the row goes; the selection stays on the row at its place.
        store.check({ $0.tick(at: 1.3) }, [])
        store.check({ $0.tick(at: 1.35) }, [.redraw]) {
            $0.entries.removeFirst()
            $0.collapsing = 0
            $0.motions["matrix"] = nil
            $0.lastButtons["matrix"] = nil
        }
        store.check(
            { $0.input(.char("u"), at: 2) },
            [
                .redraw, .send(.restore(movie: "matrix", expect: 8, title: "The Matrix")),
            ]
        ) {
            $0.undo = nil
            $0.model.status = nil
        }
        store.check(
            { $0.replied(to: .restore(movie: "matrix", expect: 8, title: "The Matrix"), .ok, at: 2) },
            [.redraw]
        ) {
            $0.model.status = "Restored “The Matrix”"
            $0.statusUntil = 6
        }
        store.check(
            { $0.received(Fixture.event(9, "restored", Fixture.matrix), at: 2) }, [.redraw, .send(.list)]
        ) {
            $0.lastSeq = 9
            $0.model.seq = 9
        }
        let back = Fixture.movies.map { movie -> Movie in
            var movie = movie
            if movie.id == "matrix" { movie.version = 9 }
            return movie
        }
        // The list puts it back at its place, and the selection follows the row it was on.
        store.check({ $0.replied(to: .list, .list(seq: 9, movies: back), at: 2) }, [.redraw]) {
            $0.entries = back.map { .init(movie: $0) }
            $0.model.selected = 1
        }

        // The event first: the reply starts the hint.
        store.check({ $0.input(.char("j"), at: 3) }, [.redraw]) { $0.model.selected = 2 }
        store.check({ $0.received(Fixture.event(10, "removed", Fixture.seven), at: 3) }, [.redraw]) {
            var seven = Fixture.seven
            seven.version = 10
            $0.entries[2] = .init(movie: seven, removedAt: 3, removedSeq: 10)
            $0.collapsing = 1
            $0.lastSeq = 10
            $0.model.seq = 10
        }
        store.check(
            {
                $0.replied(
                    to: .perform(movie: "seven", action: "delete"),
                    .row(nil, fired: TuiFired(action: "delete", seq: 10)), at: 3)
            }, [.redraw]
        ) {
            $0.undo = .init(movie: "seven", title: "Se7en", seq: 10, until: 8)
        }
        // When the hint ends, u has nothing to undo.
        store.check({ $0.tick(at: 3.25) }, [.redraw]) {
            $0.entries.removeLast()
            $0.collapsing = 0
            $0.model.selected = 1
        }
        store.check({ $0.tick(at: 8) }, [.redraw]) {
            $0.undo = nil
            $0.statusUntil = nil
            $0.model.status = nil
        }
        store.check({ $0.input(.char("u"), at: 9) }, [.redraw]) {
            $0.model.status = "Nothing to undo"
            $0.statusUntil = 13
        }
        XCTAssertEqual(store.machine.nextDeadline(), 13)
    }

    func testEventsChangeTheListOnceInSeqOrder() {
        var store = Fixture.listed()
        var watched = Fixture.seven
        watched.watched = true
        store.check({ $0.received(Fixture.event(8, "watched-toggled", watched), at: 1) }, [.redraw]) {
            watched.version = 8
            $0.entries[2].movie = watched
            $0.lastSeq = 8
            $0.model.seq = 8
        }
        // Already seen (a list or an event at or after it): nothing.
        store.check({ $0.received(Fixture.event(8, "watched-toggled", Fixture.seven), at: 1) }, [.redraw])
        store.check({ $0.received(Fixture.event(5, "added", Fixture.seven), at: 1) }, [.redraw])
        // An added movie already there stays once; a change to a movie not there reads the list.
        store.check({ $0.received(Fixture.event(9, "added", Fixture.seven), at: 1) }, [.redraw]) {
            $0.lastSeq = 9
            $0.model.seq = 9
        }
        let heat = Movie(id: "heat", title: "Heat", image: "", version: 1)
        store.check(
            { $0.received(Fixture.event(10, "watched-toggled", heat), at: 1) }, [.redraw, .send(.list)]
        ) {
            $0.lastSeq = 10
            $0.model.seq = 10
        }
        // An older list than the events seen is not applied.
        store.check({ $0.replied(to: .list, .list(seq: 9, movies: []), at: 1) }, [.redraw])
        store.check({ $0.received(.other, at: 1) }, [.redraw])
    }

    func testRowRepliesAndEventsSayWhatDidNotHappen() throws {
        var layout = MovieLayout.standard
        layout.trailing[0].confirm = true
        layout.trailing[0].confirmLabel = "Delete?"
        let confirming = try Fixture.render(
            "matrix", [.perform(row: "matrix", action: "delete")], layout: layout)
        XCTAssertEqual(confirming.phase, .confirming)
        var store = Fixture.listed()
        let perform = TuiRequest.perform(movie: "matrix", action: "delete")
        store.check({ $0.replied(to: perform, .row(confirming, pending: "delete"), at: 1) }, [.redraw]) {
            $0.renders["matrix"] = confirming
            $0.lastButtons["matrix"] = .init(confirming.buttons, offset: -70)
            $0.motions["matrix"] = Fixture.motion(confirming, at: 1)
            $0.model.status = "Confirm delete: click “Delete?” or press Enter within 3 s"
            $0.statusUntil = 5
        }
        let closed = try Fixture.render("matrix", [], layout: layout)
        store.check({ $0.received(.row(closed, removed: false, cancelled: "timeout"), at: 4) }, [.redraw]) {
            $0.renders["matrix"] = nil
            $0.motions["matrix"] = Fixture.motion(closed, at: 4, from: $0.motions["matrix"]!)
            $0.model.status = "Not confirmed within 3 s: nothing happened"
            $0.statusUntil = 8
        }
        store.check(
            {
                $0.replied(
                    to: perform, .row(nil, fired: TuiFired(action: "delete", error: "it is gone")), at: 5)
            }, [.redraw]
        ) {
            $0.model.status = "delete did not happen: it is gone"
            $0.model.statusIsError = true
            $0.statusUntil = 9
        }
        store.check(
            { $0.replied(to: perform, .row(nil, unreadable: "malformed row object"), at: 6) }, [.redraw]
        ) {
            $0.model.status = "The daemon sent a row this client cannot read: malformed row object"
            $0.statusUntil = 10
        }
        store.check(
            {
                $0.replied(
                    to: perform, .refused(description: "not-found: no movie", message: "no movie"), at: 7)
            }, [.redraw]
        ) {
            $0.model.status = "no movie"
            $0.statusUntil = 11
        }
        store.check({ $0.replied(to: .closeAll, .closed([]), at: 7) }, [.redraw])
        let open = try Fixture.render("seven", [.open(row: "seven", edge: .leading)])
        store.check({ $0.received(.row(open, removed: false, cancelled: nil), at: 8) }, [.redraw]) {
            $0.renders["seven"] = open
            $0.lastButtons["seven"] = .init(open.buttons, offset: 140)
            $0.motions["seven"] = Fixture.motion(open, at: 8)
        }
        store.check({ $0.received(.row(open, removed: true, cancelled: nil), at: 8) }, [.redraw]) {
            $0.renders["seven"] = nil
        }
    }

    func testALostDaemonIsTriedAgainWithBackoffAndCaughtUpFromTheLastSeq() throws {
        var store = Fixture.listed()
        let open = try Fixture.render("matrix", [.open(row: "matrix", edge: .leading)])
        store.check({ $0.replied(to: .open(movie: "matrix", edge: .leading), .row(open), at: 1) }, [.redraw])
        {
            $0.renders["matrix"] = open
            $0.lastButtons["matrix"] = .init(open.buttons, offset: 140)
            $0.motions["matrix"] = Fixture.motion(open, at: 1)
        }
        _ = store.machine.frame(at: 1)
        store.check({ $0.input(.press(10, 6), at: 1) }, [.redraw]) {
            $0.model.selected = 1
            $0.press = .init(movie: "godfather", column: 10, button: nil)
        }
        store.check({ $0.lost("it closed the connection", at: 2) }, [.disconnect, .redraw]) {
            $0.connected = false
            $0.press = nil
            $0.renders = [:]
            $0.motions["matrix"]!.retarget(0, spring: Fixture.settle, at: 2)
            $0.model.connection = .reconnecting(attempt: 1)
            $0.model.status = "Lost the daemon (it closed the connection); reconnecting…"
            $0.model.statusIsError = true
            $0.reconnectAt = 2 + 0.1
            $0.attempt = 1
        }
        XCTAssertEqual(store.machine.nextDeadline(), 2 + 0.1)
        store.check({ $0.input(.char("w"), at: 2) }, [.redraw]) {
            $0.model.status = "Not connected: reconnecting…"
            $0.statusUntil = 6
        }
        store.check({ $0.tick(at: 2.05) }, [])
        store.check({ $0.tick(at: 2 + 0.1) }, [.connect]) { $0.reconnectAt = nil }
        // The attempt fails: the next waits longer.
        store.check({ $0.lost("connect: No such file or directory", at: 2.1) }, [.disconnect, .redraw]) {
            $0.model.connection = .reconnecting(attempt: 2)
            $0.model.status = "Lost the daemon (connect: No such file or directory); reconnecting…"
            $0.statusUntil = nil
            $0.reconnectAt = 2.1 + 0.2
            $0.attempt = 2
        }
        store.check({ $0.tick(at: 2.5) }, [.connect]) { $0.reconnectAt = nil }
        store.check({ $0.connected(at: 2.5) }, [.redraw]) {
            $0.connected = true
            $0.model.connection = .connecting
        }
        store.check(
            { $0.hello(writer: false, seq: 12, at: 2.4) },
            [
                .redraw, .send(.viewport(width: 400, direction: .ltr)), .send(.subscribe(from: 7)),
            ]
        ) {
            $0.model.connection = .connected
            $0.model.writer = false
            $0.model.status = "Reconnected; caught up from seq 7"
            $0.model.statusIsError = false
            $0.statusUntil = 2.4 + 4
            $0.attempt = 0
        }
        for _ in 0..<8 { _ = store.machine.lost("x", at: 3) }
        XCTAssertEqual(store.state.reconnectAt, 8, "the backoff stops growing at 5 s")
    }

    /// Back with another log (its hello names another one: imported or restored meanwhile):
    /// the seqs and movies kept are of the old log, so they go, and the list is read again
    /// instead of caught up from seq 7. The same log, or a hello without an id, catches up.
    func testAnotherLogAfterAReconnectIsListedAgainNotCaughtUp() throws {
        var store = TuiTestStore()
        store.check(
            { $0.hello(writer: true, seq: 7, log: "aaaa", at: 0) },
            [.redraw, .send(.viewport(width: 400, direction: .ltr)), .send(.list)]
        ) {
            $0.model.connection = .connected
            $0.log = "aaaa"
        }
        store.check(
            { $0.replied(to: .list, .list(seq: 7, movies: Fixture.movies), at: 0) },
            [.redraw, .send(.subscribe(from: 7))]
        ) {
            $0.entries = Fixture.movies.map { TuiState.Entry(movie: $0) }
            $0.lastSeq = 7
            $0.model.seq = 7
            $0.model.selected = 0
        }
        // The same log again, then one that does not say: caught up from the seq kept.
        for log in ["aaaa", nil] {
            _ = store.machine.lost("it closed the connection", at: 1)
            _ = store.machine.connected(at: 1)
            XCTAssertEqual(
                store.machine.hello(writer: true, seq: 9, log: log, at: 1),
                [.redraw, .send(.viewport(width: 400, direction: .ltr)), .send(.subscribe(from: 7))])
            XCTAssertEqual(store.state.log, "aaaa")
            XCTAssertEqual(store.state.entries.count, 3)
        }
        store.check({ $0.input(.char("j"), at: 2) }, [.redraw]) { $0.model.selected = 1 }
        _ = store.machine.lost("it closed the connection", at: 3)
        _ = store.machine.connected(at: 3)
        store.check(
            { $0.hello(writer: true, seq: 4, log: "bbbb", at: 3) },
            [.redraw, .send(.viewport(width: 400, direction: .ltr)), .send(.list)]
        ) {
            $0.model.connection = .connected
            $0.log = "bbbb"
            $0.entries = []
            $0.lastSeq = nil
            $0.model.seq = 0
            $0.model.selected = nil
            $0.model.status = "Reconnected to another log (imported or restored): listed again"
            $0.model.statusIsError = false
            $0.statusUntil = 3 + 4
            $0.attempt = 0
        }
        // The new log's list, whatever its seq against the old one's, and a subscribe from it.
        let movies = Array(Fixture.movies.prefix(2))
        store.check(
            { $0.replied(to: .list, .list(seq: 4, movies: movies), at: 3) },
            [.redraw, .send(.subscribe(from: 4))]
        ) {
            $0.entries = movies.map { TuiState.Entry(movie: $0) }
            $0.lastSeq = 4
            $0.model.seq = 4
            $0.model.selected = 0
        }
    }

    func testWhatTheDaemonCannotBeReadWithoutIsALostConnection() {
        var store = TuiTestStore()
        store.check(
            { $0.hello(writer: true, seq: 0, at: 0) },
            [
                .redraw, .send(.viewport(width: 400, direction: .ltr)), .send(.list),
            ]
        ) { $0.model.connection = .connected }
        store.check(
            { $0.replied(to: .list, .unreadable("the daemon sent a list without seq and movies"), at: 1) },
            [
                .redraw, .disconnect,
            ]
        ) {
            $0.connected = false
            $0.model.connection = .reconnecting(attempt: 1)
            $0.model.status = "Lost the daemon (the daemon sent a list without seq and movies); reconnecting…"
            $0.model.statusIsError = true
            $0.reconnectAt = 1 + 0.1
            $0.attempt = 1
        }
        store.check(
            { $0.replied(to: .subscribe(from: 3), .refused(description: "gone: x", message: "x"), at: 2) },
            [
                .redraw, .disconnect,
            ]
        ) {
            $0.model.connection = .reconnecting(attempt: 2)
            $0.model.status = "Lost the daemon (gone: x); reconnecting…"
            $0.reconnectAt = 2 + 0.2
            $0.attempt = 2
        }
        store.check({ $0.received(.bye(reason: "shutdown"), at: 3) }, [.redraw, .disconnect]) {
            $0.model.connection = .reconnecting(attempt: 3)
            $0.model.status = "Lost the daemon (it said bye: shutdown); reconnecting…"
            $0.reconnectAt = 3 + 0.4
            $0.attempt = 3
        }
    }
}

/// Each of `a` within `accuracy` of `b`'s.
func assertClose(
    _ a: [Double], _ b: [Double], accuracy: Double, file: StaticString = #filePath, line: UInt = #line
) {
    XCTAssert(
        a.count == b.count && zip(a, b).allSatisfy { abs($0 - $1) <= accuracy }, "\(a) is not \(b)",
        file: file,
        line: line)
}

import Movies
import SwipeEngine
import Terminal
import XCTest

/// Who the front end acts for (issue 45): the sign-in first on every connection, the header's
/// person and role, `role` events, a refusal of what the role may not do in words, `bye`
/// `revoked`; each fact's actions and every change of state.
final class TuiStateMachinePeopleTests: XCTestCase {
    private let signingIn = TuiOptions(socket: "./swiped.sock", signsIn: true)

    /// A front end signed in as `user` with `role` (its Unix user root, an admin, before that)
    /// and given the three movies.
    private func signedIn(_ user: String?, _ role: String) -> TuiTestStore {
        var store = TuiTestStore(signingIn)
        _ = store.machine.hello(writer: true, seq: 7, user: "root", role: "admin", at: 0)
        _ = store.machine.replied(to: .signIn(quiet: false), .signedIn(user: user, role: role), at: 0)
        _ = store.machine.replied(to: .list, .list(seq: 7, movies: Fixture.movies), at: 0)
        _ = store.machine.replied(to: .subscribe(from: 7), .closed([]), at: 0)
        _ = store.machine.tick(at: 10)  // the "Signed in" message is over
        return store
    }

    private func header(_ store: inout TuiTestStore, at now: Double = 20) -> String {
        gridLine(store.machine.frame(at: now), 0)
    }

    func testATokenSignsInFirstOnEveryConnectionAndTheHeaderSaysWho() {
        var store = TuiTestStore(signingIn)
        // The sign-in goes first: the daemon holds what follows until it answers, so the list
        // and everything after it is the token's person's.
        store.check(
            { $0.hello(writer: true, seq: 7, user: "root", role: "admin", at: 0) },
            [
                .redraw, .send(.signIn(quiet: false)), .send(.viewport(width: 400, direction: .ltr)),
                .send(.list),
            ]
        ) {
            $0.model.connection = .connected
            $0.model.user = "root"
            $0.model.role = "admin"
            $0.model.signingIn = true
        }
        // Until the reply, the header shows neither the Unix user nor the token's person.
        XCTAssertTrue(
            header(&store, at: 0).hasPrefix(" swiped  ● connected  seq 0  signing in…  ./swiped.sock"))
        store.check(
            { $0.replied(to: .signIn(quiet: false), .signedIn(user: "alice", role: "writer"), at: 0.1) },
            [.redraw]
        ) {
            $0.model.user = "alice"
            $0.model.role = "writer"
            $0.model.signingIn = false
            $0.model.status = "Signed in as alice (writer)"
            $0.statusUntil = 4.1
        }
        XCTAssertTrue(
            header(&store, at: 0.2).hasPrefix(" swiped  ● connected  seq 0  alice (writer)  ./swiped.sock"))

        // A new connection signs in again, quietly: the reconnect says its say.
        _ = store.machine.lost("it closed the connection", at: 1)
        _ = store.machine.connected(at: 1.2)
        XCTAssertEqual(
            store.machine.hello(writer: true, seq: 7, user: "root", role: "admin", at: 1.2),
            [
                .redraw, .send(.signIn(quiet: true)), .send(.viewport(width: 400, direction: .ltr)),
                .send(.list),
            ])
        XCTAssertEqual(store.state.model.status, "Reconnected; caught up from seq 7")
        store.check(
            { $0.replied(to: .signIn(quiet: true), .signedIn(user: "alice", role: "writer"), at: 1.3) },
            [.redraw]
        ) {
            $0.model.user = "alice"
            $0.model.role = "writer"
            $0.model.signingIn = false
        }
        // Without a token, no sign-in: the hello's person is the connection's.
        var plain = TuiTestStore()
        XCTAssertEqual(
            plain.machine.hello(writer: false, seq: 7, user: "bob", role: "reader", at: 0),
            [.redraw, .send(.viewport(width: 400, direction: .ltr)), .send(.list)])
        XCTAssertTrue(
            header(&plain, at: 0).hasPrefix(" swiped  ● connected  seq 0  bob (reader)  read-only  ./swiped"))
    }

    /// A token refused on a later connection (revoked or expired since swipectl checked it):
    /// the connection is who its hello said, and the status line says so.
    func testARefusedSignInLeavesTheConnectionWhoItsHelloSaid() {
        var store = TuiTestStore(signingIn)
        _ = store.machine.hello(writer: false, seq: 7, user: "bob", role: "reader", at: 0)
        store.check(
            {
                $0.replied(
                    to: .signIn(quiet: true), .forbidden(message: "no such token (never made, or revoked)"),
                    at: 1)
            },
            [.redraw]
        ) {
            $0.model.signingIn = false
            $0.model.status =
                "Sign-in refused: no such token (never made, or revoked); this connection is bob (reader)"
            $0.model.statusIsError = true
            $0.statusUntil = 5
        }
        XCTAssertTrue(header(&store, at: 1).contains("  bob (reader)  read-only  "))
        // Any other refusal of the sign-in (a daemon before `auth`) is said the same way.
        _ = store.machine.hello(writer: true, seq: 7, user: "root", role: "admin", at: 2)
        _ = store.machine.replied(
            to: .signIn(quiet: true), .refused(description: "unknown-op: auth", message: "no op auth"), at: 2)
        XCTAssertEqual(
            store.state.model.status, "Sign-in refused: no op auth; this connection is root (admin)")
    }

    func testARoleChangedWhileConnectedChangesTheHeaderAndSaysSo() {
        var store = signedIn("alice", "writer")
        store.check({ $0.received(.role(user: "alice", role: "reader"), at: 11) }, [.redraw]) {
            $0.model.role = "reader"
            $0.model.writer = false
            $0.model.status = "Role changed: alice (reader) read-only: may read and swipe"
            $0.model.statusIsError = true
            $0.statusUntil = 15
        }
        XCTAssertTrue(
            header(&store, at: 11).hasPrefix(" swiped  ● connected  seq 7  alice (reader)  read-only  ./"))
        store.check({ $0.received(.role(user: "alice", role: "admin"), at: 12) }, [.redraw]) {
            $0.model.role = "admin"
            $0.model.writer = true
            $0.model.status = "Role changed: alice (admin) may change the list"
            $0.model.statusIsError = false
            $0.statusUntil = 16
        }
        XCTAssertTrue(
            header(&store, at: 12).hasPrefix(" swiped  ● connected  seq 7  alice (admin)  ./swiped.sock"))
    }

    /// The token a connection signed in with goes (revoked, expired): the daemon says its person
    /// has no rights (role none), then who the connection is now, its own Unix user.
    func testATokenThatGoesSaysTheSignInEndedAndWhoTheConnectionIsNow() {
        var store = signedIn("alice", "writer")
        store.check({ $0.received(.role(user: "alice", role: "none"), at: 11) }, [.redraw]) {
            $0.model.role = "none"
            $0.model.writer = false
            $0.model.status = "alice has no rights here any more"
            $0.model.statusIsError = true
            $0.statusUntil = 15
        }
        store.check({ $0.received(.role(user: "root", role: "admin"), at: 11) }, [.redraw]) {
            $0.model.user = "root"
            $0.model.role = "admin"
            $0.model.writer = true
            $0.model.status =
                "alice's token was revoked or expired: this connection is root (admin) now"
        }
        XCTAssertTrue(header(&store, at: 11).contains("  root (admin)  ./swiped.sock"))
    }

    /// Rights that drop to none end the connection (`bye` `revoked`), and a new one is refused
    /// the same way until an admin gives a role back: said in words, tried again with backoff.
    func testByeRevokedSaysNoAccessInWordsAndTriesAgain() {
        var store = signedIn("bob", "reader")
        _ = store.machine.received(.role(user: "bob", role: "none"), at: 11)
        store.check({ $0.received(.bye(reason: "revoked"), at: 11) }, [.redraw, .disconnect]) {
            $0.connected = false
            $0.model.connection = .reconnecting(attempt: 1)
            $0.model.status = "No access: an admin took bob's rights away (bye: revoked); trying again…"
            $0.statusUntil = nil
            $0.reconnectAt = 11.1
            $0.attempt = 1
        }
        XCTAssertTrue(
            header(&store, at: 11).hasPrefix(" swiped  reconnecting…  seq 7  bob (none)  read-only  "))
        // Another bye is still a lost connection, as before.
        var other = signedIn("bob", "reader")
        _ = other.machine.received(.bye(reason: "shutdown"), at: 11)
        XCTAssertEqual(other.state.model.status, "Lost the daemon (it said bye: shutdown); reconnecting…")
    }

    /// A reader's swipe that would fire, a tap or a key on an action, an add, an undo: the daemon
    /// refuses (`forbidden`) and leaves a dragged or open row as it was, so the front end closes
    /// it, and says what needs which role in words.
    func testWhatTheRoleMayNotDoIsSaidInWordsAndTheRowCloses() throws {
        var store = signedIn("bob", "reader")
        let needs = #""release" needs the role writer; this connection is bob (reader)"#
        let dragged = try Fixture.render("seven", [.dragChanged(row: "seven", dx: -300)])
        _ = store.machine.replied(to: .drag(movie: "seven", dx: -300), .row(dragged), at: 11)
        store.check(
            { $0.replied(to: .release(movie: "seven", vx: 0), .forbidden(message: needs), at: 11) },
            [.redraw, .send(.close(movie: "seven"))]
        ) {
            $0.model.status =
                "That swipe would change the list, which needs the role writer: bob (reader) is read-only here"
            $0.model.statusIsError = true
            $0.statusUntil = 15
        }
        let open = try Fixture.render("matrix", [.open(row: "matrix", edge: .trailing)])
        _ = store.machine.replied(to: .open(movie: "matrix", edge: .trailing), .row(open), at: 12)
        store.check(
            { $0.replied(to: .tap(movie: "matrix", action: "delete"), .forbidden(message: "x"), at: 12) },
            [.redraw, .send(.close(movie: "matrix"))]
        ) {
            $0.model.status = "“Delete” needs the role writer: bob (reader) is read-only here"
            $0.statusUntil = 16
        }
        // A key on a closed row: nothing to close.
        store.check(
            {
                $0.replied(
                    to: .perform(movie: "godfather", action: "watched-with-friends"),
                    .forbidden(message: "x"), at: 13)
            },
            [.redraw]
        ) {
            $0.model.status = "“With Friends” needs the role writer: bob (reader) is read-only here"
            $0.statusUntil = 17
        }
        store.check({ $0.replied(to: .add(title: "Heat"), .forbidden(message: "x"), at: 14) }, [.redraw]) {
            $0.model.status = "Adding a movie needs the role writer: bob (reader) is read-only here"
            $0.statusUntil = 18
        }
        store.check(
            { $0.replied(to: .restore(movie: "m", expect: 8, title: "M"), .forbidden(message: "x"), at: 15) },
            [.redraw]
        ) {
            $0.model.status = "Undoing the delete needs the role writer: bob (reader) is read-only here"
            $0.statusUntil = 19
        }
        // Anything else forbidden is a refusal like any other: its message.
        store.check(
            { $0.replied(to: .share(on: true, quiet: false), .forbidden(message: "not you"), at: 16) },
            [.redraw]
        ) {
            $0.model.status = "not you"
            $0.statusUntil = 20
        }
    }

    /// A daemon before roles (no role in its hello) refuses with `--writers`' `forbidden`: its
    /// own words say it, and the header says read-only as it always did.
    func testADaemonBeforeRolesIsWordedAsItWas() {
        var store = Fixture.listed()
        _ = store.machine.hello(writer: false, seq: 7, at: 1)
        store.check(
            {
                $0.replied(
                    to: .perform(movie: "matrix", action: "delete"),
                    .forbidden(message: "only members of group swiped may change the movies"), at: 2)
            },
            [.redraw]
        ) {
            $0.model.status = "only members of group swiped may change the movies"
            $0.model.statusIsError = true
            $0.statusUntil = 6
        }
        XCTAssertTrue(
            header(&store, at: 2).hasPrefix(" swiped  ● connected  seq 7  read-only  ./swiped.sock"))
    }
}

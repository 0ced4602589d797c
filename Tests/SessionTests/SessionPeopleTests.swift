// Who may do what, in the Session (issue 45): every op against every role, `auth` holding the
// lines behind it, the admins' ops asked of the manager and their replies, a role changed while
// the connection lives.
import JSONCodec
import Movies
import People
import Session
import StoreCore
import Wire
import XCTest

final class SessionPeopleTests: XCTestCase {
    /// A valid request of every op (the test below fails if an op has none).
    static let sample: [OpSpec.Kind: String] = [
        .ping: #"{"op":"ping"}"#, .help: #"{"op":"help"}"#, .options: #"{"op":"options"}"#,
        .list: #"{"op":"list"}"#, .add: #"{"op":"add","title":"Heat"}"#,
        .toggleWatched: #"{"op":"toggle-watched","movie":"matrix"}"#,
        .toggleWatchedWithFriends: #"{"op":"toggle-watched-with-friends","movie":"matrix"}"#,
        .remove: #"{"op":"remove","movie":"matrix"}"#, .restore: #"{"op":"restore","movie":"matrix"}"#,
        .move: #"{"op":"move","movie":"matrix","after":null}"#, .undo: #"{"op":"undo"}"#,
        .subscribe: #"{"op":"subscribe"}"#, .unsubscribe: #"{"op":"unsubscribe"}"#,
        .history: #"{"op":"history"}"#, .viewport: #"{"op":"viewport","width":400}"#,
        .configure: #"{"op":"configure"}"#, .drag: #"{"op":"drag","movie":"matrix","dx":-30}"#,
        .release: #"{"op":"release","movie":"matrix","dx":-30}"#,
        .tap: #"{"op":"tap","movie":"matrix","action":"delete"}"#, .close: #"{"op":"close"}"#,
        .rows: #"{"op":"rows"}"#, .open: #"{"op":"open","movie":"matrix","edge":"trailing"}"#,
        .perform: #"{"op":"perform","movie":"matrix","action":"watched"}"#,
        .peek: #"{"op":"peek","movie":"matrix"}"#, .record: #"{"op":"record","on":true}"#,
        .recording: #"{"op":"recording"}"#, .share: #"{"op":"share","on":true}"#,
        .peers: #"{"op":"peers","watch":true}"#, .status: #"{"op":"status"}"#,
        .auth: #"{"op":"auth","token":"swp_x"}"#,
        .tokenCreate: #"{"op":"token-create","name":"alice","role":"writer"}"#,
        .tokenList: #"{"op":"token-list"}"#, .tokenRevoke: #"{"op":"token-revoke","name":"alice"}"#,
        .role: #"{"op":"role","name":"alice","role":"reader"}"#, .denials: #"{"op":"denials"}"#,
    ]

    func harness(_ role: AccessRole, writersGroup: String? = nil) -> SessionHarness {
        let h = SessionHarness(SessionConfig(client: 7, identity: .tester(role), writersGroup: writersGroup))
        _ = h.read()  // hello
        return h
    }

    func code(_ h: SessionHarness, _ line: String) -> String? {
        (h.json(line)["error"] as? [String: Any])?["code"] as? String
    }

    /// The one table of rights, checked on every op for every role: a role below the op's
    /// `needs` is refused `forbidden` with a denial and nothing handed on (no command, no read,
    /// no question to the manager); a role at or above it is never refused `forbidden`.
    func testEveryOpAgainstEveryRole() {
        XCTAssertEqual(Set(Self.sample.keys), Set(OpSpec.Kind.allCases), "an op without a sample")
        var refusals = 0
        for kind in OpSpec.Kind.allCases {
            for role in AccessRole.allCases {
                let h = harness(role)
                h.send(Self.sample[kind]!)
                let actions = h.takeActions()
                let handedOn = actions.contains {
                    switch $0 {
                    case .submit, .read, .people, .status, .peers, .subscription: true
                    default: false
                    }
                }
                h.settle()
                let first = h.read().first ?? ""
                // `perform` fires a bound action: a reader may send it, not fire it (the other
                // test below); the refusal is the same.
                let firesBound = kind == .perform && role == .reader
                if role < Ops.needs(kind) || firesBound {
                    refusals += 1
                    XCTAssertEqual(code(h, first), "forbidden", "\(kind) as \(role): \(first)")
                    XCTAssertFalse(handedOn, "\(kind) as \(role) was handed on: \(actions)")
                    XCTAssertTrue(
                        actions.contains(.denied(op: kind.rawValue, .forbidden)),
                        "\(kind) as \(role): no denial")
                    let message = (h.json(first)["error"] as? [String: Any])?["message"] as? String ?? ""
                    XCTAssertTrue(
                        message.contains("needs the role \(firesBound ? .writer : Ops.needs(kind))"), message)
                } else {
                    XCTAssertNotEqual(code(h, first), "forbidden", "\(kind) as \(role): \(first)")
                    XCTAssertFalse(actions.contains { if case .denied = $0 { true } else { false } })
                }
            }
        }
        // none refuses all but ping, help and auth; reader the 7 changes, the 5 admin ops and
        // the bound action `perform` fires; writer the admin ops.
        XCTAssertEqual(refusals, (35 - 3) + (7 + 5 + 1) + 5)
    }

    func testTheTableOfRights() {
        let byRole = Dictionary(grouping: OpSpec.Kind.allCases, by: Ops.needs)
        XCTAssertEqual(Set(byRole[AccessRole.none]!), [.ping, .help, .auth])
        XCTAssertEqual(
            Set(byRole[.writer]!),
            [.add, .toggleWatched, .toggleWatchedWithFriends, .remove, .restore, .move, .undo])
        XCTAssertEqual(Set(byRole[.admin]!), [.tokenCreate, .tokenList, .tokenRevoke, .role, .denials])
        // Gestures are a reader's: only the bound action they fire needs a writer.
        XCTAssertEqual(Ops.needs(.release), .reader)
        XCTAssertEqual(Ops.needs(.tap), .reader)
        XCTAssertEqual(Ops.needs(.perform), .reader)
    }

    func testAReadersGestureThatWouldFireIsForbiddenAndLeavesTheRowAsItWas() {
        let h = harness(.reader)
        h.send(#"{"op":"perform","movie":"matrix","action":"watched"}"#)
        let actions = h.takeActions()
        XCTAssertTrue(actions.contains(.denied(op: "perform", .forbidden)))
        XCTAssertFalse(actions.contains { if case .submit = $0 { true } else { false } })
        let reply = h.read()[0]
        XCTAssertEqual(code(h, reply), "forbidden")
        XCTAssertTrue(reply.contains(#"needs the role writer; this connection is tester (reader)"#), reply)
        // A gesture that fires nothing is a reader's own.
        XCTAssertEqual(
            h.json(h.exchange(#"{"op":"drag","movie":"matrix","dx":-30}"#)[0])["ok"] as? Bool, true)
    }

    func testHelloSaysWhoAndWhatRole() {
        for (identity, user, role, writer) in [
            (Identity.tester(.admin), #""tester""#, "admin", true),
            (Identity.tester(.reader), #""tester""#, "reader", false),
            (Identity.anonymous(.reader), "null", "reader", false),
            (Identity.anonymous(.writer), "null", "writer", true),
        ] {
            let h = SessionHarness(SessionConfig(client: 3, identity: identity))
            let hello = h.read()[0]
            XCTAssertTrue(
                hello.contains(#""writer":\#(writer),"user":\#(user),"role":"\#(role)","log":"#), hello)
        }
    }

    /// `auth` holds the lines behind it: a change pipelined after it is judged as the person it
    /// signed in as, not as the anonymous connection that sent it.
    func testAuthHoldsThePipelinedLinesUntilItIsAnswered() {
        let h = SessionHarness(SessionConfig(client: 3, identity: .anonymous(.reader)))
        _ = h.read()
        h.receive(
            #"{"op":"auth","token":"swp_ok","id":1}"# + "\n"
                + #"{"op":"toggle-watched","movie":"matrix","id":2}"# + "\n")
        let actions = h.takeActions()
        XCTAssertEqual(actions.count, 1, "\(actions)")
        guard case .people(_, .auth(token: "swp_ok")) = actions[0] else { return XCTFail("\(actions)") }
        h.settle()
        XCTAssertEqual(h.read(), [], "nothing answered before auth is")
        let alice = Identity(user: "alice", role: .writer, door: .token(id: "a1"))
        h.answerPeople(.signedIn(alice))
        let lines = h.read()
        XCTAssertEqual(lines.count, 2, "\(lines)")
        XCTAssertEqual(lines[0], #"{"id":1,"ok":true,"user":"alice","role":"writer"}"#)
        XCTAssertEqual(h.json(lines[1])["ok"] as? Bool, true, lines[1])
        XCTAssertEqual(h.session.identity, alice)
    }

    func testAFailedAuthLeavesTheIdentityAndAnswersTheError() {
        let h = SessionHarness(SessionConfig(client: 3, identity: .anonymous(.reader)))
        _ = h.read()
        h.send(#"{"op":"auth","token":"swp_bad"}"#)
        h.answerPeople(.failed(WireError(.forbidden, "no such token")))
        XCTAssertEqual(h.read(), [#"{"ok":false,"error":{"code":"forbidden","message":"no such token"}}"#])
        XCTAssertEqual(h.session.identity, .anonymous(.reader))
        XCTAssertEqual(h.exchange(#"{"op":"ping"}"#), [#"{"ok":true}"#], "the lines go on")
    }

    func testTheAdminsOpsAreAskedAndTheirAnswersWorded() {
        let h = harness(.admin)
        let record = TokenRecord(
            id: "0a1b2c3d4e5f", name: "alice", role: .writer, hash: Array(repeating: 1, count: 32),
            created: 1_700_000_000_000_000, expires: nil, lastUsed: 1_700_000_060_000_000)
        let cases: [(String, PeopleAsk, PeopleAnswer, String)] = [
            (
                #"{"op":"token-create","name":"alice","role":"writer","expiresIn":3600}"#,
                .tokenCreate(name: "alice", role: .writer, expiresIn: 3600),
                .tokenCreated(token: "swp_T", record),
                #"{"ok":true,"token":"swp_T","tokenId":"0a1b2c3d4e5f","name":"alice","role":"writer","created":"2023-11-14T22:13:20.000000Z","expires":null}"#
            ),
            (
                #"{"op":"token-list"}"#, .tokenList, .tokens([record]),
                #"{"ok":true,"tokens":[{"tokenId":"0a1b2c3d4e5f","name":"alice","role":"writer","created":"2023-11-14T22:13:20.000000Z","expires":null,"lastUsed":"2023-11-14T22:14:20.000000Z"}]}"#
            ),
            (
                #"{"op":"token-revoke","name":"alice","tokenId":"0a1b2c3d4e5f"}"#,
                .tokenRevoke(name: "alice", id: "0a1b2c3d4e5f"), .revoked(1), #"{"ok":true,"revoked":1}"#
            ),
            (
                #"{"op":"role","name":"bob"}"#, .role(name: "bob", .ask), .role(name: "bob", nil),
                #"{"ok":true,"name":"bob","role":null}"#
            ),
            (
                #"{"op":"role","name":"bob","role":"none"}"#, .role(name: "bob", .give(AccessRole.none)),
                .role(name: "bob", AccessRole.none), #"{"ok":true,"name":"bob","role":"none"}"#
            ),
            (
                #"{"op":"role","name":"bob","role":null}"#, .role(name: "bob", .takeBack),
                .role(name: "bob", nil),
                #"{"ok":true,"name":"bob","role":null}"#
            ),
            (
                #"{"op":"denials"}"#, .denials,
                .denials([
                    Denial(
                        at: 1_700_000_000_000_000, user: nil, client: 9, transport: "web",
                        address: "10.0.0.7",
                        op: "remove", reason: .forbidden)
                ]),
                #"{"ok":true,"denials":[{"at":"2023-11-14T22:13:20.000000Z","user":null,"client":9,"transport":"web","address":"10.0.0.7","op":"remove","reason":"forbidden"}]}"#
            ),
        ]
        for (line, ask, answer, reply) in cases {
            h.send(line)
            let asked = h.takeActions().compactMap { if case .people(_, let what) = $0 { what } else { nil } }
            XCTAssertEqual(asked, [ask], line)
            h.answerPeople(answer)
            XCTAssertEqual(h.read(), [reply], line)
        }
    }

    func testBadNamesAndRolesAreRefusedBeforeTheManagerIsAsked() {
        let h = harness(.admin)
        for line in [
            #"{"op":"token-create","name":"a b","role":"writer"}"#,
            #"{"op":"token-create","name":"alice","role":"none"}"#,
            #"{"op":"token-create","name":"alice","role":"writer","expiresIn":0}"#,
            #"{"op":"role","name":"","role":"reader"}"#, #"{"op":"role","name":"bob","role":"root"}"#,
            #"{"op":"token-revoke"}"#,
        ] {
            XCTAssertEqual(code(h, h.exchange(line)[0]), "bad-request", line)
        }
        XCTAssertTrue(h.peopleAsked.isEmpty)
    }

    func testARoleChangedWhileConnectedIsToldAndTakesEffectAtOnce() {
        let h = harness(.writer)
        h.hear(.identityChanged(.tester(.reader), tokenLost: nil))
        XCTAssertEqual(h.read(), [#"{"event":"role","user":"tester","role":"reader"}"#])
        XCTAssertEqual(code(h, h.exchange(#"{"op":"remove","movie":"matrix"}"#)[0]), "forbidden")
        // The same identity again says nothing.
        h.hear(.identityChanged(.tester(.reader), tokenLost: nil))
        XCTAssertEqual(h.read(), [])
        h.hear(.identityChanged(.tester(.writer), tokenLost: nil))
        XCTAssertEqual(h.read(), [#"{"event":"role","user":"tester","role":"writer"}"#])
        XCTAssertEqual(h.json(h.exchange(#"{"op":"remove","movie":"matrix"}"#)[0])["ok"] as? Bool, true)
    }

    func testRightsDroppedToNoneEndTheConnectionWithAByeAndADenial() {
        let h = harness(.reader)
        _ = h.exchange(#"{"op":"subscribe"}"#)
        XCTAssertTrue(h.subscribed)
        h.hear(.identityChanged(.tester(AccessRole.none), tokenLost: nil))
        XCTAssertTrue(h.takeActions().contains(.denied(op: "", .noRights)))
        h.settle()
        XCTAssertEqual(
            h.read(),
            [#"{"event":"role","user":"tester","role":"none"}"#, #"{"event":"bye","reason":"revoked"}"#])
        XCTAssertFalse(h.subscribed, "its subscription ended")
        XCTAssertEqual(h.session.lifecycle, .closed(reason: .closedByServer))
    }

    func testALostTokenSaysItsPersonHasNoRightsThenWhoTheConnectionIsNow() {
        let h = SessionHarness(
            SessionConfig(client: 3, identity: Identity(user: "alice", role: .writer, door: .token(id: "a1")))
        )
        _ = h.read()
        h.hear(.identityChanged(.anonymous(.reader), tokenLost: "alice"))
        XCTAssertEqual(
            h.read(),
            [
                #"{"event":"role","user":"alice","role":"none"}"#,
                #"{"event":"role","user":null,"role":"reader"}"#,
            ])
        XCTAssertEqual(h.session.lifecycle, .reading, "anonymous readers may stay")
        // With --web-anonymous none, the connection has no rights left: bye.
        let g = SessionHarness(
            SessionConfig(client: 4, identity: Identity(user: "alice", role: .writer, door: .token(id: "a1")))
        )
        _ = g.read()
        g.hear(.identityChanged(.anonymous(AccessRole.none), tokenLost: "alice"))
        g.settle()
        XCTAssertEqual(g.read().last, #"{"event":"bye","reason":"revoked"}"#)
    }
}

/// Every change signed by its author (issue 46), in the Session: each command it submits carries
/// the person, the reply and the events say them, `history` takes `by`, `undo` says whose change.
final class SessionAuthorTests: XCTestCase {
    func harness(_ who: Identity) -> SessionHarness {
        let h = SessionHarness(SessionConfig(client: 7, identity: who))
        _ = h.read()
        return h
    }

    func submitted(_ actions: [SessionAction]) -> [MovieCommand] {
        actions.compactMap { if case .submit(_, _, let c) = $0 { c } else { nil } }
    }

    func testEveryCommandCarriesItsAuthorAndTheReplySaysIt() {
        let alice = Identity(user: "alice", role: .writer, door: .token(id: "a1"))
        let h = harness(alice)
        h.send(#"{"op":"toggle-watched","movie":"matrix"}"#)
        XCTAssertEqual(submitted(h.takeActions()).map(\.by), ["alice"])
        h.settle()
        let reply = h.read()[0]
        XCTAssertTrue(reply.hasSuffix(#","by":"alice"}"#), reply)
        // A gesture's bound action is whoever swiped's.
        h.send(#"{"op":"perform","movie":"seven","action":"watched"}"#)
        XCTAssertEqual(submitted(h.takeActions()).map(\.by), ["alice"])
        h.settle()
        _ = h.read()
        // An undo is whoever undid's, and says whose change it undid.
        h.send(#"{"op":"undo"}"#)
        h.settle()
        let undo = h.json(h.read()[0])
        XCTAssertEqual(undo["by"] as? String, "alice")
        XCTAssertEqual(undo["undoesBy"] as? String, "alice")
        // An anonymous writer signs nothing: no by at all (not null).
        let anonymous = harness(.anonymous(.writer))
        anonymous.send(#"{"op":"toggle-watched","movie":"inception"}"#)
        XCTAssertEqual(submitted(anonymous.takeActions()).map(\.by), [nil])
        anonymous.settle()
        XCTAssertFalse(anonymous.read()[0].contains(#""by""#))
    }

    func testUndoOfAnotherPersonsChangeSaysWhose() {
        let alice = harness(Identity(user: "alice", role: .writer, door: .unix(uid: 1001)))
        alice.send(#"{"op":"toggle-watched","movie":"matrix"}"#)
        alice.settle()
        let seq = alice.json(alice.read()[0])["seq"] as? Int ?? 0
        let bob = SessionHarness(
            SessionConfig(client: 8, identity: Identity(user: "bob", role: .writer, door: .unix(uid: 1002))),
            store: alice.store)
        _ = bob.read()
        bob.send(#"{"op":"undo","seq":\#(seq)}"#)
        bob.settle()
        let undo = bob.json(bob.read()[0])
        XCTAssertEqual(undo["undoes"] as? Int, seq)
        XCTAssertEqual(undo["by"] as? String, "bob")
        XCTAssertEqual(undo["undoesBy"] as? String, "alice")
    }

    func testHistoryByAPersonAsksTheStoreForTheirChangesOnly() {
        let alice = harness(Identity(user: "alice", role: .writer, door: .unix(uid: 1001)))
        for movie in ["matrix", "seven", "inception"] {
            _ = alice.exchange(#"{"op":"toggle-watched","movie":"\#(movie)"}"#)
        }
        let bob = SessionHarness(
            SessionConfig(client: 8, identity: Identity(user: "bob", role: .writer, door: .unix(uid: 1002))),
            store: alice.store)
        _ = bob.read()
        _ = bob.exchange(#"{"op":"remove","movie":"matrix"}"#)
        bob.send(#"{"op":"history","by":"alice","from":0,"limit":2}"#)
        XCTAssertTrue(
            bob.takeActions().contains {
                if case .read(_, .eventsBy("alice", 0, 2)) = $0 { true } else { false }
            })
        bob.settle()
        let page = bob.json(bob.read()[0])["events"] as? [[String: Any]] ?? []
        XCTAssertEqual(page.map { $0["by"] as? String }, ["alice", "alice"])
        XCTAssertEqual(page.map { ($0["movie"] as? [String: Any])?["id"] as? String }, ["matrix", "seven"])
        let all =
            bob.json(bob.exchange(#"{"op":"history","from":10}"#)[0])["events"] as? [[String: Any]] ?? []
        XCTAssertEqual(all.map { $0["by"] as? String }, ["alice", "alice", "alice", "bob"])
        let none = bob.json(bob.exchange(#"{"op":"history","by":"carol"}"#)[0])["events"] as? [Any]
        XCTAssertEqual(none?.count, 0)
    }
}

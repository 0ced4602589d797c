import JSONCodec
import SwipeEngine
import Terminal
import XCTest

@testable import SwipedClient
@testable import swipectl

/// `request` as the line StreamConnection writes for it (without its id).
private func line(_ request: TuiRequest, token: String? = nil) -> String {
    let (op, arguments) = TuiWire.line(request, token: token)
    var out = JSONWriter()
    out.object { w in
        w.field("op", op)
        for (key, value) in arguments { w.field(key, value) }
    }
    return String(decoding: out.bytes, as: UTF8.self)
}

/// The terminal front end's requests as protocol lines, and replies decoded for their request.
final class TuiWireTests: XCTestCase {
    /// "Ask before deleting" sends the whole default layout (configure replaces it), its delete
    /// asking with a "Delete?" button; off, the same layout without.
    func testConfigureSendsTheDefaultLayoutWithDeleteAskingToBeConfirmed() {
        let leading =
            #""leading":[{"action":"watched","label":"Watched","icon":"eye","tint":"green","activeIcon":"eye.slash"},"#
            + #"{"action":"watched-with-friends","label":"With Friends","icon":"person.3","tint":"indigo"}]"#
        let end = #""allowsFullSwipeLeading":true,"allowsFullSwipeTrailing":true,"buttonWidth":70}"#
        XCTAssertEqual(
            line(.configure(confirmDelete: true, quiet: false)),
            #"{"op":"configure","# + leading
                + #","trailing":[{"action":"delete","label":"Delete","icon":"trash","tint":"red","role":"destructive","#
                + #""confirm":true,"confirmLabel":"Delete?"}],"# + end)
        XCTAssertEqual(
            line(.configure(confirmDelete: false, quiet: true)),
            #"{"op":"configure","# + leading
                + #","trailing":[{"action":"delete","label":"Delete","icon":"trash","tint":"red","role":"destructive"}],"#
                + end)
    }

    /// `move` (issue 48): `after` an id or null for the first place (required), and the version
    /// the row shows as `expect`.
    func testMoveSendsItsPlaceAndTheVersionTheRowShows() {
        XCTAssertEqual(
            line(.move(movie: "seven", after: "matrix", expect: 11)),
            #"{"op":"move","movie":"seven","after":"matrix","expect":11}"#)
        XCTAssertEqual(
            line(.move(movie: "seven", after: nil, expect: 3)),
            #"{"op":"move","movie":"seven","after":null,"expect":3}"#)
    }
}

/// Replies decoded for the request they answer, as the state machine takes them.
final class TuiWireReplyTests: XCTestCase {
    func reply(_ line: String, to request: TuiRequest) throws -> TuiReply {
        let object = try SwipedClient.object(Array(line.utf8))
        return TuiWire.reply(Reply(object: object, line: line), to: request)
    }

    func testEachRequestsReplyIsDecodedForIt() throws {
        XCTAssertEqual(
            try reply(#"{"id":1,"ok":false,"error":{"code":"not-found","message":"no movie x"}}"#, to: .list),
            .refused(description: "not-found: no movie x", message: "no movie x"))
        XCTAssertEqual(
            try reply(#"{"id":1,"ok":true,"seq":3}"#, to: .list),
            .unreadable("the daemon sent a list without seq and movies"))
        XCTAssertEqual(
            try reply(#"{"id":1,"ok":true,"seq":3,"movies":[]}"#, to: .list), .list(seq: 3, movies: []))
        XCTAssertEqual(
            try reply(#"{"id":2,"ok":true,"closed":["a","b"]}"#, to: .closeAll), .closed(["a", "b"]))
        XCTAssertEqual(try reply(#"{"id":2,"ok":true}"#, to: .record(on: true)), .closed([]))
        let move = TuiRequest.move(movie: "seven", after: nil, expect: 3)
        XCTAssertEqual(
            try reply(#"{"id":3,"ok":true,"seq":12,"movie":{},"after":null,"from":"matrix"}"#, to: move),
            .moved(seq: 12))
        XCTAssertEqual(try reply(#"{"id":3,"ok":true}"#, to: move), .unreadable("a move reply without seq"))
        XCTAssertEqual(
            try reply(#"{"id":3,"ok":false,"error":{"code":"forbidden","message":"no"}}"#, to: move),
            .forbidden(message: "no"))
        XCTAssertEqual(try reply(#"{"id":2,"ok":true}"#, to: .record(on: false)), .ok)
        XCTAssertEqual(
            try reply(#"{"id":3,"ok":true,"recording":{"inputs":2,"cut":true}}"#, to: .recording),
            .recording(TuiRecordingSummary(inputs: 2, cut: true)))
        XCTAssertEqual(try reply(#"{"id":3,"ok":true}"#, to: .recording), .recording(nil))
        XCTAssertEqual(
            try reply(#"{"id":4,"ok":true,"peers":[]}"#, to: .peers(watch: false, quiet: false)), .peers([:]))
        let fired = try reply(
            #"{"id":5,"ok":true,"fired":{"action":"delete","seq":9},"pending":{"action":"x"}}"#,
            to: .perform(movie: "m", action: "delete"))
        XCTAssertEqual(
            fired,
            .row(
                nil, unreadable: "malformed row object", fired: TuiFired(action: "delete", seq: 9),
                pending: "x"))
        XCTAssertEqual(
            try reply(
                #"{"id":5,"ok":true,"fired":{"action":"watched","error":{"message":"gone"}}}"#,
                to: .tap(movie: "m", action: "watched")),
            .row(nil, unreadable: "malformed row object", fired: TuiFired(action: "watched", error: "gone")))
    }

    /// Issue 45: the sign-in carries the token swipectl holds (the machine never sees it), its
    /// reply says who; a `forbidden` is told apart from other refusals, and a `role` event
    /// becomes the machine's.
    func testTheSignInItsReplyForbiddenAndTheRoleEvent() throws {
        XCTAssertEqual(line(.signIn(quiet: false), token: "swp_abc"), #"{"op":"auth","token":"swp_abc"}"#)
        XCTAssertEqual(
            try reply(#"{"id":1,"ok":true,"user":"alice","role":"writer"}"#, to: .signIn(quiet: true)),
            .signedIn(user: "alice", role: "writer"))
        XCTAssertEqual(
            try reply(#"{"id":1,"ok":true,"user":null,"role":"reader"}"#, to: .signIn(quiet: true)),
            .signedIn(user: nil, role: "reader"))
        XCTAssertEqual(
            try reply(
                #"{"id":1,"ok":false,"error":{"code":"forbidden","message":"no such token (never made, or revoked)"}}"#,
                to: .signIn(quiet: false)),
            .forbidden(message: "no such token (never made, or revoked)"))
        let needs = #""perform" needs the role writer; this connection is bob (reader)"#
        XCTAssertEqual(
            try reply(
                #"{"id":2,"ok":false,"error":{"code":"forbidden","message":"\"perform\" needs the role writer; this connection is bob (reader)"}}"#,
                to: .perform(movie: "m", action: "delete")),
            .forbidden(message: needs))
        XCTAssertEqual(
            try reply(
                #"{"id":3,"ok":false,"error":{"code":"overloaded","message":"slow down","retryAfter":40}}"#,
                to: .add(title: "Heat")),
            .refused(description: "overloaded: slow down", message: "slow down"))
        let event = try SwipedClient.event(
            try SwipedClient.object(Array(#"{"event":"role","user":"alice","role":"reader"}"#.utf8)))
        XCTAssertEqual(TuiWire.event(event), .role(user: "alice", role: "reader"))
        let anonymous = try SwipedClient.event(
            try SwipedClient.object(Array(#"{"event":"role","user":null,"role":"reader"}"#.utf8)))
        XCTAssertEqual(TuiWire.event(anonymous), .role(user: nil, role: "reader"))
    }

    func testOtherRequestsAsLines() {
        XCTAssertEqual(line(.subscribe(from: 7)), #"{"op":"subscribe","from":7}"#)
        XCTAssertEqual(
            line(.restore(movie: "m", expect: 8, title: "M")), #"{"op":"restore","movie":"m","expect":8}"#)
        XCTAssertEqual(line(.closeAll), #"{"op":"close"}"#)
        XCTAssertEqual(line(.close(movie: "m")), #"{"op":"close","movie":"m"}"#)
        XCTAssertEqual(
            line(.open(movie: "m", edge: .trailing)), #"{"op":"open","movie":"m","edge":"trailing"}"#)
        XCTAssertEqual(line(.share(on: true, quiet: true)), #"{"op":"share","on":true}"#)
        XCTAssertEqual(
            line(.viewport(width: 400, direction: .rtl)), #"{"op":"viewport","width":400,"direction":"rtl"}"#)
    }
}

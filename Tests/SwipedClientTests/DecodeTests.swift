// The daemon's JSON back into typed values (Decode.swift): what decodes, and the protocol
// errors for what does not.
import JSONCodec
import Movies
import SwipeEngine
import XCTest

@testable import SwipedClient

final class DecodeTests: XCTestCase {
    func object(_ text: String) throws -> JSONObject { try SwipedClient.object(Array(text.utf8)) }

    func testALineMustBeAJSONObject() throws {
        XCTAssertEqual(try object(#"{"ok":true}"#).bool("ok"), true)
        for (line, words) in [("[1]", "not an object"), ("{\"ok\":", "invalid JSON"), ("", "invalid JSON")] {
            XCTAssertThrowsError(try object(line)) { error in
                let error = error as? ClientError
                XCTAssertEqual(error?.kind, .protocol, line)
                XCTAssertTrue(
                    error?.message.contains(words) ?? false, "\(line): \(String(describing: error))")
            }
        }
    }

    func testAMovieAndAnEvent() throws {
        let movie =
            #"{"id":"seven","title":"Se7en","image":"seven","watched":true,"watchedWithFriends":false,"version":12}"#
        let event = try object(
            #"{"event":"movie","seq":12,"kind":"restored","at":"2026-11-30T04:43:34.5Z","undoes":11,"movie":\#(movie)}"#
        )
        guard case .movie(let change, let at) = try SwipedClient.event(event) else {
            return XCTFail("not a movie event")
        }
        XCTAssertEqual(at, "2026-11-30T04:43:34.5Z")
        XCTAssertEqual(change.seq, 12)
        XCTAssertEqual(change.kind, .restored)
        XCTAssertEqual(change.undoes, 11)
        XCTAssertNil(change.by, "an event without by (an older build's, an anonymous page's) has none")
        // Issue 46: who made it, when the daemon says.
        let signed = try object(
            #"{"event":"movie","seq":13,"kind":"removed","at":"2026-11-30T04:43:35Z","movie":\#(movie),"by":"alice"}"#
        )
        guard case .movie(let removal, _) = try SwipedClient.event(signed) else {
            return XCTFail("not a movie event")
        }
        XCTAssertEqual(removal.by, "alice")
        XCTAssertNil(removal.undoes)
        XCTAssertEqual(
            change.movie, Movie(id: "seven", title: "Se7en", image: "seven", watched: true, version: 12))
        // A movie with a field missing, or of the wrong type, is malformed.
        for broken in [#"{"id":"seven"}"#, movie.replacingOccurrences(of: "12", with: "\"12\"")] {
            XCTAssertThrowsError(try SwipedClient.movie(.object(try object(broken)))) {
                XCTAssertEqual(($0 as? ClientError)?.message, "malformed movie object")
            }
        }
        XCTAssertThrowsError(try SwipedClient.committedEvent(try object(#"{"seq":1,"movie":\#(movie)}"#))) {
            XCTAssertEqual(($0 as? ClientError)?.message, "malformed event object")
        }
    }

    func testEventsByName() throws {
        XCTAssertEqual(
            try SwipedClient.event(try object(#"{"event":"bye","reason":"shutdown"}"#)),
            .bye(reason: "shutdown"))
        let peer = try object(#"{"event":"peer-row","client":3}"#)
        XCTAssertEqual(try SwipedClient.event(peer), .other(name: "peer-row", peer))
        XCTAssertThrowsError(try SwipedClient.event(try object(#"{"ok":true}"#))) {
            XCTAssertEqual(($0 as? ClientError)?.message, "event without a name")
        }
    }

    /// A Row: every field, keys it does not know ignored, a phase it does not know taken from
    /// the offset and buttons (protocol.md, "How protocol 1 grows").
    func testARowAndWhatProtocol1MayGrow() throws {
        func row(phase: String, offset: Int, buttons: String) throws -> RowRender {
            try SwipedClient.row(
                try object(
                    #"{"movie":"m","offset":\#(offset),"phase":"\#(phase)","edge":"trailing","fullSwipe":false,"buttons":\#(buttons),"spring":{"target":-160,"response":0.3,"dampingFraction":0.8},"accessibilityActions":[{"action":"delete","label":"Delete","destructive":true,"edge":"trailing"}],"later":{"x":1}}"#
                ))
        }
        let button =
            #"[{"action":"delete","label":"Delete","tint":"red","role":"destructive","x":220,"width":80,"shade":2}]"#
        let open = try row(phase: "open", offset: -80, buttons: button)
        XCTAssertEqual(open.phase, .open)
        XCTAssertEqual(open.edge, .trailing)
        XCTAssertEqual(open.buttons.map(\.action), ["delete"])
        XCTAssertEqual(open.buttons.first?.role, .destructive)
        XCTAssertEqual(open.spring.target, -160)
        XCTAssertEqual(open.accessibilityActions.first?.destructive, true)
        XCTAssertEqual(try row(phase: "wobbling", offset: 0, buttons: "[]").phase, .closed)
        XCTAssertEqual(try row(phase: "wobbling", offset: -80, buttons: button).phase, .open)
        XCTAssertThrowsError(try SwipedClient.row(nil))
        XCTAssertThrowsError(try row(phase: "open", offset: -80, buttons: #"[{"action":"delete"}]"#)) {
            XCTAssertEqual(($0 as? ClientError)?.message, "malformed button object")
        }
    }

    /// The first line: hello, or a bye that refuses the connection with its reason.
    func testHelloOrARefusal() throws {
        let line = Array(hello.utf8.dropLast())
        XCTAssertEqual(
            try SwipedClient.hello(try SwipedClient.object(line), line: line, socketPath: "/s"),
            Hello(protocolVersion: 1, server: "swiped 0.1.0", client: 7, seq: 10, writer: true))
        let withRole = Array(
            #"{"event":"hello","protocol":1,"server":"swiped/0.1.0","client":3,"seq":10,"writer":false,"user":"bob","role":"reader","log":"ab"}"#
                .utf8)
        XCTAssertEqual(
            try SwipedClient.hello(try SwipedClient.object(withRole), line: withRole, socketPath: "/s"),
            Hello(
                protocolVersion: 1, server: "swiped/0.1.0", client: 3, seq: 10, writer: false, user: "bob",
                role: "reader", log: "ab"))
        XCTAssertThrowsError(
            try SwipedClient.hello(
                try object(#"{"event":"bye","reason":"too-many-clients"}"#), line: [], socketPath: "/s")
        ) {
            XCTAssertEqual(
                $0 as? ClientError,
                ClientError(
                    .closed, code: "too-many-clients",
                    "the daemon at /s refused the connection: too-many-clients"))
        }
        XCTAssertThrowsError(
            try SwipedClient.hello(
                try object(#"{"ok":true}"#), line: Array(#"{"ok":true}"#.utf8), socketPath: "/s")
        ) {
            XCTAssertEqual(($0 as? ClientError)?.message, #"expected hello from /s, got {"ok":true}"#)
        }
    }

    /// The log's id: another one than before means another log, and only then; a hello that
    /// says none (a daemon before ids) goes on as before.
    func testAHellosLogSaysWhetherAClientGoesOnFromItsSeqs() throws {
        let line = Array(
            #"{"event":"hello","protocol":1,"server":"swiped/0.1.0","client":1,"seq":4,"writer":true,"log":"bbbb"}"#
                .utf8)
        let b = try SwipedClient.hello(try SwipedClient.object(line), line: line, socketPath: "/s")
        XCTAssertEqual(b.log, "bbbb")
        var a = b
        a.log = "aaaa"
        var none = b
        none.log = nil
        XCTAssertFalse(b.continues(a))
        XCTAssertFalse(a.continues(b))
        XCTAssertTrue(b.continues(b))
        XCTAssertTrue(none.continues(a))
        XCTAssertTrue(a.continues(none))
    }

    func testAReplysError() throws {
        let no = Reply(
            object: try object(#"{"ok":false,"error":{"code":"not-found","message":"no movie"}}"#), line: "")
        XCTAssertFalse(no.isOK)
        XCTAssertEqual(no.error, ClientError(.server, code: "not-found", "no movie"))
        XCTAssertEqual(no.error?.description, "not-found: no movie")
        XCTAssertNil(Reply(object: try object(#"{"ok":true}"#), line: "").error)
    }
}

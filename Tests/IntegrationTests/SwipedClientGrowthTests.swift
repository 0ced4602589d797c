// SwipedClient against a daemon newer than itself (protocol.md, "How protocol 1 grows"): keys
// it does not know are ignored, an unknown event is handed over as `.other`, an event kind it
// does not know still carries its movie, a row phase it does not know is shown as its offset and
// buttons say. First the decoders on lines, then a scripted daemon on a real socket.
import Foundation
import JSONCodec
import Movies
import SwipeEngine
import SwipedClient
import XCTest

final class SwipedClientGrowthTests: XCTestCase {
    static let movie =
        #"{"id":"matrix","title":"The Matrix","image":"matrix","watched":true,"watchedWithFriends":false,"version":12,"rating":5}"#
    static let row =
        #"{"movie":"matrix","offset":-70,"phase":"snoozing","edge":"trailing","fullSwipe":false,"#
        + #""buttons":[{"action":"delete","label":"Delete","tint":"red","role":"destructive","x":320,"width":70,"#
        + #""badge":"!"}],"spring":{"target":-70,"response":0.5,"dampingFraction":0.85,"mass":1},"#
        + #""accessibilityActions":[],"confirm":{"action":"delete"}}"#

    func object(_ text: String) throws -> JSONObject {
        try SwipedClient.object(Array(text.utf8))
    }

    func testARowOfAnUnknownPhaseIsShownAsItsOffsetAndButtonsSay() throws {
        let row = try SwipedClient.row(try object(Self.row))
        XCTAssertEqual(row.row, "matrix")
        XCTAssertEqual(row.offset, -70)
        XCTAssertEqual(row.phase, .open, "buttons showing at rest")
        XCTAssertEqual(row.buttons.map(\.action), ["delete"])
        XCTAssertEqual(row.edge, .trailing)
        let closed = Self.row.replacingOccurrences(of: #""offset":-70"#, with: #""offset":0"#)
            .replacingOccurrences(
                of:
                    #"[{"action":"delete","label":"Delete","tint":"red","role":"destructive","x":320,"width":70,"badge":"!"}]"#,
                with: "[]")
        XCTAssertEqual(try SwipedClient.row(try object(closed)).phase, .closed)
        XCTAssertEqual(SwipedClient.phase("dragging", offset: 0, buttons: []), .dragging, "known phases stay")
        XCTAssertEqual(SwipedClient.phase("confirming", offset: -70, buttons: []), .confirming)
    }

    func testAMovieEventOfAnUnknownKindCarriesItsMovie() throws {
        let line =
            #"{"event":"movie","seq":13,"kind":"restored","movie":\#(Self.movie),"at":"2026-11-30T04:43:34.123456Z","by":7}"#
        guard case .movie(let event, let at) = try SwipedClient.event(try object(line)) else {
            return XCTFail("not a movie event")
        }
        XCTAssertEqual(event.kind, .restored)
        XCTAssertEqual(event.seq, 13)
        XCTAssertEqual(event.movie.id, "matrix")
        XCTAssertEqual(event.movie.version, 12)
        XCTAssertEqual(at, "2026-11-30T04:43:34.123456Z")
    }

    func testAnUnknownEventIsHandedOver() throws {
        let line = #"{"event":"peer-row","client":3,"row":\#(Self.row)}"#
        guard case .other(let name, let object) = try SwipedClient.event(try object(line)) else {
            return XCTFail("not .other")
        }
        XCTAssertEqual(name, "peer-row")
        XCTAssertEqual(object.uint("client"), 3)
    }

    /// The whole client against a scripted daemon that speaks a grown protocol 1: extra keys in
    /// hello, in replies and in objects, an unknown event and an unknown kind among the replies.
    func testTheClientTalksToAGrownDaemon() throws {
        let dir = try TemporaryDirectory("swiped-grow")
        let path = dir.file("s.sock")
        let script = [
            #"{"event":"hello","protocol":1,"server":"swiped/9.9","client":4,"seq":12,"writer":true,"region":"eu"}"#,
            #"{"event":"peer-row","client":3,"row":\#(Self.row)}"#,
            #"{"id":1,"ok":true,"seq":12,"movies":[\#(Self.movie)],"cursor":"x"}"#,
            #"{"event":"movie","seq":13,"kind":"restored","movie":\#(Self.movie),"at":"2026-11-30T04:43:34.123456Z"}"#,
            #"{"id":2,"ok":true,"row":\#(Self.row),"hint":"confirm"}"#,
        ]
        let server = try ScriptedDaemon(path: path, lines: script)
        let client = try SwipedClient(socketPath: path, timeout: 5)
        XCTAssertEqual(client.hello.client, 4)
        XCTAssertEqual(client.hello.protocolVersion, 1)
        let (seq, movies) = try client.list()
        XCTAssertEqual(seq, 12)
        XCTAssertEqual(movies.map(\.id), ["matrix"])
        let row = try client.drag("matrix", dx: -70)
        XCTAssertEqual(row.phase, .open)
        XCTAssertEqual(row.offset, -70)
        XCTAssertEqual(client.pendingEvents.count, 2)
        guard case .other("peer-row", _)? = client.pendingEvents.first else {
            return XCTFail("\(client.pendingEvents)")
        }
        guard case .movie(let event, _)? = client.pendingEvents.last else { return XCTFail("no movie event") }
        XCTAssertEqual(event.kind, .restored)
        withExtendedLifetime(server) {}
    }
}

/// A one-connection server on a Unix socket that writes `lines` and reads until the peer closes.
final class ScriptedDaemon: @unchecked Sendable {
    private let thread: Thread

    init(path: String, lines: [String]) throws {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SystemCallError("socket") }
        var address = try unixAddress(path)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0, listen(fd, 1) == 0 else {
            close(fd)
            throw SystemCallError("bind")
        }
        let bytes = Array((lines.joined(separator: "\n") + "\n").utf8)
        thread = Thread {
            let peer = accept(fd, nil, nil)
            close(fd)
            guard peer >= 0 else { return }
            _ = bytes.withUnsafeBytes { write(peer, $0.baseAddress, $0.count) }
            var buffer = [UInt8](repeating: 0, count: 4096)
            while read(peer, &buffer, buffer.count) > 0 {}
            close(peer)
        }
        thread.start()
    }
}

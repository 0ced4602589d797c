import XCTest

@testable import Daemon

/// Which socket systemd passed is which (PassedSockets.swift), in every order.
final class PassedSocketsTests: XCTestCase {
    let unix = (isUnixListener: true, isStreamListener: true)
    let tcp = (isUnixListener: false, isStreamListener: true)

    func socket(_ name: String, _ kind: (isUnixListener: Bool, isStreamListener: Bool)) -> PassedSocket {
        PassedSocket(name: name, isUnixListener: kind.isUnixListener, isStreamListener: kind.isStreamListener)
    }

    func select(_ sockets: [PassedSocket]) -> SocketNames.Selection? {
        try? SocketNames.select(sockets).get()
    }

    func error(_ sockets: [PassedSocket]) -> String? {
        guard case .failure(let e) = SocketNames.select(sockets) else { return nil }
        return e.description
    }

    func testNamedSocketsAreChosenByNameInEitherOrder() {
        XCTAssertEqual(
            select([socket("protocol", unix), socket("metrics", tcp)]),
            SocketNames.Selection(protocolIndex: 0, metricsIndex: 1, unused: []))
        XCTAssertEqual(
            select([socket("metrics", tcp), socket("protocol", unix)]),
            SocketNames.Selection(protocolIndex: 1, metricsIndex: 0, unused: []))
        // A metrics socket may be AF_UNIX too; the name decides, not the family.
        XCTAssertEqual(
            select([socket("metrics", unix), socket("protocol", unix)]),
            SocketNames.Selection(protocolIndex: 1, metricsIndex: 0, unused: []))
    }

    func testUnnamedSocketsKeepTheFirstAFUnixListenerAsTheProtocol() {
        XCTAssertEqual(
            select([socket("unknown", unix)]),
            SocketNames.Selection(protocolIndex: 0, metricsIndex: nil, unused: []))
        // An older swiped.socket (its unit's name) next to the metrics unit, in either order.
        XCTAssertEqual(
            select([socket("metrics", tcp), socket("swiped.socket", unix)]),
            SocketNames.Selection(protocolIndex: 1, metricsIndex: 0, unused: []))
        // Never the protocol on TCP: an unnamed TCP socket first is passed over, and closed.
        XCTAssertEqual(
            select([socket("unknown", tcp), socket("unknown", unix), socket("unknown", unix)]),
            SocketNames.Selection(protocolIndex: 1, metricsIndex: nil, unused: [0, 2]))
        // A socket named `protocol` wins over an unnamed one before it.
        XCTAssertEqual(
            select([socket("unknown", unix), socket("protocol", unix)]),
            SocketNames.Selection(protocolIndex: 1, metricsIndex: nil, unused: [0]))
    }

    func testWhatCannotBeServedIsRefused() {
        XCTAssertNotNil(error([socket("protocol", tcp), socket("unknown", unix)]))
        XCTAssertNotNil(error([socket("metrics", tcp)]))
        XCTAssertNotNil(error([socket("unknown", tcp)]))
        XCTAssertNotNil(error([socket("protocol", unix), socket("protocol", unix)]))
        XCTAssertNotNil(error([socket("protocol", unix), socket("metrics", tcp), socket("metrics", tcp)]))
        XCTAssertNotNil(
            error([
                socket("protocol", unix), socket("metrics", (isUnixListener: false, isStreamListener: false)),
            ]))
        XCTAssertEqual(
            error([socket("metrics", tcp), socket("other", tcp)]),
            "systemd passed no listening AF_UNIX stream socket for the protocol (passed: metrics, other)")
    }

    /// Sockets named `web` (swiped-web.socket, one per ListenStream=) are the web listener's,
    /// however many; never the protocol's, and each must be a listening stream socket.
    func testWebSocketsAreTheWebListeners() {
        XCTAssertEqual(
            select([socket("web", tcp), socket("protocol", unix), socket("web", tcp), socket("metrics", tcp)]
            ),
            SocketNames.Selection(protocolIndex: 1, metricsIndex: 3, webIndices: [0, 2], unused: []))
        XCTAssertEqual(
            select([socket("web", unix), socket("swiped.socket", unix)]),
            SocketNames.Selection(protocolIndex: 1, metricsIndex: nil, webIndices: [0], unused: []))
        XCTAssertNotNil(error([socket("web", unix)]), "no protocol socket")
        XCTAssertNotNil(
            error([socket("protocol", unix), socket("web", (isUnixListener: false, isStreamListener: false))])
        )
    }
}

import Foundation
import Metrics
import Movies
import People
import Session
import StoreCore
import StoreTestSupport
import XCTest

@testable import Daemon

#if canImport(Glibc)
    import Glibc
#endif

extension InMemoryStore: StoreFigures {
    public var storeKind: MetricsSnapshot.StoreKind { .sqlite }
    public var loadedSnapshotSeq: UInt64 { 0 }
    public func location(_ config: Config, meters: CommitMeters) -> MetricsSnapshot.Store.Location {
        .sqlite(path: "(memory)", bytes: 0)
    }
}

/// The manager's own round without sockets (issue 42, point 1), as swift-nio's EmbeddedChannel
/// tests a pipeline: a real `Server` over the in-memory store, its connections `embedded` (what
/// it writes to them is kept in memory, their room set by the test), driven through `round`,
/// its actions carried out by `perform`, and `afterWork`, as the loop drives them for a socket.
/// The loop itself is not run: the test plays the store's eventfd (`settle`) and the sockets'
/// readiness.
final class EmbeddedServer {
    let store = InMemoryStore()
    let server: Server<InMemoryStore>
    private let directory: String

    init(_ arguments: [String] = []) throws {
        directory =
            FileManager.default.temporaryDirectory
            .appendingPathComponent("swiped-round-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        guard
            case .run(let config) = Config.parse(
                ["--socket", directory + "/s.sock", "--state", directory + "/state"] + arguments,
                environment: [:])
        else { throw CocoaError(.featureUnsupported) }
        // The Server blocks the signals it handles on this thread, for its signalfd; this
        // process goes on running other tests, whose children must not inherit that.
        var mask = sigset_t()
        pthread_sigmask(SIG_SETMASK, nil, &mask)
        defer { pthread_sigmask(SIG_SETMASK, &mask, nil) }
        let store = store
        server = try Server(
            config: config, journal: Journal(maxPriority: .err), openStore: { _, _ in store },
            openPeople: { _, _ in InMemoryPeopleStore() })
    }

    deinit {
        close(server.listener.fd)
        try? FileManager.default.removeItem(atPath: directory)  // a temp dir: nothing to lose
    }

    /// A Unix client of `role`, accepted: its hello is written.
    func connect(_ role: AccessRole = .writer, user: String = "alice") -> (Connection, EmbeddedPeer) {
        let client = server.nextClient
        server.nextClient += 1
        let session = Session(
            config: SessionConfig(
                client: client, identity: Identity(user: user, role: role, door: .unix(uid: 1000))),
            latestSeq: store.latestSeq, log: store.logID, largeReplies: server.largeReplies)
        let peer = EmbeddedPeer()
        let c = Connection(
            fd: -1, peer: Peer(pid: 42, uid: 1000, gid: 1000), session: session,
            base: .unix(name: user, uid: 1000),
            address: "pid 42", embedded: peer)
        server.opened(c)
        return (c, peer)
    }

    /// Bytes read from `c`'s socket: one round, then `afterWork`, as `handleIO` does.
    func send(_ c: Connection, _ text: String) {
        var bytes = Array((text + "\n").utf8)
        bytes.withUnsafeMutableBytes { server.round(c, .bytes(UnsafeRawBufferPointer($0)), at: 1_000) }
        server.afterWork(c)
    }

    /// The store's eventfd rang: its outcomes are delivered.
    func settle() {
        store.flush()
        server.deliver(store.completions())
    }
}

final class ServerRoundTests: XCTestCase {
    /// EPOLLIN and EPOLLOUT (sys/epoll.h, which this target does not import).
    private let readable: UInt32 = 0x001
    private let writable: UInt32 = 0x004

    func testHelloAndAPingAreWrittenAndTheSocketWatchedForReading() throws {
        let e = try EmbeddedServer()
        let (c, peer) = e.connect()
        XCTAssertEqual(peer.lines().count, 1)  // hello
        e.send(c, #"{"op":"ping","id":1}"#)
        XCTAssertEqual(peer.lines(), [#"{"id":1,"ok":true}"#])
        XCTAssertEqual(c.watched, readable)
        XCTAssertTrue(e.server.sink.isEmpty)
    }

    private let matrixWatched =
        #"{"id":"matrix","title":"The Matrix","image":"matrix","watched":true,"watchedWithFriends":false,"version":11}"#

    func testAToggleGoesToTheStoreAndItsReplyAndEventAreWrittenWhenItCommits() throws {
        let e = try EmbeddedServer()
        let (writer, out) = e.connect()
        let (watcher, events) = e.connect(.reader, user: "bob")
        e.send(watcher, #"{"op":"subscribe","id":"s"}"#)
        _ = (out.lines(), events.lines())
        XCTAssertTrue(e.server.subscribers[watcher.client] === watcher)

        e.send(writer, #"{"op":"toggle-watched","movie":"matrix","id":"t"}"#)
        // Submitted, not answered: the reply waits for the commit.
        XCTAssertEqual(e.server.pending.count, 1)
        XCTAssertEqual(e.store.pendingCount, 1)
        XCTAssertEqual(out.lines(), [])
        XCTAssertEqual(writer.watched, readable)

        e.settle()
        XCTAssertEqual(e.server.pending.count, 0)
        XCTAssertEqual(
            out.lines(), [#"{"id":"t","ok":true,"seq":11,"movie":"# + matrixWatched + #","by":"alice"}"#])
        // The subscriber's event went by the fan-out lane (written before its session heard it).
        let event = events.lines()
        XCTAssertEqual(event.count, 1)
        XCTAssertTrue(
            event[0].hasPrefix(
                #"{"event":"movie","seq":11,"kind":"watched-toggled","movie":"# + matrixWatched), event[0])
        XCTAssertTrue(event[0].hasSuffix(#","by":"alice"}"#), event[0])
        XCTAssertTrue(watcher.session.caughtUp(to: 11))
        XCTAssertTrue(e.server.sink.isEmpty)
    }

    func testAFullSocketIsWatchedForWritingAndDrainedWhenItHasRoom() throws {
        let e = try EmbeddedServer()
        let (c, peer) = e.connect()
        _ = peer.lines()
        peer.room = 5
        e.send(c, #"{"op":"ping","id":1}"#)
        XCTAssertEqual(String(decoding: peer.received, as: UTF8.self), #"{"id""#)
        XCTAssertEqual(c.watched, readable | writable)
        XCTAssertEqual(c.session.pendingOutput, 14)
        // The loop reports the socket writable.
        peer.room = .max
        e.server.handleIO(c, events: writable)
        XCTAssertEqual(peer.lines(), [#"{"id":1,"ok":true}"#])
        XCTAssertEqual(c.watched, readable)
        XCTAssertEqual(c.session.pendingOutput, 0)
    }

    func testARefusalInTheRoundIsHeardInTheSameRoundAndAnsweredInOrder() throws {
        let e = try EmbeddedServer(["--rate-limit-unix", "1/s,1"])
        let (c, peer) = e.connect()
        _ = peer.lines()
        e.send(
            c,
            #"{"op":"toggle-watched","movie":"matrix","id":1}"# + "\n"
                + #"{"op":"toggle-watched","movie":"alien","id":2}"# + "\n" + #"{"op":"ping","id":3}"#)
        // The second toggle was refused while the round's actions were carried out, and the
        // session heard it there: nothing of it reached the store, and its reply, worded, waits
        // in order behind the first's.
        XCTAssertEqual(e.server.pending.count, 1)
        XCTAssertEqual(e.store.pendingCount, 1)
        XCTAssertEqual(peer.lines(), [])
        XCTAssertTrue(e.server.sink.isEmpty)
        e.settle()
        XCTAssertEqual(
            peer.lines(),
            [
                #"{"id":1,"ok":true,"seq":11,"movie":"# + matrixWatched + #","by":"alice"}"#,
                #"{"id":2,"ok":false,"error":{"code":"overloaded","message":"alice is changing faster than this daemon's rate limit; retry in 1000 ms","retryAfter":1000}}"#,
                #"{"id":3,"ok":true}"#,
            ])
        XCTAssertEqual(e.server.denials.count(.rateLimited), 1)
    }

    func testStatusAndPeersAreAnsweredInTheRoundThatAskedThem() throws {
        let e = try EmbeddedServer()
        let (c, peer) = e.connect(.admin, user: "root")
        _ = peer.lines()
        e.send(c, #"{"op":"status","id":1}"# + "\n" + #"{"op":"peers","watch":true,"id":2}"#)
        let lines = peer.lines()
        XCTAssertEqual(lines.count, 2)
        XCTAssertTrue(lines[0].hasPrefix(#"{"id":1,"ok":true,"status":{"server":{"#), lines[0])
        // An admin's status lists every connection: this one.
        XCTAssertTrue(lines[0].contains(#""client":1,"user":"root","role":"admin""#), lines[0])
        XCTAssertTrue(lines[1].hasPrefix(#"{"id":2,"ok":true,"#), lines[1])
        XCTAssertTrue(lines[1].contains(#""peers":[]"#), lines[1])
        XCTAssertTrue(e.server.watchers[c.client] === c)
        XCTAssertTrue(e.server.sink.isEmpty)
    }

    func testAFiredRowArmsItsCloseTimerOnTheLoop() throws {
        let e = try EmbeddedServer()
        let (c, peer) = e.connect()
        e.send(c, #"{"op":"drag","movie":"matrix","dx":60}"#)
        e.send(c, #"{"op":"release","movie":"matrix","dx":350}"#)
        XCTAssertEqual(Array(c.timers.keys), [.closeRow("matrix")])
        XCTAssertEqual(e.server.pending.count, 1)
        e.settle()
        _ = peer.lines()
        // The loop's timer fires: the row closes.
        c.timers[.closeRow("matrix")] = nil
        e.server.round(c, .timerFired(.closeRow("matrix")), at: 600_000)
        e.server.afterWork(c)
        let closed = peer.lines()
        XCTAssertEqual(closed.count, 1)
        XCTAssertTrue(closed[0].contains(#""phase":"closed""#), closed[0])
    }

    func testShutdownSaysByeAndTheConnectionGoesOnceItIsWritten() throws {
        let e = try EmbeddedServer()
        let (c, peer) = e.connect()
        _ = peer.lines()
        e.server.round(c, .goodbye(.shutdown))
        XCTAssertEqual(c.session.lifecycle, .sayingBye(reason: .shutdown))
        e.server.afterWork(c)
        XCTAssertEqual(peer.lines(), [#"{"event":"bye","reason":"shutdown"}"#])
        XCTAssertEqual(c.session.lifecycle, .closed(reason: .closedByServer))
        XCTAssertNil(e.server.connections[c.client])
        XCTAssertTrue(c.timers.isEmpty)  // its goodbye timer cancelled
    }

    func testAPeerThatClosedIsDroppedWhenNothingIsOwed() throws {
        let e = try EmbeddedServer()
        let (c, peer) = e.connect()
        let (other, _) = e.connect()
        _ = peer.lines()
        e.server.round(c, .readEnded)
        e.server.afterWork(c)
        XCTAssertEqual(c.session.lifecycle, .closed(reason: .peerClosed))
        XCTAssertNil(e.server.connections[c.client])
        XCTAssertTrue(e.server.connections[other.client] === other)
    }
}

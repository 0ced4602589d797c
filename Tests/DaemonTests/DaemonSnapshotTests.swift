import Metrics
import Wire
import XCTest

@testable import Daemon

final class DaemonSnapshotTests: XCTestCase {
    func testTheSnapshotTakesEachFigureFromItsSource() {
        var loop = LoopMetrics()
        loop.connected(7)
        loop.counted(op: OpSpec.Kind.list.metricsIndex)  // answered at once: a read of 0 ns
        loop.failed(code: ErrorCode.forbidden.metricsIndex)
        loop.dropped = 2
        let commits = CommitMeters()
        commits.committed(nanoseconds: 900_000, events: 2)
        var config = Config(socketPath: "/s/sock", stateDirectory: "/s")
        config.maxQueue = 8192
        let store = MetricsSnapshot.Store(
            kind: .sqlite, state: .ok, sinceMicroseconds: 1, latestSeq: 12, events: 12, snapshotSeq: 0,
            location: .sqlite(path: "/s/log", bytes: 4096))
        let s = MetricsSnapshot.daemon(
            loop: loop, commits: commits,
            connections: ConnectionCounts(
                connected: 3, websockets: 1, subscribers: 1, sharers: 0, watchers: 0, recorders: 0, writers: 3
            ),
            store: store, config: config, maxClients: 100, fileLimit: 164, startedMicroseconds: 1_000_000,
            nowMicroseconds: 3_500_000,
            web: MetricsSnapshot.Web(
                refused: [LabelledCount("origin", 2)], closeCodes: [LabelledCount("1000", 1)]),
            denials: [LabelledCount("forbidden", 3)])
        XCTAssertEqual(s.denials, [LabelledCount("forbidden", 3)])
        XCTAssertEqual(s.server.version, swipedVersion)
        XCTAssertEqual(s.server.pid, getpid())
        XCTAssertEqual(s.server.uptimeSeconds, 2.5)
        XCTAssertEqual(s.clients.connected, 3)
        XCTAssertEqual(s.clients.byTransport, [LabelledCount("unix", 2), LabelledCount("websocket", 1)])
        XCTAssertEqual(s.web.refused, [LabelledCount("origin", 2)])
        XCTAssertEqual(s.clients.peak, 7)
        XCTAssertEqual(s.clients.dropped, 2)
        XCTAssertEqual(s.requests.first { $0.label == "list" }?.count, 1)
        XCTAssertEqual(s.errors.first { $0.label == "forbidden" }?.count, 1)
        XCTAssertEqual(s.latency[RequestClass.read.rawValue].count, 1)
        XCTAssertEqual(s.commitDuration.sum, 900_000)
        XCTAssertEqual(s.eventsPerCommit.sum, 2)
        XCTAssertEqual(s.process.maxQueueBytes, 8192)
        XCTAssertEqual(s.process.maxClients, 100)
        XCTAssertEqual(s.process.fileLimit, 164)
        XCTAssertNotNil(s.process.residentBytes)
        XCTAssertNotNil(s.process.openFiles)
        XCTAssertEqual(s.store, store)
    }
}

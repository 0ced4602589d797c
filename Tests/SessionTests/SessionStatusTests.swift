import Foundation
import JSONCodec
import Metrics
import People
import Session
import Wire
import XCTest

/// Issue 31: the `status` op, answered by the manager through the session (`.status`, then
/// `statusAnswered`), and what the sessions count into the sink's LoopMetrics as they answer:
/// requests by op, errors by code, and each request's time under its class (a request answered
/// in the wake-up that read it counts 0; a command is timed by the manager, not here).
final class SessionStatusTests: XCTestCase {
    private func harness(mayWrite: Bool = true) -> SessionHarness {
        let h = SessionHarness(SessionConfig(client: 3, identity: .tester(mayWrite ? .writer : .reader)))
        XCTAssertEqual(h.read().count, 1)  // hello
        return h
    }

    func testStatusIsAskedOfTheManagerAndItsAnswerIsTheReplyInItsPlace() throws {
        let h = harness()
        h.send(#"{"op":"status","id":9}"#)
        h.send(#"{"op":"ping","id":10}"#)
        XCTAssertEqual(h.takeActions(), [.status(ticket: 1)])
        h.perform()
        let replies = h.read()
        XCTAssertEqual(replies.count, 2)
        XCTAssertTrue(
            replies[0].hasPrefix(
                #"{"id":9,"ok":true,"status":{"server":{"version":"0.1.0","protocol":1,"pid":4242,"#),
            replies[0])
        XCTAssertEqual(replies[1], #"{"id":10,"ok":true}"#)
    }

    func testAReaderIsToldTheCountsNotWhereTheStoreIsNorThePid() {
        let h = harness(mayWrite: false)
        h.send(#"{"op":"status"}"#)
        h.perform()
        let reply = h.read().joined()
        XCTAssertTrue(reply.contains(#""status":{"server":{"version":"0.1.0","protocol":1,"started""#), reply)
        XCTAssertFalse(reply.contains("maxClients"), reply)
    }

    func testRequestsAreCountedByOpAndErrorsByCode() {
        let h = harness()
        h.send(#"{"op":"ping"}"#)
        h.send(#"{"op":"ping"}"#)
        h.send(#"{"op":"drag","movie":"seven","dx":-20}"#)
        h.send(#"{"op":"toggle-watched","movie":"seven"}"#)
        h.send(#"{"op":"nope"}"#)
        h.send("{")
        h.settle()
        let m = h.sink.metrics
        XCTAssertEqual(m.requests(OpSpec.Kind.ping.metricsIndex), 2)
        XCTAssertEqual(m.requests(OpSpec.Kind.drag.metricsIndex), 1)
        XCTAssertEqual(m.requests(OpSpec.Kind.toggleWatched.metricsIndex), 1)
        XCTAssertEqual(m.errors(ErrorCode.unknownOp.metricsIndex), 1)
        XCTAssertEqual(m.errors(ErrorCode.badJSON.metricsIndex), 1)
        // One command submitted (the toggle, the manager's to time); the pings and the drag were
        // answered at once.
        XCTAssertEqual(m.submitted, 1)
        let latency = m.latencySnapshots
        XCTAssertEqual(latency[RequestClass.read.rawValue].count, 2)
        XCTAssertEqual(latency[RequestClass.drag.rawValue].count, 1)
        XCTAssertEqual(latency[RequestClass.mutation.rawValue].count, 0)
    }
}

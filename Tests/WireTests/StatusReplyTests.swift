// The `status` reply (StatusReply.swift) and the counters' slots (MetricLabels.swift).
import Foundation
import JSONCodec
import Metrics
import TestSupport
import Wire
import XCTest

final class StatusReplyTests: XCTestCase {
    static let ops = OpSpec.Kind.allCases.map(\.rawValue)
    static let codes = ErrorCode.allCases.map(\.rawValue)

    func testEveryOpAndCodeHasTheSlotOfItsPlaceInTheTable() {
        XCTAssertEqual(OpSpec.Kind.allCases.map(\.metricsIndex), Array(OpSpec.Kind.allCases.indices))
        XCTAssertEqual(ErrorCode.allCases.map(\.metricsIndex), Array(ErrorCode.allCases.indices))
        XCTAssertLessThanOrEqual(OpSpec.Kind.allCases.count, LoopMetrics.opCapacity)
        XCTAssertLessThanOrEqual(ErrorCode.allCases.count, LoopMetrics.errorCapacity)
    }

    func testCountsAreLabelledWithTheTablesNames() {
        var loop = LoopMetrics()
        loop.answered(op: OpSpec.Kind.toggleWatched.metricsIndex, .mutation, nanoseconds: 1)
        loop.failed(code: ErrorCode.unknownOp.metricsIndex)
        XCTAssertEqual(loop.requestCounts.map(\.label), Self.ops)
        XCTAssertEqual(loop.requestCounts.first { $0.label == "toggle-watched" }?.count, 1)
        XCTAssertEqual(loop.requestCounts.reduce(0) { $0 + $1.count }, 1)
        XCTAssertEqual(loop.errorCounts.first { $0.label == "unknown-op" }?.count, 1)
        XCTAssertEqual(OpSpec.Kind.drag.requestClass(committed: false), .drag)
        XCTAssertEqual(OpSpec.Kind.tap.requestClass(committed: true), .mutation)
        XCTAssertEqual(OpSpec.Kind.tap.requestClass(committed: false), .read)
    }

    func reply(_ s: MetricsSnapshot, detail: Bool, id: String? = nil) throws -> (String, JSONObject) {
        var out = JSONWriter()
        Encode.status(&out, id: id.map { Array($0.utf8) }, s, detail: detail)
        let text = String(decoding: out.bytes, as: UTF8.self)
        XCTAssertTrue(text.hasSuffix("}\n"))
        XCTAssertEqual(text.filter { $0 == "\n" }.count, 1)
        return (text, try XCTUnwrap(try JSONParser.parse(text).objectValue))
    }

    func testTheReplyHoldsEveryFieldForAWriter() throws {
        let (_, o) = try reply(
            MetricsSample.snapshot(ops: Self.ops, codes: Self.codes), detail: true, id: "7")
        XCTAssertEqual(o["id"]?.numberValue?.int, 7)
        XCTAssertEqual(o["ok"]?.boolValue, true)
        let status = try XCTUnwrap(o["status"]?.objectValue)
        XCTAssertEqual(
            status.keys,
            [
                "server", "store", "clients", "requests", "errors", "latency", "commits", "process", "web",
                "denials",
            ])
        let web = try XCTUnwrap(status["web"]?.objectValue)
        XCTAssertEqual(web["refused"]?.objectValue?["origin"]?.numberValue?.int, 2)
        XCTAssertEqual(web["closeCodes"]?.objectValue?.keys, MetricsSnapshot.Web.closeCodeLabels)
        let server = try XCTUnwrap(status["server"]?.objectValue)
        XCTAssertEqual(server.keys, ["version", "protocol", "pid", "started", "uptime"])
        XCTAssertEqual(server["started"]?.stringValue, "2025-12-03T09:00:00.000000Z")
        XCTAssertEqual(server["uptime"]?.numberValue?.double, 61.5)
        let store = try XCTUnwrap(status["store"]?.objectValue)
        XCTAssertEqual(
            store.keys, ["kind", "state", "since", "seq", "events", "snapshotSeq", "path", "bytes"])
        XCTAssertEqual(store["path"]?.stringValue, "/var/lib/private/swiped/events.sqlite3")
        let clients = try XCTUnwrap(status["clients"]?.objectValue)
        XCTAssertEqual(clients["connected"]?.numberValue?.int, 5)
        XCTAssertEqual(clients["dropped"]?.numberValue?.int, 1)
        XCTAssertEqual(clients["transports"]?.objectValue?["websocket"]?.numberValue?.int, 2)
        XCTAssertEqual(clients["transports"]?.objectValue?["unix"]?.numberValue?.int, 3)
        let requests = try XCTUnwrap(status["requests"]?.objectValue)
        XCTAssertEqual(requests.keys, Self.ops)
        XCTAssertEqual(requests["toggle-watched"]?.numberValue?.int, 20)
        XCTAssertEqual(status["errors"]?.objectValue?["conflict"]?.numberValue?.int, 1)
        let latency = try XCTUnwrap(status["latency"]?.objectValue)
        XCTAssertEqual(latency.keys, ["drag", "read", "mutation", "fanout"])
        let mutation = try XCTUnwrap(latency["mutation"]?.objectValue)
        XCTAssertEqual(mutation["count"]?.numberValue?.int, 20)
        XCTAssertEqual(mutation["sum"]?.numberValue?.double ?? 0, 0.03, accuracy: 1e-12)
        let buckets = try XCTUnwrap(mutation["buckets"]?.arrayValue)
        XCTAssertEqual(buckets.count, 1)
        let bucket = try XCTUnwrap(buckets[0].arrayValue).map { $0.numberValue?.double }
        XCTAssertEqual(bucket, [0.001310720, 0.001572864, 20])  // 1.5 ms lies in (1.31, 1.57] ms
        let commits = try XCTUnwrap(status["commits"]?.objectValue)
        XCTAssertEqual(commits.keys, ["transactions", "events", "duration", "eventsPerTransaction"])
        XCTAssertEqual(commits["transactions"]?.numberValue?.int, 20)
        XCTAssertEqual(commits["events"]?.numberValue?.int, 20)
        let process = try XCTUnwrap(status["process"]?.objectValue)
        XCTAssertEqual(
            process.keys, ["residentBytes", "openFiles", "maxClients", "maxQueue", "maxLine", "fileLimit"])
    }

    func testOthersGetTheCountsButNotWhereTheStoreIsNorThePidNorTheLimits() throws {
        let (text, o) = try reply(
            MetricsSample.snapshot(
                ops: Self.ops, codes: Self.codes,
                location: .postgres(host: "db.example", port: 5433, database: "movies", lastReadSeconds: 0.5)),
            detail: false)
        XCTAssertFalse(text.contains("db.example"))
        XCTAssertFalse(text.contains("movies"))
        XCTAssertFalse(text.contains("5433"))
        let status = try XCTUnwrap(o["status"]?.objectValue)
        XCTAssertEqual(status["server"]?.objectValue?.keys, ["version", "protocol", "started", "uptime"])
        XCTAssertEqual(
            status["store"]?.objectValue?.keys,
            ["kind", "state", "since", "seq", "events", "snapshotSeq", "lastRead"])
        XCTAssertEqual(status["process"]?.objectValue?.keys, ["residentBytes", "openFiles"])
        let (detailed, _) = try reply(
            MetricsSample.snapshot(
                ops: Self.ops, codes: Self.codes,
                location: .postgres(host: "db.example", port: 5433, database: "movies", lastReadSeconds: nil)),
            detail: true)
        XCTAssertTrue(
            detailed.contains(#""host":"db.example","port":5433,"database":"movies","lastRead":null"#))
    }

    /// The golden reply that swipectlTests render (Tests/metrics/status.json): regenerate with
    /// SWIPED_WRITE_GOLDEN=1.
    func testTheGoldenReplyIsTheEncodersOutput() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../metrics/status.json").standardized
        let (text, _) = try reply(
            MetricsSample.snapshot(ops: Self.ops, codes: Self.codes), detail: true, id: "1")
        if ProcessInfo.processInfo.environment["SWIPED_WRITE_GOLDEN"] == "1" {
            try text.write(to: url, atomically: true, encoding: .utf8)
        }
        XCTAssertEqual(try String(contentsOf: url, encoding: .utf8), text)
    }
}

import Metrics

/// A MetricsSnapshot after known traffic: the one the golden exposition (Tests/metrics/sample.prom,
/// which Tests/metrics/prometheus_test.py serves to promtool and Prometheus) and the golden
/// status reply (Tests/metrics/status.json, which swipectlTests render) are made from.
/// `requests` and `errors` hold the slots 0… given by `ops` and `codes`.
public enum MetricsSample {
    public static func snapshot(
        ops: [String] = ["ping", "list", "toggle-watched", "drag"],
        codes: [String] = ["bad-json", "conflict"],
        state: MetricsSnapshot.StoreState = .ok, location: MetricsSnapshot.Store.Location? = nil
    ) -> MetricsSnapshot {
        var loop = LoopMetrics()
        func slot(_ name: String, _ names: [String]) -> Int { names.firstIndex(of: name)! }
        for _ in 0..<3 { loop.answered(op: slot("ping", ops), .read, nanoseconds: 12_000) }
        loop.answered(op: slot("list", ops), .read, nanoseconds: 40_000)
        for _ in 0..<20 { loop.answered(op: slot("toggle-watched", ops), .mutation, nanoseconds: 1_500_000) }
        for _ in 0..<100 { loop.answered(op: slot("drag", ops), .drag, nanoseconds: 9_000) }
        loop.failed(code: slot("conflict", codes))
        for n in 1...6 { loop.connected(n) }
        loop.fanout.record(30_000)
        var commits = Histogram(.latency)
        var events = Histogram(.events)
        for _ in 0..<20 {
            commits.record(1_200_000)
            events.record(1)
        }
        return MetricsSnapshot(
            server: .init(
                version: "0.1.0", protocolVersion: 1, pid: 4242, startedMicroseconds: 1_764_752_400_000_000,
                nowMicroseconds: 1_764_752_461_500_000),
            store: .init(
                kind: .sqlite, state: state, sinceMicroseconds: 1_764_752_400_000_000, latestSeq: 30,
                events: 30,
                snapshotSeq: 0,
                location: location ?? .sqlite(path: "/var/lib/private/swiped/events.sqlite3", bytes: 98_304)),
            clients: .init(
                connected: 5, peak: loop.peakClients, subscribers: 2, sharers: 1, watchers: 1, recorders: 0,
                writers: 5, refused: 0, dropped: 1, websockets: 2),
            requests: ops.indices.map { LabelledCount(ops[$0], loop.requests($0)) },
            errors: codes.indices.map { LabelledCount(codes[$0], loop.errors($0)) },
            latency: [loop.drag.snapshot(), loop.read.snapshot(), loop.mutation.snapshot()],
            fanout: loop.fanout.snapshot(), commitDuration: commits.snapshot(),
            eventsPerCommit: events.snapshot(),
            process: .init(
                residentBytes: 12_345_678, openFiles: 17, maxClients: 65_472, maxQueueBytes: 1 << 20,
                maxLineBytes: 65_536, fileLimit: 65_536),
            web: .init(
                refused: [
                    "bad-request", "method", "too-large", "timeout", "evicted", "not-found", "origin",
                    "version",
                    "unavailable", "busy",
                ].map { LabelledCount($0, $0 == "origin" ? 2 : $0 == "not-found" ? 1 : 0) },
                closeCodes: MetricsSnapshot.Web.closeCodeLabels.map {
                    LabelledCount($0, $0 == "1000" ? 3 : $0 == "1001" ? 1 : 0)
                }),
            denials: [
                "forbidden", "bad-token", "expired-token", "untrusted-header", "rate-limited", "no-rights",
            ].map {
                LabelledCount($0, $0 == "forbidden" ? 4 : $0 == "bad-token" ? 1 : 0)
            })
    }
}

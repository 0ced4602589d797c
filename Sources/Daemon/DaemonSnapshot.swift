// The manager's MetricsSnapshot, assembled from what it keeps (LoopMetrics, the store's
// CommitMeters, its tables of connections, its store's state) and what the process reports
// (ProcessFigures). Off the hot path: on a `status` request or a scrape.
import Metrics
import Wire

#if canImport(Glibc)
    import Glibc
#endif

/// The connections now, by what they do (counted from the manager's tables when asked).
struct ConnectionCounts: Equatable {
    var connected = 0
    /// Of `connected`, over a WebSocket.
    var websockets = 0
    var subscribers = 0
    var sharers = 0
    var watchers = 0
    var recorders = 0
    var writers = 0
}

extension MetricsSnapshot {
    /// Everything `status` and `/metrics` show. `started` and `now`: wall-clock microseconds
    /// since the epoch (SystemClock).
    static func daemon(
        loop: LoopMetrics, commits: CommitMeters, connections: ConnectionCounts, store: Store, config: Config,
        maxClients: Int, fileLimit: Int, startedMicroseconds: Int64, nowMicroseconds: Int64, web: Web,
        denials: [LabelledCount]
    ) -> MetricsSnapshot {
        MetricsSnapshot(
            server: Server(
                version: swipedVersion, protocolVersion: protocolVersion, pid: getpid(),
                startedMicroseconds: startedMicroseconds, nowMicroseconds: nowMicroseconds),
            store: store,
            clients: Clients(
                connected: connections.connected, peak: max(loop.peakClients, connections.connected),
                subscribers: connections.subscribers, sharers: connections.sharers,
                watchers: connections.watchers,
                recorders: connections.recorders, writers: connections.writers, refused: loop.refused,
                dropped: loop.dropped, websockets: connections.websockets),
            requests: loop.requestCounts, errors: loop.errorCounts,
            latency: loop.latencySnapshots,
            fanout: loop.fanout.snapshot(), commitDuration: commits.duration.snapshot(),
            eventsPerCommit: commits.events.snapshot(),
            process: Process(
                residentBytes: ProcessFigures.residentBytes(), openFiles: ProcessFigures.openFiles(),
                maxClients: maxClients, maxQueueBytes: config.maxQueue, maxLineBytes: config.maxLine,
                fileLimit: fileLimit),
            web: web, denials: denials)
    }
}

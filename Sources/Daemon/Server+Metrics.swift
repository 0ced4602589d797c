// How the daemon is doing (issue 31): the `status` op's reply and the metrics listener's
// `/metrics` and `/health`, both from one MetricsSnapshot built here, off the hot path (on a
// `status` request or a scrape). The hot paths only count: the sessions into the sink's
// LoopMetrics (answered, failed), the manager around them (connected, refused, dropped, a
// command's time, a fan-out's), the store's writer into CommitMeters on its own thread.
//
// Clock: the loop's time of the wake-up (sd_event_now, read by sd-event itself) is the only
// time a request is given; the one clock reading of our own is at the end of a wake-up that
// fanned a change out (`endFanOut`), once for the whole batch, whatever its subscribers.
import HTTPScrape
import Metrics
import People
import Session
import StoreCore
import StorePostgres
import StoreSQLite
import Wire

#if canImport(Glibc)
    import Glibc
#endif

/// What `status` tells of a store beyond the Store protocol: its kind, its latest snapshot and
/// where it is.
protocol StoreFigures: Store {
    var storeKind: MetricsSnapshot.StoreKind { get }
    /// The seq of the snapshot the store loaded at start (0: none).
    var loadedSnapshotSeq: UInt64 { get }
    /// `meters`: the ones the store was opened with (PostgreSQL's last read is in them).
    func location(_ config: Config, meters: CommitMeters) -> MetricsSnapshot.Store.Location
}

extension SQLiteStore: StoreFigures {
    var storeKind: MetricsSnapshot.StoreKind { .sqlite }
    var loadedSnapshotSeq: UInt64 { startup.snapshotSeq }

    func location(_ config: Config, meters: CommitMeters) -> MetricsSnapshot.Store.Location {
        // The WAL holds what is not yet checkpointed: it is part of the log's size on disk.
        .sqlite(path: path, bytes: Self.fileSize(path) + Self.fileSize(path + "-wal"))
    }

    static func fileSize(_ path: String) -> UInt64 {
        var st = stat()
        return stat(path, &st) == 0 ? UInt64(st.st_size) : 0
    }
}

extension PostgresStore: StoreFigures {
    var storeKind: MetricsSnapshot.StoreKind { .postgres }
    var loadedSnapshotSeq: UInt64 { startup.snapshotSeq }

    func location(_ config: Config, meters: CommitMeters) -> MetricsSnapshot.Store.Location {
        let target = PostgresTarget(conninfo: config.postgres ?? "", environment: Self.environment)
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        let now = UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
        return .postgres(
            host: target.host, port: target.port, database: target.database,
            lastReadSeconds: meters.secondsSinceReadToHead(now: now))
    }

    static var environment: (String) -> String? { { getenv($0).map { String(cString: $0) } } }
}

/// The server a libpq connection string names, as libpq resolves it: its keywords (or a
/// postgresql:// URI), then PGHOST, PGPORT, PGDATABASE, then libpq's defaults (the Unix
/// socket directory, 5432, the user's name). Never the password (the string holds none:
/// Config refuses one).
struct PostgresTarget: Equatable {
    var host: String
    var port: Int
    var database: String

    init(conninfo: String, environment: (String) -> String?) {
        var values: [String: String] = [:]
        if conninfo.hasPrefix("postgresql://") || conninfo.hasPrefix("postgres://") {
            values = Self.uri(conninfo)
        } else {
            values = Self.keywords(conninfo)
        }
        let user = values["user"] ?? environment("PGUSER") ?? environment("USER") ?? "postgres"
        host = values["host"] ?? environment("PGHOST") ?? "/var/run/postgresql"
        port = Int(values["port"] ?? environment("PGPORT") ?? "") ?? 5432
        database = values["dbname"] ?? environment("PGDATABASE") ?? user
    }

    /// `key=value key='quoted value'`.
    static func keywords(_ text: String) -> [String: String] {
        var values: [String: String] = [:]
        var chars = Array(text)
        chars.append(" ")
        var i = 0
        while i < chars.count {
            while i < chars.count, chars[i] == " " { i += 1 }
            var key = ""
            while i < chars.count, chars[i] != "=", chars[i] != " " {
                key.append(chars[i])
                i += 1
            }
            while i < chars.count, chars[i] == " " { i += 1 }
            guard i < chars.count, chars[i] == "=" else { break }
            i += 1
            while i < chars.count, chars[i] == " " { i += 1 }
            var value = ""
            if i < chars.count, chars[i] == "'" {
                i += 1
                while i < chars.count, chars[i] != "'" {
                    if chars[i] == "\\", i + 1 < chars.count { i += 1 }
                    value.append(chars[i])
                    i += 1
                }
                i += 1
            } else {
                while i < chars.count, chars[i] != " " {
                    value.append(chars[i])
                    i += 1
                }
            }
            values[key] = value
        }
        return values
    }

    /// `postgresql://[user@]host[:port][/database][?key=value&…]`.
    static func uri(_ text: String) -> [String: String] {
        var values: [String: String] = [:]
        var rest = Substring(text[text.range(of: "://")!.upperBound...])
        if let q = rest.firstIndex(of: "?") {
            for pair in rest[rest.index(after: q)...].split(separator: "&") {
                let kv = pair.split(separator: "=", maxSplits: 1)
                if kv.count == 2 { values[String(kv[0])] = String(kv[1]).removingPercentEncoding }
            }
            rest = rest[..<q]
        }
        if let slash = rest.firstIndex(of: "/") {
            let database = rest[rest.index(after: slash)...]
            if !database.isEmpty, values["dbname"] == nil { values["dbname"] = String(database) }
            rest = rest[..<slash]
        }
        if let at = rest.lastIndex(of: "@") {
            let user = rest[..<at].split(separator: ":").first.map(String.init)
            if let user, values["user"] == nil { values["user"] = user }
            rest = rest[rest.index(after: at)...]
        }
        var host = rest
        if host.hasPrefix("["), let close = host.firstIndex(of: "]") {
            let port = host[host.index(after: close)...].dropFirst()
            if !port.isEmpty, values["port"] == nil { values["port"] = String(port) }
            host = host[host.index(after: host.startIndex)..<close]
        } else if let colon = host.lastIndex(of: ":") {
            let port = host[host.index(after: colon)...]
            if !port.isEmpty, values["port"] == nil { values["port"] = String(port) }
            host = host[..<colon]
        }
        if !host.isEmpty, values["host"] == nil { values["host"] = String(host).removingPercentEncoding }
        return values
    }
}

extension String {
    /// `%2F` and the like decoded; nil when a `%` is not followed by two hex digits.
    fileprivate var removingPercentEncoding: String? {
        var bytes: [UInt8] = []
        var utf8 = self.utf8.makeIterator()
        while let b = utf8.next() {
            if b == UInt8(ascii: "%") {
                guard let h = utf8.next(), let l = utf8.next(),
                    let value = UInt8(String(decoding: [h, l], as: UTF8.self), radix: 16)
                else { return nil }
                bytes.append(value)
            } else {
                bytes.append(b)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension Server {
    /// Wall-clock microseconds since the epoch (for `started` and a snapshot's `now`).
    static func wallMicroseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
    }

    /// Everything `status` and `/metrics` show, now.
    func metricsSnapshot() -> MetricsSnapshot {
        var counts = ConnectionCounts()
        counts.connected = connections.count
        counts.subscribers = subscribers.count
        counts.sharers = sharers.values.filter { $0.session.isSharing }.count
        counts.watchers = watchers.count
        for c in connections.values {
            if c.session.isRecording { counts.recorders += 1 }
            if c.session.identity.mayWrite { counts.writers += 1 }
            if c.web != nil { counts.websockets += 1 }
        }
        let store = MetricsSnapshot.Store(
            kind: self.store.storeKind, state: storeState, sinceMicroseconds: storeSince,
            latestSeq: self.store.latestSeq,
            // Seqs start at 1 and have no gaps: the latest is the count.
            events: self.store.latestSeq,
            snapshotSeq: commitMeters.latestSnapshotSeq(loaded: self.store.loadedSnapshotSeq),
            location: self.store.location(config, meters: commitMeters))
        return MetricsSnapshot.daemon(
            loop: sink.metrics, commits: commitMeters, connections: counts, store: store, config: config,
            maxClients: maxClients, fileLimit: files.soft, startedMicroseconds: startedMicroseconds,
            nowMicroseconds: Self.wallMicroseconds(), web: webFigures(),
            denials: DenialReason.allCases.map { LabelledCount($0.rawValue, denials.count($0)) })
    }

    /// The answer to `c`'s `status`, for `perform` to have it heard. Where the store is, the
    /// pid and the limits go to writers and root only: through the web bridge every page is
    /// one peer; every connection goes to admins.
    func statusAnswer(_ c: Connection, ticket: UInt64) -> SessionInput {
        let role = c.session.identity.role
        return .statusAnswered(
            ticket: ticket, metricsSnapshot(), detail: role >= .writer,
            connections: role == .admin ? connections.values.map(summary) : nil)
    }

    /// One connection as an admin's `status` lists it.
    func summary(_ c: Connection) -> ConnectionSummary {
        let who = c.session.identity
        return ConnectionSummary(
            client: c.client, user: who.user, role: who.role.rawValue, door: who.door.name,
            transport: c.web == nil ? "unix" : "websocket", address: c.address,
            subscribed: subscribers[c.client] != nil)
    }

    /// The store's state as `status` and `/health` tell it, and since when: checked when the
    /// store reports something (its notes), not per request.
    func noteStoreState() {
        let now: MetricsSnapshot.StoreState = store.statusNote == nil ? .ok : .unavailable
        guard now != storeState else { return }
        storeState = now
        storeSince = Self.wallMicroseconds()
    }

    // MARK: - Fan-out

    /// A change is being fanned out in this wake-up: timed from the wake-up (the store's
    /// completion) to the end of the wake-up (`endFanOut`), when every subscriber's write is done.
    @inline(__always)
    func beginFanOut() {
        if fanOutFrom == nil { fanOutFrom = loop.now }
    }

    /// The end of a wake-up that fanned out a change: the one clock reading for it.
    func endFanOut() {
        guard let from = fanOutFrom else { return }
        fanOutFrom = nil
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        let end = UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
        let start = from &* 1000
        sink.metrics.fanout.record(end > start ? end &- start : 0)
    }

    // MARK: - The metrics listener

    /// Serves `/metrics` and `/health` on the socket systemd passed as `metrics`, or on the one
    /// `--metrics` bound.
    func startMetrics() throws(SystemError) {
        guard let fd = listener.metricsFD ?? boundMetricsFD else { return }
        metricsServer = try MetricsServer(loop: loop, fd: fd, journal: journal) { [unowned self] request in
            scrape(request)
        }
        journal.log(
            .info, "serving metrics over HTTP",
            [
                ("FD", "\(fd)"), ("ADDRESS", Listener.localAddress(fd) ?? "?"),
                ("ORIGIN", listener.metricsFD != nil ? "systemd (socket activation)" : "--metrics"),
            ])
    }

    /// Stops the metrics listener; the socket `--metrics` bound is closed (systemd's is not
    /// ours to close).
    func stopMetrics() {
        metricsServer?.close()
        metricsServer = nil
        if let fd = boundMetricsFD {
            close(fd)
            boundMetricsFD = nil
        }
    }

    /// One scrape's response.
    func scrape(_ request: ScrapeRequest) -> [UInt8] {
        switch request.route {
        case .metrics:
            Response.make(
                .ok, contentType: Prometheus.contentType, body: Prometheus.text(metricsSnapshot()),
                head: request.head)
        case .health:
            Response.health(problem: storeState.healthProblem, head: request.head)
        }
    }
}

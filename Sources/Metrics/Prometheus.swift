// The Prometheus text exposition format, version 0.0.4 (what `/metrics` answers), rendered from
// a MetricsSnapshot. The names are fixed so that dashboards are written once (issue 31;
// docs/running.md, "Prometheus metrics and a health check"): prefix `swiped_`, base units,
// counters ending in `_total`, `process_*` as every Prometheus client library names them. Every
// label value comes from a closed set (an op, an error code, a request class, a store state or
// kind): none grows with traffic.
public enum Prometheus {
    /// The `Content-Type` of the text format.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    public static func text(_ s: MetricsSnapshot) -> String {
        var out = Exposition()
        out.family("swiped_build_info", .gauge, "The version of swiped and of its protocol; always 1.")
        out.sample(
            "swiped_build_info",
            [("version", s.server.version), ("protocol", "\(s.server.protocolVersion)")], "1")
        out.gauge(
            "process_start_time_seconds", "When the daemon started, in seconds since the epoch.",
            seconds(microseconds: s.server.startedMicroseconds))

        clients(&out, s.clients)
        out.family("swiped_requests_total", .counter, "Requests answered since start, by op.")
        for c in s.requests { out.sample("swiped_requests_total", [("op", c.label)], "\(c.count)") }
        out.family("swiped_errors_total", .counter, "Error replies since start, by code.")
        for c in s.errors { out.sample("swiped_errors_total", [("code", c.label)], "\(c.count)") }

        out.family(
            "swiped_request_duration_seconds", .histogram,
            "Request to reply, by class: drag, read, mutation (its commit included).")
        for requestClass in RequestClass.allCases {
            out.latency(
                "swiped_request_duration_seconds", [("class", requestClass.name)],
                s.latency[requestClass.rawValue])
        }
        out.family("swiped_fanout_duration_seconds", .histogram, "One change sent to every subscriber.")
        out.latency("swiped_fanout_duration_seconds", [], s.fanout)
        out.family(
            "swiped_commit_duration_seconds", .histogram, "The store's transactions, fsync included.")
        out.latency("swiped_commit_duration_seconds", [], s.commitDuration)
        out.family("swiped_commit_events", .histogram, "Events per transaction of the store.")
        out.counts("swiped_commit_events", s.eventsPerCommit)

        store(&out, s.store)
        process(&out, s.process)
        web(&out, s.web)
        out.family(
            "swiped_denials_total", .counter,
            "Requests and sign-ins refused since start, by reason (protocol.md, \"Who may do what\").")
        for c in s.denials { out.sample("swiped_denials_total", [("reason", c.label)], "\(c.count)") }
        return out.text
    }

    private static func clients(_ out: inout Exposition, _ c: MetricsSnapshot.Clients) {
        out.gauge("swiped_clients", "Clients connected now.", "\(c.connected)")
        out.gauge("swiped_clients_peak", "The most clients connected at once since start.", "\(c.peak)")
        out.gauge("swiped_subscribers", "Clients subscribed to movie events.", "\(c.subscribers)")
        out.gauge("swiped_sharers", "Clients sharing their rows.", "\(c.sharers)")
        out.gauge("swiped_watchers", "Clients watching the rows of peers.", "\(c.watchers)")
        out.gauge("swiped_recorders", "Clients recording their swipe session.", "\(c.recorders)")
        out.gauge("swiped_writers", "Connected clients that may change the shared state.", "\(c.writers)")
        out.counter(
            "swiped_clients_refused_total", "Connections refused with too-many-clients since start.",
            c.refused)
        out.counter(
            "swiped_clients_dropped_total", "Clients dropped as slow consumers since start.", c.dropped)
        out.family(
            "swiped_clients_by_transport", .gauge,
            "Clients connected now, by transport: unix (the socket), websocket (the web listener).")
        for t in c.byTransport {
            out.sample("swiped_clients_by_transport", [("transport", t.label)], "\(t.count)")
        }
    }

    private static func web(_ out: inout Exposition, _ w: MetricsSnapshot.Web) {
        out.family(
            "swiped_web_refused_total", .counter,
            "Requests on the web listener refused before a WebSocket or a file, by reason, since start.")
        for c in w.refused { out.sample("swiped_web_refused_total", [("reason", c.label)], "\(c.count)") }
        out.family(
            "swiped_web_close_frames_total", .counter,
            "Close frames sent to WebSockets since start, by code (other: a code a peer chose).")
        for c in w.closeCodes {
            out.sample("swiped_web_close_frames_total", [("code", c.label)], "\(c.count)")
        }
    }

    private static func store(_ out: inout Exposition, _ s: MetricsSnapshot.Store) {
        out.gauge("swiped_store_up", "1 when the store takes writes, else 0.", s.state == .ok ? "1" : "0")
        out.family("swiped_store_state", .gauge, "1 for the store's state now, 0 for the others.")
        for state in MetricsSnapshot.StoreState.allCases {
            out.sample("swiped_store_state", [("state", state.rawValue)], state == s.state ? "1" : "0")
        }
        out.family("swiped_store_info", .gauge, "The kind of store: sqlite or postgres; always 1.")
        out.sample("swiped_store_info", [("kind", s.kind.rawValue)], "1")
        out.gauge("swiped_log_seq", "The latest seq of the event log.", "\(s.latestSeq)")
        out.gauge("swiped_log_events", "Events in the event log.", "\(s.events)")
        out.gauge("swiped_log_snapshot_seq", "The seq of the latest snapshot (0: none).", "\(s.snapshotSeq)")
        switch s.location {
        case .sqlite(_, let bytes):
            out.gauge("swiped_log_size_bytes", "The SQLite log's size, its WAL included.", "\(bytes)")
        case .postgres(_, _, _, let lastRead):
            if let lastRead {
                out.gauge(
                    "swiped_store_last_read_age_seconds",
                    "Seconds since the last read of other daemons' events.",
                    "\(lastRead)")
            }
        }
    }

    private static func process(_ out: inout Exposition, _ p: MetricsSnapshot.Process) {
        if let bytes = p.residentBytes {
            out.gauge("process_resident_memory_bytes", "Resident memory size in bytes.", "\(bytes)")
        }
        if let files = p.openFiles {
            out.gauge("process_open_fds", "Number of open file descriptors.", "\(files)")
        }
        out.gauge("process_max_fds", "Maximum number of open file descriptors.", "\(p.fileLimit)")
        out.gauge("swiped_max_clients", "The most clients served at once (--max-clients).", "\(p.maxClients)")
        out.gauge("swiped_max_queue_bytes", "A client's write queue cap (--max-queue).", "\(p.maxQueueBytes)")
        out.gauge("swiped_max_line_bytes", "The longest request line (--max-line).", "\(p.maxLineBytes)")
    }

    /// `microseconds` as seconds, exactly ("1764752400.123456").
    static func seconds(microseconds: Int64) -> String {
        decimal(magnitude: microseconds.magnitude, negative: microseconds < 0, scale: 6)
    }

    /// `nanoseconds` as seconds, exactly ("0.000016384").
    static func seconds(nanoseconds: UInt64) -> String {
        decimal(magnitude: nanoseconds, negative: false, scale: 9)
    }

    /// `magnitude / 10^scale` in plain decimal, trailing zeros of the fraction dropped.
    static func decimal(magnitude: UInt64, negative: Bool, scale: Int) -> String {
        var divisor: UInt64 = 1
        for _ in 0..<scale { divisor *= 10 }
        var fraction = String(magnitude % divisor)
        fraction = String(repeating: "0", count: scale - fraction.count) + fraction
        while fraction.last == "0" { fraction.removeLast() }
        let whole = (negative ? "-" : "") + String(magnitude / divisor)
        return fraction.isEmpty ? whole : whole + "." + fraction
    }
}

/// The text being written: families (HELP, TYPE) and their samples.
struct Exposition {
    enum Kind: String {
        case counter, gauge, histogram
    }

    var text = ""

    mutating func family(_ name: String, _ kind: Kind, _ help: String) {
        text += "# HELP \(name) \(Exposition.escapeHelp(help))\n# TYPE \(name) \(kind.rawValue)\n"
    }

    mutating func sample(_ name: String, _ labels: [(String, String)], _ value: String) {
        text += name
        if !labels.isEmpty {
            text +=
                "{" + labels.map { "\($0.0)=\"\(Exposition.escapeLabel($0.1))\"" }.joined(separator: ",")
                + "}"
        }
        text += " \(value)\n"
    }

    mutating func gauge(_ name: String, _ help: String, _ value: String) {
        family(name, .gauge, help)
        sample(name, [], value)
    }

    mutating func counter(_ name: String, _ help: String, _ value: UInt64) {
        family(name, .counter, help)
        sample(name, [], "\(value)")
    }

    /// A latency histogram (nanoseconds) in seconds, at every power-of-two bound.
    mutating func latency(_ name: String, _ labels: [(String, String)], _ h: HistogramSnapshot) {
        histogram(name, labels, h, bound: Prometheus.seconds(nanoseconds:))
    }

    /// A histogram of counts, at every power-of-two bound.
    mutating func counts(_ name: String, _ h: HistogramSnapshot) {
        histogram(name, [], h, bound: { "\($0)" })
    }

    private mutating func histogram(
        _ name: String, _ labels: [(String, String)], _ h: HistogramSnapshot, bound: (UInt64) -> String
    ) {
        var total: UInt64 = 0
        for (upper, cumulative) in h.cumulativeAtPowersOfTwo {
            sample(name + "_bucket", labels + [("le", upper.map(bound) ?? "+Inf")], "\(cumulative)")
            total = cumulative
        }
        sample(name + "_sum", labels, bound(h.sum))
        sample(name + "_count", labels, "\(total)")
    }

    static func escapeLabel(_ value: String) -> String {
        var out = ""
        for c in value.unicodeScalars {
            switch c {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }

    static func escapeHelp(_ value: String) -> String {
        var out = ""
        for c in value.unicodeScalars {
            switch c {
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }
}

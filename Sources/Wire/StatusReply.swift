// The `status` op's reply (protocol.md, "status"; issue 31): `{"ok":true,"status":{…}}`, from
// the MetricsSnapshot that `/metrics` renders too. Off the hot path: built on request.
//
// Who sees what: through the web bridge every page is one peer, so where the store is (its
// path; PostgreSQL's host, port and database), the pid and the limits go only to writers and
// root (`detail`); everyone else gets the counts.
import JSONCodec
import Metrics

extension Encode {
    public static func status(
        _ out: inout JSONWriter, id: [UInt8]?, _ s: MetricsSnapshot, detail: Bool,
        connections: [ConnectionSummary]? = nil
    ) {
        begin(&out, id: id, ok: true)
        key(&out, "status")
        out.object { o in
            o.field("server", object: { server(&$0, s.server, detail: detail) })
            o.field("store", object: { store(&$0, s.store, now: s.server.nowMicroseconds, detail: detail) })
            o.field("clients", object: { clients(&$0, s.clients) })
            o.field("requests", object: { counts(&$0, s.requests) })
            o.field("errors", object: { counts(&$0, s.errors) })
            o.field(
                "latency",
                object: { o in
                    for requestClass in RequestClass.allCases {
                        o.field(
                            requestClass.name,
                            object: { histogram(&$0, s.latency[requestClass.rawValue], seconds: true) })
                    }
                    o.field("fanout", object: { histogram(&$0, s.fanout, seconds: true) })
                })
            o.field(
                "commits",
                object: { o in
                    o.field("transactions", s.eventsPerCommit.count)
                    o.field("events", s.eventsPerCommit.sum)
                    o.field("duration", object: { histogram(&$0, s.commitDuration, seconds: true) })
                    o.field(
                        "eventsPerTransaction", object: { histogram(&$0, s.eventsPerCommit, seconds: false) })
                })
            o.field("process", object: { process(&$0, s.process, detail: detail) })
            o.field(
                "web",
                object: { o in
                    o.field("refused", object: { counts(&$0, s.web.refused) })
                    o.field("closeCodes", object: { counts(&$0, s.web.closeCodes) })
                })
            o.field("denials", object: { counts(&$0, s.denials) })
            if let connections {
                o.field(
                    "connections",
                    array: { a in
                        for c in connections { a.object { c.write(&$0) } }
                    })
            }
        }
        end(&out)
    }

    static func server(_ o: inout JSONWriter, _ s: MetricsSnapshot.Server, detail: Bool) {
        o.field("version", s.version)
        o.field("protocol", s.protocolVersion)
        if detail { o.field("pid", Int(s.pid)) }
        o.field("started", RFC3339.format(microsecondsSinceEpoch: s.startedMicroseconds))
        o.field("uptime", s.uptimeSeconds)
    }

    static func store(_ o: inout JSONWriter, _ s: MetricsSnapshot.Store, now: Int64, detail: Bool) {
        o.field("kind", s.kind.rawValue)
        o.field("state", s.state.rawValue)
        o.field("since", RFC3339.format(microsecondsSinceEpoch: s.sinceMicroseconds))
        o.field("seq", s.latestSeq)
        o.field("events", s.events)
        o.field("snapshotSeq", s.snapshotSeq)
        switch s.location {
        case .sqlite(let path, let bytes):
            if detail { o.field("path", path) }
            o.field("bytes", bytes)
        case .postgres(let host, let port, let database, let lastRead):
            if detail {
                o.field("host", host)
                o.field("port", port)
                o.field("database", database)
            }
            o.key("lastRead")
            if let lastRead { o.double(lastRead) } else { o.null() }
        }
    }

    static func clients(_ o: inout JSONWriter, _ c: MetricsSnapshot.Clients) {
        o.field("connected", c.connected)
        o.field("peak", c.peak)
        o.field("subscribers", c.subscribers)
        o.field("sharers", c.sharers)
        o.field("watchers", c.watchers)
        o.field("recorders", c.recorders)
        o.field("writers", c.writers)
        o.field("refused", c.refused)
        o.field("dropped", c.dropped)
        o.field("transports", object: { counts(&$0, c.byTransport) })
    }

    static func counts(_ o: inout JSONWriter, _ counts: [LabelledCount]) {
        for c in counts { o.field(c.label, c.count) }
    }

    /// `{"count":…,"sum":…,"buckets":[[lower,upper,count],…]}`: the buckets that hold a value,
    /// in order; `upper` null for the last (no bound). Latencies in seconds.
    static func histogram(_ o: inout JSONWriter, _ h: HistogramSnapshot, seconds: Bool) {
        // A division, not a product with 1e-9: nanoseconds / 1e9 is correctly rounded, so a
        // bound of 1572864 ns reads 0.001572864, not 0.0015728640000000002.
        let unit = seconds ? 1e9 : 1
        o.field("count", h.count)
        if seconds { o.field("sum", Double(h.sum) / unit) } else { o.field("sum", h.sum) }
        o.field(
            "buckets",
            array: { o in
                for b in h.nonEmptyBuckets {
                    o.array { o in
                        o.double(b.lower / unit)
                        if let upper = b.upper { o.double(upper / unit) } else { o.null() }
                        o.uint64(b.count)
                    }
                }
            })
    }

    static func process(_ o: inout JSONWriter, _ p: MetricsSnapshot.Process, detail: Bool) {
        o.key("residentBytes")
        if let bytes = p.residentBytes { o.uint64(bytes) } else { o.null() }
        o.key("openFiles")
        if let files = p.openFiles { o.int(files) } else { o.null() }
        if detail {
            o.field("maxClients", p.maxClients)
            o.field("maxQueue", p.maxQueueBytes)
            o.field("maxLine", p.maxLineBytes)
            o.field("fileLimit", p.fileLimit)
        }
    }
}

/// One connection as an admin's `status` lists it (issue 45).
public struct ConnectionSummary: Equatable, Sendable {
    public var client: UInt64
    public var user: String?
    public var role: String
    /// unix, token, proxy or anonymous.
    public var door: String
    /// unix or websocket.
    public var transport: String
    /// A browser's address, a Unix peer's pid.
    public var address: String
    public var subscribed: Bool

    public init(
        client: UInt64, user: String?, role: String, door: String, transport: String, address: String,
        subscribed: Bool
    ) {
        self.client = client
        self.user = user
        self.role = role
        self.door = door
        self.transport = transport
        self.address = address
        self.subscribed = subscribed
    }

    func write(_ o: inout JSONWriter) {
        o.field("client", client)
        o.key("user")
        if let user { o.string(user) } else { o.null() }
        o.field("role", role)
        o.field("door", door)
        o.field("transport", transport)
        o.field("address", address)
        o.field("subscribed", subscribed)
    }
}

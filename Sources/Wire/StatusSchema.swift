// The `status` reply's objects, declared for `help` (protocol.md, "How the daemon is doing:
// status"): every field the encoder writes (StatusReply.swift), in the words of the op table.
// `required: false` marks what only writers and root see, and what one store has and the other
// has not.
import Metrics

extension Schema {
    static let status = ObjectSpec(
        name: "status", summary: "how the daemon is doing (the status op); the same figures as GET /metrics",
        fields: [
            ArgSpec("server", .object("statusServer"), required: true, "the daemon"),
            ArgSpec("store", .object("statusStore"), required: true, "the event log"),
            ArgSpec("clients", .object("statusClients"), required: true, "the connections"),
            ArgSpec(
                "requests", .any, required: true,
                "every op, with its requests since start (counted as handled: a status counts itself)"),
            ArgSpec(
                "errors", .any, required: true,
                "every error code, with its error replies and refused or failed commands since start"),
            ArgSpec(
                "latency", .object("statusLatency"), required: true,
                "histograms of request to reply, by class, and of the fan-out"),
            ArgSpec("commits", .object("statusCommits"), required: true, "the store's transactions"),
            ArgSpec("process", .object("statusProcess"), required: true, "the process"),
            ArgSpec("web", .object("statusWeb"), required: true, "the web listener"),
            ArgSpec(
                "denials", .any, required: true,
                "every denial reason (forbidden, bad-token, expired-token, untrusted-header, rate-limited, no-rights), with its refusals since start"
            ),
            ArgSpec(
                "connections", .array(of: "statusConnection"),
                "admins only: every connection, with client, user, role, door, transport, address, subscribed"
            ),
        ])

    static let statusServer = ObjectSpec(
        name: "statusServer", summary: "the daemon, in a status",
        fields: [
            ArgSpec("version", .string(), required: true, "as in hello"),
            ArgSpec("protocol", .integer(), required: true, "as in hello"),
            ArgSpec("pid", .integer(min: 1), "its process id (writers and root only)"),
            ArgSpec("started", .string(), required: true, "when it started: RFC 3339, UTC, microseconds"),
            ArgSpec("uptime", .number(), required: true, "seconds since it started"),
        ])

    static let statusStore = ObjectSpec(
        name: "statusStore", summary: "the event log, in a status",
        fields: [
            ArgSpec(
                "kind", .string(values: MetricsSnapshot.StoreKind.allCases.map(\.rawValue)), required: true,
                "sqlite or postgres"),
            ArgSpec(
                "state", .string(values: MetricsSnapshot.StoreState.allCases.map(\.rawValue)), required: true,
                "ok; unavailable: writes fail with unavailable until it is back; reconnecting: reserved"),
            ArgSpec("since", .string(), required: true, "when the state began (RFC 3339)"),
            ArgSpec("seq", .integer(min: 0), required: true, "the latest seq"),
            ArgSpec("events", .integer(min: 0), required: true, "events in the log"),
            ArgSpec(
                "snapshotSeq", .integer(min: 0), required: true,
                "the seq of the latest snapshot: saved last while serving, else the one started from (0: none)"
            ),
            ArgSpec("path", .string(), "SQLite: the log's file (writers and root only)"),
            ArgSpec("bytes", .integer(min: 0), "SQLite: the log's size, its WAL included"),
            ArgSpec("host", .string(), "PostgreSQL: the server (writers and root only; never a password)"),
            ArgSpec("port", .integer(min: 1), "PostgreSQL: its port (writers and root only)"),
            ArgSpec("database", .string(), "PostgreSQL: the database (writers and root only)"),
            ArgSpec(
                "lastRead", .number(), nullable: true,
                "PostgreSQL: seconds since the shared log was last read to its head (null: not yet)"),
        ])

    static let statusClients = ObjectSpec(
        name: "statusClients", summary: "the connections, in a status",
        fields: [
            ArgSpec("connected", .integer(min: 0), required: true, "connected now"),
            ArgSpec("peak", .integer(min: 0), required: true, "the most at once since start"),
            ArgSpec("subscribers", .integer(min: 0), required: true, "subscribed to movie events"),
            ArgSpec("sharers", .integer(min: 0), required: true, "sharing their rows"),
            ArgSpec("watchers", .integer(min: 0), required: true, "watching peers"),
            ArgSpec("recorders", .integer(min: 0), required: true, "recording"),
            ArgSpec("writers", .integer(min: 0), required: true, "that may change the shared state"),
            ArgSpec("refused", .integer(min: 0), required: true, "sent bye too-many-clients since start"),
            ArgSpec("dropped", .integer(min: 0), required: true, "sent bye slow-consumer since start"),
            ArgSpec(
                "transports", .any, required: true,
                "connected now by transport: {\"unix\": n, \"websocket\": n} (the Unix socket, the web listener)"
            ),
        ])

    static let statusWeb = ObjectSpec(
        name: "statusWeb", summary: "the web listener, in a status (since start)",
        fields: [
            ArgSpec(
                "refused", .any, required: true,
                "requests refused before a WebSocket or a file, by reason: bad-request, method, too-large, timeout, evicted, not-found, origin, version, unavailable, busy"
            ),
            ArgSpec(
                "closeCodes", .any, required: true,
                "close frames sent to WebSockets, by code: \(MetricsSnapshot.Web.closeCodeLabels.joined(separator: ", ")) (other: a code the peer chose)"
            ),
        ])

    static let statusLatency = ObjectSpec(
        name: "statusLatency", summary: "latency histograms, in a status (seconds)",
        fields: [
            ArgSpec("drag", .object("histogram"), required: true, "request to reply of a drag"),
            ArgSpec("read", .object("histogram"), required: true, "request to reply without the store"),
            ArgSpec(
                "mutation", .object("histogram"), required: true, "request to reply, its commit included"),
            ArgSpec("fanout", .object("histogram"), required: true, "one change to every subscriber"),
        ])

    static let statusCommits = ObjectSpec(
        name: "statusCommits", summary: "the store's transactions, in a status",
        fields: [
            ArgSpec("transactions", .integer(min: 0), required: true, "since start"),
            ArgSpec("events", .integer(min: 0), required: true, "written by them since start"),
            ArgSpec(
                "duration", .object("histogram"), required: true, "one transaction, fsync included (seconds)"),
            ArgSpec("eventsPerTransaction", .object("histogram"), required: true, "events per transaction"),
        ])

    static let statusProcess = ObjectSpec(
        name: "statusProcess", summary: "the process, in a status",
        fields: [
            ArgSpec("residentBytes", .integer(min: 0), required: true, nullable: true, "resident memory"),
            ArgSpec("openFiles", .integer(min: 0), required: true, nullable: true, "open file descriptors"),
            ArgSpec("maxClients", .integer(min: 1), "--max-clients in force (writers and root only)"),
            ArgSpec("maxQueue", .integer(min: 1), "--max-queue in bytes (writers and root only)"),
            ArgSpec("maxLine", .integer(min: 1), "--max-line in bytes (writers and root only)"),
            ArgSpec("fileLimit", .integer(min: 1), "the soft file limit (writers and root only)"),
        ])

    static let histogram = ObjectSpec(
        name: "histogram", summary: "counts in fixed buckets, from which percentiles are read",
        fields: [
            ArgSpec("count", .integer(min: 0), required: true, "values recorded"),
            ArgSpec("sum", .number(), required: true, "their sum"),
            ArgSpec(
                "buckets", .any, required: true,
                "[[lower, upper, count], …]: the buckets that hold a value, in order; lower < v ≤ upper; upper null for the last"
            ),
        ])

    static let statusObjects = [
        status, statusServer, statusStore, statusClients, statusLatency, statusCommits, statusProcess,
        statusWeb, statusConnection, histogram,
    ]

    static let statusConnection = ObjectSpec(
        name: "statusConnection", summary: "one connection, in an admin's status",
        fields: [
            ArgSpec("client", .integer(), required: true, "its number"),
            ArgSpec("user", .string(), required: true, nullable: true, "its person; null: anonymous"),
            ArgSpec(
                "role", .string(values: ["none", "reader", "writer", "admin"]), required: true, "its role"),
            ArgSpec(
                "door", .string(values: ["unix", "token", "proxy", "anonymous"]), required: true,
                "how it said who it is"),
            ArgSpec(
                "transport", .string(values: ["unix", "websocket"]), required: true, "how it is connected"),
            ArgSpec("address", .string(), required: true, "a browser's address, a Unix peer's pid"),
            ArgSpec("subscribed", .boolean, required: true, "whether it receives movie events"),
        ])
}

// Everything `status` answers and `/metrics` exposes, at one moment: both render this one value,
// so they cannot disagree. The daemon builds it off the hot path (on a `status` request or a
// scrape) from its own state, LoopMetrics, the store's SharedHistograms and the process's
// figures (ProcessFigures in the Daemon).

public struct MetricsSnapshot: Equatable, Sendable {
    public var server: Server
    public var store: Store
    public var clients: Clients
    /// Every op of Wire's table, in its order, with the requests answered since start.
    public var requests: [LabelledCount]
    /// Every error code of Wire's table, in its order, with the error replies since start.
    public var errors: [LabelledCount]
    /// Request to reply, by class (RequestClass's order: drag, read, mutation).
    public var latency: [HistogramSnapshot]
    /// One change to every subscriber.
    public var fanout: HistogramSnapshot
    /// The store's transactions: how long each took (fsync included), and its events.
    public var commitDuration: HistogramSnapshot
    public var eventsPerCommit: HistogramSnapshot
    public var process: Process
    /// The web listener's refusals and close frames (issue 43).
    public var web: Web
    /// Refusals of people's requests and sign-ins since start, by reason (People's
    /// DenialReason, in its order: the daemon fills it; issue 45).
    public var denials: [LabelledCount]

    public init(
        server: Server, store: Store, clients: Clients, requests: [LabelledCount], errors: [LabelledCount],
        latency: [HistogramSnapshot], fanout: HistogramSnapshot, commitDuration: HistogramSnapshot,
        eventsPerCommit: HistogramSnapshot, process: Process, web: Web = Web(), denials: [LabelledCount] = []
    ) {
        precondition(latency.count == RequestClass.allCases.count, "\(latency.count) request classes")
        self.server = server
        self.store = store
        self.clients = clients
        self.requests = requests
        self.errors = errors
        self.latency = latency
        self.fanout = fanout
        self.commitDuration = commitDuration
        self.eventsPerCommit = eventsPerCommit
        self.process = process
        self.web = web
        self.denials = denials
    }

    public struct Server: Equatable, Sendable {
        public var version: String
        public var protocolVersion: Int
        public var pid: Int32
        /// Wall-clock times, in microseconds since the epoch: the start, and this snapshot.
        public var startedMicroseconds: Int64
        public var nowMicroseconds: Int64

        public init(
            version: String, protocolVersion: Int, pid: Int32, startedMicroseconds: Int64,
            nowMicroseconds: Int64
        ) {
            self.version = version
            self.protocolVersion = protocolVersion
            self.pid = pid
            self.startedMicroseconds = startedMicroseconds
            self.nowMicroseconds = nowMicroseconds
        }

        public var uptimeSeconds: Double { Double(nowMicroseconds - startedMicroseconds) / 1e6 }
    }

    public enum StoreKind: String, Sendable, CaseIterable {
        case sqlite, postgres
    }

    public enum StoreState: String, Sendable, CaseIterable {
        /// Reads and writes work.
        case ok
        /// Writes fail with `unavailable` (the PostgreSQL server cannot be reached).
        case unavailable
        /// The store is connecting again after losing its server.
        case reconnecting

        /// Why the store is not usable (`/health`'s 503 body), nil when it is.
        public var healthProblem: String? {
            switch self {
            case .ok: nil
            case .unavailable: "the store is unavailable: writes fail until it is back"
            case .reconnecting: "the store is reconnecting to its server"
            }
        }
    }

    public struct Store: Equatable, Sendable {
        public var kind: StoreKind
        public var state: StoreState
        /// When `state` began (microseconds since the epoch).
        public var sinceMicroseconds: Int64
        /// The latest seq, the events in the log, the latest snapshot's seq (0: none).
        public var latestSeq: UInt64
        public var events: UInt64
        public var snapshotSeq: UInt64
        public var location: Location

        public init(
            kind: StoreKind, state: StoreState, sinceMicroseconds: Int64, latestSeq: UInt64, events: UInt64,
            snapshotSeq: UInt64, location: Location
        ) {
            self.kind = kind
            self.state = state
            self.sinceMicroseconds = sinceMicroseconds
            self.latestSeq = latestSeq
            self.events = events
            self.snapshotSeq = snapshotSeq
            self.location = location
        }

        /// Where the log is. Only writers and root see this (`status`); `/metrics` shows sizes only.
        public enum Location: Equatable, Sendable {
            /// The SQLite file and its size in bytes (the WAL included).
            case sqlite(path: String, bytes: UInt64)
            /// The PostgreSQL server (never a password), and the seconds since the last read
            /// of other daemons' events (nil: none yet).
            case postgres(host: String, port: Int, database: String, lastReadSeconds: Double?)
        }
    }

    public struct Clients: Equatable, Sendable {
        public var connected: Int
        /// Of `connected`, those over a WebSocket (the web listener); the rest came over the Unix socket.
        public var websockets: Int
        public var peak: Int
        public var subscribers: Int
        public var sharers: Int
        public var watchers: Int
        public var recorders: Int
        public var writers: Int
        /// Since start: refused with `too-many-clients`, dropped as `slow-consumer`.
        public var refused: UInt64
        public var dropped: UInt64

        /// Connected now by transport: `unix`, `websocket`.
        public var byTransport: [LabelledCount] {
            [
                LabelledCount("unix", UInt64(connected - websockets)),
                LabelledCount("websocket", UInt64(websockets)),
            ]
        }

        public init(
            connected: Int, peak: Int, subscribers: Int, sharers: Int, watchers: Int, recorders: Int,
            writers: Int,
            refused: UInt64, dropped: UInt64, websockets: Int = 0
        ) {
            self.connected = connected
            self.websockets = websockets
            self.peak = peak
            self.subscribers = subscribers
            self.sharers = sharers
            self.watchers = watchers
            self.recorders = recorders
            self.writers = writers
            self.refused = refused
            self.dropped = dropped
        }
    }

    public struct Process: Equatable, Sendable {
        /// nil when /proc could not be read.
        public var residentBytes: UInt64?
        public var openFiles: Int?
        /// The limits in force: `--max-clients` (as the file limit allows), `--max-queue`,
        /// `--max-line`, and the soft file limit.
        public var maxClients: Int
        public var maxQueueBytes: Int
        public var maxLineBytes: Int
        public var fileLimit: Int

        public init(
            residentBytes: UInt64?, openFiles: Int?, maxClients: Int, maxQueueBytes: Int, maxLineBytes: Int,
            fileLimit: Int
        ) {
            self.residentBytes = residentBytes
            self.openFiles = openFiles
            self.maxClients = maxClients
            self.maxQueueBytes = maxQueueBytes
            self.maxLineBytes = maxLineBytes
            self.fileLimit = fileLimit
        }
    }
}

/// A counter with its label value, taken from a closed set (an op, an error code).
public struct LabelledCount: Equatable, Sendable {
    public let label: String
    public let count: UInt64

    public init(_ label: String, _ count: UInt64) {
        self.label = label
        self.count = count
    }
}

extension MetricsSnapshot {
    /// The web listener since start (issue 43), each list a closed set of labels in a fixed order,
    /// zeros included (a dashboard's series exist before the first event).
    public struct Web: Equatable, Sendable {
        /// Requests refused before they became a WebSocket or a file, by reason (WebSocket's
        /// WebRefusal, in its order: the daemon fills it).
        public var refused: [LabelledCount]
        /// Close frames sent, by code (`closeCodeLabels`).
        public var closeCodes: [LabelledCount]

        /// The codes counted one by one; a code the peer chose (the close handshake answers a close with its code)
        /// is counted as `other`, so that a peer cannot grow the label set.
        public static let closeCodeLabels = [
            "1000", "1001", "1002", "1003", "1005", "1007", "1008", "1009", "1011", "1013", "other",
        ]

        /// `closeCodes`' label for `code`.
        public static func closeCodeLabel(_ code: UInt16) -> String {
            let text = String(code)
            return closeCodeLabels.contains(text) ? text : "other"
        }

        public init(refused: [LabelledCount] = [], closeCodes: [LabelledCount] = []) {
            self.refused = refused
            self.closeCodes = closeCodes
        }
    }
}

// The manager: one object owns the sd-event loop and every source in it (listening socket,
// connections, the store's completion eventfd, signals, timers), as systemd's own daemons do.
// Everything runs on the loop's thread; the only other thread is the store's writer, which talks
// back through an eventfd.
import CSystemd
import HTTPScrape
import JSONCodec
import Metrics
import Movies
import People
import Plumbing
import Session
import StoreCore
import StoreSQLite
import SwipeEngine
import WebSocket
import Wire

#if canImport(Glibc)
    import Glibc
#endif

/// The manager, over any durable store (`serve` picks it from the configuration).
final class Server<S: StoreFigures> {
    let config: Config
    let journal: Journal
    let loop: EventLoop
    let listener: Listener
    let store: S
    var listenSource: EventLoop.IOSource?
    var storeSource: EventLoop.IOSource?
    var poller: ConnectionPoller?
    var signalSources: [EventLoop.SignalSource] = []
    var statusTimer: EventLoop.Timer?
    var exitTimer: EventLoop.Timer?
    var acceptPauseTimer: EventLoop.Timer?
    /// Logs the counts of folded warnings when their interval ends (LogFolds.swift).
    var foldTimer: EventLoop.Timer?
    /// Gives freed memory back after connections went (Server+Memory.swift).
    var trimTimer: EventLoop.Timer?
    var dropsSinceTrim = 0
    var commitSource: EventLoop.PostSource?

    // How the daemon is doing (Server+Metrics.swift). The request counters are the sink's
    // (`sink.metrics`): the sessions count there.
    /// The store's writer thread measures its transactions here.
    let commitMeters = CommitMeters()
    /// Wall-clock microseconds since the epoch.
    let startedMicroseconds = Server.wallMicroseconds()
    var storeState = MetricsSnapshot.StoreState.ok
    var storeSince = Server.wallMicroseconds()
    /// The wake-up (loop time, µs) that began fanning out a change, until the wake-up ends.
    var fanOutFrom: UInt64?
    /// The socket `--metrics` bound (nil: none, or systemd passed one).
    var boundMetricsFD: Int32?
    var metricsServer: MetricsServer?
    // The web listener (Server+Web.swift).
    /// The sockets `--web` bound (systemd's are the listener's `webFDs`).
    var boundWebFDs: [Int32] = []
    var webServer: WebServer?
    /// The page's files (`--web-root`) and who may open a WebSocket (`--web-origin`).
    var webSite = StaticSite()
    var webPolicy = OriginPolicy()
    var webCounts = WebCounts()
    /// What loading the web root at start left out, logged once the journal's start line is out.
    var webRootNotes: WebRoot.Loaded?

    var connections = SerialTable<Connection>()
    var nextClient: UInt64 = 1
    /// What the store owes an answer to, by ticket: which client asked, and what. The ticket is
    /// the session's, handed to the store as the request's token: the sink below numbers the
    /// tickets of every session, so they are unique across the daemon (`SessionActions` says
    /// which numbers a request has, and why the store keeps its own).
    var pending = SerialTable<Pending>()
    /// Connections subscribed to live movie events.
    var subscribers: [UInt64: Connection] = [:]
    /// The sessions' actions: one sink for all, drained after each input (`round`).
    var sink = SessionActions()
    /// What long `list` replies hold, capped for the whole daemon (Session's ListStream.swift).
    let largeReplies = LargeReplies()
    /// What subscribers catching up from the log hold, capped for the whole daemon
    /// (Server+CatchUp.swift).
    var catchUps = CatchUps()
    /// Whether anything was handed to the store in this loop iteration (then its
    /// `completions()` may hold outcomes no eventfd announces).
    var storeTouched = false
    /// What the groups give Unix peers (`--writers`, `--admins`), re-read on SIGHUP.
    var access: AccessPolicy
    // People and their rights (Server+People.swift).
    /// Where tokens and roles are kept, beside the events.
    let people: any PeopleStore
    /// The people tables as the store last reported them.
    var peopleTables: PeopleTables
    var peopleSource: EventLoop.IOSource?
    /// Admins' changes waiting for the people store, by ticket.
    var peopleWaiting: [UInt64: PeopleWaiting] = [:]
    var authThrottle = AuthThrottle()
    /// Sign-ins waiting for their address's delay, soonest first.
    var delayedAuths: [DelayedAuth] = []
    var authTimer: EventLoop.Timer?
    var expiryTimer: EventLoop.Timer?
    /// Wall time of the last look for expired tokens.
    var expiryCheckedAt: UInt64 = 0
    /// `--rate-limit`, `--rate-limit-unix`: nil when off.
    var webLimiter: RateLimiter?
    var unixLimiter: RateLimiter?
    var denials = DenialLog()
    /// `--web-trusted-proxy` (loopback when none is given).
    let trustedProxies: TrustedProxies
    /// What the file limit allows, or `--max-clients` when lower.
    let maxClients: Int
    /// The file limit as start-up found and raised it.
    let files: FileLimit.Outcome
    var shuttingDown = false
    var exitCode: Int32 = 0
    var statusDirty = false
    var statusPacing = StatusPacing()
    /// Whether a message to the service manager failed already (`notify` logs the first only).
    var notifyFailed = false
    /// Scratch buffer for reads, shared by every connection (one read at a time).
    var readBuffer: UnsafeMutableRawBufferPointer

    // Shared rows (Server+Peers.swift).
    /// Connections that share their rows (`share`), and those that watch (`peers`).
    var sharers: [UInt64: Connection] = [:]
    var watchers: [UInt64: Connection] = [:]
    /// Sharers with rows changed since the last flush.
    var peerChanged: [UInt64: Connection] = [:]
    /// Closed rows of sharers that went, for the next flush.
    var peerFarewells: [PeerFarewell] = []
    var peerTimer: EventLoop.Timer?
    var peerFlushArmed = false

    struct Pending {
        let client: UInt64
        let what: What
        /// The loop's time (µs) of the wake-up that read the request: a command is timed from
        /// it to its outcome's.
        var since: UInt64 = 0

        enum What {
            /// A command: the op and movie it came with, for the journal.
            case command(op: String, movie: String?)
            case read
        }
    }

    /// Opens the listening socket, then the store with `openStore` (a start that fails on the
    /// socket writes nothing to the store).
    init(
        config: Config, journal: Journal, openStore: (Config, CommitMeters) throws(StoreError) -> S,
        openPeople: (Config, S) throws(StoreError) -> any PeopleStore
    ) throws(StartError) {
        self.config = config
        self.journal = journal
        files = FileLimit.raise()
        maxClients = min(config.maxClients ?? Int.max, FileLimit.clients(forLimit: files.soft))
        do {
            // Before the store starts its writer thread, which must never see these.
            try EventLoop.blockSignals(ServerLimits.handledSignals)
            loop = try EventLoop()
        } catch {
            throw StartError("cannot create the event loop: \(error)")
        }
        access = AccessPolicy(writers: config.writersGroup, admins: config.adminsGroup)
        if let group = config.writersGroup, access.writers.gid == nil {
            throw StartError("--writers: no group named '\(group)'")
        }
        if let group = config.adminsGroup, access.admins.gid == nil {
            throw StartError("--admins: no group named '\(group)'")
        }
        do {
            trustedProxies =
                config.webTrustedProxies.isEmpty ? .loopback : try TrustedProxies(config.webTrustedProxies)
        } catch {
            throw StartError("--web-trusted-proxy: \(error)")  // Config checked each already
        }
        webLimiter = config.webRateLimit.map(RateLimiter.init)
        unixLimiter = config.unixRateLimit.map(RateLimiter.init)
        // The socket first: a start that fails on it (another daemon serves it) must leave the
        // state directory as it was, not create and seed a log nobody will serve.
        do {
            if let passed = try Listener.fromSystemd() {
                listener = passed
            } else {
                listener = try Listener.bind(path: config.socketPath)
            }
        } catch {
            throw StartError(error.description)
        }
        // `--metrics` binds before the store opens, for the same reason; a socket systemd
        // passed as `metrics` is used instead.
        if let address = config.metrics, listener.metricsFD == nil {
            do {
                boundMetricsFD = try MetricsServer.bind(address)
            } catch {
                close(listener.fd)
                Self.removeSocketFile(listener, journal)
                throw StartError(
                    "--metrics \(address): \(error)"
                        + (error.errno == EAFNOSUPPORT
                            ? " (TCP sockets are not allowed here, as under the shipped unit's RestrictAddressFamilies=AF_UNIX: use swiped-metrics.socket)"
                            : ""))
            }
        }
        do throws(StartError) {
            (boundWebFDs, webPolicy, webRootNotes) = try Self.bindWeb(config, passed: listener.webFDs)
        } catch {
            close(listener.fd)
            if let fd = boundMetricsFD { close(fd) }
            Self.removeSocketFile(listener, journal)
            throw error
        }
        do {
            store = try openStore(config, commitMeters)
        } catch {
            close(listener.fd)
            if let fd = boundMetricsFD { close(fd) }
            for fd in boundWebFDs { close(fd) }
            Self.removeSocketFile(listener, journal)
            throw StartError("\(error)")
        }
        do {
            // After the events: the people tables live in the same database, which opening
            // the event store created or migrated.
            people = try openPeople(config, store)
        } catch {
            store.close()
            close(listener.fd)
            if let fd = boundMetricsFD { close(fd) }
            for fd in boundWebFDs { close(fd) }
            Self.removeSocketFile(listener, journal)
            throw StartError("people tables: \(error)")
        }
        peopleTables = people.tables
        readBuffer = .allocate(byteCount: 64 * 1024, alignment: 16)
    }

    deinit { readBuffer.deallocate() }

    /// `--web`'s sockets, the origins and the page's files, before the store opens (a start that
    /// fails on them writes nothing to it; the sockets bound are closed again). The sockets
    /// systemd passed as `web` are served besides, not instead: each names its own address.
    private static func bindWeb(_ config: Config, passed: [Int32]) throws(StartError)
        -> (fds: [Int32], policy: OriginPolicy, root: WebRoot.Loaded?)
    {
        var fds: [Int32] = []
        do throws(StartError) {
            for address in config.web {
                do {
                    fds.append(try TCPListen.bind(address, backlog: 65_535))
                } catch {
                    throw StartError(
                        "--web \(address): \(error)"
                            + (error.errno == EAFNOSUPPORT
                                ? " (TCP sockets are not allowed here, as under the shipped unit's RestrictAddressFamilies=AF_UNIX: use swiped-web.socket)"
                                : ""))
                }
            }
            let policy: OriginPolicy
            do {
                policy = try OriginPolicy(configured: config.webOrigins)
            } catch {
                throw StartError("--web-origin: \(error)")  // Config checked each already
            }
            guard let root = config.webRoot, !(passed + fds).isEmpty else { return (fds, policy, nil) }
            do {
                return (fds, policy, try WebRoot.load(root))
            } catch {
                throw StartError("--web-root \(error.description)")
            }
        } catch {
            for fd in fds { close(fd) }
            throw error
        }
    }

    /// Runs until SIGTERM/SIGINT (returns 0) or a fatal storage error (returns 1).
    func run() -> Int32 {
        do {
            try setUp()
            journal.log(
                .notice, "swiped started",
                [("SOCKET", listener.origin)]
                    // With --postgres nothing is written to the state directory: the store's
                    // fields name the database instead.
                    + (config.postgres == nil ? [("STATE_DIRECTORY", config.stateDirectory)] : [])
                    + [
                        ("DURABILITY", config.durability.rawValue), ("MAX_CLIENTS", "\(maxClients)"),
                        ("FILE_LIMIT", "\(files.soft)"),
                        ("WRITERS", config.writersGroup ?? "everyone"),
                        ("ADMINS", config.adminsGroup ?? "root"),
                        ("TOKENS", "\(peopleTables.tokens.count)"),
                    ] + store.startupFields)
            logLimits()
            if config.metrics != nil, listener.metricsFD != nil {
                journal.log(
                    .notice, "--metrics ignored: serving metrics on the socket systemd passed",
                    [("METRICS", "\(config.metrics!)")])
            }
            for note in store.startupNotes {
                journal.log(
                    note.level == .warning ? .warning : .info, note.message, [("REASON", note.reason)])
            }
            notify(Notify.ready(status: pacedStatusLine()))
            try loop.run()
        } catch {
            journal.log(.crit, "event loop failed, stopping", [("ERROR", "\(error)")])
            notify(Notify.stopping(status: "Failed: event loop: \(error)"))
            exitCode = 1
        }
        Self.removeSocketFile(listener, journal)
        return exitCode
    }

    /// Static, for `init`: a start that fails once the socket is bound removes its file before
    /// the server is whole.
    private static func removeSocketFile(_ listener: Listener, _ journal: Journal) {
        guard let failure = listener.removeSocketFile() else { return }
        journal.log(
            .warning, "cannot remove the socket file, leaving it (the next start replaces it)",
            [("ERROR", failure)])
    }

    /// The file limit and the clients it allows: a line each when they are not what was asked.
    private func logLimits() {
        if let failure = files.failure {
            journal.log(
                .warning, "cannot raise the file limit, serving fewer clients",
                [("ERROR", failure), ("FILE_LIMIT", "\(files.soft)"), ("MAX_CLIENTS", "\(maxClients)")])
        }
        if let asked = config.maxClients, asked > maxClients {
            journal.log(
                .warning, "--max-clients is more than the file limit allows, serving fewer",
                [("ASKED", "\(asked)"), ("FILE_LIMIT", "\(files.soft)"), ("MAX_CLIENTS", "\(maxClients)")])
        }
    }

    private func setUp() throws(SystemError) {
        listenSource = try loop.addIO(
            fd: listener.fd, events: UInt32(EPOLLIN.rawValue), description: "listener"
        ) {
            [unowned self] _ in acceptAll()
        }
        poller = try ConnectionPoller(loop: loop) { [unowned self] client, events in
            // A connection dropped earlier in the same pass is gone: its events are stale.
            if let c = connections[client] { handleIO(c, events: events) }
        }
        storeSource = try loop.addIO(
            fd: store.completionFD, events: UInt32(EPOLLIN.rawValue), description: "store"
        ) {
            [unowned self] _ in storeCompleted()
        }
        peopleSource = try loop.addIO(
            fd: people.completionFD, events: UInt32(EPOLLIN.rawValue), description: "people"
        ) {
            [unowned self] _ in peopleCompleted()
        }
        authTimer = try loop.makeTimer(description: "auth-delay") { [unowned self] in authTimerFired() }
        expiryCheckedAt = wallNow
        expiryTimer = try loop.makeTimer(description: "token-expiry") { [unowned self] in
            expiryTick()
            expiryTimer?.arm(afterMicroseconds: Self.expiryCheckMicroseconds)
        }
        expiryTimer?.arm(afterMicroseconds: Self.expiryCheckMicroseconds)
        // Group commit: the commands of one loop iteration go to the writer together.
        commitSource = try loop.addPost(description: "commit") { [unowned self] in endOfIteration() }
        signalSources = try loop.addSignals(ServerLimits.handledSignals, description: "signal") {
            [unowned self] signal in
            if signal == SIGHUP { reload() } else { beginShutdown(signal: signal) }
        }
        statusTimer = try loop.makeTimer(description: "status") { [unowned self] in
            // Once stopping, STATUS= stays "Stopping: …" (clients going must not say "Serving").
            guard statusDirty, !shuttingDown else { return }
            statusDirty = false
            if let line = statusPacing.take(statusLine(), now: SystemClock.monotonicNanoseconds()) {
                notify(Notify.status(line))
            }
        }
        exitTimer = try loop.makeTimer(description: "exit") { [unowned self] in loop.exit(code: exitCode) }
        foldTimer = try loop.makeTimer(description: "log-folds") { [unowned self] in
            if let next = journal.flushFolds() { armFoldTimer(at: next) }
        }
        journal.foldsStarted = { [unowned self] deadline in armFoldTimer(at: deadline) }
        acceptPauseTimer = try loop.makeTimer(description: "accept-pause") { [unowned self] in
            resumeAccepts()
        }
        trimTimer = try loop.makeTimer(description: "malloc-trim") { [unowned self] in trimMemory() }
        // Made here, as the others, not at the first share: that is inside `perform`, where a
        // failure could not be answered by sending the rows at once (the sink they go to is
        // being drained).
        peerTimer = try loop.makeTimer(description: "peer-rows") { [unowned self] in flushPeerRows() }
        try startMetrics()
        if let loaded = webRootNotes {
            webSite = loaded.site
            logSkipped(loaded)
            webRootNotes = nil
        }
        try startWeb()
        if try loop.enableWatchdog() {
            journal.log(.debug, "watchdog enabled")
        }
    }

    /// The end of a pause of accepts (out of file descriptors: `acceptAll`). Should the listener
    /// not be watched again, no client could ever connect: try again, every 100 ms.
    private func resumeAccepts() {
        do {
            try listenSource?.watch(UInt32(EPOLLIN.rawValue))
        } catch {
            journal.log(
                .err, "cannot watch the listening socket again, retrying in 100 ms", [("ERROR", "\(error)")])
            acceptPauseTimer?.arm(afterMicroseconds: 100_000)
        }
    }

    func statusLine() -> String {
        StatusLine.text(
            clients: connections.count, movies: store.withState { $0.movies.count },
            store: config.postgres == nil ? "sqlite" : "postgres", seq: store.latestSeq,
            problem: store.statusNote)
    }

    /// The status line for READY=1, which the next STATUS= is paced from.
    func pacedStatusLine() -> String {
        let line = statusLine()
        statusPacing.record(line, now: SystemClock.monotonicNanoseconds())
        return line
    }

    /// Tells the service manager `assignments` (Notify). A failure is logged the first time
    /// only: STATUS= lines go out up to once a second, and the daemon serves on all the same.
    func notify(_ assignments: String) {
        do {
            try Notify.send(assignments)
        } catch {
            guard !notifyFailed else { return }
            notifyFailed = true
            journal.log(
                .warning, "cannot notify the service manager, serving on (later failures are not logged)",
                [
                    ("ERROR", "\(error)"),
                    ("NOTIFY", assignments.split(separator: "\n").joined(separator: " ")),
                ])
        }
    }

    /// STATUS= at most once a second (StatusLine.swift): a burst of connects must not become a
    /// burst of datagrams.
    func markStatusDirty() {
        statusDirty = true
        if let statusTimer, !statusTimer.isArmed {
            statusTimer.arm(afterMicroseconds: statusPacing.delay(now: SystemClock.monotonicNanoseconds()))
        }
    }

    /// Arms the fold timer for `deadline` (CLOCK_MONOTONIC ns), at least 1 ms from now.
    func armFoldTimer(at deadline: UInt64) {
        let now = SystemClock.monotonicNanoseconds()
        foldTimer?.arm(afterMicroseconds: deadline > now ? max(1000, (deadline - now) / 1000) : 1000)
    }

    // MARK: - Signals

    private func reload() {
        notify(Notify.reloading)
        access = AccessPolicy(writers: config.writersGroup, admins: config.adminsGroup)
        journal.log(
            .notice, "reloaded",
            [
                ("WRITERS", config.writersGroup ?? "everyone"),
                ("WRITERS_GID", access.writers.gid.map { "\($0)" } ?? "-"),
                ("ADMINS", config.adminsGroup ?? "root"),
                ("ADMINS_GID", access.admins.gid.map { "\($0)" } ?? "-"),
            ])
        rejudgeAll(why: "SIGHUP: groups re-read")
        reloadWebRoot()
        notify(Notify.ready(status: pacedStatusLine()))
    }

    private func beginShutdown(signal: Int32) {
        guard !shuttingDown else { return }
        shuttingDown = true
        notify(Notify.stopping(status: "Stopping: finishing pending commits."))
        journal.log(
            .notice, "stopping",
            [
                ("SIGNAL", signal == SIGTERM ? "SIGTERM" : "SIGINT"),
                ("CLIENTS", "\(connections.count)"), ("PENDING", "\(pending.count)"),
            ])
        listenSource?.cancel()
        listenSource = nil
        stopMetrics()
        stopWeb()
        // Finish every commit in flight or queued, and answer the commands they carry.
        deliver(store.close())
        // Admins' changes in flight finish; their answers go with the goodbyes below.
        people.close()
        peopleCompleted()
        if exitCode != 0 { return }  // a storage I/O error: fatal() said it all, nothing is sent
        for c in Array(connections.values) {
            round(c, .goodbye(.shutdown))
            afterWork(c)
        }
        if connections.isEmpty {
            loop.exit(code: exitCode)
        } else {
            // Clients that do not read their last bytes do not hold the exit up: at most 0.5 s.
            exitTimer?.arm(afterMicroseconds: 500_000)
        }
    }

    /// A storage failure the daemon must not carry on from (see protocol.md, Durability).
    func fatal(_ error: String) {
        journal.log(
            .crit, "storage I/O error: stopping so that systemd restarts from what is on disk",
            [("ERROR", error)])
        notify(Notify.stopping(status: "Failed: storage I/O error: \(error)"))
        exitCode = 1
        shuttingDown = true
        loop.exit(code: 1)
    }
}

// The manager: one object owns the sd-event loop and every source in it (listening socket,
// connections, the store's completion eventfd, signals, timers), as systemd's own daemons do.
// Everything runs on the loop's thread; the only other thread is the store's writer, which talks
// back through an eventfd.
import CSystemd
import JSONCodec
import Movies
import Store
import SwipeEngine
import Wire

#if canImport(Glibc)
    import Glibc
#endif

public final class Server {
    let config: Config
    let journal: Journal
    let loop: EventLoop
    let listener: Listener
    let store: MovieStore
    var listenSource: EventLoop.IOSource?
    var storeSource: EventLoop.IOSource?
    var poller: ConnectionPoller?
    var signalSources: [EventLoop.SignalSource] = []
    var statusTimer: EventLoop.Timer?
    var exitTimer: EventLoop.Timer?
    var acceptPauseTimer: EventLoop.Timer?
    var commitSource: EventLoop.PostSource?

    /// Commands decided but not yet durable, at most; past it, `overloaded`.
    static let maxPendingCommands = 65_536
    static let handledSignals = [SIGTERM, SIGINT, SIGHUP]
    /// How long a connection told `bye` may take to read it before it is closed regardless.
    static let goodbyeGraceMicroseconds: UInt64 = 1_000_000

    var connections: [UInt64: Connection] = [:]
    var nextClient: UInt64 = 1
    var nextToken: UInt64 = 1
    /// Commands waiting for their commit, by token.
    var pending: [UInt64: PendingCommand] = [:]
    /// Connections subscribed to movie events (cursor set).
    var subscribers: [UInt64: Connection] = [:]
    var writers: WritersPolicy
    var shuttingDown = false
    var exitCode: Int32 = 0
    var statusDirty = false
    /// Scratch buffer for reads, shared by every connection (one read at a time).
    var readBuffer: UnsafeMutableRawBufferPointer

    public init(config: Config, journal: Journal) throws(StartError) {
        self.config = config
        self.journal = journal
        do {
            // Before the store starts its writer thread, which must never see these.
            try EventLoop.blockSignals(Server.handledSignals)
            loop = try EventLoop()
        } catch {
            throw StartError("cannot create the event loop: \(error)")
        }
        writers = WritersPolicy(group: config.writersGroup)
        if let group = config.writersGroup, writers.gid == nil {
            throw StartError("--writers: no group named '\(group)'")
        }
        do {
            store = try MovieStore.open(
                directory: config.stateDirectory,
                durability: config.durability == .full ? .full : .normal)
        } catch {
            throw StartError("\(error)")
        }
        do {
            if let passed = try Listener.fromSystemd() {
                listener = passed
            } else {
                listener = try Listener.bind(path: config.socketPath)
            }
        } catch {
            store.close()
            throw StartError(error.description)
        }
        readBuffer = .allocate(byteCount: 64 * 1024, alignment: 16)
    }

    deinit { readBuffer.deallocate() }

    public struct StartError: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// Runs until SIGTERM/SIGINT (returns 0) or a fatal storage error (returns 1).
    public func run() -> Int32 {
        do {
            try setUp()
            journal.log(
                .notice, "swiped started",
                [
                    ("SOCKET", listener.origin), ("STATE_DIRECTORY", config.stateDirectory),
                    ("MOVIES", "\(store.state.movies.count)"), ("SEQ", "\(store.latestSeq)"),
                    ("SNAPSHOT_SEQ", "\(store.startup.snapshotSeq)"),
                    ("REPLAYED", "\(store.startup.replayed)"),
                    ("SEEDED", store.startup.seeded ? "yes" : "no"),
                    ("LOAD_MS", "\(store.startup.micros / 1000)"),
                    ("DURABILITY", config.durability.rawValue),
                    ("WRITERS", config.writersGroup ?? "everyone"),
                    ("LOG_WRITER_SCHEDULING", store.writerSchedulingNote == nil ? "batch" : "default"),
                ])
            if let note = store.writerSchedulingNote {
                journal.log(
                    .info,
                    "the log writer keeps the default scheduling policy; commits may preempt the event loop",
                    [("REASON", note)])
            }
            if let reason = store.startup.snapshotIgnored {
                journal.log(.warning, "snapshot ignored, replayed the whole log", [("REASON", reason)])
            }
            Notify.ready(status: statusLine())
            try loop.run()
        } catch {
            journal.log(.crit, "event loop failed", [("ERROR", "\(error)")])
            exitCode = 1
        }
        listener.removeSocketFile()
        return exitCode
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
        // Group commit: the commands of one loop iteration go to the writer together.
        store.flushesAtOnce = false
        commitSource = try loop.addPost(description: "commit") { [unowned self] in store.flush() }
        signalSources = try loop.addSignals(Server.handledSignals) { [unowned self] signal in
            if signal == SIGHUP { reload() } else { beginShutdown(signal: signal) }
        }
        statusTimer = try loop.makeTimer(description: "status") { [unowned self] in
            if statusDirty {
                statusDirty = false
                Notify.status(statusLine())
            }
        }
        exitTimer = try loop.makeTimer(description: "exit") { [unowned self] in loop.exit(code: exitCode) }
        acceptPauseTimer = try loop.makeTimer(description: "accept-pause") { [unowned self] in
            listenSource?.events = UInt32(EPOLLIN.rawValue)
        }
        if loop.enableWatchdog() {
            journal.log(.debug, "watchdog enabled")
        }
    }

    func statusLine() -> String {
        let clients = connections.count
        return "Serving \(clients) client\(clients == 1 ? "" : "s"); \(store.state.movies.count) movies; "
            + "latest event \(store.latestSeq)."
    }

    /// STATUS= at most once a second: a burst of connects must not become a burst of datagrams.
    func markStatusDirty() {
        statusDirty = true
        if let statusTimer, !statusTimer.isArmed { statusTimer.arm(afterMicroseconds: 1_000_000) }
    }

    // MARK: - Accepting

    private func acceptAll() {
        // Several per wakeup, bounded, so that a flood of connects cannot starve the others.
        for _ in 0..<64 {
            let fd = swiped_accept(listener.fd)
            if fd < 0 {
                switch errno {
                case EAGAIN, EINTR, ECONNABORTED: return
                case EMFILE, ENFILE:
                    // The listener stays readable while the backlog waits: without a pause this
                    // would spin. Stop watching it for 100 ms; closing connections frees fds.
                    journal.log(
                        .warning, "cannot accept: out of file descriptors, pausing accepts",
                        [("ERROR", "\(SystemError("accept"))"), ("CLIENTS", "\(connections.count)")])
                    listenSource?.events = 0
                    acceptPauseTimer?.arm(afterMicroseconds: 100_000)
                    return
                default:
                    journal.log(.err, "accept failed", [("ERROR", "\(SystemError("accept"))")])
                    return
                }
            }
            accepted(fd)
        }
    }

    private func accepted(_ fd: Int32) {
        var peer = Peer()
        var pid: Int32 = 0
        var uid: UInt32 = 0
        var gid: UInt32 = 0
        if swiped_peercred(fd, &pid, &uid, &gid) == 0 {
            peer.pid = pid
            peer.uid = uid
            peer.gid = gid
        }
        if writers.group != nil {
            // Most peers have a handful of groups; one in more than 256 gets a second try with
            // room for the kernel's maximum (NGROUPS_MAX), rather than losing its groups.
            for capacity in [256, 65_536] {
                var groups = [UInt32](repeating: 0, count: capacity)
                let n = swiped_peergroups(fd, &groups, Int32(capacity))
                if n >= 0 {
                    peer.groups = Array(groups[0..<Int(n)])
                    break
                }
                if errno != ERANGE { break }
            }
        }
        let client = nextClient
        nextClient += 1
        guard connections.count < config.maxClients, !shuttingDown else {
            var line = JSONWriter()
            Encode.bye(&line, reason: shuttingDown ? "shutdown" : "too-many-clients")
            _ = line.bytes.withUnsafeBytes { try? writeNonBlocking(fd, $0) }
            close(fd)
            journal.log(
                .warning, "connection refused",
                [
                    ("CLIENT", "\(client)"), ("PEER_PID", "\(peer.pid)"), ("PEER_UID", "\(peer.uid)"),
                    ("REASON", shuttingDown ? "shutdown" : "too-many-clients"),
                ])
            return
        }
        let connection = Connection(
            client: client, fd: fd, peer: peer, mayWrite: writers.allows(peer),
            maxLine: config.maxLine)
        do {
            try poller?.add(fd, client: client, events: UInt32(EPOLLIN.rawValue))
            connection.watched = UInt32(EPOLLIN.rawValue)
        } catch {
            journal.log(
                .err, "cannot watch a connection, closing it",
                [("CLIENT", "\(client)"), ("ERROR", "\(error)")])
            close(fd)
            return
        }
        connections[client] = connection
        connection.push {
            Encode.hello(&$0, client: client, seq: store.latestSeq, writer: connection.mayWrite)
        }
        journal.log(
            .info, "client connected",
            [
                ("CLIENT", "\(client)"), ("PEER_PID", "\(peer.pid)"), ("PEER_UID", "\(peer.uid)"),
                ("PEER_GID", "\(peer.gid)"), ("WRITER", connection.mayWrite ? "yes" : "no"),
            ])
        markStatusDirty()
        afterWork(connection)
    }

    // MARK: - Connection I/O

    private func handleIO(_ c: Connection, events: UInt32) {
        if events & UInt32(EPOLLOUT.rawValue) != 0 {
            guard c.flush() else { return drop(c, reason: "peer gone") }
        }
        if events & UInt32(EPOLLIN.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0, !c.readPaused,
            !c.readClosed,
            !c.closing
        {
            switch (try? readNonBlocking(c.fd, into: readBuffer)) ?? .eof {
            case .done(let n):
                c.framer.append(UnsafeRawBufferPointer(rebasing: readBuffer[0..<n]))
            case .wouldBlock:
                break
            case .eof:
                c.readClosed = true
                c.framer.finish()
            }
            processLines(c)
        } else if events & UInt32(EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 {
            // Hung up (closed for good, not half-closed: that is EPOLLRDHUP) while nothing more
            // is read from it: nothing can reach it any more. epoll reports EPOLLHUP whatever the
            // mask, so keeping the connection would also make the loop spin on it.
            return drop(c, reason: "peer gone")
        }
        afterWork(c)
    }

    /// Handles the complete lines buffered for `c`, stopping early when its write queue is full
    /// (the rest stays in the framer until the peer reads).
    func processLines(_ c: Connection) {
        while c.backlog <= config.maxQueue, !c.closing {
            guard let frame = c.framer.next() else { break }
            c.requests += 1
            switch frame {
            case .line(let bytes):
                bytes.withUnsafeBytes { handle(line: $0, on: c) }
            case .tooLarge(let length):
                let error = WireError(
                    .tooLarge,
                    "line of \(length) bytes is longer than the limit of \(config.maxLine) bytes; skipped")
                reply(c, id: nil, op: nil, error: error)
            }
        }
    }

    /// After any work on `c`: write what is queued, then decide what to watch for next.
    func afterWork(_ c: Connection) {
        guard connections[c.client] === c else { return }
        // A lagging subscriber is fed from the log while its queue has room; when the socket
        // takes it all at once, feed it again at once (nothing else would wake it up).
        while let cursor = c.cursor, !c.closing, cursor < store.latestSeq {
            pumpSubscription(c)
            if c.queued > 0, !c.flush() { return drop(c, reason: "peer gone") }
            if c.queued > 0 || c.cursor == cursor { break }
        }
        if c.queued > 0 {
            guard c.flush() else { return drop(c, reason: "peer gone") }
        }
        if c.readPaused, c.backlog <= config.maxQueue / 2 { c.readPaused = false }
        // processLines stops when the backlog passes its cap, leaving complete lines in the
        // framer. Handle them once it has drained, whether or not reading was paused meanwhile: no
        // new bytes may ever arrive to wake this connection up. Each round handles at least one
        // line of what was already read (at most one read's worth), so the loop ends.
        while !c.readPaused, !c.closing, c.framer.buffered > 0, c.backlog <= config.maxQueue / 2 {
            let handled = c.requests
            processLines(c)
            if c.queued > 0, !c.flush() { return drop(c, reason: "peer gone") }
            if c.requests == handled { break }  // only a partial line is left
        }
        if c.isFinished {
            return drop(c, reason: c.closing ? "closed by server" : "peer closed")
        }
        if !c.readPaused, c.backlog > config.maxQueue { c.readPaused = true }
        var events: UInt32 = 0
        if !c.readPaused && !c.readClosed && !c.closing { events |= UInt32(EPOLLIN.rawValue) }
        if c.queued > 0 { events |= UInt32(EPOLLOUT.rawValue) }
        if events != c.watched {
            poller?.modify(c.fd, client: c.client, events: events)
            c.watched = events
        }
    }

    /// Closes `c` and forgets it. Commands it submitted still commit; their replies are dropped.
    func drop(_ c: Connection, reason: String) {
        guard connections.removeValue(forKey: c.client) != nil else { return }
        subscribers[c.client] = nil
        poller?.remove(c.fd)
        for timer in c.timers.values { timer.cancel() }
        c.timers.removeAll()
        c.goodbyeTimer?.cancel()
        c.goodbyeTimer = nil
        close(c.fd)
        journal.log(
            .info, "client disconnected",
            [
                ("CLIENT", "\(c.client)"), ("PEER_PID", "\(c.peer.pid)"), ("PEER_UID", "\(c.peer.uid)"),
                ("REASON", reason), ("REQUESTS", "\(c.requests)"),
            ])
        markStatusDirty()
        if shuttingDown && connections.isEmpty { loop.exit(code: exitCode) }
    }

    /// Queues a `bye` and closes once it is written (or the peer stops reading: see shutdown).
    func sayGoodbye(_ c: Connection, reason: String) {
        guard !c.closing else { return }
        c.closing = true
        c.push { Encode.bye(&$0, reason: reason) }
        afterWork(c)
        // A peer that does not read its bye (a slow consumer, typically) does not keep its
        // descriptor and queue: it is closed after a grace period anyway.
        guard connections[c.client] === c, c.goodbyeTimer == nil else { return }
        c.goodbyeTimer = try? loop.makeTimer(description: "goodbye") { [unowned self, unowned c] in
            drop(c, reason: "did not read its bye (\(reason))")
        }
        c.goodbyeTimer?.arm(afterMicroseconds: Server.goodbyeGraceMicroseconds)
    }

    // MARK: - Signals

    private func reload() {
        Notify.reloading()
        writers = WritersPolicy(group: config.writersGroup)
        journal.log(
            .notice, "reloaded",
            [
                ("WRITERS", config.writersGroup ?? "everyone"),
                ("WRITERS_GID", writers.gid.map { "\($0)" } ?? "-"),
            ])
        Notify.ready(status: statusLine())
    }

    private func beginShutdown(signal: Int32) {
        guard !shuttingDown else { return }
        shuttingDown = true
        Notify.stopping(status: "Stopping: finishing pending commits.")
        journal.log(
            .notice, "stopping",
            [
                ("SIGNAL", signal == SIGTERM ? "SIGTERM" : "SIGINT"),
                ("CLIENTS", "\(connections.count)"), ("PENDING", "\(pending.count)"),
            ])
        listenSource?.cancel()
        listenSource = nil
        // Finish every commit in flight or queued, and answer the commands they carry.
        deliver(store.close())
        if exitCode != 0 { return }  // a storage I/O error: fatal() said it all, nothing is sent
        for c in Array(connections.values) {
            c.readClosed = true
            sayGoodbye(c, reason: "shutdown")
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
        Notify.stopping(status: "Failed: storage I/O error: \(error)")
        exitCode = 1
        shuttingDown = true
        loop.exit(code: 1)
    }
}

/// `--writers GROUP`: who may change the shared state.
struct WritersPolicy {
    let group: String?
    /// nil with a group set: the group no longer exists, so only root may write (fail closed).
    let gid: UInt32?

    init(group: String?) {
        self.group = group
        gid = group.flatMap { getgrnam($0)?.pointee.gr_gid }
    }

    func allows(_ peer: Peer) -> Bool {
        guard group != nil else { return true }
        if peer.uid == 0 { return true }
        guard let gid else { return false }
        return peer.gid == gid || peer.groups.contains(gid)
    }
}

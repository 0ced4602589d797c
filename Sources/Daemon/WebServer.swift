// The web listener's I/O before a connection is a WebSocket (issue 43): accepts on the sockets
// `--web` bound and those systemd passed as `web`, and carries out what each connection's
// WebConnection (HTTPScrape) decides: reads its head, writes its answer (a file of the page, an
// error) and closes, or hands the socket to the manager as a WebSocket (`serve` returns
// `.adopted`). One timer per connection for its deadline. Never blocks: every socket is
// non-blocking, a head not sent in time is answered 408 (a slowloris), and at most
// `limits.maxConnections` wait at once. Past that, a head that has been coming in for
// `limits.evictAfter` (2 s) is evicted (408) for the next connection, so that slow heads cannot keep
// a browser out; when every place holds a fresh head (a connect storm), accepting pauses until
// a place frees or the stalest head grows old enough, and the newcomers wait in the kernel's
// backlog rather than be refused. Only when the pause itself fails does a newcomer get 503.
//
// Server+Web.swift starts it and gives it `serve` (the route: a file, or the WebSocket, which
// the manager adopts into a Connection) and `refused` (the counters); nothing here knows the
// manager.
import CSystemd
import HTTPScrape
import WebSocket

#if canImport(Glibc)
    import Glibc
#endif

final class WebServer {
    let loop: EventLoop
    let journal: Journal
    let limits: WebLimits

    /// What became of a request.
    enum Served {
        /// Write `bytes` and close; `refused`: why, when it is a refusal.
        case respond([UInt8], refused: WebRefusal?, reason: String?)
        /// The socket is the manager's now (a WebSocket): forget it, do not close it.
        case adopted
    }

    /// Routes a request: `(request, fd, bytes after the head)`.
    let serve: (HTTPRequest, Int32, [UInt8]) -> Served
    /// Counts a refusal.
    let refused: (WebRefusal) -> Void
    private var sources: [EventLoop.IOSource] = []
    private var waiting: [Int32: Waiting] = [:]
    /// Accepting is paused: every place holds a fresh head (`pauseAccepting`).
    private var paused = false
    /// Ends a pause when the stalest head may be evicted.
    private var resumeTimer: EventLoop.Timer?
    /// Connections accepted so far: each one's serial, for `Stalest`.
    private var accepted: UInt64 = 0
    /// Scratch buffer for reads: a head is at most `limits.headBytes`, what follows it in the
    /// same read is a WebSocket's first frames.
    private var readBuffer = [UInt8](repeating: 0, count: 16 * 1024)

    final class Waiting {
        let fd: Int32
        var machine: WebConnection
        var io: EventLoop.IOSource?
        var timer: EventLoop.Timer?
        /// Whether the head is in and the answer is being written: then only writable is watched.
        var writing = false

        init(fd: Int32, machine: WebConnection) {
            self.fd = fd
            self.machine = machine
        }
    }

    init(
        loop: EventLoop, fds: [Int32], journal: Journal, limits: WebLimits = WebLimits(),
        serve: @escaping (HTTPRequest, Int32, [UInt8]) -> Served, refused: @escaping (WebRefusal) -> Void
    ) throws(SystemError) {
        self.loop = loop
        self.journal = journal
        self.limits = limits
        self.serve = serve
        self.refused = refused
        for fd in fds {
            sources.append(
                try loop.addIO(fd: fd, events: UInt32(EPOLLIN.rawValue), description: "web listener") {
                    [unowned self] _ in acceptAll(fd)
                })
        }
        resumeTimer = try loop.makeTimer(description: "web accept pause") { [unowned self] in
            resumeAccepting()
        }
    }

    /// Stops accepting and closes every connection not yet a WebSocket (the listening sockets
    /// are the caller's).
    func close() {
        for source in sources { source.cancel() }
        sources = []
        resumeTimer?.cancel()
        resumeTimer = nil
        for w in Array(waiting.values) { finish(w) }
    }

    /// The loop's time of this wake-up, in nanoseconds (CLOCK_MONOTONIC).
    private var now: UInt64 { loop.now &* 1000 }

    private func acceptAll(_ listener: Int32) {
        // Several per wake-up, bounded: the protocol's clients come first. 64: a connect storm
        // must be drained faster than it fills the kernel's queue (4,096), or the kernel drops
        // the newcomers' SYNs and they come back only a second later (issue 44).
        for _ in 0..<64 {
            if waiting.count >= limits.maxConnections, !makeRoom() { return }
            let c = swiped_accept(listener)
            if c < 0 {
                let e = errno
                if e != EAGAIN && e != EWOULDBLOCK && e != EINTR && e != ECONNABORTED {
                    journal.logFolded(
                        .warning, "cannot accept a web connection, trying again at the next one",
                        [("ERROR", String(cString: strerror(e)))])
                }
                return
            }
            if waiting.count >= limits.maxConnections {
                // Once, without waiting: a 503 that does not fit the socket's buffer is dropped.
                _ = WebLimits.busy.withUnsafeBytes {
                    send(c, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
                }
                Glibc.close(c)
                refused(.busy)
                journal.logFolded(
                    .warning, "web connection refused: every place is being answered, closing it",
                    [("WAITING", "\(waiting.count)")])
                continue
            }
            start(c)
        }
    }

    /// With every place taken: evicts the stalest head if it has waited `evictAfter`, else
    /// pauses accepting (newcomers wait in the kernel's backlog) until a place frees or it has.
    /// Whether there is room now; false also when the pause failed and a newcomer must be
    /// refused (the caller accepts it, and the full check refuses it with 503).
    private func makeRoom() -> Bool {
        let all = Array(waiting.values)
        guard let i = Stalest.index(all.lazy.map(\.machine)) else { return !pauseAccepting(until: nil) }
        let stalest = all[i]
        let evictable = stalest.machine.since &+ limits.evictAfter
        guard evictable <= now else { return !pauseAccepting(until: evictable) }
        journal.log(
            .debug, "web connection evicted for a newer one while its head came in",
            [("REMOTE", Listener.peerAddress(stalest.fd) ?? "?")])
        perform(stalest, stalest.machine.evict(now: now))
        // Once, without waiting: its place is the new connection's now.
        if waiting[stalest.fd] === stalest { finish(stalest) }
        return true
    }

    /// Stops watching the listening sockets until a place frees (`forget`) or `deadline`
    /// (monotonic ns), when the stalest head may be evicted. Whether it paused.
    private func pauseAccepting(until deadline: UInt64?) -> Bool {
        if !paused {
            do {
                for source in sources { try source.watch(0) }
            } catch {
                journal.logFolded(
                    .warning, "cannot pause the web listener, refusing newcomers with 503 meanwhile",
                    [("ERROR", "\(error)")])
                resumeAccepting()
                return false
            }
            paused = true
        }
        if let deadline { resumeTimer?.arm(afterMicroseconds: max(1_000, (deadline &- now) / 1_000)) }
        return true
    }

    private func resumeAccepting() {
        guard paused else { return }
        do {
            for source in sources { try source.watch(UInt32(EPOLLIN.rawValue)) }
            paused = false
        } catch {
            journal.logFolded(
                .err, "cannot watch the web listener again, trying again in 100 ms", [("ERROR", "\(error)")])
            resumeTimer?.arm(afterMicroseconds: 100_000)
        }
    }

    private func start(_ c: Int32) {
        accepted &+= 1
        let w = Waiting(fd: c, machine: WebConnection(now: now, serial: accepted, limits: limits))
        waiting[c] = w
        do {
            w.io = try loop.addIO(fd: c, events: UInt32(EPOLLIN.rawValue), description: "web connection") {
                [unowned self, unowned w] _ in ready(w)
            }
            w.timer = try loop.makeTimer(description: "web deadline") { [unowned self, unowned w] in
                perform(w, w.machine.timerFired(now: now))
            }
        } catch {
            journal.log(.warning, "cannot watch a web connection, closing it", [("ERROR", "\(error)")])
            finish(w)
            return
        }
        armTimer(w)
        // A browser sends its head as soon as it is connected, before the daemon accepts: it is
        // usually here already, and reading it now saves a wake-up per connection.
        ready(w)
    }

    private func ready(_ w: Waiting) {
        if w.writing {
            perform(w, .write)
            return
        }
        let n = readBuffer.withUnsafeMutableBytes {
            recv(w.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
        }
        if n < 0 {
            let e = errno
            if e == EAGAIN || e == EWOULDBLOCK || e == EINTR { return }
            finish(w)  // reset by the peer: nothing to answer
            return
        }
        perform(w, w.machine.received(readBuffer[0..<n], now: now))
    }

    private func perform(_ w: Waiting, _ first: WebConnection.Action) {
        var action = first
        while true {
            switch action {
            case .read:
                armTimer(w)
                return
            case .serve(let request):
                switch serve(request, w.fd, w.machine.rest) {
                case .adopted:
                    w.machine.upgraded()
                    forget(w)
                    return
                case .respond(let bytes, let why, let reason):
                    if let why {
                        refused(why)
                        journal.log(
                            .debug, "web request refused",
                            [("REASON", why.rawValue), ("DETAIL", reason ?? "-")])
                    }
                    action = w.machine.respond(bytes, now: now)
                }
            case .write:
                if !w.writing {
                    guard startWriting(w) else { return }
                }
                let n = w.machine.pending.withUnsafeBytes {
                    send(w.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
                }
                if n < 0 {
                    let e = errno
                    if e == EAGAIN || e == EWOULDBLOCK || e == EINTR {
                        armTimer(w)
                        return
                    }
                    action = .close  // the peer went: nothing more to send
                } else {
                    action = w.machine.sent(n)
                }
            case .close:
                finish(w)
                return
            }
        }
    }

    /// The head is in: watch for writable only; a refusal the machine decided by itself (a bad
    /// head, its deadline) is counted here.
    private func startWriting(_ w: Waiting) -> Bool {
        w.writing = true
        do {
            try w.io?.watch(UInt32(EPOLLOUT.rawValue))
        } catch {
            journal.log(
                .warning, "cannot watch a web connection for writing, closing it", [("ERROR", "\(error)")])
            finish(w)
            return false
        }
        if let (status, reason) = w.machine.refusal {
            // Decided by the machine itself (a bad head, its deadline, an eviction): `serve`'s
            // own refusals were counted where they were made.
            refused(WebRefusal.of(status, evicted: w.machine.evicted))
            journal.log(
                .debug, "web request refused", [("STATUS", "\(status.rawValue)"), ("REASON", reason)])
        }
        return true
    }

    private func armTimer(_ w: Waiting) {
        let deadline = w.machine.deadline
        let t = now
        w.timer?.arm(afterMicroseconds: deadline > t ? (deadline - t + 999) / 1000 : 0)
    }

    /// Closes the connection and forgets it.
    private func finish(_ w: Waiting) {
        forget(w)
        Glibc.close(w.fd)
    }

    /// Forgets the connection, leaving its socket open (adopted by the manager, or closed by
    /// `finish`).
    private func forget(_ w: Waiting) {
        w.io?.cancel()
        w.io = nil
        w.timer?.cancel()
        w.timer = nil
        waiting[w.fd] = nil
        if paused && waiting.count < limits.maxConnections { resumeAccepting() }
    }
}

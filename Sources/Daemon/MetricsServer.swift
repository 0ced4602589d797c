// The metrics listener's I/O (issue 31): accepts on the socket systemd passed as `metrics`
// (Listener.metricsFD) and carries out what each connection's ScrapeConnection decides
// (HTTPScrape): reads while the head comes in, writes the response, closes; one timer per
// connection for its deadline. Never blocks: every socket is non-blocking, a scraper that does
// not send or does not read is closed at its deadline, and at most `limits.maxConnections` are
// served at once (others get 503 and are closed). The response itself comes from `respond`,
// which the manager gives: `/metrics` renders its MetricsSnapshot, `/health` its store's state.
//
// Server.setUp starts it (Server+Metrics.swift) and shutdown closes it; nothing here knows the
// manager.
import CSystemd
import HTTPScrape

#if canImport(Glibc)
    import Glibc
#endif

final class MetricsServer {
    let loop: EventLoop
    let fd: Int32
    let journal: Journal
    let limits: ScrapeLimits
    let respond: (ScrapeRequest) -> [UInt8]
    private var listenSource: EventLoop.IOSource?
    private var scrapers: [Int32: Scraper] = [:]
    /// Connections accepted so far: each one's serial, for `ScrapeConnection.stalest`.
    private var accepted: UInt64 = 0
    /// Scratch buffer for reads (the head is at most `limits.headBytes`).
    private var readBuffer = [UInt8](repeating: 0, count: 4096)

    final class Scraper {
        let fd: Int32
        var machine: ScrapeConnection
        var io: EventLoop.IOSource?
        var timer: EventLoop.Timer?
        /// Whether the head is in: then only writable is watched.
        var writing = false

        init(fd: Int32, machine: ScrapeConnection) {
            self.fd = fd
            self.machine = machine
        }
    }

    /// Connections being served now.
    var active: Int { scrapers.count }

    init(
        loop: EventLoop, fd: Int32, journal: Journal, limits: ScrapeLimits = ScrapeLimits(),
        respond: @escaping (ScrapeRequest) -> [UInt8]
    ) throws(SystemError) {
        self.loop = loop
        self.fd = fd
        self.journal = journal
        self.limits = limits
        self.respond = respond
        listenSource = try loop.addIO(
            fd: fd, events: UInt32(EPOLLIN.rawValue), description: "metrics listener"
        ) {
            [unowned self] _ in acceptAll()
        }
    }

    /// A listening TCP socket on `address` (`--metrics`), non-blocking, close-on-exec. Under the
    /// shipped unit (RestrictAddressFamilies=AF_UNIX) socket(2) fails with EAFNOSUPPORT: the
    /// socket unit (swiped-metrics.socket) is the way there.
    static func bind(_ address: ListenAddress) throws(SystemError) -> Int32 {
        // A burst of scrapers waits in the queue to be answered (503 past the 4 served) rather
        // than having its SYNs dropped while the queue is full, to be resent a second or more
        // later: with 16, a hundred at once made DaemonStatusTests' late ones served after
        // the first ones' 408, not refused.
        try TCPListen.bind(address, backlog: 128)
    }

    /// Stops accepting and closes every connection (the listening socket is the caller's).
    func close() {
        listenSource?.cancel()
        listenSource = nil
        for scraper in Array(scrapers.values) { finish(scraper) }
    }

    /// The loop's time of this wake-up, in nanoseconds (CLOCK_MONOTONIC).
    private var now: UInt64 { loop.now &* 1000 }

    private func acceptAll() {
        // A few per wake-up: scrapers are few, and the protocol's clients come first.
        for _ in 0..<8 {
            let c = swiped_accept(fd)
            if c < 0 {
                let e = errno
                if e != EAGAIN && e != EWOULDBLOCK && e != EINTR && e != ECONNABORTED {
                    journal.logFolded(
                        .warning, "cannot accept a metrics connection, trying again at the next one",
                        [("ERROR", String(cString: strerror(e)))])
                }
                return
            }
            if scrapers.count >= limits.maxConnections {
                let all = Array(scrapers.values)
                if let i = ScrapeConnection.stalest(all.lazy.map(\.machine)) {
                    journal.log(.debug, "metrics connection evicted for a newer one while its head came in")
                    let evicted = all[i]
                    perform(evicted, evicted.machine.evict(now: now))
                    // Once, without waiting, as a 503: its place is the new connection's now.
                    if scrapers[evicted.fd] === evicted { finish(evicted) }
                }
            }
            switch limits.admit(active: scrapers.count) {
            case .refuse(let bytes):
                // Once, without waiting: a 503 that does not fit the socket's buffer is dropped.
                _ = bytes.withUnsafeBytes {
                    send(c, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
                }
                Glibc.close(c)
                journal.log(
                    .debug, "metrics connection refused, too many at once", [("ACTIVE", "\(scrapers.count)")])
            case .accept:
                start(c)
            }
        }
    }

    private func start(_ c: Int32) {
        accepted &+= 1
        let scraper = Scraper(fd: c, machine: ScrapeConnection(now: now, serial: accepted, limits: limits))
        scrapers[c] = scraper
        do {
            scraper.io = try loop.addIO(
                fd: c, events: UInt32(EPOLLIN.rawValue), description: "metrics connection"
            ) {
                [unowned self, unowned scraper] _ in ready(scraper)
            }
            scraper.timer = try loop.makeTimer(description: "metrics deadline") {
                [unowned self, unowned scraper] in perform(scraper, scraper.machine.timerFired(now: now))
            }
        } catch {
            journal.log(.warning, "cannot watch a metrics connection, closing it", [("ERROR", "\(error)")])
            finish(scraper)
            return
        }
        armTimer(scraper)
    }

    private func ready(_ scraper: Scraper) {
        if scraper.writing {
            perform(scraper, .write)
            return
        }
        let n = readBuffer.withUnsafeMutableBytes {
            recv(scraper.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
        }
        if n < 0 {
            let e = errno
            if e == EAGAIN || e == EWOULDBLOCK || e == EINTR { return }
            finish(scraper)  // reset by the peer: nothing to answer
            return
        }
        perform(scraper, scraper.machine.received(readBuffer[0..<n], now: now))
    }

    private func perform(_ scraper: Scraper, _ first: ScrapeConnection.Action) {
        var action = first
        while true {
            switch action {
            case .read:
                armTimer(scraper)
                return
            case .serve(let request):
                action = scraper.machine.respond(respond(request), now: now)
            case .write:
                if !scraper.writing {
                    scraper.writing = true
                    do {
                        try scraper.io?.watch(UInt32(EPOLLOUT.rawValue))
                    } catch {
                        journal.log(
                            .warning, "cannot watch a metrics connection for writing, closing it",
                            [("ERROR", "\(error)")])
                        finish(scraper)
                        return
                    }
                    if let (status, reason) = scraper.machine.refusal {
                        journal.log(
                            .debug, "metrics request refused",
                            [("STATUS", "\(status.rawValue)"), ("REASON", reason)])
                    }
                }
                let pending = scraper.machine.pending
                let n = pending.withUnsafeBytes {
                    send(scraper.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
                }
                if n < 0 {
                    let e = errno
                    if e == EAGAIN || e == EWOULDBLOCK || e == EINTR {
                        armTimer(scraper)
                        return
                    }
                    action = .close  // the peer went: nothing more to send
                } else {
                    action = scraper.machine.sent(n)
                }
            case .close:
                finish(scraper)
                return
            }
        }
    }

    private func armTimer(_ scraper: Scraper) {
        let deadline = scraper.machine.deadline
        let t = now
        scraper.timer?.arm(afterMicroseconds: deadline > t ? (deadline - t + 999) / 1000 : 0)
    }

    private func finish(_ scraper: Scraper) {
        scraper.io?.cancel()
        scraper.timer?.cancel()
        Glibc.close(scraper.fd)
        scrapers[scraper.fd] = nil
    }
}

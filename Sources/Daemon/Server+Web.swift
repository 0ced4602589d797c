// The web listener's WebSockets (issue 43): each is a Connection like a Unix-socket client's
// (its client number, its Session, its subscriptions), whose text messages are the Session's
// lines both ways (WebSocket's FrameLink frames them). This file is the seam: the handshake's
// adoption of a socket (from WebServer.swift), reading (frames in, messages to the Session),
// writing (the Session's output framed), the keepalive, the close handshake. Connection I/O
// in Server+Connections.swift hands a Connection with `web` here and does the rest as for any
// client (rounds with the Session, `afterWork`, `drop`).
//
// Decisions written down (docs/web.md says them to users):
// - A WebSocket starts as its door makes it (Server+People.swift): anonymous with
//   `--web-anonymous`'s rights; a trusted proxy's user (`--web-trust-header` from a
//   `--web-trusted-proxy` address); or the person of the sign-in cookie's token. A browser has
//   no uid, so it is never root; `--writers` and `--admins` are about Unix peers.
// - The hard cap on a message read is twice `--max-line`: a longer line gets `too-large` and
//   the connection stays usable, as over the Unix socket; past the cap the link closes with 1009
//   before keeping its payload.
// - Dead peers are found by pings: a WebSocket that sent nothing for `--web-ping` seconds is
//   pinged, and closed when it sends nothing for as long again (a browser answers pings by
//   itself, even in a background tab, so an idle page stays; no idle timeout).
// - `--max-clients` counts WebSockets with Unix clients: past it, or while stopping, the
//   handshake is answered 503.
import CSystemd
import HTTPScrape
import Metrics
import People
import Session
import WebSocket
import Wire

#if canImport(Glibc)
    import Glibc
#endif

/// What the web listener counted since start (`status`, `/metrics`).
struct WebCounts {
    /// Requests refused before a WebSocket or a file, by reason.
    var refused: [WebRefusal: UInt64] = [:]
    /// Close frames sent, by code's label (`MetricsSnapshot.Web.closeCodeLabels`).
    var closeCodes: [String: UInt64] = [:]
}

extension Server {
    /// Whether the web listener runs: sockets bound with `--web`, or passed by systemd as `web`.
    var webFDs: [Int32] { listener.webFDs + boundWebFDs }

    /// Serves the page and its WebSocket on the web sockets, if any.
    func startWeb() throws(SystemError) {
        guard !webFDs.isEmpty else { return }
        webServer = try WebServer(
            loop: loop, fds: webFDs, journal: journal,
            serve: { [unowned self] request, fd, rest in serveWeb(request, fd: fd, rest: rest) },
            refused: { [unowned self] why in webCounts.refused[why, default: 0] &+= 1 })
        for fd in webFDs {
            journal.log(
                .info, "serving the web page and its WebSocket over HTTP",
                [
                    ("FD", "\(fd)"), ("ADDRESS", Listener.localAddress(fd) ?? "?"),
                    ("ORIGIN", listener.webFDs.contains(fd) ? "systemd (socket activation)" : "--web"),
                    ("WEB_ROOT", config.webRoot ?? "none: the WebSocket only"),
                    ("FILES", "\(webSite.files.count)"),
                ])
        }
    }

    /// Stops the web listener (WebSockets already open go on, as the other clients do); the
    /// sockets `--web` bound are closed (systemd's are not ours to close).
    func stopWeb() {
        webServer?.close()
        webServer = nil
        for fd in boundWebFDs { close(fd) }
        boundWebFDs = []
    }

    /// What `status` and `/metrics` show of the web listener: every label, zeros included.
    func webFigures() -> MetricsSnapshot.Web {
        MetricsSnapshot.Web(
            refused: WebRefusal.allCases.map { LabelledCount($0.rawValue, webCounts.refused[$0] ?? 0) },
            closeCodes: MetricsSnapshot.Web.closeCodeLabels.map {
                LabelledCount($0, webCounts.closeCodes[$0] ?? 0)
            })
    }

    /// Reads `--web-root` again (SIGHUP): a root that cannot be read leaves the page as it was.
    func reloadWebRoot() {
        guard let root = config.webRoot, !webFDs.isEmpty else { return }
        do {
            let loaded = try WebRoot.load(root)
            webSite = loaded.site
            logSkipped(loaded)
            journal.log(
                .info, "web root reloaded", [("WEB_ROOT", root), ("FILES", "\(loaded.site.files.count)")])
        } catch {
            journal.log(
                .warning, "cannot read the web root again, serving the page as it was",
                [("WEB_ROOT", root), ("ERROR", error.description)])
        }
    }

    func logSkipped(_ loaded: WebRoot.Loaded) {
        for (path, why) in loaded.skipped {
            journal.log(.warning, "web root: a file left out, not served", [("PATH", path), ("REASON", why)])
        }
    }

    /// A request on the web listener: a file, a refusal, or a WebSocket adopted here.
    private func serveWeb(_ request: HTTPRequest, fd: Int32, rest: [UInt8]) -> WebServer.Served {
        if request.post {
            let (bytes, why, reason) = signInPost(request, remote: Listener.peerAddress(fd) ?? "?")
            return .respond(bytes, refused: why, reason: reason)
        }
        switch WebRoute.answer(request, site: webSite, policy: webPolicy) {
        case .respond(let bytes, let why, let reason):
            return .respond(bytes, refused: why, reason: reason)
        case .upgrade(let response):
            return adoptWebSocket(fd, response: response, rest: rest, request: request)
        }
    }

    /// The handshake passed: the socket becomes a client, greeted with `hello` after the 101.
    private func adoptWebSocket(_ fd: Int32, response: [UInt8], rest: [UInt8], request: HTTPRequest)
        -> WebServer.Served
    {
        let origin = request.value("origin")
        let remote = Listener.peerAddress(fd) ?? "?"
        guard connections.count < maxClients, !shuttingDown else {
            let reason: ByeReason = shuttingDown ? .shutdown : .tooManyClients
            if reason == .tooManyClients { sink.metrics.refused &+= 1 }
            journal.logFolded(
                .warning, "connection refused", fold: reason.rawValue,
                [("TRANSPORT", "websocket"), ("REMOTE", remote), ("REASON", reason.rawValue)])
            return .respond(
                Response.error(.serviceUnavailable), refused: .unavailable, reason: reason.rawValue)
        }
        let client = nextClient
        nextClient += 1
        let door = webDoor(request, remote: remote)
        let session = Session(
            config: SessionConfig(
                client: client, identity: door.identity, writersGroup: config.writersGroup,
                maxLine: config.maxLine, maxQueue: config.maxQueue),
            latestSeq: store.latestSeq, log: store.logID, largeReplies: largeReplies)
        let link = FrameLink(limits: FrameLimits(maxMessage: 2 * config.maxLine))
        // A sign-in cookie whose token no longer works is cleared with the 101, so that the
        // browser stops presenting it (each would count as a failed sign-in).
        link.prepend(door.clearCookie.map { SignInCookie.clearing101(response, secure: $0) } ?? response)
        let web = WebTransport(link: link, remote: remote, origin: origin, now: loop.now)
        let c = Connection(
            fd: fd, peer: Peer(), session: session, base: door.base, address: door.address, web: web)
        for reason in door.denials { deny(c, op: "", reason) }
        do {
            web.timer = try loop.makeTimer(description: "web-keepalive") { [unowned self, unowned c] in
                webTimerFired(c)
            }
            try poller?.add(fd, client: client, events: UInt32(EPOLLIN.rawValue))
            c.watched = UInt32(EPOLLIN.rawValue)
        } catch {
            web.timer?.cancel()
            journal.log(
                .err, "cannot watch a WebSocket, refusing it",
                [("CLIENT", "\(client)"), ("REMOTE", remote), ("ERROR", "\(error)")])
            return .respond(Response.error(.serviceUnavailable), refused: .unavailable, reason: "\(error)")
        }
        connections[client] = c
        sink.metrics.connected(connections.count)
        journal.log(
            .info, "client connected",
            [
                ("CLIENT", "\(client)"), ("TRANSPORT", "websocket"), ("REMOTE", remote),
                ("WEB_ORIGIN", origin ?? "-"), ("USER", door.identity.user ?? "-"),
                ("ROLE", door.identity.role.rawValue), ("DOOR", door.identity.door.name),
            ])
        markStatusDirty()
        armKeepalive(c, web)
        if !rest.isEmpty {
            var rest = rest  // unmasked in place
            rest.withUnsafeMutableBytes { received(c, web, $0) }
        }
        afterWork(c)
        return .adopted
    }

    // MARK: - Connection I/O

    /// `handleIO` for a WebSocket.
    func handleWebIO(_ c: Connection, _ web: WebTransport, events: UInt32) {
        if events & UInt32(EPOLLOUT.rawValue) != 0, let failure = flushWeb(c, web) {
            return writeFailed(c, failure)
        }
        if events & UInt32(EPOLLIN.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0,
            c.watched & UInt32(EPOLLIN.rawValue) != 0
        {
            let result: IOResult
            do {
                result = try readNonBlocking(c.fd, into: readBuffer)
            } catch {
                journal.logFolded(
                    .warning, "cannot read from a client, closing it", fold: "\(error.errno)",
                    [("CLIENT", "\(c.client)"), ("ERROR", "\(error)")])
                return drop(c, reason: "read error")
            }
            switch result {
            case .done(let n):
                received(c, web, UnsafeMutableRawBufferPointer(rebasing: readBuffer[0..<n]))
            case .wouldBlock:
                break
            case .eof:
                // Closed without a close frame (a tab killed, the network gone), or after ours.
                return drop(c, reason: web.link.isClosing ? closedReason(web) : "peer gone")
            }
        } else if events & UInt32(EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 {
            return drop(c, reason: "peer gone")
        }
        afterWork(c)
    }

    /// Bytes from the peer: each whole text message is one line for the Session, the messages of
    /// one read handed to it as one run of lines (FrameLink moves them together in the read
    /// buffer), as a read from the Unix socket is: the same lane from there on (issue 44). Once
    /// the Session reads no more (told bye, closing), or the link does not (a close sent or
    /// received), what comes is read and dropped, so that the peer's close and its end of the
    /// stream are seen (and the socket is not reset with bytes unread).
    private func received(_ c: Connection, _ web: WebTransport, _ bytes: UnsafeMutableRawBufferPointer) {
        let now = loop.now
        web.heard = now
        switch c.session.lifecycle {
        case .reading, .paused:
            web.link.received(lines: bytes) { lines in
                switch c.session.lifecycle {
                case .reading, .paused: round(c, .bytes(lines), at: now)
                // Told bye by a line before: nothing more is answered, as over the Unix socket.
                case .halfClosed, .sayingBye, .closed: break
                }
            }
        case .halfClosed, .sayingBye, .closed:
            web.link.received(bytes) { _ in }
        }
    }

    /// `flush` for a WebSocket: frames the Session's output (and the control frames due) and
    /// writes them, as far as the socket takes them; the error that stopped it, if one did.
    func flushWeb(_ c: Connection, _ web: WebTransport) -> SystemError? {
        let link = web.link
        // Told `bye`: its close frame follows it, saying why (the bye is the last line, and the
        // Session is closed as soon as the link took it).
        if case .sayingBye(let reason) = c.session.lifecycle {
            link.close(code: Self.closeCode(reason), reason: reason.rawValue)
        }
        while true {
            let taken = c.session.withPendingOutput { link.produce($0) }
            if taken > 0 { round(c, .written(taken)) }
            let out = link.outbound
            if out.isEmpty {
                if taken == 0 { return nil }
                continue
            }
            let result: Result<Int, SystemError>
            do {
                result = .success(try writeNonBlocking(c.fd, out))
            } catch {
                result = .failure(error)
            }
            switch result {
            case .success(let n):
                link.sent(n)
                if n < out.count { return nil }  // the socket is full: EPOLLOUT brings it back
            case .failure(let error):
                return error
            }
        }
    }

    /// `afterWork`'s end for a WebSocket: the Session's end becomes a close frame (after its
    /// `bye`), the close handshake runs to its end, and the socket is watched for what is due.
    func afterWebWork(_ c: Connection, _ web: WebTransport) {
        let link = web.link
        switch c.session.lifecycle {
        case .closed(.byeNotRead(let reason)):
            return drop(c, reason: CloseReason.byeNotRead(reason).description)
        case .closed:
            // After a bye, its close is asked for already (`flushWeb`): this one is a no-op.
            link.close(code: CloseCode.normal, reason: "")
            // The Session is done while the close handshake runs: its timers (the bye's grace)
            // have nothing left to act on.
            for timer in c.timers.values { timer.cancel() }
            c.timers.removeAll()
        case .reading, .paused, .halfClosed, .sayingBye:
            break
        }
        if let failure = flushWeb(c, web) { return writeFailed(c, failure) }
        countClose(web)
        if link.closeReceived != nil, link.outbound.isEmpty { return drop(c, reason: closedReason(web)) }
        // Ending (our close framed, the peer's received, or a fault of the peer's): the close
        // handshake has `closeGrace` to finish, whether or not the peer reads what is left.
        let ending = link.closeSent || link.closeReceived != nil || link.fault != nil
        if ending, web.closingSince == nil {
            web.closingSince = loop.now
            web.timer?.arm(afterMicroseconds: WebTransport.closeGrace)
        }
        var events: UInt32 = 0
        if link.isClosing || (link.wantsRead && c.session.wantsRead) { events |= UInt32(EPOLLIN.rawValue) }
        if !link.outbound.isEmpty { events |= UInt32(EPOLLOUT.rawValue) }
        if events != c.watched {
            do {
                try poller?.modify(c.fd, client: c.client, events: events)
                c.watched = events
            } catch {
                journal.log(
                    .err, "cannot change what a connection is watched for, closing it",
                    [("CLIENT", "\(c.client)"), ("ERROR", "\(error)")])
                drop(c, reason: "epoll_ctl failed")
            }
        }
    }

    /// The close code for a `bye`: the reason in words as the close frame's reason.
    static func closeCode(_ reason: ByeReason) -> UInt16 {
        switch reason {
        case .shutdown: CloseCode.goingAway
        case .slowConsumer: CloseCode.policyViolation
        case .tooManyClients: CloseCode.tryAgainLater
        // 1008: the connection may not go on under the server's policy (RFC 6455, 7.4.1).
        case .revoked: CloseCode.policyViolation
        }
    }

    /// Why a WebSocket ended with a close frame, for the journal's REASON=: the close codes
    /// both ways, and the peer's fault if it broke the protocol.
    private func closedReason(_ web: WebTransport) -> String {
        let link = web.link
        var reason = "close frames: sent \(link.closeCodeSent.map(String.init) ?? "none"), "
        reason += "received \(link.closeReceived.map(String.init) ?? "none")"
        if let fault = link.fault { reason += "; the peer sent \(fault)" }
        return reason
    }

    /// What `drop` does besides a Unix client's: the timer, the close code counted.
    func dropWeb(_ c: Connection, _ web: WebTransport) -> [(String, String)] {
        web.timer?.cancel()
        web.timer = nil
        countClose(web)
        return [
            ("TRANSPORT", "websocket"), ("REMOTE", web.remote),
            ("CLOSE_CODE", web.link.closeCodeSent.map(String.init) ?? "-"),
        ]
    }

    /// Counts our close frame's code, once, as soon as it is framed.
    private func countClose(_ web: WebTransport) {
        guard !web.closeCounted, let code = web.link.closeCodeSent else { return }
        web.closeCounted = true
        webCounts.closeCodes[MetricsSnapshot.Web.closeCodeLabel(code), default: 0] &+= 1
    }

    // MARK: - Keepalive

    private var pingMicroseconds: UInt64 { UInt64(config.webPing) * 1_000_000 }

    private func armKeepalive(_ c: Connection, _ web: WebTransport) {
        guard pingMicroseconds > 0 else { return }
        web.timer?.arm(afterMicroseconds: pingMicroseconds)
    }

    /// The WebSocket's timer: the close handshake's end, a ping due, or a ping unanswered.
    private func webTimerFired(_ c: Connection) {
        guard connections[c.client] === c, let web = c.web else { return }
        let now = loop.now
        if let since = web.closingSince {
            if now >= since &+ WebTransport.closeGrace { return drop(c, reason: closedReason(web)) }
            web.timer?.arm(afterMicroseconds: since &+ WebTransport.closeGrace &- now)
            return
        }
        let interval = pingMicroseconds
        guard interval > 0 else { return }
        if let sent = web.pingSent, web.heard <= sent {
            guard now >= sent &+ interval else {
                web.timer?.arm(afterMicroseconds: sent &+ interval &- now)
                return
            }
            return drop(c, reason: "no answer to a ping in \(config.webPing) s")
        }
        web.pingSent = nil
        guard now >= web.heard &+ interval else {
            web.timer?.arm(afterMicroseconds: web.heard &+ interval &- now)
            return
        }
        web.link.ping()
        web.pingSent = now
        web.timer?.arm(afterMicroseconds: interval)
        afterWork(c)
    }
}

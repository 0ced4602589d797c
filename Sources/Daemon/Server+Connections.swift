import CSystemd
// The manager's side of a connection: accepting it, moving bytes between its socket and its
// Session, carrying out the Session's actions, watching the socket for what the Session wants,
// and closing it. Every decision is the Session's (Sources/Session); this file only does I/O.
import JSONCodec
import Movies
import People
import Session
import StoreCore
import Wire

#if canImport(Glibc)
    import Glibc
#endif

extension Server {
    // MARK: - Accepting

    func acceptAll() {
        // Several per wakeup, bounded, so that a flood of connects cannot starve the others.
        for _ in 0..<64 {
            let fd = swiped_accept(listener.fd)
            if fd < 0 {
                // Taken now: the journal's entries are worded later, after calls that set errno.
                let error = SystemError("accept")
                switch error.errno {
                case EAGAIN, EINTR, ECONNABORTED: return
                case EMFILE, ENFILE:
                    // The listener stays readable while the backlog waits: without a pause this
                    // would spin. Stop watching it for 100 ms; closing connections frees fds.
                    journal.logFolded(
                        .warning, "cannot accept: out of file descriptors, pausing accepts for 100 ms",
                        [("ERROR", "\(error)"), ("CLIENTS", "\(connections.count)")])
                    do {
                        try listenSource?.watch(0)
                    } catch {
                        journal.log(
                            .err, "cannot pause accepts, trying to accept again at once",
                            [("ERROR", "\(error)")])
                    }
                    acceptPauseTimer?.arm(afterMicroseconds: 100_000)
                    return
                default:
                    journal.log(.err, "accept failed, ignoring", [("ERROR", "\(error)")])
                    return
                }
            }
            accepted(fd)
        }
    }

    /// Who `client` is. Credentials that cannot be read leave it unknown (uid and gid -1),
    /// which `--writers` never lets write; groups that cannot be read leave it its primary one.
    private func peer(of fd: Int32, client: UInt64) -> Peer {
        var peer = Peer()
        var pid: Int32 = 0
        var uid: UInt32 = 0
        var gid: UInt32 = 0
        if swiped_peercred(fd, &pid, &uid, &gid) == 0 {
            peer.pid = pid
            peer.uid = uid
            peer.gid = gid
        } else {
            let error = SystemError("getsockopt SO_PEERCRED")
            journal.log(
                .warning, "cannot read a client's credentials, serving it as an unknown user",
                [("CLIENT", "\(client)"), ("ERROR", "\(error)")])
        }
        if access.readsGroups {
            // Most peers have a handful of groups; one in more than 256 gets a second try with
            // room for the kernel's maximum (NGROUPS_MAX), rather than losing its groups.
            for capacity in [256, 65_536] {
                var groups = [UInt32](repeating: 0, count: capacity)
                let n = swiped_peergroups(fd, &groups, Int32(capacity))
                if n >= 0 {
                    peer.groups = Array(groups[0..<Int(n)])
                    break
                }
                if errno != ERANGE || capacity == 65_536 {
                    let error = SystemError("getsockopt SO_PEERGROUPS")
                    journal.log(
                        .warning, "cannot read a client's groups, serving it with its primary group only",
                        [("CLIENT", "\(client)"), ("ERROR", "\(error)")])
                    break
                }
            }
        }
        return peer
    }

    private func accepted(_ fd: Int32) {
        let client = nextClient
        nextClient += 1
        let peer = peer(of: fd, client: client)
        guard connections.count < maxClients, !shuttingDown else {
            return refuse(
                fd, client: client, peer: peer, reason: shuttingDown ? .shutdown : .tooManyClients)
        }
        let base = BaseIdentity.unix(name: Self.userName(peer.uid), uid: peer.uid)
        let identity = judge(base, peer: peer)
        guard identity.role > .none else {
            journal.log(
                .notice, "connection refused: no rights",
                [("CLIENT", "\(client)"), ("USER", identity.user ?? "-"), ("PEER_PID", "\(peer.pid)")])
            return refuse(fd, client: client, peer: peer, reason: .revoked)
        }
        let session = Session(
            config: SessionConfig(
                client: client, identity: identity, writersGroup: config.writersGroup,
                maxLine: config.maxLine, maxQueue: config.maxQueue),
            latestSeq: store.latestSeq, log: store.logID, largeReplies: largeReplies)
        let connection = Connection(
            fd: fd, peer: peer, session: session, base: base, address: "pid \(peer.pid)")
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
        opened(connection)
    }

    /// A Unix client's connection, watched: the daemon serves it from now on (its `hello` is
    /// written here).
    func opened(_ connection: Connection) {
        let (peer, identity) = (connection.peer, connection.session.identity)
        connections[connection.client] = connection
        sink.metrics.connected(connections.count)
        journal.log(
            .info, "client connected",
            [
                ("CLIENT", "\(connection.client)"), ("PEER_PID", "\(peer.pid)"), ("PEER_UID", "\(peer.uid)"),
                ("PEER_GID", "\(peer.gid)"), ("USER", identity.user ?? "-"), ("ROLE", identity.role.rawValue),
            ])
        markStatusDirty()
        afterWork(connection)
    }

    /// Says why in a `bye` (best effort: the socket is new and its buffer empty) and closes.
    private func refuse(_ fd: Int32, client: UInt64, peer: Peer, reason: ByeReason) {
        if reason == .tooManyClients { sink.metrics.refused &+= 1 }
        var line = JSONWriter()
        Encode.bye(&line, reason: reason)
        let written = line.bytes.withUnsafeBytes { bytes -> String? in
            do {
                let n = try writeNonBlocking(fd, bytes)
                return n == bytes.count ? nil : "the socket took \(n) of its \(bytes.count) bytes"
            } catch {
                return "\(error)"
            }
        }
        close(fd)
        var fields = [
            ("CLIENT", "\(client)"), ("PEER_PID", "\(peer.pid)"), ("PEER_UID", "\(peer.uid)"),
            ("REASON", reason.rawValue),
        ]
        if let written { fields.append(("ERROR", "the bye was not written: \(written)")) }
        journal.logFolded(.warning, "connection refused", fold: reason.rawValue, fields)
    }

    // MARK: - Connection I/O

    func handleIO(_ c: Connection, events: UInt32) {
        if let web = c.web { return handleWebIO(c, web, events: events) }
        if events & UInt32(EPOLLOUT.rawValue) != 0, let failure = flush(c) {
            return writeFailed(c, failure)
        }
        if events & UInt32(EPOLLIN.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0, c.session.wantsRead
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
                let bytes = UnsafeRawBufferPointer(rebasing: readBuffer[0..<n])
                round(c, .bytes(bytes), at: loop.now)
            case .wouldBlock:
                break
            case .eof:
                round(c, .readEnded)
            }
        } else if events & UInt32(EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 {
            // Hung up (closed for good, not half-closed: that is EPOLLRDHUP) while nothing more
            // is read from it: nothing can reach it any more. epoll reports EPOLLHUP whatever the
            // mask, so keeping the connection would also make the loop spin on it.
            return drop(c, reason: "peer gone")
        }
        afterWork(c)
    }

    /// Writes as much of the session's output as the socket takes; the error that stopped it,
    /// if one did (the caller closes the connection: `writeFailed`).
    func flush(_ c: Connection) -> SystemError? {
        if let web = c.web { return flushWeb(c, web) }
        while c.session.pendingOutput > 0 {
            let result = c.session.withPendingOutput { bytes -> Result<Int, SystemError> in
                do throws(SystemError) {
                    return .success(try c.send(bytes))
                } catch {
                    return .failure(error)
                }
            }
            switch result {
            case .success(0): return nil
            case .success(let n): round(c, .written(n))
            case .failure(let error): return error
            }
        }
        return nil
    }

    /// Closes `c` after a write to it failed. A peer that went (EPIPE, ECONNRESET) is how
    /// connections end: a debug entry. Any other error is a fault worth a warning; either way
    /// nothing more can be written, and the connection is closed.
    func writeFailed(_ c: Connection, _ error: SystemError) {
        if error.peerGone {
            journal.log(
                .debug, "client gone while written to", [("CLIENT", "\(c.client)"), ("ERROR", "\(error)")])
            drop(c, reason: "peer gone")
        } else {
            journal.logFolded(
                .warning, "cannot write to a client, closing it", fold: "\(error.errno)",
                [("CLIENT", "\(c.client)"), ("ERROR", "\(error)")])
            drop(c, reason: "write error")
        }
    }

    /// After any work on `c`: write what it has, let it catch up with what waited for room,
    /// then watch its socket for what it wants next (or close it).
    func afterWork(_ c: Connection) {
        guard connections[c.client] === c else { return }
        // The session sees every write before the loop ends: the last thing a round does is ask
        // it to resume, or leave output queued, which is watched for below (EPOLLOUT) and so
        // brings the connection back here. A write after the last `resume` that emptied the
        // output would leave nothing to bring it back: a paused connection (reading stopped)
        // would keep its lines read and not answered for ever, a subscriber catching up would
        // not read its next page until the log changes again.
        while true {
            if c.session.pendingOutput > 0, let failure = flush(c) { return writeFailed(c, failure) }
            guard c.session.mayResume(latestSeq: store.latestSeq) else { break }
            let before = c.session.requests
            round(c, .resume)
            if c.session.pendingOutput == 0 { break }
            let answered = c.session.requests != before
            // Lines answered: write them, then answer more if that made room. Each such round
            // answers a line already read, so there are finitely many.
            if answered { continue }
            // Nothing answered, output queued (refused by the socket a moment ago): write it
            // now. If the socket takes all of it (the peer caught up meanwhile), that may be the
            // room the session waits for, and nothing else would tell it: one more round. That
            // round has nothing to write; it answers lines, or it ends (`resume` words output
            // only by answering).
            if let failure = flush(c) { return writeFailed(c, failure) }
            if c.session.pendingOutput > 0 { break }
        }
        if let web = c.web { return afterWebWork(c, web) }
        if case .closed(let reason) = c.session.lifecycle { return drop(c, reason: reason.description) }
        var events: UInt32 = 0
        if c.session.wantsRead { events |= UInt32(EPOLLIN.rawValue) }
        if c.session.pendingOutput > 0 { events |= UInt32(EPOLLOUT.rawValue) }
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

    // MARK: - A round with a session

    /// One round between the manager and `c`'s session, which every input to a session goes
    /// through: the session hears `input` (at `now`, when its time counts), with the committed
    /// state lent to it and the sink for its actions; then the actions are carried out, and the
    /// facts they give rise to heard (`perform`). Writing is left to the caller, who calls
    /// `afterWork(c)` when done with `c`: at once, or once for a batch (`deliver` answers every
    /// writer before wording events for subscribers).
    @inline(__always)
    func round(_ c: Connection, _ input: SessionInput, at now: UInt64? = nil) {
        hear(input, at: now, c)
        perform(c)
    }

    /// The one place a session is given a fact (`Session.handle`): by `round` and, for the facts
    /// its actions give rise to, by `perform`. The sink holds only this fact's actions after it:
    /// any other connection's would be carried out as `c`'s.
    @inline(__always)
    private func hear(_ input: SessionInput, at now: UInt64?, _ c: Connection) {
        precondition(sink.isEmpty, "client \(c.client): a round began with another's actions in the sink")
        store.withState { c.session.handle(input, at: now, $0, &sink) }
    }

    /// What carrying out `c`'s actions gives rise to that its session must hear, while the
    /// sink, which its answer would go to, is being drained: a command refused (overloaded, a
    /// rate limit), a timer that could not be made, an answer about people given at once; and
    /// the questions answered once the drain is done, because answering them reads what the
    /// drain holds (`status` reads the sink's counters).
    private enum Arising {
        case input(SessionInput, at: UInt64?)
        case status(ticket: UInt64)
        case peers(ticket: UInt64, watch: Bool)
    }

    /// Carries out the actions in the sink (all `c`'s, in order), then has `c`'s session hear
    /// what they gave rise to, one at a time: each fact's own actions, and what those give rise
    /// to, are dealt with before the next (depth first, as if each fact had been heard where
    /// it arose).
    private func perform(_ c: Connection) {
        if sink.isEmpty { return }
        // A stack: the next fact to hear is the last. Empty, and so not allocated, unless some
        // fact arises.
        var facts: [Arising] = []
        while true {
            let start = facts.count
            sink.drain { action in
                switch consume action {
                case .submit(let ticket, let op, let command):
                    if let refused = submit(command, op: op, ticket: ticket, from: c) {
                        facts.append(.input(.commandAnswered(ticket: ticket, .failure(refused)), at: nil))
                    }
                case .read(let ticket, let request):
                    pending[ticket] = Pending(client: c.client, what: .read)
                    store.read(request, token: ticket)
                    storeTouched = true
                case .catchUp(let ticket, let after, let limit):
                    catchUpAsked(
                        c, CatchUps.Page(client: c.client, ticket: ticket, after: after, limit: limit))
                case .catchUpEnded:
                    catchUpEnded(c.client)
                case .arm(let timer, let microseconds):
                    if let fired = arm(timer, after: microseconds, on: c) {
                        facts.append(.input(fired, at: loop.now))
                    }
                case .cancel(let timer):
                    c.timers.removeValue(forKey: timer)?.cancel()
                case .subscription(let active):
                    subscribers[c.client] = active ? c : nil
                case .log(let entry):
                    // A session's warnings are each about one connection, and many can say
                    // the same at once (a thousand slow subscribers dropped by one change).
                    switch entry.level {
                    case .err, .warning:
                        journal.logFolded(
                            entry.level.priority, entry.message, entry.fields.map { ($0.name, $0.value) })
                    case .info, .debug:
                        journal.log(
                            entry.level.priority, entry.message, entry.fields.map { ($0.name, $0.value) })
                    }
                case .sharing(let active):
                    if active { sharers[c.client] = c }
                case .peerRowsChanged:
                    peerRowsChanged(c)
                case .peers(let ticket, let watch):
                    facts.append(.peers(ticket: ticket, watch: watch))
                case .status(let ticket):
                    facts.append(.status(ticket: ticket))
                case .people(let ticket, let what):
                    if let answer = asked(what, ticket: ticket, from: c) {
                        facts.append(.input(.peopleAnswered(ticket: ticket, answer), at: nil))
                    }
                case .denied(let op, let reason):
                    deny(c, op: op, reason)
                }
            }
            if facts.count - start > 1 { facts[start...].reverse() }
            // A connection closed meanwhile hears nothing more (every fact here is c's).
            guard !facts.isEmpty, connections[c.client] === c else { return }
            switch facts.removeLast() {
            case .input(let input, let now): hear(input, at: now, c)
            case .status(let ticket): hear(statusAnswer(c, ticket: ticket), at: nil, c)
            case .peers(let ticket, let watch): hear(peersAnswer(c, ticket: ticket, watch: watch), at: nil, c)
            }
        }
    }

    /// Hands `command` to the store under `ticket`; or, past the limit of commands waiting for
    /// the disk, refuses it (the refusal is the session's to hear, as the command's answer).
    private func submit(_ command: consuming MovieCommand, op: String, ticket: UInt64, from c: Connection)
        -> WireError?
    {
        if let limited = rateLimited(c, op: op) { return limited }
        guard store.pendingCount < ServerLimits.maxPendingCommands else {
            let error = WireError(
                .overloaded, "\(store.pendingCount) commands are waiting for the disk; try again shortly")
            journal.logFolded(
                .warning, "command refused", fold: error.code.rawValue,
                [("CLIENT", "\(c.client)"), ("OP", op), ("ERROR", error.code.rawValue)])
            return error
        }
        pending[ticket] = Pending(
            client: c.client, what: .command(op: op, movie: command.movieID), since: c.session.clock)
        store.submit(command, token: ticket)
        storeTouched = true
        return nil
    }

    /// Arms `timer` for `c`; when no timer can be made, what the session must hear instead.
    private func arm(_ timer: SessionTimer, after microseconds: UInt64, on c: Connection) -> SessionInput? {
        if let existing = c.timers[timer] {
            existing.arm(afterMicroseconds: microseconds)
            return nil
        }
        do {
            let made = try loop.makeTimer(description: timer.description) { [unowned self, unowned c] in
                c.timers[timer] = nil
                guard connections[c.client] === c else { return }
                round(c, .timerFired(timer), at: loop.now)
                afterWork(c)
            }
            made.arm(afterMicroseconds: microseconds)
            c.timers[timer] = made
            return nil
        } catch {
            switch timer {
            case .closeRow, .confirmRow, .retryCatchUp:
                // Now rather than never: a fired row closes at once, a confirmation is cancelled
                // at once (nothing fires), a failed read is retried.
                journal.log(
                    .err, "cannot create a timer, firing it now",
                    [("CLIENT", "\(c.client)"), ("TIMER", timer.description), ("ERROR", "\(error)")])
                return .timerFired(timer)
            case .goodbye:
                // Firing it now would close the connection before its bye is written: without
                // it, the connection closes once the bye is written or the peer goes.
                journal.log(
                    .err, "cannot create a timer, going on without it",
                    [("CLIENT", "\(c.client)"), ("TIMER", timer.description), ("ERROR", "\(error)")])
                return nil
            }
        }
    }

    // MARK: - Closing

    /// Closes `c` and forgets it. Commands it submitted still commit; their replies are dropped.
    func drop(_ c: Connection, reason: String) {
        guard connections.removeValue(forKey: c.client) != nil else { return }
        subscribers[c.client] = nil
        // Its share of the catch-ups' cap, or its page waiting for one (the session says
        // nothing when it is dropped).
        catchUpEnded(c.client)
        peerGone(c)
        do {
            try poller?.remove(c.fd)
        } catch {
            // close() below takes the descriptor out of the epoll set anyway.
            journal.log(
                .debug, "cannot unwatch a connection, ignoring",
                [("CLIENT", "\(c.client)"), ("ERROR", "\(error)")])
        }
        for timer in c.timers.values { timer.cancel() }
        c.timers.removeAll()
        // A WebSocket has no peer credentials: its fields say where it came from instead.
        let who =
            c.web.map { dropWeb(c, $0) } ?? [("PEER_PID", "\(c.peer.pid)"), ("PEER_UID", "\(c.peer.uid)")]
        if c.embedded == nil { close(c.fd) }
        journal.log(
            .info, "client disconnected",
            [("CLIENT", "\(c.client)")] + who + [("REASON", reason), ("REQUESTS", "\(c.session.requests)")])
        markStatusDirty()
        connectionGone()
        if shuttingDown && connections.isEmpty { loop.exit(code: exitCode) }
    }
}

extension SessionLog.Level {
    var priority: Priority {
        switch self {
        case .err: .err
        case .warning: .warning
        case .info: .info
        case .debug: .debug
        }
    }
}

extension SessionTimer {
    /// The sd-event source's description.
    var description: String {
        switch self {
        case .closeRow: "close-row"
        case .confirmRow: "confirm-row"
        case .goodbye: "goodbye"
        case .retryCatchUp: "catch-up-retry"
        }
    }
}

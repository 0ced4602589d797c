// Dispatch of one request line, and the ops on the shared movie state. Mutations and reads are
// handed to the store; their replies keep their place among the connection's replies until the
// store reports their outcome (group commit: the store commits everything that arrived
// meanwhile in one transaction).
import Movies
import Store
import SwipeEngine
import Wire

/// A command waiting for its commit: where its reply goes, and how to word it.
struct PendingCommand {
    weak var connection: Connection?
    let id: [UInt8]?
    let op: String
    let movie: String?
    /// Builds the reply once the outcome is known.
    let complete: (inout JSONWriter, Result<CommittedEvent, WireError>) -> Void
}

/// A read waiting for the store: a `history` reply, or a page of a subscriber's catch-up (for
/// the subscription `generation`, from `after`).
struct PendingRead {
    weak var connection: Connection?
    let id: [UInt8]?
    let op: String
    let catchUp: (generation: UInt64, after: UInt64)?
}

extension Server {
    func handle(line: UnsafeRawBufferPointer, on c: Connection) {
        if RequestDecoder.withFastRequest(
            line, repeating: &c.dragRepeat, { handle($0, id: $1, op: $2.rawValue, on: c) })
        {
            return
        }
        let decoded = RequestDecoder.decodeFull(line)
        switch decoded.result {
        case .failure(let error):
            reply(c, id: decoded.id, op: decoded.op, error: error)
        case .success(let request):
            handle(request, id: decoded.id, op: decoded.op ?? "?", on: c)
        }
    }

    func reply(_ c: Connection, id: [UInt8]?, op: String?, error: WireError) {
        c.send(reply: { Encode.error(&$0, id: id, error) })
        var fields: [(String, String)] = [
            ("CLIENT", "\(c.client)"), ("ERROR", error.code.rawValue),
            ("ERROR_MESSAGE", error.message),
        ]
        if let op { fields.append(("OP", op)) }
        journal.log(error.code == .internal ? .err : .info, "request failed", fields)
    }

    private func handle(_ request: Request, id: [UInt8]?, op: String, on c: Connection) {
        switch request {
        case .ping:
            c.send(reply: { Encode.ok(&$0, id: id) })
        case .help:
            c.send(reply: { Encode.help(&$0, id: id) })
        case .list:
            c.sendLate { [unowned self] out in
                store.withState { Encode.list(&out, id: id, seq: store.latestSeq, movies: $0.movies) }
            }
        case .add(let title, let image, let options):
            mutate(
                MovieCommand(.add(title: title, image: image), expect: options.expect, key: options.key),
                id: id, op: op, on: c)
        case .toggleWatched(let movie, let options):
            mutate(
                MovieCommand(.toggleWatched(movie: movie), expect: options.expect, key: options.key),
                id: id, op: op, on: c)
        case .toggleWatchedWithFriends(let movie, let options):
            mutate(
                MovieCommand(
                    .toggleWatchedWithFriends(movie: movie), expect: options.expect, key: options.key),
                id: id, op: op, on: c)
        case .remove(let movie, let options):
            mutate(
                MovieCommand(.remove(movie: movie), expect: options.expect, key: options.key),
                id: id, op: op, on: c)
        case .subscribe(let from):
            subscribe(c, from: from, id: id, op: op)
        case .unsubscribe:
            c.cursor = nil
            c.subscriptionGeneration += 1
            subscribers[c.client] = nil
            c.send(reply: { Encode.ok(&$0, id: id) })
        case .history(let from, let limit):
            c.sendAfterRead { [unowned self, unowned c] in
                let token = nextToken
                nextToken += 1
                pendingReads[token] = PendingRead(connection: c, id: id, op: op, catchUp: nil)
                store.read(.events(after: from, limit: limit), token: token)
                return token
            }
        case .viewport, .configure, .drag, .release, .tap, .close, .rows:
            handleSwipe(request, id: id, op: op, on: c)
        }
    }

    // MARK: - Mutations

    private func mutate(_ command: MovieCommand, id: [UInt8]?, op: String, on c: Connection) {
        guard c.mayWrite else {
            return reply(c, id: id, op: op, error: forbidden())
        }
        submit(command, from: c, id: id, op: op) { out, result in
            switch result {
            case .success(let event): Encode.mutation(&out, id: id, seq: event.seq, movie: event.movie)
            case .failure(let error): Encode.error(&out, id: id, error)
            }
        }
    }

    func forbidden() -> WireError {
        WireError(
            .forbidden, "only members of the group \"\(writers.group ?? "?")\" may change the movie list")
    }

    /// Hands `command` to the store and arranges for `complete` to word the reply once the
    /// store reports its outcome (at the end of this loop iteration for a refusal or a replay).
    func submit(
        _ command: MovieCommand, from c: Connection, id: [UInt8]?, op: String,
        complete: @escaping (inout JSONWriter, Result<CommittedEvent, WireError>) -> Void
    ) {
        let token = nextToken
        nextToken += 1
        guard store.pendingCount < Server.maxPendingCommands else {
            let error = WireError(
                .overloaded, "\(store.pendingCount) commands are waiting for the disk; try again shortly")
            c.send(reply: { complete(&$0, .failure(error)) })
            journal.log(
                .warning, "command refused",
                [("CLIENT", "\(c.client)"), ("OP", op), ("ERROR", error.code.rawValue)])
            return
        }
        c.reserve(token: token)
        pending[token] = PendingCommand(
            connection: c, id: id, op: op, movie: command.movieID, complete: complete)
        store.submit(command, token: token)
    }

    /// Once per loop iteration: hands the iteration's commands to the store together, and
    /// answers what the store knows, until it knows nothing more (answering may handle lines
    /// that were waiting, which submit more).
    func storeTick() {
        while exitCode == 0 {
            store.flush()
            let batch = store.completions()
            if batch.isEmpty { return }
            deliver(batch)
        }
    }

    /// The store's completion descriptor is readable: answer what it finished.
    func storeCompleted() {
        deliver(store.completions())
    }

    /// Answers the commands and reads the store reports, then tells subscribers and rows.
    func deliver(_ batch: Completions) {
        // After an I/O error on commit nothing is answered: what is durable is decided by what is
        // on disk after the restart (protocol.md, Durability), not by what this process believed.
        if let fatalError = batch.fatal ?? batch.commands.lazy.compactMap(\.fatalError).first {
            return fatal(fatalError.message)
        }
        var touched: [Connection] = []
        for outcome in batch.commands {
            guard let waiting = pending.removeValue(forKey: outcome.token) else { continue }
            let result = outcome.result.mapError(WireError.init)
            log(outcome, result, waiting)
            // A connection told `bye` gets nothing after it.
            guard let c = waiting.connection, connections[c.client] === c, !c.closing else { continue }
            c.fulfil(token: outcome.token) { waiting.complete(&$0, result) }
            touched.append(c)
        }
        for read in batch.reads {
            if let c = answer(read) { touched.append(c) }
        }
        // Queue the events, then write: the writers' replies first (what they wait for), then
        // everyone else's events.
        if !batch.committed.isEmpty { fanOut(batch.committed) }
        for c in touched { afterWork(c) }
        if !batch.committed.isEmpty {
            let latest = store.latestSeq
            for c in Array(connections.values) where c.queued > 0 || (c.cursor ?? latest) < latest {
                afterWork(c)
            }
            markStatusDirty()
        }
    }

    private func log(
        _ outcome: CommandResult, _ result: Result<CommittedEvent, WireError>, _ waiting: PendingCommand
    ) {
        var fields: [(String, String)] = [("OP", waiting.op)]
        if let c = waiting.connection { fields.append(("CLIENT", "\(c.client)")) }
        switch result {
        case .success(let event) where outcome.replayed:
            journal.log(
                .info, "idempotent replay", fields + [("MOVIE", event.movie.id), ("SEQ", "\(event.seq)")])
        case .success(let event):
            journal.log(
                .info, "movie changed",
                fields + [("MOVIE", event.movie.id), ("SEQ", "\(event.seq)"), ("KIND", event.kind)])
        case .failure(let error) where error.code == .storage || error.code == .internal:
            journal.log(
                .warning, "command failed",
                fields + [("ERROR", error.code.rawValue), ("ERROR_MESSAGE", error.message)])
        case .failure(let error):
            journal.log(
                .info, "command refused",
                fields + [
                    ("MOVIE", waiting.movie ?? "-"), ("ERROR", error.code.rawValue),
                    ("ERROR_MESSAGE", error.message),
                ])
        }
    }

    /// A read's outcome: a `history` reply, or a page for a subscriber catching up. Returns the
    /// connection to write to, if any.
    private func answer(_ read: ReadResult) -> Connection? {
        guard let waiting = pendingReads.removeValue(forKey: read.token),
            let c = waiting.connection, connections[c.client] === c
        else { return nil }
        guard let (generation, after) = waiting.catchUp else {
            guard !c.closing else { return nil }
            switch read.result {
            case .success(let events):
                c.fulfil(token: read.token) { [self] in
                    Encode.history(&$0, id: waiting.id, seq: store.latestSeq, events: events)
                }
            case .failure(let error):
                c.fulfil(token: read.token) { Encode.error(&$0, id: waiting.id, WireError(error)) }
                journal.log(
                    .err, "request failed",
                    [
                        ("CLIENT", "\(c.client)"), ("OP", waiting.op), ("ERROR", "storage"),
                        ("ERROR_MESSAGE", error.message),
                    ])
            }
            return c
        }
        if c.catchUpToken == read.token { c.catchUpToken = nil }
        switch read.result {
        case .success(let events):
            // Only for the subscription that asked, from where it was (else a newer one reads).
            guard c.subscriptionGeneration == generation, c.cursor == after, !c.closing else { return c }
            for event in events where event.seq == (c.cursor ?? 0) + 1 {
                c.push { Encode.movieEvent(&$0, event) }
                c.cursor = event.seq
            }
            return c
        case .failure(let error):
            journal.log(
                .err, "cannot read the log for a subscriber",
                [("CLIENT", "\(c.client)"), ("ERROR", "\(error)")])
            return nil
        }
    }

    // MARK: - Subscriptions

    private func subscribe(_ c: Connection, from: UInt64?, id: [UInt8]?, op: String) {
        let latest = store.latestSeq
        if let from, from > latest {
            return reply(
                c, id: id, op: op,
                error: .badRequest("\"from\" (\(from)) is ahead of the latest seq (\(latest))"))
        }
        // The subscription starts when its reply is written, so the reply always comes first;
        // a reply due after this client's own pending mutations counts them in its seq. Only the
        // newest subscribe (or unsubscribe) of a pipeline decides: each has its generation.
        c.cursor = nil
        c.subscriptionGeneration += 1
        let generation = c.subscriptionGeneration
        subscribers[c.client] = nil
        c.sendLate { [unowned self, unowned c] out in
            let latest = store.latestSeq
            Encode.seq(&out, id: id, seq: latest)
            guard c.subscriptionGeneration == generation else { return }
            c.cursor = from ?? latest
            subscribers[c.client] = c
        }
    }

    /// Asks the store for the next page a lagging subscriber missed; `answer` sends it. One
    /// page in flight per subscriber, and one only while its write queue has room: memory per
    /// subscriber stays bounded by the queue's cap.
    func requestCatchUp(_ c: Connection, after cursor: UInt64) {
        let token = nextToken
        nextToken += 1
        c.catchUpToken = token
        pendingReads[token] = PendingRead(
            connection: c, id: nil, op: "subscribe", catchUp: (c.subscriptionGeneration, cursor))
        store.read(.events(after: cursor, limit: 256), token: token)
    }

    /// Live events: each encoded once, appended to every subscriber that is up to date (the
    /// caller writes them out).
    private func fanOut(_ events: [CommittedEvent]) {
        for event in events {
            // Worded once for all subscribers, and only if one is waiting for it.
            var line: JSONWriter?
            for c in subscribers.values where c.cursor == event.seq - 1 && !c.closing {
                if c.backlog > config.maxQueue {
                    journal.log(
                        .warning, "subscriber too slow, disconnecting",
                        [
                            ("CLIENT", "\(c.client)"), ("QUEUED", "\(c.backlog)"), ("SEQ", "\(event.seq)"),
                        ])
                    subscribers[c.client] = nil
                    c.cursor = nil
                    sayGoodbye(c, reason: "slow-consumer")
                    continue
                }
                if line == nil {
                    var worded = JSONWriter()
                    Encode.movieEvent(&worded, event)
                    line = worded
                }
                c.push(bytes: line!.bytes)
                c.cursor = event.seq
            }
            updateRows(for: event)
        }
    }
}

extension CommandResult {
    /// The error of a command that failed because the store failed for good.
    var fatalError: StoreError? {
        if case .failure(let e) = result, e.fatal { return e }
        return nil
    }
}

extension WireError {
    /// The store's errors keep their code; the wire has the same names.
    init(_ error: StoreError) {
        let code: ErrorCode =
            switch error.code {
            case .notFound: .notFound
            case .badRequest: .badRequest
            case .conflict: .conflict
            case .storage: .storage
            case .internal: .internal
            }
        self.init(code, error.message)
    }
}

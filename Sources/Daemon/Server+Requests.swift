// Dispatch of one request line, and the ops on the shared movie state. Mutations are decided
// against the store at once, then their replies wait for the commit (group commit: the store
// commits everything that arrived meanwhile in one transaction).
import JSONCodec
import Movies
import Store
import SwipeEngine
import Wire

/// A command waiting for its commit: where its reply goes, and how to word it.
struct PendingCommand {
    weak var connection: Connection?
    let id: [UInt8]?
    let op: String
    /// Builds the reply once the outcome is known.
    let complete: (inout JSONWriter, Result<CommittedEvent, WireError>) -> Void
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
            c.sendLate { [unowned self] in
                Encode.list(&$0, id: id, seq: store.latestSeq, movies: store.state.movies)
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
            c.sendLate { [unowned self, unowned c] out in
                do throws(StoreError) {
                    let events = try store.history(after: from, limit: limit)
                    Encode.history(&out, id: id, seq: store.latestSeq, events: events)
                } catch {
                    Encode.error(&out, id: id, WireError(error))
                    journal.log(
                        .err, "request failed",
                        [
                            ("CLIENT", "\(c.client)"), ("OP", op), ("ERROR", "storage"),
                            ("ERROR_MESSAGE", error.message),
                        ])
                }
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

    /// Hands `command` to the store and arranges for `complete` to word the reply, now (an
    /// immediate error or an idempotent replay) or once the commit is done.
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
        switch store.submit(command, token: token) {
        case .done(.failure(let storeError)) where storeError.fatal:
            return fatal(storeError.message)
        case .done(.failure(let storeError)):
            let error = WireError(storeError)
            c.send(reply: { complete(&$0, .failure(error)) })
            journal.log(
                .info, "command refused",
                [
                    ("CLIENT", "\(c.client)"), ("OP", op), ("MOVIE", command.movieID ?? "-"),
                    ("ERROR", error.code.rawValue), ("ERROR_MESSAGE", error.message),
                ])
        case .done(.success(let event)):
            c.send(reply: { complete(&$0, .success(event)) })
            journal.log(
                .info, "idempotent replay",
                [
                    ("CLIENT", "\(c.client)"), ("OP", op), ("MOVIE", event.movie.id), ("SEQ", "\(event.seq)"),
                ])
        case .pending:
            c.reserve(token: token)
            pending[token] = PendingCommand(connection: c, id: id, op: op, complete: complete)
        }
    }

    /// The store's writer finished a commit: answer its commands, then tell everyone.
    func storeCompleted() {
        deliver(store.completions())
    }

    /// Answers the commands of a finished commit, then tells subscribers and rows.
    func deliver(_ batch: Completions) {
        // After an I/O error on commit nothing is answered: what is durable is decided by what is
        // on disk after the restart (protocol.md, Durability), not by what this process believed.
        if let fatalError = batch.fatal {
            return fatal(fatalError.message)
        }
        var touched: [Connection] = []
        for outcome in batch.commands {
            guard let waiting = pending.removeValue(forKey: outcome.token) else { continue }
            func fields(_ more: [(String, String)]) -> [(String, String)] {
                [("OP", waiting.op)] + (waiting.connection.map { [("CLIENT", "\($0.client)")] } ?? []) + more
            }
            let result = outcome.result.mapError(WireError.init)
            switch result {
            case .success(let event):
                journal.log(
                    .info, "movie changed",
                    fields([("MOVIE", event.movie.id), ("SEQ", "\(event.seq)"), ("KIND", event.kind)]))
            case .failure(let error):
                journal.log(
                    error.code == .storage ? .warning : .info, "command failed",
                    fields([("ERROR", error.code.rawValue), ("ERROR_MESSAGE", error.message)]))
            }
            // A connection told `bye` gets nothing after it.
            guard let c = waiting.connection, connections[c.client] === c, !c.closing else { continue }
            c.fulfil(token: outcome.token) { waiting.complete(&$0, result) }
            touched.append(c)
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

    /// Sends a lagging subscriber what it missed, from the log, a page at a time, while its
    /// write queue has room: memory per subscriber stays bounded by the queue's cap.
    func pumpSubscription(_ c: Connection) {
        while let cursor = c.cursor, cursor < store.latestSeq, c.queued < config.maxQueue / 2 {
            let events: [CommittedEvent]
            do {
                events = try store.history(after: cursor, limit: 256)
            } catch {
                journal.log(
                    .err, "cannot read the log for a subscriber",
                    [("CLIENT", "\(c.client)"), ("ERROR", "\(error)")])
                return
            }
            guard let last = events.last else { return }
            for event in events { c.push { Encode.movieEvent(&$0, event) } }
            c.cursor = last.seq
        }
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

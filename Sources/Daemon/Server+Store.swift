// The manager's side of the store: what it reports (outcomes of commands and reads, committed
// events) goes to the sessions that asked and to every subscriber, once per loop iteration.
import JSONCodec
import Movies
import Session
import StoreCore
import Wire

extension Server {
    /// Once per loop iteration, after every source dispatched in it: the commands of every
    /// client that was readable go to the store together (group commit), and what the store
    /// decided at once comes back.
    func endOfIteration() {
        // Answering may hand the store more (a `history` page that became due, lines held back
        // by the cap): those outcomes announce themselves on no eventfd, and a post source runs
        // again only after another source, so collect them now.
        while storeTouched {
            storeTouched = false
            store.flush()
            deliver(store.completions())
        }
        if fanOutFrom != nil { endFanOut() }
    }

    /// The store's eventfd: a commit finished, a read was answered.
    func storeCompleted() {
        deliver(store.completions())
    }

    /// Answers the sessions whose commands and reads are done, then tells subscribers and rows.
    func deliver(_ batch: Completions) {
        // After an I/O error on commit nothing is answered: what is durable is decided by what is
        // on disk after the restart (protocol.md, Durability), not by what this process believed.
        if let fatalError = batch.fatal { return fatal(fatalError.message) }
        for note in batch.notes {
            journal.log(note.level == .warning ? .warning : .info, note.message, [("REASON", note.reason)])
            markStatusDirty()
        }
        if !batch.notes.isEmpty { noteStoreState() }
        // One reading of the loop's time for the batch: the wake-up's, as every request got.
        let now = batch.commands.isEmpty ? 0 : loop.now
        var touched: [Connection] = []
        for outcome in batch.commands {
            guard let waiting = pending.removeValue(forKey: outcome.token) else {
                preconditionFailure("the store answered command \(outcome.token), which nobody asked")
            }
            log(outcome, waiting)
            count(outcome, waiting, now: now)
            guard let c = connections[waiting.client] else { continue }
            let result = outcome.result.mapError(WireError.init)
            round(c, .commandAnswered(ticket: outcome.token, result))
            touched.append(c)
        }
        for outcome in batch.reads {
            guard let waiting = pending.removeValue(forKey: outcome.token) else {
                preconditionFailure("the store answered read \(outcome.token), which nobody asked")
            }
            guard let c = connections[waiting.client] else { continue }
            let result = outcome.result.mapError(WireError.init)
            round(c, .readAnswered(ticket: outcome.token, result))
            touched.append(c)
        }
        // The writers' replies first (what they wait for), then the events: with 10,000
        // subscribers, wording the events for all of them first kept the writer waiting ≈ 4 ms.
        for c in touched { afterWork(c) }
        if !batch.committed.isEmpty {
            let rowsChanged = fanOut(batch.committed)
            // Who has something new: subscribers (an event, or a page of the log to catch up
            // on) and the clients whose rows re-rendered. Not every connection: with 10,000
            // idle clients that loop was most of a commit's cost.
            let latest = store.latestSeq
            for c in Array(subscribers.values)
            where c.session.pendingOutput > 0 || !c.session.caughtUp(to: latest) {
                afterWork(c)
            }
            for c in rowsChanged { afterWork(c) }
            markStatusDirty()
        }
    }

    /// The outcome's journal entry, one per mutation: `debug`, so sent only with `--log-level
    /// debug` (every change is in the event log already; under load, an entry per change cost
    /// journald more CPU than the daemon spent on the change, and journald's rate limit then
    /// dropped them, the daemon's warnings with them). The daemon's own failures stay warnings.
    /// Fields are worked out only when the entry goes somewhere (an autoclosure).
    private func log(_ outcome: CommandResult, _ waiting: Pending) {
        if case .read = waiting.what {
            preconditionFailure("ticket \(outcome.token) is a read, answered as a command")
        }
        // Asked first: binding the op and the movie below copies two strings, and the fields'
        // autoclosure captures copies of them, on every reply (≈ 300 instructions, callgrind),
        // for an entry that is dropped unless `--log-level debug`.
        let entry: Priority =
            switch outcome.result {
            case .success: .debug
            case .failure(let error):
                switch error.code {
                case .storage, .internal, .unavailable: .warning
                case .notFound, .badRequest, .conflict: .debug
                }
            }
        guard journal.takes(entry), case .command(let op, let movie) = waiting.what else { return }
        let client = waiting.client
        switch outcome.result {
        case .success(let event):
            if outcome.replayed {
                journal.log(
                    .debug, "idempotent replay",
                    [("OP", op), ("CLIENT", "\(client)"), ("MOVIE", event.movie.id), ("SEQ", "\(event.seq)")])
            } else {
                journal.log(
                    .debug, "movie changed",
                    [
                        ("OP", op), ("CLIENT", "\(client)"), ("MOVIE", event.movie.id),
                        ("SEQ", "\(event.seq)"),
                        ("KIND", event.kind.rawValue),
                    ])
            }
        case .failure(let error):
            let priority: Priority
            let message: String
            switch error.code {
            case .storage, .internal, .unavailable: (priority, message) = (.warning, "command failed")
            case .notFound, .badRequest, .conflict: (priority, message) = (.debug, "command refused")
            }
            // A store away fails every command: one line, then a count per interval.
            journal.logFolded(
                priority, message, fold: WireError(error).code.rawValue,
                [
                    ("OP", op), ("CLIENT", "\(client)"), ("MOVIE", movie ?? "-"),
                    ("ERROR", WireError(error).code.rawValue), ("ERROR_MESSAGE", error.message),
                ])
        }
    }

    /// A command's outcome in the counters: its time, request to outcome (the commit included),
    /// and its error code if it failed. Its request was counted by the session that read it.
    @inline(__always)
    private func count(_ outcome: CommandResult, _ waiting: Pending, now: UInt64) {
        sink.metrics.timed(.mutation, nanoseconds: (now > waiting.since ? now &- waiting.since : 0) &* 1000)
        if case .failure(let error) = outcome.result {
            sink.metrics.failed(code: WireError(error).code.metricsIndex)
        }
    }

    /// Live events: each worded once, for the subscribers it is due to; then the rows showing
    /// its movie re-render (the caller writes everything out).
    /// Returns the connections whose rows re-rendered.
    private func fanOut(_ events: [CommittedEvent]) -> [Connection] {
        var rowsChanged: [Connection] = []
        if !subscribers.isEmpty { beginFanOut() }
        for event in events {
            var line: JSONWriter?
            for c in subscribers.values where c.session.wantsLiveEvent(seq: event.seq) {
                if line == nil {
                    var worded = JSONWriter()
                    Encode.movieEvent(&worded, event)
                    line = worded
                }
                if c.session.takesLiveEventsDirectly {
                    // Nothing of c's waits, so the event goes out now, without a copy: the first
                    // subscribers read it while the last are still being written to.
                    guard let written = writeNow(c, line!.bytes) else { continue }
                    round(c, .liveEvent(seq: event.seq, line: line!.bytes, written: written))
                } else {
                    round(c, .liveEvent(seq: event.seq, line: line!.bytes, written: nil))
                    // Told `bye` for it: the subscription ends, so this counts it once.
                    if case .sayingBye(.slowConsumer) = c.session.lifecycle { sink.metrics.dropped &+= 1 }
                }
            }
        }
        // Then the rows, once per connection for the whole batch (in order for each): most
        // clients have no row open, and `hasOpenRows` answers without hashing an id.
        for c in connections.values where c.session.hasOpenRows {
            // The time counts only in a recording (its entries carry it).
            round(c, .moviesChanged(events), at: c.session.isRecording ? loop.now : nil)
            rowsChanged.append(c)
        }
        return rowsChanged
    }

    /// How much of `bytes` the socket takes now: the rest is queued by the caller, and written
    /// when the socket has room. Nil when the write failed: then `c` is closed (`writeFailed`).
    private func writeNow(_ c: Connection, _ bytes: [UInt8]) -> Int? {
        // A WebSocket's lines are framed: the event waits in its output like any other line.
        guard c.web == nil else { return 0 }
        let result = bytes.withUnsafeBytes { raw -> Result<Int, SystemError> in
            do throws(SystemError) {
                return .success(try c.send(raw))
            } catch {
                return .failure(error)
            }
        }
        switch result {
        case .success(let n): return n
        case .failure(let error):
            writeFailed(c, error)
            return nil
        }
    }
}

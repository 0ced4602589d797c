// The SQLite store's commands and reads: decided on submit, handed to the writer on `flush()`,
// reported by `completions()`; and the recovery after a failed commit.
import EventLog
import Movies

extension SQLiteStore {
    public func submit(_ command: MovieCommand, token: UInt64) {
        submitted += 1
        if let fatal { return answer(token, .failure(fatal)) }
        if closed { return answer(token, .failure(.closed)) }
        if let key = command.key, answeredByKey(key, command, token: token) { return }
        let event: MovieEvent
        do throws(CommandError) {
            event = try projected.decide(command)
        } catch {
            return answer(token, .failure(StoreError(error)))
        }
        let after = projected.apply(event, seq: projected.lastSeq + 1)
        queued.append(Entry(token: token, command: command, event: event, after: after))
    }

    /// Hands what is queued to the writer (it commits whatever it finds queued when it starts a
    /// transaction, so batches handed over while a commit is under way share the next one).
    public func flush() {
        flushQueued()
    }

    public func read(_ request: StoreRead, token: UInt64) {
        switch request {
        case .events(let after, let limit):
            guard !closed else {
                return answeredReads.append(ReadResult(token: token, result: .failure(.closed)))
            }
            // Nothing to read: answered without a round trip to the reader.
            guard after < state.lastSeq, limit > 0 else {
                return answeredReads.append(ReadResult(token: token, result: .success([])))
            }
            readsInFlight += 1
            reader.submit(.init(token: token, after: after, limit: min(limit, Int(state.lastSeq - after))))
        }
    }

    public func completions() -> Completions {
        var out = Completions()
        if !answered.isEmpty { swap(&out.commands, &answered) }
        if !answeredReads.isEmpty { swap(&out.reads, &answeredReads) }
        for c in committer.drain() { collect(c, &out) }
        if recovering && inFlight.isEmpty && fatal == nil { decideAgain(&out) }
        for var r in reader.drain() {
            readsInFlight -= 1
            // The reader may see a commit whose completion this thread has not collected yet.
            if case .success(let events) = r.result, let last = events.last, last.seq > state.lastSeq {
                r.result = .success(Array(events.prefix { $0.seq <= state.lastSeq }))
            }
            out.reads.append(r)
        }
        if fatal == nil && !closed {
            flushQueued()
            maybeSnapshot()
        }
        reported += out.commands.count
        return out
    }

    // MARK: - Keys

    /// A command whose key is pending waits for it; one whose key is in the log is answered from
    /// it; either is a conflict when the key wrote another command. Returns whether it is dealt with.
    private func answeredByKey(_ key: String, _ command: MovieCommand, token: UInt64) -> Bool {
        if let i = queued.firstIndex(where: { $0.command.key == key }) {
            return join(&queued[i], key, command, token)
        }
        if let i = aborted.firstIndex(where: { $0.command.key == key }) {
            return join(&aborted[i], key, command, token)
        }
        for b in inFlight.indices {
            if let i = inFlight[b].entries.firstIndex(where: { $0.command.key == key }) {
                return join(&inFlight[b].entries[i], key, command, token)
            }
        }
        do throws(StoreError) {
            guard let replay = try replay(key: key, command: command) else { return false }
            answer(token, .success(replay), replayed: true)
        } catch {
            answer(token, .failure(error))
        }
        return true
    }

    private func join(_ entry: inout Entry, _ key: String, _ command: MovieCommand, _ token: UInt64) -> Bool {
        if command.wrote(entry.event) {
            entry.waiters.append(token)
        } else {
            answer(token, .failure(.keyReused(key)))
        }
        return true
    }

    /// The original result of a key already in the log, or nil when the key is new.
    private func replay(key: String, command: MovieCommand) throws(StoreError) -> CommittedEvent? {
        let stored: StoredEvent?
        do throws(LogError) {
            stored = try keyLog.event(forKey: key)
        } catch {
            throw StoreError(error)
        }
        guard let stored, stored.seq <= state.lastSeq else { return nil }
        let event: MovieEvent
        do throws(MovieDecodingError) {
            event = try MovieEvent(stream: stored.stream, kind: stored.kind, payload: stored.payload)
        } catch {
            throw StoreError(.internal, "\(path): event \(stored.seq) cannot be decoded: \(error.message)")
        }
        guard command.wrote(event) else { throw .keyReused(key) }
        return try StoredEventDecoding.committedEvents([stored], from: keyLog) { [state] in state.movie($0) }
            .first
    }

    private func answer(_ token: UInt64, _ result: Result<CommittedEvent, StoreError>, replayed: Bool = false)
    {
        answered.append(CommandResult(token: token, result: result, replayed: replayed))
    }

    // MARK: - Commits

    func flushQueued() {
        guard !queued.isEmpty, fatal == nil, !recovering, !closed else { return }
        batchToken += 1
        committer.submit(
            queued.map {
                NewEvent(
                    stream: $0.event.movieID, kind: $0.event.kind,
                    payload: $0.after.map($0.event.payload(after:)) ?? $0.event.payload, key: $0.command.key)
            }, token: batchToken)
        inFlight.append(Batch(token: batchToken, entries: queued))
        queued = []
    }

    /// One completion of the writer: a snapshot saved, or a batch committed or not.
    private func collect(_ c: GroupCommitter.Completion, _ out: inout Completions) {
        if c.token & SQLiteStore.snapshotTokenBit != 0 {
            switch c.result {
            case .success:
                if let s = snapshotInFlight { snapshotSeq = max(snapshotSeq, s) }
            case .failure(let e):
                if e.isFatal { goFatal(StoreError(e), &out) }
            }
            snapshotInFlight = nil
            return
        }
        guard let first = inFlight.first, c.token == first.token else { return }
        inFlight.removeFirst()
        switch c.result {
        case .success(let stored):
            // The committer writes nothing between a failure and `resume()`, which comes only
            // once every batch in flight is back.
            assert(!recovering, "a batch committed behind a failed one")
            apply(first.entries, stored, &out)
        case .failure(let e) where e.isFatal:
            fail(first.entries, StoreError(e), &out)
            goFatal(StoreError(e), &out)
        case .failure(.aborted) where recovering:
            // Not written because an earlier batch failed: decided on top of it, so decide again.
            aborted += first.entries
        case .failure(let e):
            // The commit failed (a batch in the same transaction fails with the same error).
            fail(first.entries, StoreError(e), &out)
            recovering = true
        }
    }

    /// Folds a committed batch into the committed state and reports it.
    private func apply(_ batch: [Entry], _ stored: [StoredEvent], _ out: inout Completions) {
        for (entry, s) in zip(batch, stored) {
            precondition(s.seq == state.lastSeq + 1, "log seq \(s.seq) after state \(state.lastSeq)")
            guard let movie = state.apply(entry.event, seq: s.seq) else {
                preconditionFailure("decided event \(entry.event) does not apply to the committed state")
            }
            let ce = CommittedEvent(seq: s.seq, kind: s.kind, movie: movie, at: s.at)
            out.committed.append(ce)
            out.commands.append(CommandResult(token: entry.token, result: .success(ce)))
            for t in entry.waiters {
                out.commands.append(CommandResult(token: t, result: .success(ce), replayed: true))
            }
        }
    }

    /// Every batch in flight is back after a failed commit: decide what was not written again,
    /// in order, against the committed state.
    private func decideAgain(_ out: inout Completions) {
        recovering = false
        committer.resume()
        projected = state
        let again = aborted + queued
        aborted = []
        queued = []
        for var entry in again {
            do throws(CommandError) {
                entry.event = try projected.decide(entry.command)
                entry.after = projected.apply(entry.event, seq: projected.lastSeq + 1)
                queued.append(entry)
            } catch {
                fail([entry], StoreError(error), &out)
            }
        }
    }

    private func fail(_ entries: [Entry], _ error: StoreError, _ out: inout Completions) {
        for e in entries {
            out.commands.append(CommandResult(token: e.token, result: .failure(error)))
            for t in e.waiters {
                out.commands.append(CommandResult(token: t, result: .failure(error), replayed: true))
            }
        }
    }

    private func goFatal(_ error: StoreError, _ out: inout Completions) {
        var error = error
        error.fatal = true
        fatal = error
        out.fatal = error
        fail(inFlight.flatMap(\.entries) + aborted + queued, error, &out)
        inFlight = []
        aborted = []
        queued = []
        projected = state
    }

    func maybeSnapshot(force: Bool = false) {
        guard snapshotInFlight == nil, state.lastSeq > snapshotSeq,
            force || state.lastSeq - snapshotSeq >= snapshotEvery
        else { return }
        snapshotInFlight = state.lastSeq
        committer.saveSnapshot(
            seq: state.lastSeq, data: state.snapshotBytes(),
            token: SQLiteStore.snapshotTokenBit | state.lastSeq)
    }
}

// The SQLite store's commands and reads: decided on submit, handed to the writer on `flush()`,
// reported by `completions()`; and the recovery after a failed commit.
import EventLog
import Movies
import StoreCore

extension SQLiteStore {
    public func submit(_ command: consuming MovieCommand, token: UInt64) {
        submitted += 1
        if let fatal { return commands.answer(token, .failure(fatal)) }
        if closed { return commands.answer(token, .failure(.closed)) }
        if let key = command.key, answeredByKey(key, command, token: token) { return }
        commands.decide(command, token: token)
    }

    /// Hands what is queued to the writer (it commits whatever it finds queued when it starts a
    /// transaction, so batches handed over while a commit is under way share the next one).
    public func flush() {
        flushQueued()
    }

    public func read(_ request: StoreRead, token: UInt64) {
        let (after, limit, person): (UInt64, Int, String?) =
            switch request {
            case .events(let after, let limit): (after, limit, nil)
            case .eventsBy(let person, let after, let limit): (after, limit, person)
            }
        // Closed, or nothing to read: answered without a round trip to the reader.
        if let r = ReadResult.withoutReading(
            token: token, after: after, limit: limit, closed: closed, latestSeq: state.lastSeq)
        {
            return answeredReads.append(r)
        }
        readsInFlight += 1
        // One person's events are read up to the committed state's seq (the reader may see
        // later commits already), where a page of the whole log is bounded by its limit.
        reader.submit(
            .init(
                token: token, after: after, limit: min(limit, Int(state.lastSeq - after)), person: person,
                through: state.lastSeq))
    }

    public func completions() -> Completions {
        var out = Completions()
        if !commands.answered.isEmpty { swap(&out.commands, &commands.answered) }
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
        if commands.join(key, command, token: token) { return true }
        for b in inFlight.indices {
            if commands.join(key, command, token: token, among: &inFlight[b].entries) { return true }
        }
        do throws(StoreError) {
            guard let (event, committed) = try logged(key: key) else { return false }
            commands.answer(token, command, key: key, loggedAs: event, committed)
        } catch {
            commands.answer(token, .failure(error))
        }
        return true
    }

    /// The event a key already in the log wrote, and its outcome; nil when the key is new.
    private func logged(key: String) throws(StoreError) -> (MovieEvent, CommittedEvent)? {
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
        let committed = try StoredEventDecoding.committedEvents([stored], from: keyLog) { [state] in
            state.movie($0)
        }
        precondition(committed.count == 1, "one stored event decoded to \(committed.count)")
        return (event, committed[0])
    }

    // MARK: - Commits

    func flushQueued() {
        guard !commands.queued.isEmpty, fatal == nil, !recovering, !closed else { return }
        batchToken += 1
        // Entries are read in place, field by field: a copy of a whole entry costs about 400
        // instructions with its destruction (see CommandQueue.Entry.report).
        var events: [NewEvent] = []
        events.reserveCapacity(commands.queued.count)
        for i in commands.queued.indices {
            guard let event = commands.queued[i].event else {
                preconditionFailure("an undecided command in a store that refuses at submit")
            }
            let payload =
                if let after = commands.queued[i].after {
                    event.payload(after: after, undoes: commands.queued[i].command.undoes)
                } else {
                    event.payload
                }
            events.append(
                NewEvent(
                    stream: event.movieID, kind: event.kind.rawValue, payload: payload,
                    key: commands.queued[i].command.key, author: commands.queued[i].command.by))
        }
        committer.submit(events, token: batchToken)
        var entries: [Entry] = []
        swap(&entries, &commands.queued)
        inFlight.append(Batch(token: batchToken, entries: entries))
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
            CommandQueue.fail(first.entries, StoreError(e), &out)
            goFatal(StoreError(e), &out)
        case .failure(.aborted) where recovering:
            // Not written because an earlier batch failed: decided on top of it, so decide again.
            commands.aborted += first.entries
        case .failure(let e):
            // The commit failed (a batch in the same transaction fails with the same error).
            CommandQueue.fail(first.entries, StoreError(e), &out)
            recovering = true
        }
    }

    /// Folds a committed batch into the committed state and reports it.
    private func apply(_ batch: [Entry], _ stored: [StoredEvent], _ out: inout Completions) {
        // By index, reading fields: an element, or a method called on one, is a copy of the
        // whole entry (see CommandQueue.Entry.report).
        for i in 0..<min(batch.count, stored.count) {
            let seq = stored[i].seq
            precondition(seq == state.lastSeq + 1, "log seq \(seq) after state \(state.lastSeq)")
            guard let event = batch[i].event, let movie = state.apply(event, seq: seq) else {
                preconditionFailure(
                    "decided event \(String(describing: batch[i].event)) does not apply to the committed state"
                )
            }
            let ce = CommittedEvent(
                seq: seq, kind: event.kind, movie: movie, at: stored[i].at,
                undoes: batch[i].command.undoes, by: batch[i].command.by, to: event.to, from: event.from)
            out.committed.append(ce)
            Entry.report(.success(ce), token: batch[i].token, waiters: batch[i].waiters, into: &out)
        }
    }

    /// Every batch in flight is back after a failed commit: decide what was not written again,
    /// in order, against the committed state.
    private func decideAgain(_ out: inout Completions) {
        recovering = false
        committer.resume()
        commands.redecide(after: state, &out)
    }

    private func goFatal(_ error: StoreError, _ out: inout Completions) {
        var error = error
        error.fatal = true
        fatal = error
        out.fatal = error
        for batch in inFlight { CommandQueue.fail(batch.entries, error, &out) }
        inFlight = []
        commands.failAll(error, reverting: state, &out)
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

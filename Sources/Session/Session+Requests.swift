// Where a request is answered: one line decoded (the repeat lane, the fast path, else the full
// decoder), dispatched by op, and the ops on the shared movie state. Mutations are submitted to
// the store and their replies wait for the outcome in request order; reads of the shared state
// pipelined behind them are worded when due (read-your-writes).
import JSONCodec
import Movies
import StoreCore
import SwipeEngine
import Wire

extension Session {
    /// Out of line, as it was before issue 45 by the optimizer's own choice: inlined into
    /// `answerLines` (which it became once that loop grew), each line's frame is copied and
    /// destroyed through outlined value witnesses, ≈ 100 instructions a ping (callgrind,
    /// BENCHMARKS.md, "Who may do what").
    @inline(never)
    func handle(line: UnsafeRawBufferPointer, _ state: borrowing MovieState, _ sink: inout SessionActions) {
        if config.fastLanes,
            RequestDecoder.withFastRequest(
                line, repeating: &dragRepeat, { handle($0, id: $1, op: $2.rawValue, state, &sink) })
        {
            return
        }
        let decoded = RequestDecoder.decodeFull(line)
        switch decoded.result {
        case .failure(let error):
            reply(id: decoded.id, op: decoded.op, error: error, &sink)
        case .success(let request):
            handle(request, id: decoded.id, op: decoded.op ?? "?", state, &sink)
        }
    }

    private func handle(
        _ request: Request, id: [UInt8]?, op: String, _ state: borrowing MovieState,
        _ sink: inout SessionActions
    ) {
        // Counted, not timed: a request that hands the store no command is answered in the
        // wake-up that read it (0 at the loop's one clock reading per wake-up), so its time is
        // known from the counts (LoopMetrics' `submitted`, Wire's `latencySnapshots`).
        let kind = request.kind
        sink.metrics.counted(op: kind.metricsIndex)
        guard allowed(kind, id: id, op: op, &sink) else { return }
        switch request {
        case .ping:
            replies.send { Encode.ok(&$0, id: id) }
        case .help:
            replies.send { Encode.help(&$0, id: id) }
        case .options(let rows, let crossings):
            if let rows {
                rowForm = rows
                record(.options(rows), &sink)
            }
            if let crossings, crossings != list.reportsCrossings {
                list.reportsCrossings = crossings
                record(.crossings(crossings), &sink)
            }
            let (form, on) = (rowForm, list.reportsCrossings)
            replies.send { Encode.options(&$0, id: id, rows: form, crossings: on) }
        case .list(let query):
            late(.list(id: id, query), state, &sink)
        case .add(let title, let image, let options):
            mutate(.add(title: title, image: image), options, id: id, op: op, &sink)
        case .toggleWatched(let movie, let options):
            mutate(.toggleWatched(movie: movie), options, id: id, op: op, &sink)
        case .toggleWatchedWithFriends(let movie, let options):
            mutate(.toggleWatchedWithFriends(movie: movie), options, id: id, op: op, &sink)
        case .remove(let movie, let options):
            mutate(.remove(movie: movie), options, id: id, op: op, &sink)
        case .restore(let movie, let options):
            mutate(.restore(movie: movie), options, id: id, op: op, &sink)
        case .move(let movie, let to, let options):
            mutate(.move(movie: movie, to: to), options, id: id, op: op, &sink)
        case .undo(let options, let seq):
            late(.undo(id: id, key: options.key, seq: seq), state, &sink)
        case .subscribe(let from):
            subscribe(from: from, id: id, op: op, state, &sink)
        case .unsubscribe:
            endSubscription(&sink)
            subscriptionGeneration += 1
            replies.send { Encode.ok(&$0, id: id) }
        case .history(let from, let limit, let by):
            late(.history(id: id, from: from, limit: limit, by: by), state, &sink)
        case .viewport(let width, let direction):
            viewport(width: width, direction: direction, id: id, &sink)
        case .configure(let change):
            configure(change, id: id, op: op, &sink)
        case .rows:
            let rows = list.openRows.map { render($0, state) }
            let form = rowForm
            replies.send { Encode.rows(&$0, id: id, rows: rows, form: form) }
        case .close(let movie):
            close(movie, id: id, op: op, state, &sink)
        case .drag(let movie, let dx, let dy):
            if config.fastLanes {
                drag(movie, dx: dx, dy: dy, id: id, op: op, state, &sink)
            } else {
                gesture({ .dragChanged(row: $0, dx: dx, dy: dy) }, movie: movie, id: id, op: op, state, &sink)
            }
        case .release(let movie, let dx, let vx):
            gesture({ .released(row: $0, dx: dx, vx: vx) }, movie: movie, id: id, op: op, state, &sink)
        case .tap(let movie, let action):
            gesture({ .tapped(row: $0, action: action) }, movie: movie, id: id, op: op, state, &sink)
        case .open(let movie, let edge):
            gesture({ .open(row: $0, edge: edge) }, movie: movie, id: id, op: op, state, &sink)
        case .perform(let movie, let action):
            gesture({ .perform(row: $0, action: action) }, movie: movie, id: id, op: op, state, &sink)
        case .peek(let movie, let edge):
            gesture({ .peek(row: $0, edge: edge) }, movie: movie, id: id, op: op, state, &sink)
        case .record(let on):
            record(on: on, id: id, state, &sink)
        case .recording:
            sendRecording(id: id, op: op, &sink)
        case .share(let on):
            share(on: on, id: id, &sink)
        case .peers(let watch):
            peers(watch: watch, id: id, &sink)
        case .status:
            let ticket = sink.takeTicket()
            replies.park(.read(ticket: ticket, id: id))
            sink.append(.status(ticket: ticket))
        case .auth, .tokenCreate, .tokenList, .tokenRevoke, .role, .denials:
            askAboutPeople(request, id: id, &sink)
        }
    }

    // MARK: - Mutations

    private func mutate(
        _ op: MovieCommand.Op, _ options: MutationOptions, id: [UInt8]?, op name: String,
        _ sink: inout SessionActions
    ) {
        submit(
            MovieCommand(op, expect: options.expect, key: options.key, by: identity.user),
            .mutation(id: id, op: name), &sink)
    }

    /// Hands `command` to the store; its reply keeps its place until the outcome comes back.
    func submit(
        _ command: consuming MovieCommand, _ reply: consuming CommandReply, _ sink: inout SessionActions
    ) {
        let ticket = sink.takeTicket()
        sink.metrics.submitted &+= 1
        let op = reply.op
        replies.park(.command(ticket: ticket, reply))
        sink.append(.submit(ticket: ticket, op: op, command))
    }

    /// Words a command's reply once its outcome is known. Nested switches, not one over the
    /// pair: a tuple of the two enums is a copy of both (retains of the id, the op, the movie's
    /// strings), about 700 instructions a reply under load (callgrind).
    static func word(
        _ out: inout JSONWriter, _ reply: borrowing CommandReply,
        _ result: borrowing Result<CommittedEvent, WireError>
    ) {
        switch reply {
        case .mutation(let id, _):
            switch result {
            case .success(let event):
                Encode.mutation(
                    &out, id: id, seq: event.seq, movie: event.movie, by: event.by, to: event.to,
                    from: event.from)
            case .failure(let error): Encode.error(&out, id: id, error)
            }
        case .fired(let id, _, let row, let form, let action, let crossed):
            switch result {
            case .success(let event):
                Encode.row(
                    &out, id: id, row: row, form: form, fired: .bound(action: action, seq: event.seq),
                    crossed: crossed)
            case .failure(let error):
                Encode.row(
                    &out, id: id, row: row, form: form, fired: .failed(action: action, error: error),
                    crossed: crossed)
            }
        case .undo(let id, _, let originalBy):
            switch result {
            case .success(let event):
                Encode.mutation(
                    &out, id: id, seq: event.seq, movie: event.movie, undoes: event.undoes, by: event.by,
                    undoesBy: originalBy, to: event.to, from: event.from)
            case .failure(let error): Encode.error(&out, id: id, error)
            }
        }
    }

    /// What `undo` learns from a command's outcome: a change of this connection to record (the
    /// history is allocated with the first), or an undo done or now impossible.
    func noteForUndo(_ note: UndoNote, _ result: borrowing Result<CommittedEvent, WireError>) {
        switch result {
        case .success(let event):
            switch note {
            case .change:
                if undoHistory == nil { undoHistory = UndoHistory() }
                undoHistory?.record(event)
            case .undo(let original):
                // A key's replay names the change it undid, which may not be the one picked here.
                if let undone = event.undoes ?? original { undoHistory?.undone(undone, by: event.seq) }
            }
        case .failure(let error):
            if case .undo(let original?) = note, error.reason == .changedSince { undoHistory?.drop(original) }
        }
    }

    /// The store read the change an `undo` names by its seq: its undo is submitted as any
    /// other (the movie must not have changed since: `changed-since`), or the reply says why
    /// that change cannot be undone.
    func undoRead(
        _ lookup: UndoLookup, _ result: Result<[CommittedEvent], WireError>, _ state: borrowing MovieState,
        _ sink: inout SessionActions
    ) {
        guard case .some(let id) = replies.firstRead(lookup.ticket) else {
            preconditionFailure("client \(config.client): the undo's read \(lookup) is not the first reply")
        }
        let undo: Undo
        var originalBy: String?
        do throws(WireError) {
            let events = try result.get()
            guard let event = events.first, event.seq == lookup.seq else {
                throw WireError(.notFound, "there is no change at seq \(lookup.seq)")
            }
            if let undone = event.undoes {
                throw WireError(
                    .badRequest,
                    "seq \(lookup.seq) is the undo of seq \(undone): an undo is not undone (there is no redo)"
                )
            }
            guard let compensation = Undo.Compensation(undoing: event) else {
                throw WireError(.badRequest, "seq \(lookup.seq) (\(event.kind)) cannot be undone")
            }
            // The movie must still be as that change left it: its version is the change's seq.
            undo = Undo(
                movie: event.movie.id, original: lookup.seq, compensation: compensation, version: lookup.seq)
            originalBy = event.by
        } catch {
            replies.dropFirst()
            replies.push { Encode.error(&$0, id: id, error) }
            sink.metrics.failed(code: error.code.metricsIndex)
            sink.append(.log(requestFailed("undo", error)))
            return
        }
        let ticket = sink.takeTicket()
        replies.replaceFirst(
            with: .command(ticket: ticket, .undo(id: id, original: lookup.seq, originalBy: originalBy)))
        sink.append(
            .submit(ticket: ticket, op: "undo", MovieCommand(.undo(undo), key: lookup.key, by: identity.user))
        )
    }

    // MARK: - Replies worded when due

    /// A read of the shared state: worded now when no reply waits before it, else when due.
    func late(_ reply: LateReply, _ state: borrowing MovieState, _ sink: inout SessionActions) {
        replies.park(.late(reply))
        releaseDue(state, &sink)
    }

    /// Moves every reply that is due to the output, wording late ones from the state now; a
    /// `history` due now asks the store for its page and holds its place until it comes.
    func releaseDue(_ state: borrowing MovieState, _ sink: inout SessionActions) {
        while let reply = replies.release() {
            switch reply {
            case .list(let id, let query):
                // A long reply is worded as the output drains: the replies behind it wait.
                if startList(id: id, query, state, &sink) { return }
            case .history(let id, let from, let limit, let by):
                let ticket = sink.takeTicket()
                replies.replaceFirst(with: .read(ticket: ticket, id: id))
                let read: StoreRead =
                    if let by { .eventsBy(person: by, after: from, limit: limit) } else {
                        .events(after: from, limit: limit)
                    }
                sink.append(.read(ticket: ticket, read))
                return
            case .undo(let id, let key, let seq?):
                // The change named by its seq: read from the log, then undone (`undoRead`).
                guard seq > 0, seq <= state.lastSeq else {
                    replies.dropFirst()
                    let error = WireError(
                        .notFound, "there is no change at seq \(seq): the log ends at seq \(state.lastSeq)")
                    replies.push { Encode.error(&$0, id: id, error) }
                    sink.metrics.failed(code: error.code.metricsIndex)
                    sink.append(.log(requestFailed("undo", error)))
                    continue
                }
                let ticket = sink.takeTicket()
                undoLookup = UndoLookup(ticket: ticket, key: key, seq: seq)
                replies.replaceFirst(with: .read(ticket: ticket, id: id))
                sink.append(.read(ticket: ticket, .events(after: seq - 1, limit: 1)))
                return
            case .undo(let id, let key, nil):
                let undo = undoHistory?.next()
                // A keyed undo with nothing left here still goes to the store: its key may be in
                // the log already (this undo sent again), and the store answers keys, for every op.
                guard undo != nil || key != nil else {
                    replies.dropFirst()
                    let error = WireError(.conflict, MovieState.nothingToUndo, reason: .nothingToUndo)
                    replies.push { Encode.error(&$0, id: id, error) }
                    sink.metrics.failed(code: error.code.metricsIndex)
                    sink.append(.log(requestFailed("undo", error)))
                    continue
                }
                let ticket = sink.takeTicket()
                let command = MovieCommand(
                    undo.map { .undo($0) } ?? .undoNothing, key: key, by: identity.user)
                let originalBy = undo.flatMap { undoHistory?.author(of: $0.original) }
                replies.replaceFirst(
                    with: .command(
                        ticket: ticket, .undo(id: id, original: undo?.original, originalBy: originalBy)))
                sink.append(.submit(ticket: ticket, op: "undo", command))
                return
            case .subscribe(let id, let from, let generation):
                replies.dropFirst()
                let latest = state.lastSeq
                replies.push { Encode.seq(&$0, id: id, seq: latest) }
                guard generation == subscriptionGeneration else { continue }
                subscription = Subscription(cursor: from ?? latest)
                sink.append(.subscription(active: true))
            }
        }
    }

    /// Words a due `list` (the first slot) whole when short, or starts its stream (ListStream);
    /// returns whether a stream is left in progress.
    private func startList(
        id: [UInt8]?, _ query: ListQuery, _ state: borrowing MovieState, _ sink: inout SessionActions
    ) -> Bool {
        var position = 0
        if let after = query.after {
            guard let start = state.position(after: after) else {
                refuseList(id: id, notFound(after, state), &sink)
                return false
            }
            position = start
        }
        var cursor = ListCursor(
            id: id, seq: state.lastSeq, position: position, limit: query.limit,
            match: query.match.map(TitleMatch.init))
        let count = state.movies.count
        if min(query.limit ?? .max, count - position) <= ListStream.shortReply {
            replies.dropFirst()
            replies.push { out in _ = cursor.word(state.movies, into: &out, head: 0, target: .max) }
            return false
        }
        guard largeReplies.admit(seq: state.lastSeq, movies: count) else {
            let error = WireError(
                .overloaded,
                "the daemon holds \(largeReplies.held) bytes of long list replies (cap \(largeReplies.cap)); ask for pages (limit) or try again shortly"
            )
            if largeReplies.firstRefusal() {
                sink.append(
                    .log(
                        SessionLog(
                            .warning,
                            "long list replies reached their cap, refusing whole lists as overloaded until they drain to half",
                            [
                                .init("CLIENT", "\(config.client)"), .init("HELD", "\(largeReplies.held)"),
                                .init("CAP", "\(largeReplies.cap)"),
                                .init("REPLIES", "\(largeReplies.replies)"),
                            ])))
            }
            refuseList(id: id, error, &sink)
            return false
        }
        replies.start(ListStream(movies: state.movies, cursor: cursor, budget: largeReplies))
        return replies.stream != nil
    }

    /// The error reply of the due `list` (the first slot), in its place.
    private func refuseList(id: [UInt8]?, _ error: WireError, _ sink: inout SessionActions) {
        replies.dropFirst()
        replies.push { Encode.error(&$0, id: id, error) }
        sink.append(.log(requestFailed("list", error)))
    }
}

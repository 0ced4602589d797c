// The connection to the daemon: made, greeted, lost; its replies and events.
import Movies
import SwipeEngine

extension TuiStateMachine {
    /// A new connection is made (after `.connect`); its hello is yet to come.
    public mutating func connected(at now: Double) -> [TuiAction] {
        state.connected = true
        state.model.connection = .connecting
        redraw()
        return takeActions()
    }

    /// The daemon went away (or a connection could not be made): `why` says how.
    public mutating func lost(_ why: String, at now: Double) -> [TuiAction] {
        lose(why, now)
        return takeActions()
    }

    /// Drops the connection, closes every row (a new connection has a new engine), and tries
    /// again after the next backoff.
    mutating func lose(_ why: String, _ now: Double) {
        emit(.disconnect)
        state.connected = false
        state.press = nil
        state.grip = nil
        // Their replies will not come; the list read again on the next connection shows where
        // the rows are.
        state.moves = [:]
        for id in state.renders.keys { state.motions[id]?.retarget(0, spring: Self.settle, at: now) }
        state.renders.removeAll()
        state.model.connection = .reconnecting(attempt: state.attempt + 1)
        state.model.status = "Lost the daemon (\(why)); reconnecting…"
        state.statusIsNews = false
        // The daemon keeps a recording per connection: it went with this one.
        if state.model.recording == .on || state.model.recording == .saving {
            state.model.recording = .lost
            state.model.status = "Lost the daemon and the recording with it (\(why)); reconnecting…"
        }
        state.transcript = nil
        state.recordedRows = []
        state.recordBusy = false
        state.peers = [:]
        countGhosts()
        state.model.statusIsError = true
        state.statusUntil = nil
        state.reconnectAt = now + Self.backoff[min(state.attempt, Self.backoff.count - 1)]
        state.attempt += 1
        redraw()
    }

    /// The daemon's hello on a new connection: sign in when there is a token, catch up, and ask
    /// again for what was on. `log`: the log's id it says (nil from a daemon older than ids);
    /// when it is another than the last hello's, the daemon serves another log (imported or
    /// restored meanwhile) whose seqs are not the ones kept here: the list is dropped and read
    /// again instead of caught up. `user` and `role`: who the connection is (nil from a daemon
    /// before people and roles), until the sign-in's reply says otherwise.
    public mutating func hello(
        writer: Bool, seq: UInt64, log: String? = nil, user: String? = nil, role: String? = nil,
        at now: Double
    ) -> [TuiAction] {
        redraw()
        state.model.connection = .connected
        state.model.writer = writer
        state.model.user = user
        state.model.role = role
        // First, before anything else is asked: the daemon holds the lines after `auth` until
        // it answers, so every one of them is the token's person's.
        if options.signsIn {
            state.model.signingIn = true
            send(.signIn(quiet: state.attempt > 0), now)
        }
        let anotherLog = log != nil && state.log != nil && log != state.log
        state.log = log ?? state.log
        if anotherLog { forgetLog() }
        if state.attempt > 0 {
            let lostRecording = state.model.recording == .lost ? ". The recording was lost" : ""
            say(
                anotherLog
                    ? "Reconnected to another log (imported or restored): listed again\(lostRecording)"
                    : "Reconnected; caught up from seq \(state.lastSeq ?? seq)\(lostRecording)", now)
        }
        state.attempt = 0
        sendViewport(now)
        // `configure` is per connection too: a new one has the daemon's default layout.
        if state.confirmDelete || state.fullSwipeStyle != .fill {
            send(
                .configure(confirmDelete: state.confirmDelete, quiet: true, style: state.fullSwipeStyle), now)
        }
        // So are options: a cue for each threshold a drag crosses (rule 12).
        if options.crossingCues { send(.crossings(on: true), now) }
        if let lastSeq = state.lastSeq {
            // Catch up from the last event seen: no gap, no duplicate.
            send(.subscribe(from: lastSeq), now)
        } else {
            send(.list, now)
        }
        // A new connection shares nothing and watches nobody: ask again for what was on.
        if state.sharing { send(.share(on: true, quiet: true), now) }
        if state.watching { send(.peers(watch: true, quiet: true), now) }
        return takeActions()
    }

    /// Drops what came from the log before: its movies, seqs and undo (a seq of that log).
    private mutating func forgetLog() {
        state.entries = []
        state.positions = [:]
        state.collapsing = 0
        searchRowsChanged()
        state.lastSeq = nil
        state.model.seq = 0
        state.model.selected = nil
        state.model.scroll = 0
        state.undo = nil
        state.pendingUndo = nil
        state.lastButtons = [:]
    }

    /// A line with a row of this connection's own arrived (a reply's or a `row` event's, not a
    /// peer's), as the daemon wrote it: a recording keeps it. Reported before the message's
    /// reply or event.
    public mutating func receivedRowLine(_ line: String) {
        if state.transcript != nil { state.transcript!.append(line) }
    }

    /// The reply to `request`.
    public mutating func replied(to request: TuiRequest, _ reply: TuiReply, at now: Double) -> [TuiAction] {
        redraw()
        self.reply(request, reply, now)
        return takeActions()
    }

    // One case per kind of reply, each a line or two; the longer ones are functions.
    private mutating func reply(_ request: TuiRequest, _ reply: TuiReply, _ now: Double) {
        var reply = reply
        if case .forbidden(let message) = reply {
            // What a role may not do is said in words (+People.swift); the rest is a refusal.
            if forbidden(request, message, now) { return }
            reply = .refused(description: "forbidden: \(message)", message: message)
        }
        // (Its own switch: one more pair here is more than the compiler checks in time.)
        if case .move(let movie, _, _) = request { return moveAnswered(movie, reply, now) }
        switch (request, reply) {
        case (.signIn(let quiet), .signedIn(let user, let role)):
            signedIn(user: user, role: role, quiet: quiet, now)
        case (.signIn, .refused(_, let message)):
            signInRefused(message, now)
        case (.list, .refused(let description, _)), (.subscribe, .refused(let description, _)):
            lose(description, now)
        case (.record(on: true), .refused(_, let message)), (.recording, .refused(_, let message)):
            state.recordBusy = false
            state.transcript = nil
            state.recordedRows = []
            state.model.recording = .off
            say("Not recorded: \(message)", error: true, now)
        case (.record(on: false), .refused(_, let message)):
            state.transcript = nil
            say(message, error: true, now)
        case (.crossings, .refused), (.peek, .refused):
            // A daemon before issue 47: no cues, no hint; nothing worth a message.
            break
        case (_, .refused(_, let message)):
            say(message, error: true, now)
        case (.list, .unreadable(let why)):
            // A list this client cannot read leaves it with nothing to show: it is dropped like
            // a lost connection, and the next connection asks again.
            lose(why, now)
        case (.list, .list(let seq, let movies)):
            list(seq: seq, movies, now)
        case (.configure(let on, let quiet, let style), .closed(let ids)):
            closed(ids, now)
            let styleChanged = style != state.fullSwipeStyle
            state.confirmDelete = on
            state.model.confirmDelete = on
            state.fullSwipeStyle = style
            state.model.fullSwipeStyle = style
            if quiet { return }
            if styleChanged { return say("Full swipe: \(Self.describe(style))", now) }
            say(
                on
                    ? "Ask before deleting: on (a delete waits for its “\(TuiRequest.confirmDeleteLabel)” button or Enter)"
                    : "Ask before deleting: off", now)
        case (_, .closed(let ids)):
            if case .record(on: true) = request { recordingStarted(now) }
            closed(ids, now)
        case (_, .row(let row, let unreadable, let fired, let pending, let crossed)):
            rowReply(row, unreadable: unreadable, fired: fired, pending: pending, now)
            if !crossed.isEmpty, let row { crossing(crossed, row, now) }
        case (.add(let title), .ok):
            say("Added “\(title)”", now)
        case (.restore(_, _, let title, .me), .ok):
            say("Restored “\(title)”", now)
        case (.restore(_, _, let title, let removedBy), .ok):
            // Issue 46: another person's removal undone says whose it was.
            say("Restored “\(title)”, which \(removedBy.name) removed", now)
        case (.record(on: false), .ok):
            state.recordedRows = state.transcript ?? []
            state.transcript = nil
        case (.recording, .recording(let summary)):
            recordingFetched(summary, now)
        case (.share(let on, let quiet), .ok):
            state.sharing = on
            state.model.sharing = on
            if quiet { return }
            say(
                on
                    ? "Sharing your rows: people who show ghosts (g) see your fingers"
                    : "Your rows are private",
                now)
        case (.peers(let watch, let quiet), .peers(let peers, let unreadable)):
            peersReply(watch: watch, quiet: quiet, peers, unreadable: unreadable, now)
        case (.crossings, .ok):
            break
        case (_, .unreadable), (_, .list), (_, .ok), (_, .recording), (_, .peers), (_, .signedIn),
            (_, .forbidden), (_, .moved):
            // swipectl decodes each reply for its request: any other pair is its mistake
            // (`.forbidden` is made a refusal above).
            preconditionFailure("a \(reply) reply to \(request)")
        }
    }

    private mutating func list(seq: UInt64, _ movies: [Movie], _ now: Double) {
        let subscribing = state.lastSeq == nil
        if seq >= state.lastSeq ?? 0 {
            let selectedID = selectedEntryID
            state.entries = movies.map { TuiState.Entry(movie: $0) }
            state.positions = TuiState.positions(of: state.entries)
            state.collapsing = 0
            reselect(selectedID)
            searchRowsChanged()
            state.lastSeq = seq
            state.model.seq = seq
            clampSelection()
            settleMoves(now)
        }
        if subscribing { send(.subscribe(from: seq), now) }
        if state.model.selected == nil && !state.entries.isEmpty { state.model.selected = 0 }
        // The hint on first use (rule 14): the first row shows it has actions, once a run.
        if options.peekHint && !state.peeked, let first = state.entries.first {
            state.peeked = true
            send(.peek(movie: first.movie.id), now)
        }
    }

    /// The `closed` list of a viewport, configure or close reply: those rows are closed now.
    private mutating func closed(_ ids: [String], _ now: Double) {
        for id in ids {
            state.renders[id] = nil
            state.motions[id]?.retarget(0, spring: Self.settle, at: now)
        }
    }

    private mutating func rowReply(
        _ row: RowRender?, unreadable: String?, fired: TuiFired?, pending: String?, _ now: Double
    ) {
        if let row { apply(row, now) }
        if let unreadable {
            // The gesture happened; only its drawing is missing. Say so and go on.
            say("The daemon sent a row this client cannot read: \(unreadable)", error: true, now)
        }
        if let fired { self.fired(fired, now) }
        if let pending {
            let label =
                state.renders.values.first { $0.phase == .confirming }?.buttons.first?.label ?? pending
            say("Confirm \(pending): click “\(label)” or press Enter within 3 s", now)
        }
    }

    private mutating func fired(_ fired: TuiFired, _ now: Double) {
        if let error = fired.error {
            return say("\(fired.action) did not happen: \(error)", error: true, now)
        }
        if fired.action == BoundAction.delete.rawValue, let seq = fired.seq {
            // The `removed` event may have come first: the entry then collapses already.
            if let entry = state.entries.first(where: { $0.removedSeq == seq }) {
                state.undo = .init(
                    movie: entry.movie.id, title: entry.movie.title, seq: seq, until: now + Self.undoTime)
            } else {
                state.pendingUndo = seq
            }
        }
    }

    private mutating func apply(_ row: RowRender, _ now: Double) {
        let id = row.row
        state.renders[id] = row.phase == .closed && row.offset == 0 ? nil : row
        if !row.buttons.isEmpty && row.offset != 0 {
            state.lastButtons[id] = .init(row.buttons, offset: row.offset)
        }
        // While the finger is down the row follows it at once: a terminal moves in whole
        // columns, and the interactive spring (0.15 s) would only add frames of lag. Once
        // released, the row's spring carries it, as in SwiftUI.
        var motion = state.motions[id] ?? Motion(at: 0)
        let spring =
            row.phase == .dragging
            ? Spring(response: 0, dampingFraction: 1)
            : Spring(response: row.spring.response, dampingFraction: row.spring.dampingFraction)
        motion.retarget(row.spring.target, spring: spring, at: now)
        state.motions[id] = motion
    }

    /// An event from the daemon.
    public mutating func received(_ event: TuiEvent, at now: Double) -> [TuiAction] {
        redraw()
        switch event {
        case .movie(let committed):
            movie(committed, now)
        case .row(let row, let removed, let cancelled):
            if removed {
                state.renders[row.row] = nil
            } else {
                apply(row, now)
            }
            if cancelled == "timeout" { say("Not confirmed within 3 s: nothing happened", now) }
        case .bye(let reason):
            lose("it said bye: \(reason)", now)
            if reason == "revoked" { revoked() }
        case .role(let user, let role):
            roleChanged(user: user, role: role, now)
        case .peerRow(let client, let row, let unreadable, let width, let direction):
            peerRow(client: client, row, unreadable: unreadable, width: width, direction: direction, now)
        case .other:
            break
        }
        return takeActions()
    }

    private mutating func movie(_ committed: CommittedEvent, _ now: Double) {
        guard committed.seq > state.lastSeq ?? 0 else { return }  // already in the list
        state.lastSeq = committed.seq
        state.model.seq = committed.seq
        let movie = committed.movie
        let index = state.positions[movie.id]
        // Said before the list changes: a removal's title is the entry's until it collapses.
        news(committed, now)
        switch committed.kind {
        case MovieEvent.Kind.added:
            if index == nil {
                state.entries.append(.init(movie: movie))
                state.positions[movie.id] = state.entries.count - 1
                searchRowAdded()
            }
        case MovieEvent.Kind.removed:
            if let index {
                state.entries[index].movie = movie
                state.entries[index].removedAt = now
                state.entries[index].removedSeq = committed.seq
                state.positions[movie.id] = nil
                state.collapsing += 1
                state.renders[movie.id] = nil
                searchRowRemoved(index)
            }
            if state.pendingUndo == committed.seq {
                state.pendingUndo = nil
                state.undo = .init(
                    movie: movie.id, title: movie.title, seq: committed.seq, until: now + Self.undoTime)
            }
        case MovieEvent.Kind.restored:
            // Back where the event says (TuiStateMachine+Order.swift).
            restored(movie, to: committed.to, at: index, now)
        case MovieEvent.Kind.moved:
            moved(movie, to: committed.to, at: index, now)
        case MovieEvent.Kind.watchedToggled, MovieEvent.Kind.watchedWithFriendsToggled, .unknown:
            // The kinds that change a movie in place (and any later protocol 1 adds: the list
            // read again shows them as the daemon does).
            if let index { state.entries[index].movie = movie } else { send(.list, now) }
        }
        settleMoves(now)
    }
}

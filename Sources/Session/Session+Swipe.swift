// The ops on this client's own swipe engine, and the engine's effects: timers for the close
// after a full swipe and for a confirmation's timeout, `row` events for rows the server changed,
// and bound actions turned into movie commands.
import Movies
import StoreCore
import SwipeEngine
import Wire

/// What a row's looks take from its movie: the flags its buttons' labels and icons follow.
struct RowData: Equatable {
    var watched: Bool
    var watchedWithFriends: Bool

    /// Different for different flags: stands for them in a row template's key.
    var key: UInt64 { (watched ? 1 : 0) | (watchedWithFriends ? 2 : 0) }

    var flags: RowFlags { MovieLayout.flags(watched: watched, watchedWithFriends: watchedWithFriends) }
}

/// The movie of a client's last gesture: the id it asked for, the stored id, the row's flags,
/// and the seq they were read at.
struct GestureMovie {
    var seq: UInt64
    var asked: String
    var id: RowID
    var data: RowData
}

extension Session {
    func render(_ row: RowID, _ state: borrowing MovieState) -> RowRender {
        let flags = state.movie(row).map {
            RowData(watched: $0.watched, watchedWithFriends: $0.watchedWithFriends).flags
        }
        return list.render(row, flags: flags ?? [])
    }

    /// The `not-found` of `decide` for the same id (`MovieState.notFound`): one code and one
    /// message for a missing movie from every op.
    func notFound(_ movie: String, _ state: borrowing MovieState) -> WireError {
        WireError(StoreError(state.notFound(movie)))
    }

    func viewport(width: Double?, direction: Direction?, id: [UInt8]?, _ sink: inout SessionActions) {
        var viewport = list.viewport
        if let width { viewport.width = width }
        if let direction { viewport.direction = direction }
        let before = list.viewport
        let closed = cancelTimers(list.reconfigure(viewport: viewport), &sink)
        if list.viewport != before { record(.viewport(list.viewport), &sink) }
        noteRowsChanged(closed, &sink)
        replies.send { Encode.viewport(&$0, id: id, viewport: list.viewport, closed: closed) }
    }

    func configure(_ change: LayoutChange, id: [UInt8]?, op: String, _ sink: inout SessionActions) {
        let layout: Layout
        switch Self.makeLayout(change) {
        case .success(let l): layout = l
        case .failure(let error): return reply(id: id, op: op, error: error, &sink)
        }
        let before = list.layout
        let closed = cancelTimers(list.reconfigure(layout: layout), &sink)
        if list.layout != before { record(.configure(list.layout), &sink) }
        noteRowsChanged(closed, &sink)
        replies.send { Encode.layout(&$0, id: id, layout: list.layout, closed: closed) }
    }

    func close(
        _ asked: String?, id: [UInt8]?, op: String, _ state: borrowing MovieState,
        _ sink: inout SessionActions
    ) {
        guard let asked else {
            let closed = cancelTimers(list.close(row: nil), &sink)
            record(.close(movie: nil), &sink)
            noteRowsChanged(closed, &sink)
            return replies.send { Encode.closed(&$0, id: id, closed: closed) }
        }
        guard let movie = state.movie(asked)?.id else {
            return reply(id: id, op: op, error: notFound(asked, state), &sink)
        }
        observeRows(movie, state, &sink)
        record(.close(movie: movie), &sink)
        apply(list.close(row: movie), report: true, state, &sink)
        touchedRow(movie, &sink)
        let row = render(movie, state)
        let form = rowForm
        replies.send { Encode.row(&$0, id: id, row: row, form: form, fired: nil) }
    }

    /// A drag: the common case, 60 to 120 a second per finger, on its own path. A drag never
    /// fires an action (the engine's rules 1, 2, 3 and 8), so it can neither be refused nor need
    /// a commit, and its reply is the row's template filled in with its numbers. `gesture`
    /// answers the same (SessionLanesTests checks it byte for byte); its optionals and tuples
    /// for the firing cases cost a drag about a sixth of its instructions.
    func drag(
        _ asked: String, dx: Double, dy: Double?, id: [UInt8]?, op: String, _ state: borrowing MovieState,
        _ sink: inout SessionActions
    ) {
        guard let (movie, data) = gestureMovie(asked, state) else {
            return reply(id: id, op: op, error: notFound(asked, state), &sink)
        }
        if recordingOn {
            observeRows(movie, state, &sink)
            record(.drag(movie: movie, dx: dx, dy: dy), &sink)
        }
        let (effects, geometry, crossed, scroll) = list.dragThenGeometry(of: movie, dx: dx, dy: dy)
        if !effects.isEmpty { apply(effects, report: true, state, &sink) }
        touchedRow(movie, &sink)
        let form = rowForm
        let template = withList { list in
            rowTemplates.template(
                movie, shape: geometry.shape, dataKey: data.key, form: form, in: list, flags: { data.flags })
        }
        // Rules 12 and 13: a drag that crossed a threshold or scrolls says so after its row.
        guard crossed.isEmpty && !scroll else {
            return replies.send {
                Encode.row(
                    &$0, id: id, template: template, geometry: geometry, crossed: crossed, scroll: scroll)
            }
        }
        replies.send { Encode.row(&$0, id: id, template: template, geometry: geometry) }
    }

    /// Any gesture (drag, release, tap, open, perform) on the general path. A refused input
    /// leaves the row exactly as it was: the engine guarantees it for its own errors (not
    /// revealed); for `forbidden`, decided only once the engine says a bound action fired or now
    /// waits for its confirmation (rule 10: a peer that may not write is refused where the
    /// confirmation would start, not after it), a peer that may not write runs the reducer on a
    /// copy (a writer's list is changed in place: copying it would copy its rows).
    func gesture(
        _ makeInput: (RowID) -> Input, movie asked: String, id: [UInt8]?, op: String,
        _ state: borrowing MovieState, _ sink: inout SessionActions
    ) {
        guard let (movie, data) = gestureMovie(asked, state) else {
            return reply(id: id, op: op, error: notFound(asked, state), &sink)
        }
        let input = makeInput(movie)
        observeRows(movie, state, &sink)
        var copy: SwipeList?
        let outcome: GestureOutcome
        do throws(SwipeError) {
            if mayWrite {
                outcome = try GestureOutcome(applying: input, to: &list)
            } else {
                var list = self.list
                outcome = try GestureOutcome(applying: input, to: &list)
                copy = list
            }
        } catch {
            if let recorded = RecordedInput(gesture: input) { record(recorded, &sink) }
            return reply(id: id, op: op, error: Self.wireError(error), &sink)
        }
        let (effects, fired, pending) = (outcome.effects, outcome.fired, outcome.pending)
        var command = fired.flatMap(BoundAction.init(rawValue:))?.command(movie: movie)
        // A bound action's change is whoever swiped's (issue 46).
        command?.by = identity.user
        if outcome.isBound && !mayWrite { return refuse(needs: .writer, id: id, op: op, &sink) }
        if let copy { list = copy }
        if recordingOn, let recorded = RecordedInput(gesture: input) { record(recorded, &sink) }
        if !effects.isEmpty { apply(effects, report: true, state, &sink) }
        touchedRow(movie, &sink)
        let row = list.render(movie, flags: data.flags)
        let form = rowForm
        let (crossed, scroll) = (outcome.crossed, outcome.scroll)
        if let pending {
            return replies.send {
                Encode.row(
                    &$0, id: id, row: row, form: form, fired: .pending(action: pending), crossed: crossed,
                    scroll: scroll)
            }
        }
        guard let fired else {
            return replies.send {
                Encode.row(&$0, id: id, row: row, form: form, fired: nil, crossed: crossed, scroll: scroll)
            }
        }
        guard let command else {
            sink.append(
                .log(
                    SessionLog(
                        .debug, "custom action fired",
                        [
                            .init("CLIENT", "\(config.client)"), .init("MOVIE", movie),
                            .init("ACTION", fired),
                        ])))
            return replies.send {
                Encode.row(
                    &$0, id: id, row: row, form: form, fired: .custom(action: fired), crossed: crossed,
                    scroll: scroll)
            }
        }
        submit(
            command, .fired(id: id, op: op, row: row, form: form, action: fired, crossed: crossed), &sink)
    }

    static func wireError(_ error: SwipeError) -> WireError { WireError(swipe: error) }

    /// The movie of a gesture's row. A finger sends many drags to one row: the Session keeps
    /// the last one it looked up, good while no event has been committed since (the seq says).
    ///
    /// The row id is the movie's own id as stored, whatever spelling the client used: the state
    /// finds movies by Unicode canonical equivalence, the engine keys rows by exact bytes
    /// (SwipeEngine's RowTable), and a row must be one row however its id was spelled.
    @inline(__always)
    func gestureMovie(_ asked: String, _ state: borrowing MovieState) -> (id: RowID, data: RowData)? {
        let seq = state.lastSeq
        if let memo = gestureMovie, memo.seq == seq, memo.asked == asked { return (memo.id, memo.data) }
        guard let found = state.movie(asked) else { return nil }
        let data = RowData(watched: found.watched, watchedWithFriends: found.watchedWithFriends)
        gestureMovie = GestureMovie(seq: seq, asked: asked, id: found.id, data: data)
        return (found.id, data)
    }

    /// Carries out the engine's effects. `.closed` rows get a `row` event when `report` is set
    /// (the server closed them, not the client's own request). `.fire` is the caller's.
    func apply(_ effects: [Effect], report: Bool, _ state: borrowing MovieState, _ sink: inout SessionActions)
    {
        for effect in effects {
            switch effect {
            case .fire, .pending, .crossed, .scroll:
                break
            case .schedule(.close(let row), let seconds):
                armedRows.insert(row)
                sink.append(.arm(.closeRow(row), microseconds: UInt64(seconds * 1_000_000)))
            case .schedule(.confirmTimeout(let row), let seconds):
                armedConfirms.insert(row)
                sink.append(.arm(.confirmRow(row), microseconds: UInt64(seconds * 1_000_000)))
            case .cancel(let timer):
                cancelTimer(timer, &sink)
            case .closed(let row):
                if report { pushRow(row, state, &sink) }
            }
        }
    }

    /// Carries out the effects of closing rows the client's own request closed (no `row` event:
    /// the reply lists them); returns them.
    func cancelTimers(_ effects: [Effect], _ sink: inout SessionActions) -> [RowID] {
        var closed: [RowID] = []
        for effect in effects {
            switch effect {
            case .closed(let row): closed.append(row)
            case .cancel(let timer): cancelTimer(timer, &sink)
            case .fire, .schedule, .pending, .crossed, .scroll:
                preconditionFailure("client \(config.client): closing rows gave \(effect)")
            }
        }
        return closed
    }

    private func cancelTimer(_ timer: TimerRequest, _ sink: inout SessionActions) {
        switch timer {
        case .close(let row):
            if armedRows.remove(row) != nil { sink.append(.cancel(.closeRow(row))) }
        case .confirmTimeout(let row):
            if armedConfirms.remove(row) != nil { sink.append(.cancel(.confirmRow(row))) }
        }
    }

    /// A `row` event goes in line with the replies (not ahead of them like movie events): a
    /// client applying messages in order must not see a row's close before the reply that fired
    /// it, when that reply still waits for its commit.
    /// `timedOut`: the row closed because its confirmation timed out (rule 10).
    func pushRow(
        _ row: RowID, _ state: borrowing MovieState, _ sink: inout SessionActions, timedOut: Bool = false
    ) {
        touchedRow(row, &sink)
        let render = render(row, state)
        let form = rowForm
        replies.send { Encode.rowEvent(&$0, row: render, form: form, removed: false, timedOut: timedOut) }
    }

    /// `configure`: no arguments is the movie layout; otherwise a whole new layout.
    static func makeLayout(_ change: LayoutChange) -> Result<Layout, WireError> {
        if change.isEmpty { return .success(MovieLayout.standard) }
        let layout = change.layout
        var names = Set<String>()
        for action in layout.leading + layout.trailing where !names.insert(action.action).inserted {
            return .failure(
                .badRequest("action \"\(action.action)\" appears more than once; names must be unique"))
        }
        return .success(layout)
    }
}

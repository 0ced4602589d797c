// The ops on a client's own swipe engine, and the engine's effects: timers for the close after
// a full swipe (sd-event timers), `row` events for rows the server changed, and bound actions
// turned into movie commands.
import Movies
import Store
import SwipeEngine
import Wire

/// What a row's looks take from its movie: the flags its buttons' labels and icons follow.
struct RowData: Equatable {
    var watched: Bool
    var watchedWithFriends: Bool

    /// Different for different flags: stands for them in a row template's key.
    var key: UInt64 { (watched ? 1 : 0) | (watchedWithFriends ? 2 : 0) }
}

/// Actions whose firing runs a movie command (protocol.md, "bound" actions).
enum BoundAction {
    static func command(for action: String, movie: String) -> MovieCommand? {
        switch action {
        case "watched": MovieCommand(.toggleWatched(movie: movie))
        case "watched-with-friends": MovieCommand(.toggleWatchedWithFriends(movie: movie))
        case "delete": MovieCommand(.remove(movie: movie))
        default: nil
        }
    }
}

extension Server {
    func flags(_ movie: Movie) -> RowFlags {
        MovieLayout.flags(watched: movie.watched, watchedWithFriends: movie.watchedWithFriends)
    }

    func flags(_ data: RowData) -> RowFlags {
        MovieLayout.flags(watched: data.watched, watchedWithFriends: data.watchedWithFriends)
    }

    func render(_ c: Connection, _ row: RowID) -> RowRender {
        let movie = store.movie(row)
        return c.list.render(row, flags: movie.map(flags) ?? [])
    }

    func handleSwipe(_ request: Request, id: [UInt8]?, op: String, on c: Connection) {
        switch request {
        case .viewport(let width, let direction):
            var viewport = c.list.viewport
            if let width { viewport.width = width }
            if let direction { viewport.direction = direction }
            let closed = apply(c.list.reconfigure(viewport: viewport), on: c, report: false)
            c.send(reply: { Encode.viewport(&$0, id: id, viewport: c.list.viewport, closed: closed) })
        case .configure(let change):
            let layout: Layout
            switch makeLayout(change) {
            case .success(let l): layout = l
            case .failure(let error): return reply(c, id: id, op: op, error: error)
            }
            let closed = apply(c.list.reconfigure(layout: layout), on: c, report: false)
            c.send(reply: { Encode.layout(&$0, id: id, layout: c.list.layout, closed: closed) })
        case .rows:
            let rows = c.list.openRows.map { render(c, $0) }
            c.send(reply: { Encode.rows(&$0, id: id, rows: rows) })
        case .close(nil):
            let closed = apply((try? c.list.send(.close(row: nil))) ?? [], on: c, report: false)
            c.send(reply: { Encode.closed(&$0, id: id, closed: closed) })
        case .close(let asked?):
            guard let movie = store.movie(asked)?.id else {
                return reply(c, id: id, op: op, error: notFound(asked))
            }
            _ = apply((try? c.list.send(.close(row: movie))) ?? [], on: c, report: true)
            c.send(reply: { [self] in Encode.row(&$0, id: id, row: render(c, movie), fired: nil) })
        case .drag(let movie, let dx):
            drag(movie, dx: dx, id: id, op: op, on: c)
        case .release(let movie, let dx, let vx):
            gesture({ .released(row: $0, dx: dx, vx: vx) }, movie: movie, id: id, op: op, on: c)
        case .tap(let movie, let action):
            gesture({ .tapped(row: $0, action: action) }, movie: movie, id: id, op: op, on: c)
        default:
            reply(c, id: id, op: op, error: WireError(.internal, "op \"\(op)\" is not a swipe op"))
        }
    }

    func notFound(_ movie: String) -> WireError {
        WireError(.notFound, "no movie with id \"\(RequestDecoder.truncated(movie))\"")
    }

    /// A drag: the common case, 60 to 120 a second per finger, on its own path. A drag never
    /// fires an action (the engine's rules 1, 2, 3 and 8), so it can neither be refused nor need
    /// a commit, and its reply is the row's template filled in with its numbers. `gesture` would
    /// answer the same; its optionals and tuples for the firing cases cost a drag about a sixth
    /// of its instructions in copies through type metadata.
    private func drag(_ asked: String, dx: Double, id: [UInt8]?, op: String, on c: Connection) {
        guard let (movie, data) = gestureMovie(asked, on: c) else {
            return reply(c, id: id, op: op, error: notFound(asked))
        }
        let (effects, geometry) = c.withList { $0.dragThenGeometry(of: movie, dx: dx) }
        if !effects.isEmpty { apply(effects, on: c, report: true) }
        let dataKey = data.key
        let template = c.withList { list in
            c.rowTemplates.template(
                movie, shape: geometry.shape, dataKey: dataKey, in: list, flags: { self.flags(data) })
        }
        c.send(reply: { Encode.row(&$0, id: id, template: template, geometry: geometry) })
    }

    /// release, tap (and drag, through `drag`). A refused input leaves the row exactly as it was: the engine
    /// guarantees it for its own errors (not revealed); for `forbidden`, decided only once the
    /// engine says a bound action fired, a peer that may not write runs the reducer on a copy
    /// (a writer's list is changed in place: copying it would copy its rows on every drag).
    private func gesture(
        _ makeInput: (RowID) -> Input, movie asked: String, id: [UInt8]?, op: String, on c: Connection
    ) {
        guard let (movie, data) = gestureMovie(asked, on: c) else {
            return reply(c, id: id, op: op, error: notFound(asked))
        }
        let input = makeInput(movie)
        var copy: SwipeList?
        let effects: [Effect]
        // The row as the input leaves it (the engine's other effects change other rows only).
        let geometry: RowGeometry
        do {
            if c.mayWrite {
                (effects, geometry) = try c.withList { list throws(SwipeError) in
                    try list.send(input, thenGeometryOf: movie)
                }
            } else {
                var list = c.list
                (effects, geometry) = try list.send(input, thenGeometryOf: movie)
                copy = list
            }
        } catch {
            switch error {
            case .notRevealed(_, let action):
                return reply(
                    c, id: id, op: op,
                    error: WireError(
                        .notRevealed,
                        "the \"\(RequestDecoder.truncated(action))\" button is not showing on row \"\(movie)\"; swipe to reveal it first"
                    ))
            case .unknownAction(_, let action):
                return reply(
                    c, id: id, op: op,
                    error: .badRequest(
                        "this client's layout has no action \"\(RequestDecoder.truncated(action))\""))
            }
        }
        var firedAction: String?
        for case .fire(_, let action) in effects { firedAction = action }
        var command: MovieCommand?
        if let firedAction {
            command = BoundAction.command(for: firedAction, movie: movie)
            if command != nil && !c.mayWrite { return reply(c, id: id, op: op, error: forbidden()) }
        }
        if let copy { c.list = copy }
        if !effects.isEmpty { apply(effects, on: c, report: true) }
        guard let firedAction else {
            // The common case, a drag: the row's template, filled in with its numbers.
            let dataKey = data.key
            let template = c.withList { list in
                c.rowTemplates.template(
                    movie, shape: geometry.shape, dataKey: dataKey, in: list, flags: { self.flags(data) })
            }
            return c.send(reply: { Encode.row(&$0, id: id, template: template, geometry: geometry) })
        }
        let row = c.list.render(movie, flags: flags(data))
        guard let command else {
            journal.log(
                .info, "custom action fired",
                [("CLIENT", "\(c.client)"), ("MOVIE", movie), ("ACTION", firedAction)])
            return c.send(reply: { Encode.row(&$0, id: id, row: row, fired: .custom(action: firedAction)) })
        }
        submit(command, from: c, id: id, op: op) { out, result in
            switch result {
            case .success(let event):
                Encode.row(&out, id: id, row: row, fired: .bound(action: firedAction, seq: event.seq))
            case .failure(let error):
                Encode.row(&out, id: id, row: row, fired: .failed(action: firedAction, error: error))
            }
        }
    }

    /// The movie of a gesture's row. A finger sends many drags to one row: the connection keeps
    /// the last one it looked up, good while no event has been committed since (the seq says).
    ///
    /// The row id is the movie's own id as stored, whatever spelling the client used: the store
    /// finds movies by Unicode canonical equivalence, the engine keys rows by exact bytes
    /// (SwipeEngine's RowTable), and a row must be one row however its id was spelled.
    private func gestureMovie(_ asked: String, on c: Connection) -> (id: RowID, data: RowData)? {
        let seq = store.latestSeq
        if let memo = c.gestureMovie, memo.seq == seq, memo.asked == asked { return (memo.id, memo.data) }
        guard let found = store.movie(asked) else { return nil }
        let data = RowData(watched: found.watched, watchedWithFriends: found.watchedWithFriends)
        c.gestureMovie = (seq, asked, found.id, data)
        return (found.id, data)
    }

    /// Carries out the engine's effects. `.closed` rows get a `row` event when `report` is set
    /// (the server closed them, not the client's own request); returns the closed rows.
    @discardableResult
    func apply(_ effects: [Effect], on c: Connection, report: Bool) -> [RowID] {
        var closed: [RowID] = []
        for effect in effects {
            switch effect {
            case .fire:
                break  // handled by the caller, which knows the request
            case .schedule(.close(let row), let seconds):
                schedule(row, after: seconds, on: c)
            case .cancel(.close(let row)):
                c.timers.removeValue(forKey: row)?.cancel()
            case .closed(let row):
                closed.append(row)
                if report { pushRow(c, row, removed: false) }
            }
        }
        return closed
    }

    private func schedule(_ row: RowID, after seconds: Double, on c: Connection) {
        let timer: EventLoop.Timer
        if let existing = c.timers[row] {
            timer = existing
        } else {
            guard
                let made = try? loop.makeTimer(
                    description: "close-row",
                    { [unowned self, unowned c] in
                        closeTimerFired(row, on: c)
                    })
            else {
                journal.log(
                    .err, "cannot create a timer; closing the row now",
                    [("CLIENT", "\(c.client)"), ("MOVIE", row)])
                _ = try? c.list.send(.timerFired(row: row))
                return
            }
            timer = made
            c.timers[row] = timer
        }
        timer.arm(afterMicroseconds: UInt64(seconds * 1_000_000))
    }

    private func closeTimerFired(_ row: RowID, on c: Connection) {
        c.timers.removeValue(forKey: row)?.cancel()
        guard connections[c.client] === c else { return }
        let effects = (try? c.list.send(.timerFired(row: row))) ?? []
        apply(effects, on: c, report: true)
        pushRow(c, row, removed: false)
        afterWork(c)
    }

    /// A `row` event goes in line with the replies (not ahead of them like movie events): a
    /// client applying messages in order must not see a row's close before the reply that
    /// fired it, when that reply still waits for its commit.
    func pushRow(_ c: Connection, _ row: RowID, removed: Bool) {
        let render = render(c, row)
        c.sendInLine { Encode.rowEvent(&$0, row: render, removed: removed) }
    }

    /// A committed event changes what clients' rows show: a removed movie's row is dropped, a
    /// changed movie's row re-renders where it is (rule 9).
    func updateRows(for event: CommittedEvent) {
        let row = event.movie.id
        // Most clients have no row open: `hasOpenRows` answers without hashing the id.
        for c in connections.values where c.withList({ $0.hasOpenRows && $0.state(of: row).phase != .closed })
        {
            if event.kind == MovieEvent.Kind.removed {
                let effects = (try? c.list.send(.rowRemoved(row: row))) ?? []
                apply(effects, on: c, report: true)
                let render = c.list.render(row, flags: [])
                c.sendInLine { Encode.rowEvent(&$0, row: render, removed: true) }
            } else {
                pushRow(c, row, removed: false)
            }
        }
    }

    /// `configure`: no arguments is the movie layout; otherwise a whole new layout.
    private func makeLayout(_ change: LayoutChange) -> Result<Layout, WireError> {
        if change.isEmpty { return .success(MovieLayout.standard) }
        let leading = change.leading ?? []
        let trailing = change.trailing ?? []
        var names = Set<String>()
        for action in leading + trailing where !names.insert(action.action).inserted {
            return .failure(
                .badRequest("action \"\(action.action)\" appears more than once; names must be unique"))
        }
        return .success(
            Layout(
                leading: leading, trailing: trailing,
                allowsFullSwipeLeading: change.allowsFullSwipeLeading ?? true,
                allowsFullSwipeTrailing: change.allowsFullSwipeTrailing ?? true,
                buttonWidth: change.buttonWidth ?? Rules.defaultButtonWidth))
    }
}

// The decisions of `swipectl tui`, as a state machine in swift-nio's style: each fact (a key or
// mouse report, a reply or event from the daemon, the clock reaching a deadline, what came of an
// action) is a `mutating func` that takes the time it happened and returns what to do
// (`TuiAction`: requests to send, a redraw, a reconnect, a recording to save). No I/O and no
// clock: swipectl's TuiApp owns the terminal, the socket and the files, performs the actions and
// reports back. The keys and the mouse are in TuiStateMachine+Input.swift, the daemon's replies
// and events in +Daemon.swift, recording and ghosts in +Sharing.swift.
import Movies
import SwipeEngine

public struct TuiStateMachine: Sendable {
    public static let collapseTime = 0.25
    public static let undoTime = 5.0
    public static let statusTime = 4.0
    public static let backoff: [Double] = [0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 5]
    static let settle = Spring(
        response: Rules.settleSpring.response, dampingFraction: Rules.settleSpring.dampingFraction)

    public let options: TuiOptions
    public internal(set) var state: TuiState
    /// The actions of the fact being handled, handed out when it is done.
    private var actions: [TuiAction] = []

    /// A front end whose first connection is made (not yet greeted).
    public init(_ options: TuiOptions, columns: Int, lines: Int) {
        self.options = options
        state = TuiState(options: options, columns: columns, lines: lines)
    }

    var scale: Double { ScreenLayout.scale(columns: state.columns) }

    mutating func emit(_ action: TuiAction) {
        if action == .redraw && actions.contains(.redraw) { return }
        actions.append(action)
    }

    mutating func redraw() { emit(.redraw) }

    mutating func takeActions() -> [TuiAction] {
        defer { actions = [] }
        return actions
    }

    mutating func say(_ text: String, error: Bool = false, _ now: Double) {
        state.undo = nil
        state.statusIsNews = false
        state.model.status = text
        state.model.statusIsError = error
        state.statusUntil = now + Self.statusTime
        redraw()
    }

    /// Sends `request`, or says why it cannot.
    mutating func send(_ request: TuiRequest, _ now: Double) {
        guard state.connected else { return say("Not connected: reconnecting…", error: true, now) }
        emit(.send(request))
    }

    // MARK: - Frames and time

    /// The screen at `now`.
    public mutating func frame(at now: Double) -> Grid {
        var rows: [RowView] = []
        var ghosts: [String: [Ghost]] = [:]
        let width = ScreenLayout.viewportWidth(columns: state.columns)
        for client in state.peers.keys.sorted() {
            let peer = state.peers[client]!
            for movie in peer.rows.keys.sorted() {
                ghosts[movie, default: []].append(
                    Ghost(
                        client: client, row: peer.rows[movie]!, sharerWidth: peer.width,
                        sharerDirection: peer.direction, width: width, direction: options.direction))
            }
        }
        // Only the rows on screen are made: a frame costs the same for 10 rows or 100,000.
        let room = state.lines - ScreenLayout.headerLines - ScreenLayout.footerLines
        let first = min(max(0, state.model.scroll), state.entries.count)
        var line = 0
        for entry in state.entries[first...] {
            guard line < room else { break }
            let id = entry.movie.id
            let render = state.renders[id]
            let offset = state.motions[id]?.state(at: now).position ?? 0
            var buttons = render?.buttons ?? []
            var buttonsOffset = render?.offset ?? 0
            if buttons.isEmpty || buttonsOffset == 0, let last = state.lastButtons[id] {
                (buttons, buttonsOffset) = (last.buttons, last.offset)
            }
            let height = entry.removedAt.map { max(0, 1 - (now - $0) / Self.collapseTime) } ?? 1
            line += ScreenLayout.lines(height: height)
            rows.append(
                RowView(
                    id: id, title: entry.movie.title, image: entry.movie.image, watched: entry.movie.watched,
                    watchedWithFriends: entry.movie.watchedWithFriends, offset: offset, buttons: buttons,
                    buttonsOffset: buttonsOffset, phase: render?.phase ?? .closed, height: height,
                    ghosts: ghosts[id] ?? []))
        }
        state.model.rows = rows
        state.model.firstRow = first
        state.model.search = searchLine
        state.model.dragged = state.grip.flatMap { state.positions[$0.movie] }
        state.model.drop = dropGap
        if let undo = state.undo, now < undo.until {
            state.model.status =
                undo.by == .me
                ? "Deleted “\(undo.title)” — press u to undo"
                : "\(undo.by.subject) removed “\(undo.title)” — press u to undo"
            state.model.statusIsError = false
        } else if let until = state.statusUntil, now >= until {
            state.model.status = nil
            state.statusUntil = nil
        }
        return ScreenLayout.render(state.model, width: state.columns, height: state.lines)
    }

    /// Whether anything moves at `now` (frames are then drawn at up to 60 per second).
    public func isAnimating(at now: Double) -> Bool {
        state.motions.values.contains { $0.isMoving(at: now) }
            || state.collapsing > 0
    }

    /// When the front end must wake up without input: the end of the undo hint or of a
    /// message, the next reconnect attempt. nil: never (an idle front end sleeps until input).
    public func nextDeadline() -> Double? {
        [state.undo?.until, state.statusUntil, state.reconnectAt].compactMap { $0 }.min()
    }

    /// Time passes: collapsed rows go, hints end, a reconnect is due.
    public mutating func tick(at now: Double) -> [TuiAction] {
        // Only when rows collapse: a tick comes with every key, and must not cost a look
        // through every entry.
        let before = state.entries.count
        let selectedID = selectedEntryID
        if state.collapsing > 0 {
            state.entries.removeAll { entry in entry.removedAt.map { now - $0 >= Self.collapseTime } ?? false
            }
            state.collapsing -= before - state.entries.count
        }
        if state.entries.count != before {
            state.positions = TuiState.positions(of: state.entries)
            reselect(selectedID)
            searchRowsChanged()
            for id in state.motions.keys where !state.entries.contains(where: { $0.movie.id == id }) {
                state.motions[id] = nil
                state.renders[id] = nil
                state.lastButtons[id] = nil
            }
            clampSelection()
            redraw()
        }
        for (id, motion) in state.motions where !motion.isMoving(at: now) && state.renders[id] == nil {
            state.lastButtons[id] = nil
        }
        if let undo = state.undo, now >= undo.until {
            state.undo = nil
            state.model.status = nil
            redraw()
        }
        if let until = state.statusUntil, now >= until {
            state.statusUntil = nil
            state.model.status = nil
            redraw()
        }
        if let at = state.reconnectAt, now >= at {
            state.reconnectAt = nil
            emit(.connect)
        }
        return takeActions()
    }

    // MARK: - The terminal

    public mutating func resized(columns: Int, lines: Int, at now: Double) -> [TuiAction] {
        let widthChanged = columns != state.columns
        state.columns = columns
        state.lines = lines
        keepSelectionVisible()
        redraw()
        if widthChanged { sendViewport(now) }
        return takeActions()
    }

    mutating func sendViewport(_ now: Double) {
        send(
            .viewport(
                width: ScreenLayout.viewportWidth(columns: state.columns), direction: options.direction),
            now)
    }

    // MARK: - Selection

    var selectedMovie: String? {
        guard let i = state.model.selected, i < state.entries.count, state.entries[i].removedAt == nil else {
            return nil
        }
        return state.entries[i].movie.id
    }

    /// The selected row's movie, to keep it selected when rows before it come or go.
    var selectedEntryID: String? {
        guard let i = state.model.selected, i < state.entries.count else { return nil }
        return state.entries[i].movie.id
    }

    mutating func select(by delta: Int) {
        guard !state.entries.isEmpty else { return }
        select(to: (state.model.selected ?? (delta > 0 ? -1 : state.entries.count)) + delta)
    }

    mutating func select(to index: Int) {
        guard !state.entries.isEmpty else { return }
        state.model.selected = max(0, min(state.entries.count - 1, index))
        keepSelectionVisible()
    }

    mutating func reselect(_ id: String?) {
        if let id, let index = state.entries.firstIndex(where: { $0.movie.id == id }) {
            state.model.selected = index
        }
    }

    mutating func clampSelection() {
        if let s = state.model.selected {
            state.model.selected = state.entries.isEmpty ? nil : min(s, state.entries.count - 1)
        }
        keepSelectionVisible()
    }

    mutating func keepSelectionVisible() {
        let visible = ScreenLayout.visibleRows(lines: state.lines)
        state.model.scroll = max(0, min(state.model.scroll, state.entries.count - visible))
        guard let s = state.model.selected else { return }
        if s < state.model.scroll { state.model.scroll = s }
        if s >= state.model.scroll + visible { state.model.scroll = s - visible + 1 }
    }

    mutating func scroll(by delta: Int) {
        let visible = ScreenLayout.visibleRows(lines: state.lines)
        state.model.scroll = max(0, min(state.model.scroll + delta, state.entries.count - visible))
    }
}

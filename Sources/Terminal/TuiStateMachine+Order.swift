// The order of the list (issue 48): Shift+↑ ↓ (and K J) move the selected row one place, a
// drag on a row's grip moves it to where it is let go, and anyone's `moved` event moves a row at
// once, as a `restored` event puts a movie back where it says.
//
// A row moves when its event arrives, never before: the list changes only by the daemon's
// events, in seq order, which is what keeps every front end's order the daemon's
// (protocol.md, "List order"); a move applied ahead of its turn could put a row after another
// that an earlier event moved meanwhile. On a local socket the event comes within a
// millisecond. Keys pressed while a move of the row is on its way are not sent at once (each
// would carry the version the row shows, which that move is about to change): they add up, and
// go as one move from where the row then is.
import Movies

extension TuiStateMachine {
    // MARK: - Asking

    /// Shift+↑ (`steps` −1) or Shift+↓ (+1), K or J: the selected row, that many rows up or down.
    mutating func moveSelected(by steps: Int, _ now: Double) {
        guard let movie = selectedMovie else { return say("Select a row first (↑ ↓)", now) }
        requestMove(movie, by: steps, now)
    }

    /// The press on a row's grip (`index`, a row in the list): it is selected and held.
    mutating func gripPressed(_ index: Int) {
        state.press = nil
        state.model.selected = index
        state.grip = TuiState.Grip(movie: state.entries[index].movie.id, target: index)
    }

    /// The pointer, its button held on a grip, on line `y`: the row under it is where the held
    /// row would go. Above the list or below it, the list scrolls a row toward it (a row a
    /// report), and the row at that edge is the target; below the last row, the last.
    mutating func gripDragged(toLine y: Int) {
        guard var grip = state.grip else { return }
        let visible = ScreenLayout.visibleRows(lines: state.lines)
        if y < ScreenLayout.headerLines {
            scroll(by: -1)
            grip.target = state.model.scroll
        } else if y >= state.lines - ScreenLayout.footerLines {
            scroll(by: 1)
            grip.target = min(state.entries.count, state.model.scroll + visible) - 1
        } else {
            grip.target =
                ScreenLayout.row(at: y, state.model, height: state.lines) ?? state.entries.count - 1
        }
        state.grip = grip
    }

    /// The button let go: the held row moves to its target's place, by the live rows between.
    mutating func gripReleased(_ now: Double) {
        guard let grip = state.grip else { return }
        state.grip = nil
        // Gone meanwhile (removed by someone), or let go where it was: nothing to do.
        guard let from = state.positions[grip.movie] else { return }
        let target = max(0, min(grip.target, state.entries.count - 1))
        guard target != from else { return }
        let between = target > from ? (from + 1)...target : target...(from - 1)
        let live = between.count { state.entries[$0].removedAt == nil }
        guard live > 0 else { return }
        requestMove(grip.movie, by: target > from ? live : -live, now)
    }

    /// Where the held row would go, as the frame marks it: before the row at this index.
    var dropGap: Int? {
        guard let grip = state.grip, let from = state.positions[grip.movie] else { return nil }
        let target = max(0, min(grip.target, state.entries.count - 1))
        return target > from ? target + 1 : target < from ? target : nil
    }

    /// Moves `movie` by `steps` live rows, now, or once the move of it on its way has arrived.
    private mutating func requestMove(_ movie: String, by steps: Int, _ now: Double) {
        if var move = state.moves[movie] {
            move.steps += steps
            state.moves[movie] = move
            return
        }
        sendMove(movie, by: steps, now)
    }

    /// Sends the move of `movie` by `steps` live rows from where it is (as far as the list goes),
    /// with the version its row shows; says so when it is at that end already.
    private mutating func sendMove(_ movie: String, by steps: Int, _ now: Double) {
        guard let from = state.positions[movie], steps != 0 else { return }
        let entry = state.entries[from].movie
        // The live row `steps` away (the farthest there is, at an end of the list).
        var reached: Int?
        var left = abs(steps)
        var i = from + steps.signum()
        while left > 0 && state.entries.indices.contains(i) {
            if state.entries[i].removedAt == nil {
                reached = i
                left -= 1
            }
            i += steps.signum()
        }
        guard let reached else {
            return say("“\(entry.title)” is already \(steps > 0 ? "last" : "first")", now)
        }
        // Down: right after the row reached; up: right after the live row before it.
        var after: String?
        if steps > 0 {
            after = state.entries[reached].movie.id
        } else if let before = state.entries[..<reached].lastIndex(where: { $0.removedAt == nil }) {
            after = state.entries[before].movie.id
        }
        guard state.connected else { return say("Not connected: reconnecting…", error: true, now) }
        state.moves[movie] = TuiState.Move()
        send(.move(movie: movie, after: after, expect: entry.version), now)
    }

    // MARK: - Answers

    /// `move`'s reply. Done: its seq, whose event ends the move (it may have come already).
    /// Refused (a conflict, a movie gone): said, and the keys that waited for it go too.
    mutating func moveAnswered(_ movie: String, _ reply: TuiReply, _ now: Double) {
        switch reply {
        case .moved(let seq):
            guard state.moves[movie] != nil else { return }
            state.moves[movie]?.seq = seq
            settleMoves(now)
        case .refused(_, let message):
            state.moves[movie] = nil
            say(message, error: true, now)
        case .unreadable(let why):
            state.moves[movie] = nil
            say("The daemon sent a reply this client cannot read: \(why)", error: true, now)
        case .forbidden, .signedIn, .list, .closed, .row, .recording, .peers, .ok:
            // swipectl decodes a move's reply as one of the three (`.forbidden` is made a
            // refusal before).
            preconditionFailure("a \(reply) reply to a move")
        }
    }

    /// Ends the moves whose event the list has seen (by its event, or a list read since), and
    /// sends what the keys asked for meanwhile.
    mutating func settleMoves(_ now: Double) {
        guard let lastSeq = state.lastSeq else { return }
        for (movie, move) in state.moves.sorted(by: { $0.key < $1.key }) {
            guard let seq = move.seq, seq <= lastSeq else { continue }
            state.moves[movie] = nil
            if move.steps != 0 { sendMove(movie, by: move.steps, now) }
        }
    }

    // MARK: - Events

    /// A `moved` event: the row goes right after the movie it names (first for none), from
    /// wherever it is; a movie or a place this list does not know reads the list again.
    mutating func moved(_ movie: Movie, to place: ListPlace?, at index: Int?, _ now: Double) {
        guard let index, let place, let target = slot(place, without: index) else {
            return send(.list, now)
        }
        state.entries[index].movie = movie
        relocate(from: index, to: target)
    }

    /// A `restored` event that says where (a daemon since issue 48): the movie goes back there
    /// at once. Without a place, or while its removal still collapses on screen, the list is
    /// read again, as before.
    mutating func restored(_ movie: Movie, to place: ListPlace?, at index: Int?, _ now: Double) {
        let collapsing = state.collapsing > 0 && state.entries.contains { $0.movie.id == movie.id }
        guard index == nil, !collapsing, let place, let target = slot(place, without: nil) else {
            return send(.list, now)
        }
        state.entries.insert(TuiState.Entry(movie: movie), at: target)
        entriesChanged(from: state.entries.count - 1, to: target)
    }

    /// The index a row gets when it goes to `place`, counted without the entry at `without`
    /// (the row itself, when it moves); nil when `place` names a movie not in the list.
    private func slot(_ place: ListPlace, without: Int?) -> Int? {
        switch place {
        case .first: return 0
        case .after(let other):
            guard let a = state.positions[other], a != without else { return nil }
            return without.map { a < $0 ? a + 1 : a } ?? a + 1
        }
    }

    /// Moves the entry at `i` to `t`, the entries between one place over.
    private mutating func relocate(from i: Int, to t: Int) {
        guard i != t else { return }
        let entry = state.entries.remove(at: i)
        state.entries.insert(entry, at: t)
        entriesChanged(from: i, to: t)
    }

    /// The entry at `i` is now at `t`, those between one place over (an entry inserted at `t`:
    /// `i` is the new last index, past every other): where each row is, the selection (which
    /// stays on its movie), the view (the rows above it keep their number, so that the rows in
    /// view stay in place unless the moved row comes or goes among them) and the search's
    /// matches follow.
    private mutating func entriesChanged(from i: Int, to t: Int) {
        func shifted(_ k: Int) -> Int {
            if k == i { return t }
            if i < t && k > i && k <= t { return k - 1 }
            if t < i && k >= t && k < i { return k + 1 }
            return k
        }
        for k in min(i, t)...max(i, t) where state.entries[k].removedAt == nil {
            state.positions[state.entries[k].movie.id] = k
        }
        state.model.selected = state.model.selected.map(shifted)
        var scroll = state.model.scroll
        if i < scroll { scroll -= 1 }
        if t < scroll { scroll += 1 }
        state.model.scroll = scroll
        if var search = state.search {
            let mine = Self.matches(search.text, in: state.entries, among: [t])
            search.matches = (search.matches.filter { $0 != i }.map(shifted) + mine).sorted()
            search.origin = shifted(search.origin)
            state.search = search
        }
        keepSelectionVisible()
    }
}

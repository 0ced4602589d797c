// What the keys and the mouse do (the `?` help lists the keys: ScreenLayout.helpLines).
import Movies
import SwipeEngine

extension TuiStateMachine {
    public mutating func input(_ event: InputEvent, at now: Double) -> [TuiAction] {
        handle(event, now)
        return takeActions()
    }

    private mutating func handle(_ event: InputEvent, _ now: Double) {
        redraw()
        if case .modeReport(mode: 2026, let value) = event {
            state.synchronizedOutput = (1...3).contains(value)
            return
        }
        if state.model.help {
            if case .mouse(let m) = event, case .motion = m.kind { return }
            state.model.help = false
            return
        }
        if state.model.prompt != nil {
            prompt(event, now)
            return
        }
        if state.search?.typing == true {
            if case .key(let key) = event { return searchKey(key, now) }
            // Typing a search, the keys that would change the list do nothing.
            if case .shift = event { return }
        }
        switch event {
        case .mouse(let mouse): self.mouse(mouse, now)
        case .key(let key): self.key(key, now)
        case .shift(.up): moveSelected(by: -1, now)
        case .shift(.down): moveSelected(by: 1, now)
        case .shift, .modeReport, .alt, .unknown: break
        }
    }

    private mutating func key(_ key: Key, _ now: Double) {
        switch key {
        case .character("q"), .control("c"): emit(.quit)
        case .up, .character("k"): select(by: -1)
        case .down, .character("j"): select(by: 1)
        case .character("K"): moveSelected(by: -1, now)
        case .character("J"): moveSelected(by: 1, now)
        case .pageUp: select(by: -ScreenLayout.visibleRows(lines: state.lines))
        case .pageDown: select(by: ScreenLayout.visibleRows(lines: state.lines))
        case .home: select(to: 0)
        case .end: select(to: state.entries.count - 1)
        case .left, .character("h"): arrow(right: false, now)
        case .right, .character("l"): arrow(right: true, now)
        case .enter: fireOutermost(now)
        case .character("w"): perform(BoundAction.watched.rawValue, now)
        case .character("f"): perform(BoundAction.watchedWithFriends.rawValue, now)
        case .character("d"): perform(BoundAction.delete.rawValue, now)
        case .character("u"): restore(now)
        case .character("a"): state.model.prompt = ""
        case .character("?"): state.model.help = true
        case .character("r"): toggleRecording(now)
        case .character("s"): send(.share(on: !state.sharing, quiet: false), now)
        case .character("g"): send(.peers(watch: !state.watching, quiet: false), now)
        case .character("c"):
            send(
                .configure(confirmDelete: !state.confirmDelete, quiet: false, style: state.fullSwipeStyle),
                now)
        case .character("F"): nextFullSwipeStyle(now)
        case .character("/"): startSearch()
        case .character("n"): nextMatch(forward: true, now)
        case .character("N"): nextMatch(forward: false, now)
        case .escape:
            // Escape ends a search first; then it closes the rows.
            if state.search != nil { state.search = nil } else { closeAll(now) }
        case .character, .control, .tab, .backspace, .insert, .delete, .function: break
        }
    }

    /// The add prompt: a line of text, Enter adds it, Esc cancels.
    private mutating func prompt(_ event: InputEvent, _ now: Double) {
        guard case .key(let key) = event, var text = state.model.prompt else { return }
        switch key {
        case .escape, .control("c"):
            state.model.prompt = nil
        case .enter:
            state.model.prompt = nil
            let title = text.trimmingSpaces
            guard !title.isEmpty else { return }
            send(.add(title: title), now)
        case .backspace:
            if !text.isEmpty { text.removeLast() }
            state.model.prompt = text
        case .control("u"):
            state.model.prompt = ""
        case .character(let scalar):
            if text.unicodeScalars.count < 200 { text.unicodeScalars.append(scalar) }
            state.model.prompt = text
        case .up, .down, .left, .right, .home, .end, .pageUp, .pageDown, .insert, .delete, .tab, .control,
            .function:
            break
        }
    }

    private mutating func mouse(_ mouse: MouseEvent, _ now: Double) {
        switch mouse.kind {
        case .press(button: 0):
            let hit = ScreenLayout.hit(
                state.model, width: state.columns, height: state.lines, x: mouse.column, y: mouse.line)
            state.grip = nil
            if case .grip(let index) = hit, state.entries[index].removedAt == nil {
                return gripPressed(index)
            }
            guard case .row(let index, let button) = hit, state.entries[index].removedAt == nil else {
                state.press = nil
                return
            }
            state.model.selected = index
            state.press = TuiState.Press(
                movie: state.entries[index].movie.id, column: mouse.column, button: button)
        case .motion(button: 0):
            if state.grip != nil { return gripDragged(toLine: mouse.line) }
            guard var p = state.press else { return }
            let dx = Double(mouse.column - p.column) * scale
            guard dx != p.lastDX else { return }
            p.dragged = true
            p.lastDX = dx
            p.samples.append(.init(time: now, dx: dx))
            p.samples.removeAll { now - $0.time > 0.2 }
            state.press = p
            send(.drag(movie: p.movie, dx: dx), now)
        case .release(button: 0):
            if state.grip != nil { return gripReleased(now) }
            guard let p = state.press else { return }
            state.press = nil
            if p.dragged {
                // vx: the motion of the last ~100 ms; none when the finger rested before letting go.
                let recent = p.samples.filter { now - $0.time <= 0.1 }
                var vx = 0.0
                if let first = recent.first, let last = recent.last, last.time > first.time {
                    vx = (last.dx - first.dx) / (last.time - first.time)
                }
                send(.release(movie: p.movie, vx: vx), now)
            } else if let action = p.button {
                send(.tap(movie: p.movie, action: action), now)
            } else {
                closeAll(now)
            }
        case .wheelUp: scroll(by: -1)
        case .wheelDown: scroll(by: 1)
        case .press, .motion, .release: break
        }
    }

    // MARK: - Keyboard actions

    /// ← and →: open the buttons on that side (trailing on the right in ltr, leading in rtl), or
    /// close a row open on the other side.
    private mutating func arrow(right: Bool, _ now: Double) {
        guard let movie = selectedMovie else { return say("Select a row first (↑ ↓)", now) }
        let offset = restingOffset(movie)
        if (right && offset < 0) || (!right && offset > 0) {
            return send(.close(movie: movie), now)
        }
        // → moves the content right and reveals the left side's buttons.
        let leftSide: Edge = options.direction == .ltr ? .leading : .trailing
        let edge = right ? leftSide : (leftSide == .leading ? .trailing : .leading)
        send(.open(movie: movie, edge: edge), now)
    }

    /// Enter: the outermost showing button of the selected row (its confirmation when it asks).
    private mutating func fireOutermost(_ now: Double) {
        guard let movie = selectedMovie else { return say("Select a row first (↑ ↓)", now) }
        guard let render = state.renders[movie], !render.buttons.isEmpty, restingOffset(movie) != 0 else {
            return say("Open the row first (← →), or press w, f or d", now)
        }
        let button = render.offset < 0 ? render.buttons.last! : render.buttons.first!
        send(.tap(movie: movie, action: button.action), now)
    }

    private mutating func perform(_ action: String, _ now: Double) {
        guard let movie = selectedMovie else { return say("Select a row first (↑ ↓)", now) }
        send(.perform(movie: movie, action: action), now)
    }

    private mutating func restore(_ now: Double) {
        guard let undo = state.undo, now < undo.until else { return say("Nothing to undo", now) }
        state.undo = nil
        state.model.status = nil
        send(.restore(movie: undo.movie, expect: undo.seq, title: undo.title, removedBy: undo.by), now)
    }

    mutating func closeAll(_ now: Double) {
        guard state.renders.values.contains(where: { $0.phase != .closed }) else { return }
        send(.closeAll, now)
    }
}

extension String {
    fileprivate var trimmingSpaces: String {
        var s = Substring(self)
        while s.first?.isWhitespace == true { s.removeFirst() }
        while s.last?.isWhitespace == true { s.removeLast() }
        return String(s)
    }
}

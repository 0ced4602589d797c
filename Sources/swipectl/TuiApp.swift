// The state of `swipectl tui` and what each input, reply and event does to it. No waiting and
// no terminal here: the loop (Tui.swift) feeds it events with the time they happened, and asks
// it for a frame and for when it next needs to wake up.
import JSONCodec
import Movies
import SwipeEngine
import SwipedClient
import Terminal
import Wire

final class TuiApp {
    struct Options {
        var socket: String
        var ascii = false
        var direction: Direction = .ltr
        var trueColor = false
        /// Where `r` saves recordings.
        var recordDirectory = "."
    }

    /// A movie in list order; `removedAt`: when its removal arrived (it collapses, then goes),
    /// `removedSeq`: that removal's seq.
    private struct Entry {
        var movie: Movie
        var removedAt: Double?
        var removedSeq: UInt64?
    }

    /// What a request was for, to know what to do with its reply.
    private enum Request {
        case list, subscribe, viewport, options
        case row(String)
        case closeAll
        case add(String)
        case restore(title: String)
        case record(on: Bool)
        case recording
        /// `quiet`: asked again on a new connection, not by a key (the reconnect says its say).
        case share(on: Bool, quiet: Bool)
        case peers(watch: Bool, quiet: Bool)
    }

    /// A sharing connection's rows that are not closed, as its `peer-row` events left them.
    private struct Peer {
        var width: Double
        var direction: Direction = .ltr
        var rows: [String: RowRender] = [:]
    }

    /// A finger (the mouse button) down on a row.
    private struct Press {
        var movie: String
        var column: Int
        var button: String?
        var dragged = false
        var lastDX = 0.0
        var samples: [(time: Double, dx: Double)] = []
    }

    static let collapseTime = 0.25
    static let undoTime = 5.0
    static let statusTime = 4.0
    static let backoff: [Double] = [0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 5]

    let options: Options
    private(set) var model: ScreenModel
    private(set) var columns: Int
    private(set) var lines: Int
    private(set) var connection: StreamConnection?
    /// Set by `q`, Ctrl-C, or a signal: the loop restores the terminal and exits.
    var quit = false
    /// A change the next frame must show (besides motion).
    var dirty = true
    /// Whether the terminal said it knows synchronized output (mode 2026): frames are then
    /// wrapped in it, so that it shows each one whole.
    private(set) var synchronizedOutput = false

    private var entries: [Entry] = []
    private var renders: [String: RowRender] = [:]
    /// The last buttons a row showed and the offset they were for: a closing row keeps drawing
    /// them while it slides back.
    private var lastButtons: [String: ([ButtonRender], Double)] = [:]
    private var motions: [String: Motion] = [:]
    private var requests: [Int: Request] = [:]
    /// The seq of the last event applied (nil until the first list).
    private var lastSeq: UInt64?
    private var press: Press?
    private var undo: (movie: String, title: String, seq: UInt64, until: Double)?
    private var statusUntil: Double?
    private var attempt = 0
    private var reconnectAt: Double?
    /// While recording: the lines with a row this connection received since `record` said on
    /// (the rows a replay of the recording must give); then, until it is saved, those up to
    /// the `record` that stopped it.
    private var transcript: [String]?
    private var recordedRows: [String] = []
    /// Whether a `record` or `recording` is on its way (`r` waits for it).
    private var recordBusy = false
    /// What the person asked for with `s` and `g`; sent again on a new connection.
    private var sharing = false
    private var watching = false
    private var peers: [Int: Peer] = [:]

    init(_ options: Options, connection: StreamConnection, columns: Int, lines: Int) {
        self.options = options
        self.connection = connection
        self.columns = columns
        self.lines = lines
        model = ScreenModel(daemon: options.socket)
        model.ascii = options.ascii
        model.direction = options.direction
        model.trueColor = options.trueColor
    }

    private var scale: Double { ScreenLayout.scale(columns: columns) }

    // MARK: - Frames and time

    /// The screen at `now`.
    func frame(at now: Double) -> Grid {
        var rows: [RowView] = []
        var ghosts: [String: [Ghost]] = [:]
        let width = ScreenLayout.viewportWidth(columns: columns)
        for client in peers.keys.sorted() {
            let peer = peers[client]!
            for movie in peer.rows.keys.sorted() {
                ghosts[movie, default: []].append(
                    Ghost(
                        client: client, row: peer.rows[movie]!, sharerWidth: peer.width,
                        sharerDirection: peer.direction, width: width, direction: options.direction))
            }
        }
        for entry in entries {
            let id = entry.movie.id
            let render = renders[id]
            let offset = motions[id]?.state(at: now).position ?? 0
            var buttons = render?.buttons ?? []
            var buttonsOffset = render?.offset ?? 0
            if buttons.isEmpty || buttonsOffset == 0, let last = lastButtons[id] {
                (buttons, buttonsOffset) = last
            }
            let height = entry.removedAt.map { max(0, 1 - (now - $0) / Self.collapseTime) } ?? 1
            rows.append(
                RowView(
                    id: id, title: entry.movie.title, watched: entry.movie.watched,
                    watchedWithFriends: entry.movie.watchedWithFriends, offset: offset, buttons: buttons,
                    buttonsOffset: buttonsOffset, phase: render?.phase ?? .closed, height: height,
                    ghosts: ghosts[id] ?? []))
        }
        model.rows = rows
        if let undo, now < undo.until {
            model.status = "Deleted “\(undo.title)” — press u to undo"
            model.statusIsError = false
        } else if let until = statusUntil, now >= until {
            model.status = nil
            statusUntil = nil
        }
        return ScreenLayout.render(model, width: columns, height: lines)
    }

    /// Whether anything moves at `now` (frames are then drawn at up to 60 per second).
    func isAnimating(at now: Double) -> Bool {
        motions.values.contains { $0.isMoving(at: now) } || entries.contains { $0.removedAt != nil }
    }

    /// When the app must wake up without input: the end of the undo hint or of a message, the
    /// next reconnect attempt. nil: never (an idle front end sleeps until input arrives).
    func nextDeadline() -> Double? {
        [undo?.until, statusUntil, reconnectAt].compactMap { $0 }.min()
    }

    /// Time passes: collapsed rows go, hints end, a reconnect is due.
    func tick(_ now: Double) {
        let before = entries.count
        let selectedID = selectedEntryID
        entries.removeAll { entry in entry.removedAt.map { now - $0 >= Self.collapseTime } ?? false }
        if entries.count != before {
            reselect(selectedID)
            for id in motions.keys where !entries.contains(where: { $0.movie.id == id }) {
                motions[id] = nil
                renders[id] = nil
                lastButtons[id] = nil
            }
            clampSelection()
            dirty = true
        }
        for (id, motion) in motions where !motion.isMoving(at: now) && renders[id] == nil {
            lastButtons[id] = nil
        }
        if let undo, now >= undo.until {
            self.undo = nil
            model.status = nil
            dirty = true
        }
        if let until = statusUntil, now >= until {
            statusUntil = nil
            model.status = nil
            dirty = true
        }
        if let at = reconnectAt, now >= at {
            reconnectAt = nil
            connect(now)
        }
    }

    private func say(_ text: String, error: Bool = false, _ now: Double) {
        undo = nil
        model.status = text
        model.statusIsError = error
        statusUntil = now + Self.statusTime
        dirty = true
    }

    // MARK: - The terminal

    func resized(columns: Int, lines: Int, _ now: Double) {
        let widthChanged = columns != self.columns
        self.columns = columns
        self.lines = lines
        keepSelectionVisible()
        dirty = true
        if widthChanged { sendViewport(now) }
    }

    func input(_ event: InputEvent, _ now: Double) {
        dirty = true
        if case .modeReport(mode: 2026, let value) = event {
            synchronizedOutput = (1...3).contains(value)
            return
        }
        if model.help {
            if case .mouse(let m) = event, case .motion = m.kind { return }
            model.help = false
            return
        }
        if model.prompt != nil {
            prompt(event, now)
            return
        }
        switch event {
        case .mouse(let mouse): self.mouse(mouse, now)
        case .key(let key): self.key(key, now)
        case .modeReport, .alt, .unknown: break
        }
    }

    private func key(_ key: Key, _ now: Double) {
        switch key {
        case .character("q"), .control("c"): quit = true
        case .up, .character("k"): select(by: -1)
        case .down, .character("j"): select(by: 1)
        case .pageUp: select(by: -ScreenLayout.visibleRows(lines: lines))
        case .pageDown: select(by: ScreenLayout.visibleRows(lines: lines))
        case .home: select(to: 0)
        case .end: select(to: entries.count - 1)
        case .left, .character("h"): arrow(right: false, now)
        case .right, .character("l"): arrow(right: true, now)
        case .enter: fireOutermost(now)
        case .character("w"): perform("watched", now)
        case .character("f"): perform("watched-with-friends", now)
        case .character("d"): perform("delete", now)
        case .character("u"): restore(now)
        case .character("a"): model.prompt = ""
        case .character("?"): model.help = true
        case .character("r"): toggleRecording(now)
        case .character("s"):
            send("share", [("on", .bool(!sharing))], .share(on: !sharing, quiet: false), now)
        case .character("g"):
            send("peers", [("watch", .bool(!watching))], .peers(watch: !watching, quiet: false), now)
        case .escape: closeAll(now)
        default: break
        }
    }

    private func prompt(_ event: InputEvent, _ now: Double) {
        guard case .key(let key) = event, var text = model.prompt else { return }
        switch key {
        case .escape, .control("c"):
            model.prompt = nil
        case .enter:
            model.prompt = nil
            let title = text.trimmingSpaces
            guard !title.isEmpty else { return }
            send("add", [("title", .string(title))], .add(title), now)
        case .backspace:
            if !text.isEmpty { text.removeLast() }
            model.prompt = text
        case .control("u"):
            model.prompt = ""
        case .character(let scalar):
            if text.unicodeScalars.count < 200 { text.unicodeScalars.append(scalar) }
            model.prompt = text
        default: break
        }
    }

    private func mouse(_ mouse: MouseEvent, _ now: Double) {
        switch mouse.kind {
        case .press(button: 0):
            let hit = ScreenLayout.hit(model, width: columns, height: lines, x: mouse.column, y: mouse.line)
            guard case .row(let index, let button) = hit, entries[index].removedAt == nil else {
                press = nil
                return
            }
            model.selected = index
            press = Press(movie: entries[index].movie.id, column: mouse.column, button: button)
        case .motion(button: 0):
            guard var p = press else { return }
            let dx = Double(mouse.column - p.column) * scale
            guard dx != p.lastDX else { return }
            p.dragged = true
            p.lastDX = dx
            p.samples.append((now, dx))
            p.samples.removeAll { now - $0.time > 0.2 }
            press = p
            send("drag", [("movie", .string(p.movie)), ("dx", .number(JSONNumber(dx)))], .row(p.movie), now)
        case .release(button: 0):
            guard let p = press else { return }
            press = nil
            if p.dragged {
                // vx: the motion of the last ~100 ms; none when the finger rested before letting go.
                let recent = p.samples.filter { now - $0.time <= 0.1 }
                var vx = 0.0
                if let first = recent.first, let last = recent.last, last.time > first.time {
                    vx = (last.dx - first.dx) / (last.time - first.time)
                }
                send(
                    "release", [("movie", .string(p.movie)), ("vx", .number(JSONNumber(vx)))], .row(p.movie),
                    now)
            } else if let action = p.button {
                send("tap", [("movie", .string(p.movie)), ("action", .string(action))], .row(p.movie), now)
            } else {
                closeAll(now)
            }
        case .wheelUp: scroll(by: -1)
        case .wheelDown: scroll(by: 1)
        default: break
        }
    }

    // MARK: - Keyboard actions

    private var selectedMovie: String? {
        guard let i = model.selected, i < entries.count, entries[i].removedAt == nil else { return nil }
        return entries[i].movie.id
    }

    private func select(by delta: Int) {
        guard !entries.isEmpty else { return }
        select(to: (model.selected ?? (delta > 0 ? -1 : entries.count)) + delta)
    }

    private func select(to index: Int) {
        guard !entries.isEmpty else { return }
        model.selected = max(0, min(entries.count - 1, index))
        keepSelectionVisible()
    }

    /// The selected row's movie, to keep it selected when rows before it come or go.
    private var selectedEntryID: String? {
        guard let i = model.selected, i < entries.count else { return nil }
        return entries[i].movie.id
    }

    private func reselect(_ id: String?) {
        if let id, let index = entries.firstIndex(where: { $0.movie.id == id }) { model.selected = index }
    }

    private func clampSelection() {
        if let s = model.selected { model.selected = entries.isEmpty ? nil : min(s, entries.count - 1) }
        keepSelectionVisible()
    }

    private func keepSelectionVisible() {
        let visible = ScreenLayout.visibleRows(lines: lines)
        model.scroll = max(0, min(model.scroll, entries.count - visible))
        guard let s = model.selected else { return }
        if s < model.scroll { model.scroll = s }
        if s >= model.scroll + visible { model.scroll = s - visible + 1 }
    }

    private func scroll(by delta: Int) {
        let visible = ScreenLayout.visibleRows(lines: lines)
        model.scroll = max(0, min(model.scroll + delta, entries.count - visible))
    }

    /// ← and →: open the buttons on that side (trailing on the right in ltr, leading in rtl), or
    /// close a row open on the other side.
    private func arrow(right: Bool, _ now: Double) {
        guard let movie = selectedMovie else { return say("Select a row first (↑ ↓)", now) }
        let offset = renders[movie]?.offset ?? 0
        if (right && offset < 0) || (!right && offset > 0) {
            send("close", [("movie", .string(movie))], .row(movie), now)
            return
        }
        // → moves the content right and reveals the left side's buttons.
        let leftSide: Edge = options.direction == .ltr ? .leading : .trailing
        let edge = right ? leftSide : (leftSide == .leading ? .trailing : .leading)
        send("open", [("movie", .string(movie)), ("edge", .string(edge.rawValue))], .row(movie), now)
    }

    /// Enter: the outermost showing button of the selected row (its confirmation when it asks).
    private func fireOutermost(_ now: Double) {
        guard let movie = selectedMovie else { return say("Select a row first (↑ ↓)", now) }
        guard let render = renders[movie], !render.buttons.isEmpty, render.offset != 0 else {
            return say("Open the row first (← →), or press w, f or d", now)
        }
        let button = render.offset < 0 ? render.buttons.last! : render.buttons.first!
        send("tap", [("movie", .string(movie)), ("action", .string(button.action))], .row(movie), now)
    }

    private func perform(_ action: String, _ now: Double) {
        guard let movie = selectedMovie else { return say("Select a row first (↑ ↓)", now) }
        send("perform", [("movie", .string(movie)), ("action", .string(action))], .row(movie), now)
    }

    private func restore(_ now: Double) {
        guard let undo, now < undo.until else { return say("Nothing to undo", now) }
        self.undo = nil
        model.status = nil
        send(
            "restore", [("movie", .string(undo.movie)), ("expect", .number(JSONNumber(Int64(undo.seq))))],
            .restore(title: undo.title), now)
    }

    private func closeAll(_ now: Double) {
        guard renders.values.contains(where: { $0.phase != .closed }) else { return }
        send("close", [], .closeAll, now)
    }

    // MARK: - Recording and ghosts (issue 18)

    /// `r`: starts recording this connection; pressed again, stops and saves the recording.
    private func toggleRecording(_ now: Double) {
        guard !recordBusy else { return say("Wait: the daemon has not answered the last r yet", now) }
        switch model.recording {
        case .off, .lost:
            if let why = TuiRecording.unwritable(options.recordDirectory) {
                return say(
                    "Cannot record into \(options.recordDirectory): \(why) (see --record-dir)", error: true,
                    now)
            }
            send("record", [("on", .bool(true))], .record(on: true), now)
            recordBusy = connection != nil
        case .on:
            send("record", [("on", .bool(false))], .record(on: false), now)
            send("recording", [], .recording, now)
            model.recording = .saving
            recordBusy = connection != nil
        case .saving:
            say("Still saving the last recording", now)
        }
    }

    private func recordReply(_ request: Request, _ o: JSONObject, _ now: Double) {
        switch request {
        case .record(on: true):
            closed(o, now)
            transcript = []
            recordBusy = false
            model.recording = .on
            say("Recording: r again stops and saves it", now)
        case .record(on: false):
            recordedRows = transcript ?? []
            transcript = nil
        case .recording:
            recordBusy = false
            model.recording = .off
            let rows = recordedRows
            recordedRows = []
            guard let recording = o["recording"] else {
                return say("The daemon's recording reply has no recording: nothing saved", error: true, now)
            }
            do {
                let name = try TuiRecording.save(
                    recording: recording, rows: rows, in: options.recordDirectory)
                let inputs =
                    recording.objectValue?.uint("inputs").map { "\($0) input\($0 == 1 ? "" : "s")" } ?? "?"
                let cut = recording.objectValue?.bool("cut") == true ? ", cut at its cap" : ""
                let place = options.recordDirectory == "." ? "" : " in \(options.recordDirectory)"
                say("Saved \(name) and .rows (\(inputs)\(cut))\(place)", now)
            } catch {
                say("Not saved: \(error.message)", error: true, now)
            }
        default:
            break
        }
    }

    /// The reply to `peers`: the sharing connections' open rows now, whose later changes come
    /// as `peer-row` events.
    private func peersReply(watch: Bool, quiet: Bool, _ o: JSONObject, _ now: Double) {
        watching = watch
        peers = [:]
        var unreadable: String?
        if watch, case .array(let items)? = o["peers"] {
            for case .object(let item) in items {
                guard let client = item.uint("client"), case .array(let rows)? = item["rows"] else {
                    continue
                }
                let viewport = item.object("viewport")
                var peer = Peer(width: viewport?.double("width") ?? 0)
                peer.direction = viewport?.string("direction").flatMap(Direction.init(rawValue:)) ?? .ltr
                for case .object(let row) in rows {
                    do {
                        let render = try SwipedClient.row(row)
                        if render.phase != .closed { peer.rows[render.row] = render }
                    } catch {
                        unreadable = error.message
                    }
                }
                peers[Int(client)] = peer
            }
        }
        countGhosts()
        if let unreadable {
            say("A peer's row this client cannot read is not shown: \(unreadable)", error: true, now)
        } else if !quiet {
            say(
                watch ? "Showing other people's rows faintly (g hides them)" : "Other people's rows hidden",
                now)
        }
    }

    /// A `peer-row` event: a sharing connection's row as it is now; a closed one is no ghost.
    private func peerRow(_ o: JSONObject, _ now: Double) {
        guard watching, let client = o.uint("client").map(Int.init) else { return }
        let render: RowRender
        do {
            render = try SwipedClient.row(o.object("row"))
        } catch {
            return say(
                "The daemon sent a peer's row this client cannot read: \(error.message)", error: true, now)
        }
        var peer = peers[client] ?? Peer(width: 0)
        if let width = o.object("viewport")?.double("width") { peer.width = width }
        if let direction = o.object("viewport")?.string("direction").flatMap(Direction.init(rawValue:)) {
            peer.direction = direction
        }
        peer.rows[render.row] = render.phase == .closed ? nil : render
        peers[client] = peer.rows.isEmpty ? nil : peer
        countGhosts()
    }

    private func countGhosts() {
        model.ghosts = watching ? peers.values.reduce(0) { $0 + $1.rows.count } : nil
    }

    // MARK: - The daemon

    private func send(_ op: String, _ arguments: [(String, JSON)], _ request: Request, _ now: Double) {
        guard let connection else {
            return say("Not connected: reconnecting…", error: true, now)
        }
        do {
            let id = try connection.send(op, arguments)
            requests[id] = request
        } catch {
            lost(error.message, now)
        }
    }

    private func sendViewport(_ now: Double) {
        send(
            "viewport",
            [
                ("width", .number(JSONNumber(ScreenLayout.viewportWidth(columns: columns)))),
                ("direction", .string(options.direction.rawValue)),
            ], .viewport, now)
    }

    /// Connects again (after the daemon went away).
    func connect(_ now: Double) {
        do {
            connection = try StreamConnection(socketPath: options.socket)
            model.connection = .connecting
        } catch {
            lost(error.message, now)
        }
        dirty = true
    }

    /// The daemon went away: drop the connection, close every row (a new connection has a new
    /// engine), and try again after the next backoff.
    func lost(_ why: String, _ now: Double) {
        connection = nil
        requests.removeAll()
        press = nil
        for id in renders.keys { motions[id]?.retarget(0, spring: Self.settle, at: now) }
        renders.removeAll()
        model.connection = .reconnecting(attempt: attempt + 1)
        model.status = "Lost the daemon (\(why)); reconnecting…"
        // The daemon keeps a recording per connection: it went with this one.
        if model.recording == .on || model.recording == .saving {
            model.recording = .lost
            model.status = "Lost the daemon and the recording with it (\(why)); reconnecting…"
        }
        transcript = nil
        recordedRows = []
        recordBusy = false
        peers = [:]
        countGhosts()
        model.statusIsError = true
        statusUntil = nil
        reconnectAt = now + Self.backoff[min(attempt, Self.backoff.count - 1)]
        attempt += 1
        dirty = true
    }

    private static let settle = Spring(
        response: Rules.settleSpring.response, dampingFraction: Rules.settleSpring.dampingFraction)

    /// The socket is readable.
    func receive(_ now: Double) {
        guard let connection else { return }
        do {
            let (messages, closed) = try connection.receiveLines()
            for (message, line) in messages {
                if transcript != nil, Self.hasRow(message) { transcript!.append(line) }
                handle(message, now)
            }
            if closed && self.connection === connection { lost("it closed the connection", now) }
        } catch {
            lost(error.message, now)
        }
    }

    /// A line with a Row of this connection's own: a reply's or a `row` event's (not a peer's).
    private static func hasRow(_ message: StreamConnection.Message) -> Bool {
        switch message {
        case .reply(_, let reply): reply.object["row"] != nil
        case .event(.row): true
        case .hello, .event: false
        }
    }

    /// The socket is writable again.
    func flush(_ now: Double) {
        do { try connection?.flush() } catch { lost(error.message, now) }
    }

    private func handle(_ message: StreamConnection.Message, _ now: Double) {
        dirty = true
        switch message {
        case .hello(let hello):
            model.connection = .connected
            model.writer = hello.writer
            if attempt > 0 {
                let lostRecording =
                    model.recording == .lost
                    ? ". The recording was lost" : ""
                say("Reconnected; caught up from seq \(lastSeq ?? hello.seq)\(lostRecording)", now)
            }
            attempt = 0
            sendViewport(now)
            if let lastSeq {
                // Catch up from the last event seen: no gap, no duplicate.
                send("subscribe", [("from", .number(JSONNumber(Int64(lastSeq))))], .subscribe, now)
            } else {
                send("list", [], .list, now)
            }
            // A new connection shares nothing and watches nobody: ask again for what was on.
            if sharing { send("share", [("on", .bool(true))], .share(on: true, quiet: true), now) }
            if watching { send("peers", [("watch", .bool(true))], .peers(watch: true, quiet: true), now) }
        case .reply(let id, let reply):
            guard let request = requests.removeValue(forKey: id) else { return }
            self.reply(request, reply, now)
        case .event(let event):
            self.event(event, now)
        }
    }

    private func reply(_ request: Request, _ reply: Reply, _ now: Double) {
        if let error = reply.error {
            if case .list = request { return lost(error.description, now) }
            if case .subscribe = request { return lost(error.description, now) }
            switch request {
            case .record(on: true), .recording:
                recordBusy = false
                transcript = nil
                recordedRows = []
                model.recording = .off
                return say("Not recorded: \(error.message)", error: true, now)
            case .record(on: false):
                transcript = nil
            default: break
            }
            return say(error.message, error: true, now)
        }
        let o = reply.object
        switch request {
        case .list:
            // A list this client cannot read leaves it with nothing to show: it is dropped like
            // a lost connection, and the next connection asks again.
            guard let seq = o.uint("seq"), case .array(let items)? = o["movies"] else {
                return lost("the daemon sent a list without seq and movies", now)
            }
            var movies: [Movie] = []
            for item in items {
                do {
                    movies.append(try SwipedClient.movie(item))
                } catch {
                    return lost("the daemon sent a list this client cannot read: \(error.message)", now)
                }
            }
            let subscribing = lastSeq == nil
            if seq >= lastSeq ?? 0 {
                let selectedID = selectedEntryID
                entries = movies.map { Entry(movie: $0) }
                reselect(selectedID)
                lastSeq = seq
                model.seq = seq
                clampSelection()
            }
            if subscribing {
                send("subscribe", [("from", .number(JSONNumber(Int64(seq))))], .subscribe, now)
            }
            if model.selected == nil && !entries.isEmpty { model.selected = 0 }
        case .subscribe, .viewport, .options:
            closed(o, now)
        case .closeAll:
            closed(o, now)
        case .row:
            do {
                apply(try SwipedClient.row(o.object("row")), now)
            } catch {
                // The gesture happened; only its drawing is missing. Say so and go on.
                say("The daemon sent a row this client cannot read: \(error.message)", error: true, now)
            }
            if let fired = o.object("fired") { self.fired(fired, now) }
            if let pending = o.object("pending")?.string("action") {
                let label = renders.values.first { $0.phase == .confirming }?.buttons.first?.label ?? pending
                say("Confirm \(pending): click “\(label)” or press Enter within 3 s", now)
            }
        case .add(let title):
            say("Added “\(title)”", now)
        case .restore(let title):
            say("Restored “\(title)”", now)
        case .record, .recording:
            recordReply(request, o, now)
        case .share(let on, let quiet):
            sharing = on
            model.sharing = on
            if quiet { return }
            say(
                on
                    ? "Sharing your rows: people who show ghosts (g) see your fingers"
                    : "Your rows are private", now)
        case .peers(let watch, let quiet):
            peersReply(watch: watch, quiet: quiet, o, now)
        }
    }

    /// The `closed` list of a viewport, configure or close reply: those rows are closed now.
    private func closed(_ o: JSONObject, _ now: Double) {
        guard case .array(let ids)? = o["closed"] else { return }
        for case .string(let id) in ids {
            renders[id] = nil
            motions[id]?.retarget(0, spring: Self.settle, at: now)
        }
    }

    private func fired(_ fired: JSONObject, _ now: Double) {
        let action = fired.string("action") ?? "?"
        if let error = fired.object("error") {
            return say("\(action) did not happen: \(error.string("message") ?? "?")", error: true, now)
        }
        if action == "delete", let seq = fired.uint("seq") {
            // The `removed` event may have come first: the entry then collapses already.
            if let entry = entries.first(where: { $0.removedSeq == seq }) {
                undo = (entry.movie.id, entry.movie.title, seq, now + Self.undoTime)
            } else {
                pendingUndo = seq
            }
            dirty = true
        }
    }

    /// A delete whose `removed` event has not arrived yet (replies and events may come in
    /// either order): the hint starts when it does.
    private var pendingUndo: UInt64?

    private func apply(_ row: RowRender, _ now: Double) {
        let id = row.row
        renders[id] = row.phase == .closed && row.offset == 0 ? nil : row
        if !row.buttons.isEmpty && row.offset != 0 { lastButtons[id] = (row.buttons, row.offset) }
        // While the finger is down the row follows it at once: a terminal moves in whole
        // columns, and the interactive spring (0.15 s) would only add frames of lag. Once
        // released, the row's spring carries it, as in SwiftUI.
        var motion = motions[id] ?? Motion(at: 0)
        let spring =
            row.phase == .dragging
            ? Spring(response: 0, dampingFraction: 1)
            : Spring(response: row.spring.response, dampingFraction: row.spring.dampingFraction)
        motion.retarget(row.spring.target, spring: spring, at: now)
        motions[id] = motion
    }

    private func event(_ event: ServerEvent, _ now: Double) {
        switch event {
        case .movie(let committed, _):
            guard committed.seq > lastSeq ?? 0 else { return }  // already in the list
            lastSeq = committed.seq
            model.seq = committed.seq
            let movie = committed.movie
            let index = entries.firstIndex { $0.movie.id == movie.id && $0.removedAt == nil }
            switch committed.kind {
            case "added":
                if index == nil { entries.append(Entry(movie: movie)) }
            case "removed":
                if let index {
                    entries[index].movie = movie
                    entries[index].removedAt = now
                    entries[index].removedSeq = committed.seq
                    renders[movie.id] = nil
                }
                if pendingUndo == committed.seq {
                    pendingUndo = nil
                    undo = (movie.id, movie.title, committed.seq, now + Self.undoTime)
                }
            case "restored":
                // Back at its old place, which only the daemon knows: ask for the list again.
                send("list", [], .list, now)
            default:
                if let index { entries[index].movie = movie } else { send("list", [], .list, now) }
            }
        case .row(let row, let removed, let cancelled):
            if removed {
                renders[row.row] = nil
            } else {
                apply(row, now)
            }
            if cancelled == "timeout" { say("Not confirmed within 3 s: nothing happened", now) }
        case .bye(let reason):
            lost("it said bye: \(reason)", now)
        case .other(name: "peer-row", let o):
            peerRow(o, now)
        case .other:
            break
        }
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

// `swipectl tui`: the terminal front end (issue 15). One poll(2) loop waits on the terminal,
// the daemon's socket and a signalfd together, with a timeout only when something is due: the
// next frame while a row moves (at most 60 per second), the end of a hint, the next reconnect
// attempt, the rest of an escape sequence. An idle front end makes no wake-ups at all.
import SwipeEngine
import SwipedClient
import Terminal

#if canImport(Glibc)
    import Glibc
#endif

enum Tui {
    static let frameInterval = 1.0 / 60
    /// How long a lone ESC waits for the rest of a sequence before it is the Escape key.
    static let escapeWait = 0.03

    static func run(
        socket: SocketChoice, token: SignInToken?, ascii: Bool, rtl: Bool, recordDirectory: String?,
        confirmDelete: Bool, peek: Bool, fullSwipe: FullSwipeStyle, environment: [String: String]
    ) throws(Failure) {
        // A directory given is checked before the screen is taken (the default, the current
        // directory, when `r` is pressed): a recording must have somewhere to go.
        if let recordDirectory, let why = TuiRecording.unwritable(recordDirectory) {
            throw Failure.usage("--record-dir \(recordDirectory): \(why)")
        }
        // So is the token, on a connection of its own that signs in as every command does: a
        // token refused ends the run with the same words, before the screen is taken. The front
        // end's own connections sign in again (a refusal then is said on its status line).
        if token != nil { _ = try Conversation(socket, json: false, token: token) }
        let connection: StreamConnection
        do {
            connection = try StreamConnection(socketPath: socket.path)
        } catch {
            throw Conversation.unreachable(error, socket)
        }
        let colorterm = environment["COLORTERM"] ?? ""
        let options = TuiOptions(
            socket: socket.path, ascii: ascii, direction: rtl ? .rtl : .ltr,
            trueColor: colorterm == "truecolor" || colorterm == "24bit",
            recordDirectory: recordDirectory ?? ".", confirmDelete: confirmDelete, peekHint: peek,
            crossingCues: true, fullSwipeStyle: fullSwipe, signsIn: token != nil)
        let signals = try TuiSignals()
        defer { signals.close() }
        let terminal = try TuiTerminal()
        defer { terminal.restore() }
        let size = terminal.size()
        let app = TuiApp(
            options, token: token?.value, connection: connection, columns: size.columns, lines: size.lines)
        try loop(app, terminal, signals)
    }

    private static func loop(_ app: TuiApp, _ terminal: TuiTerminal, _ signals: TuiSignals) throws(Failure) {
        var parser = InputParser()
        var shown: Grid?
        var lastFrame = 0.0
        var escapeSince: Double?
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !app.quit {
            var now = monotonicNow()
            app.tick(now)
            // Draw when something changed or moves, at most once per frame interval.
            let animating = app.isAnimating(at: now)
            if (app.dirty || animating) && now - lastFrame >= frameInterval * 0.9 {
                let grid = app.frame(at: now)
                let bytes = FrameWriter.diff(from: shown, to: grid, synchronized: app.synchronizedOutput)
                // Only a frame that changed the screen counts against the cap: an input that
                // changes nothing yet (a drag step, until its reply) must not delay the next.
                if !bytes.isEmpty {
                    terminal.write(bytes)
                    lastFrame = now
                }
                shown = grid
                app.dirty = false
            }
            var deadlines: [Double] = []
            if app.dirty || app.isAnimating(at: now) { deadlines.append(lastFrame + frameInterval) }
            if let due = app.nextDeadline() { deadlines.append(due) }
            if let since = escapeSince { deadlines.append(since + escapeWait) }
            let timeout = deadlines.min().map { Int32(max(0, (($0 - now) * 1000).rounded(.up))) } ?? -1

            var fds = [
                pollfd(fd: 0, events: Int16(POLLIN), revents: 0),
                pollfd(fd: signals.fd, events: Int16(POLLIN), revents: 0),
            ]
            if let connection = app.connection {
                let events = Int16(POLLIN) | (connection.wantsWrite ? Int16(POLLOUT) : 0)
                fds.append(pollfd(fd: connection.fd, events: events, revents: 0))
            }
            let ready = poll(&fds, nfds_t(fds.count), timeout)
            if ready < 0 {
                if errno == EINTR { continue }
                throw Failure(.unreachable, "tui: poll: \(String(cString: strerror(errno)))")
            }
            now = monotonicNow()
            if fds[1].revents != 0 {
                for signal in signals.read() {
                    if signal == SIGWINCH {
                        let size = terminal.size()
                        app.resized(columns: size.columns, lines: size.lines, now)
                        shown = nil  // the terminal may have reflowed: draw everything
                    } else {
                        app.quit = true
                    }
                }
            }
            if fds[0].revents & Int16(POLLIN) != 0 {
                let n = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
                if n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN) {
                    app.quit = true  // the terminal hung up
                } else if n > 0 {
                    for event in parser.feed(buffer[0..<n]) { app.input(event, now) }
                }
                escapeSince = parser.hasPending ? (escapeSince ?? now) : nil
            } else if fds[0].revents & Int16(POLLHUP | POLLERR) != 0 {
                app.quit = true
            }
            if let since = escapeSince, now - since >= escapeWait {
                for event in parser.flush() { app.input(event, now) }
                escapeSince = nil
            }
            if fds.count > 2, app.connection?.fd == fds[2].fd {
                if fds[2].revents & Int16(POLLOUT) != 0 { app.flush(now) }
                if fds[2].revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 { app.receive(now) }
            }
        }
    }
}

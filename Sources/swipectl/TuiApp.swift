// What runs `swipectl tui`'s model (Terminal's TuiStateMachine, which decides everything): the
// connection to the daemon and its requests in flight, the record directory and the saved
// recordings. The loop (Tui.swift) feeds it the terminal's input, the socket's readiness, the
// signals and the time; it hands each fact to the machine and performs the actions it returns.
import JSONCodec
import SwipedClient
import Terminal

final class TuiApp {
    let options: TuiOptions
    /// The token each connection signs in with (the machine asks by `.signIn`, never holds it).
    private let token: String?
    private var machine: TuiStateMachine
    private(set) var connection: StreamConnection?
    /// What each request in flight on `connection` is, by the id its reply echoes.
    private var requests: [Int: TuiRequest] = [:]
    /// The recording of the `recording` reply being handled, which `.saveRecording` saves.
    private var recording: JSON?
    /// Set by `q`, Ctrl-C, or a signal: the loop restores the terminal and exits.
    var quit = false
    /// A change the next frame must show (besides motion).
    var dirty = true

    init(_ options: TuiOptions, token: String?, connection: StreamConnection, columns: Int, lines: Int) {
        self.options = options
        self.token = token
        self.connection = connection
        machine = TuiStateMachine(options, columns: columns, lines: lines)
    }

    /// Whether the terminal knows synchronized output (mode 2026).
    var synchronizedOutput: Bool { machine.state.synchronizedOutput }

    func frame(at now: Double) -> Grid { machine.frame(at: now) }
    func isAnimating(at now: Double) -> Bool { machine.isAnimating(at: now) }
    func nextDeadline() -> Double? { machine.nextDeadline() }

    func tick(_ now: Double) { perform(machine.tick(at: now), now) }

    func resized(columns: Int, lines: Int, _ now: Double) {
        perform(machine.resized(columns: columns, lines: lines, at: now), now)
    }

    func input(_ event: InputEvent, _ now: Double) { perform(machine.input(event, at: now), now) }

    /// The socket is readable.
    func receive(_ now: Double) {
        guard let connection else { return }
        do {
            let (messages, closed) = try connection.receiveLines()
            for (message, line) in messages {
                if TuiWire.hasRow(message) { machine.receivedRowLine(line) }
                handle(message, now)
            }
            if closed && self.connection === connection {
                perform(machine.lost("it closed the connection", at: now), now)
            }
        } catch {
            // A `bye` instead of hello (`revoked`: this user was given the role none) is the
            // daemon's word, which the machine words as a `bye` event; anything else is a loss.
            if error.kind == .closed, let reason = error.code {
                return perform(machine.received(.bye(reason: reason), at: now), now)
            }
            perform(machine.lost(error.message, at: now), now)
        }
    }

    /// The socket is writable again.
    func flush(_ now: Double) {
        do { try connection?.flush() } catch { perform(machine.lost(error.message, at: now), now) }
    }

    private func handle(_ message: StreamConnection.Message, _ now: Double) {
        switch message {
        case .hello(let hello):
            perform(
                machine.hello(
                    writer: hello.writer, seq: hello.seq, log: hello.log, user: hello.user, role: hello.role,
                    at: now), now)
        case .reply(let id, let reply):
            guard let request = requests.removeValue(forKey: id) else { return }
            if case .recording = request { recording = reply.object["recording"] }
            defer { recording = nil }
            perform(machine.replied(to: request, TuiWire.reply(reply, to: request), at: now), now)
        case .event(let event):
            perform(machine.received(TuiWire.event(event), at: now), now)
        }
    }

    /// Does what the machine asked, in order, and tells it what came of it.
    private func perform(_ actions: [TuiAction], _ now: Double) {
        for action in actions {
            switch action {
            case .redraw:
                dirty = true
            case .quit:
                quit = true
            case .send(let request):
                // A send that failed dropped the connection: the machine has said so, and the
                // requests after it have nowhere to go.
                guard let connection else { continue }
                let (op, arguments) = TuiWire.line(request, token: token)
                do {
                    requests[try connection.send(op, arguments)] = request
                } catch {
                    perform(machine.lost(error.message, at: now), now)
                }
            case .connect:
                do {
                    connection = try StreamConnection(socketPath: options.socket)
                    perform(machine.connected(at: now), now)
                } catch {
                    perform(machine.lost(error.message, at: now), now)
                }
            case .disconnect:
                connection = nil
                requests.removeAll()
            case .checkRecordDirectory:
                let problem = TuiRecording.unwritable(options.recordDirectory)
                perform(machine.recordDirectoryChecked(problem: problem, at: now), now)
            case .saveRecording(let rows, let summary):
                save(rows, summary, now)
            }
        }
    }

    private func save(_ rows: [String], _ summary: TuiRecordingSummary, _ now: Double) {
        guard let recording else {
            preconditionFailure("saveRecording outside a recording reply (\(rows.count) rows)")
        }
        do {
            let name = try TuiRecording.save(recording: recording, rows: rows, in: options.recordDirectory)
            perform(machine.recordingSaved(file: name, summary, at: now), now)
        } catch {
            perform(machine.recordingNotSaved(error.message, at: now), now)
        }
    }
}

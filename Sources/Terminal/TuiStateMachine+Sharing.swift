// Recording this connection (`r`) and other people's fingers (`s` shares, `g` shows ghosts):
// issue 18.
import SwipeEngine

extension TuiStateMachine {
    /// `r`: starts recording this connection (once the directory is known to take it); pressed
    /// again, stops and saves the recording.
    mutating func toggleRecording(_ now: Double) {
        guard !state.recordBusy else { return say("Wait: the daemon has not answered the last r yet", now) }
        switch state.model.recording {
        case .off, .lost:
            emit(.checkRecordDirectory)
        case .on:
            send(.record(on: false), now)
            send(.recording, now)
            state.model.recording = .saving
            state.recordBusy = state.connected
        case .saving:
            say("Still saving the last recording", now)
        }
    }

    /// What `.checkRecordDirectory` found: nil when recordings can be saved there, else why not.
    public mutating func recordDirectoryChecked(problem: String?, at now: Double) -> [TuiAction] {
        if let problem {
            say(
                "Cannot record into \(options.recordDirectory): \(problem) (see --record-dir)", error: true,
                now)
        } else {
            send(.record(on: true), now)
            state.recordBusy = state.connected
        }
        return takeActions()
    }

    /// `record` said on.
    mutating func recordingStarted(_ now: Double) {
        state.transcript = []
        state.recordBusy = false
        state.model.recording = .on
        say("Recording: r again stops and saves it", now)
    }

    /// The reply to `recording`: save it with the rows received while it was on.
    mutating func recordingFetched(_ summary: TuiRecordingSummary?, _ now: Double) {
        state.recordBusy = false
        state.model.recording = .off
        let rows = state.recordedRows
        state.recordedRows = []
        guard let summary else {
            return say("The daemon's recording reply has no recording: nothing saved", error: true, now)
        }
        emit(.saveRecording(rows: rows, summary))
    }

    /// `.saveRecording` wrote `file` (in the record directory) and its `.rows`.
    public mutating func recordingSaved(file: String, _ summary: TuiRecordingSummary, at now: Double)
        -> [TuiAction]
    {
        let inputs = summary.inputs.map { "\($0) input\($0 == 1 ? "" : "s")" } ?? "?"
        let cut = summary.cut ? ", cut at its cap" : ""
        let place = options.recordDirectory == "." ? "" : " in \(options.recordDirectory)"
        say("Saved \(file) and .rows (\(inputs)\(cut))\(place)", now)
        return takeActions()
    }

    /// `.saveRecording` failed: `message` says why.
    public mutating func recordingNotSaved(_ message: String, at now: Double) -> [TuiAction] {
        say("Not saved: \(message)", error: true, now)
        return takeActions()
    }

    /// The reply to `peers`: the sharing connections' open rows now, whose later changes come
    /// as `peer-row` events.
    mutating func peersReply(
        watch: Bool, quiet: Bool, _ peers: [Int: TuiPeer], unreadable: String?, _ now: Double
    ) {
        state.watching = watch
        state.peers = watch ? peers : [:]
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
    mutating func peerRow(
        client: Int, _ row: RowRender?, unreadable: String?, width: Double?, direction: Direction?,
        _ now: Double
    ) {
        guard state.watching else { return }
        guard let row else {
            return say(
                "The daemon sent a peer's row this client cannot read: \(unreadable ?? "?")", error: true, now
            )
        }
        var peer = state.peers[client] ?? TuiPeer(width: 0)
        if let width { peer.width = width }
        if let direction { peer.direction = direction }
        peer.rows[row.row] = row.phase == .closed ? nil : row
        state.peers[client] = peer.rows.isEmpty ? nil : peer
        countGhosts()
    }

    mutating func countGhosts() {
        state.model.ghosts = state.watching ? state.peers.values.reduce(0) { $0 + $1.rows.count } : nil
    }
}

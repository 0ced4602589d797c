// `record` and `recording` (protocol.md, "Recordings"): this connection's swipe session written
// down as it happens, in Wire's Recording format, so that a replay on the pure engine gives the
// rows the connection received. Nothing is allocated until `record {on:true}`; while off, each
// hook costs one test of `recordingOn` (the drag path stays free of allocations).
import Movies
import SwipeEngine
import Wire

extension Session {
    /// Whether this connection is recording now.
    public var isRecording: Bool { recordingOn }

    /// The recording going on, else the last one (nil before the first `record {on:true}`).
    public var lastRecording: Recording? { recording }

    func record(on: Bool, id: [UInt8]?, _ state: borrowing MovieState, _ sink: inout SessionActions) {
        guard on else {
            recordingOn = false
            let (inputs, cut) = (recording?.inputs ?? 0, recording?.cut ?? false)
            return replies.send {
                Encode.record(&$0, id: id, on: false, inputs: inputs, cut: cut, closed: [])
            }
        }
        // A recording starts from a known state: every row closed, as `close {}` does.
        let closed = cancelTimers(list.close(row: nil), &sink)
        noteRowsChanged(closed, &sink)
        // No copy of the list: a movie's flags are recorded (`observe`) before its first row
        // renders them, so that starting a recording costs the same with 10 movies or 100,000.
        recording = Recording(
            layout: list.layout, viewport: list.viewport, rows: rowForm, movies: [], startedAt: clock,
            crossings: list.reportsCrossings)
        recordingOn = true
        replies.send { Encode.record(&$0, id: id, on: true, inputs: 0, cut: false, closed: closed) }
    }

    func sendRecording(id: [UInt8]?, op: String, _ sink: inout SessionActions) {
        guard let recording else {
            return reply(
                id: id, op: op,
                error: .badRequest(
                    "this connection has no recording; start one with {\"op\":\"record\",\"on\":true}"),
                &sink)
        }
        replies.send { Encode.recording(&$0, id: id, recording) }
    }

    /// Records `input` when recording; past either cap (inputs, bytes) the recording is cut
    /// and stops.
    @inline(__always)
    func record(_ input: RecordedInput, _ sink: inout SessionActions) {
        if recordingOn { recordSlowly(input, &sink) }
    }

    private func recordSlowly(_ input: RecordedInput, _ sink: inout SessionActions) {
        guard recording?.append(input, now: clock) == false else { return }
        stopCutRecording(&sink)
    }

    /// The recording reached a cap: recording stops, and the journal says so once.
    private func stopCutRecording(_ sink: inout SessionActions) {
        recordingOn = false
        sink.append(
            .log(
                SessionLog(
                    .info, "recording cut at its cap, stopped recording",
                    [
                        .init("CLIENT", "\(config.client)"), .init("CAP", "\(Recording.cap)"),
                        .init("MAX_BYTES", "\(Recording.maxBytes)"),
                        .init("INPUTS", "\(recording?.inputs ?? 0)"),
                        .init("BYTES", "\(recording?.bytes ?? 0)"), .init("HELD", "\(recording?.held ?? 0)"),
                    ])))
    }

    /// Before an input that may render `row` and the rows now open: their flags as they will be
    /// rendered, recorded where they changed (which may reach the cap: recording then stops).
    @inline(__always)
    func observeRows(_ row: RowID?, _ state: borrowing MovieState, _ sink: inout SessionActions) {
        if recordingOn { observeSlowly(row, state, &sink) }
    }

    private func observeSlowly(_ row: RowID?, _ state: borrowing MovieState, _ sink: inout SessionActions) {
        func observe(_ id: RowID) {
            let movie = state.movie(id)
            recording?.observe(
                MovieFlags(
                    movie: id, watched: movie?.watched ?? false,
                    watchedWithFriends: movie?.watchedWithFriends ?? false), now: clock)
        }
        if let row { observe(row) }
        for open in list.openRows where open != row { observe(open) }
        if recording?.cut == true { stopCutRecording(&sink) }
    }
}

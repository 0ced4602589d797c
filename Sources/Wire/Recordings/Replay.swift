// A recording replayed on the pure engine (protocol.md, "Recordings"), on virtual time: each
// entry is taken at its `t`, nothing waits. It does with every input what a connection's Session
// does (Session+Swipe.swift), so that it gives the rows the connection received, in the same
// order: the rows an input closed (`row` events) before its reply's row. Bound actions are
// reported as fired and change nothing: their movie change, when the connection saw it, is in
// the recording as flags and a `movie-changed` entry.
import JSONCodec
import Movies
import SwipeEngine

/// One thing a replay produced: a Row the connection received (a reply's or a `row` event's),
/// or the rows a viewport, layout or close-all change closed (the live reply names them).
public struct ReplayStep: Equatable, Sendable {
    public enum Note: Equatable, Sendable {
        /// A reply's action fired; `bound`: it runs a movie command (which a replay does not).
        case fired(action: String, bound: Bool)
        /// A reply's action now waits for its confirmation (rule 10).
        case pending(action: String)
        /// The engine refused the input with the error the live reply had; the row is unchanged.
        case refused(WireError)
        /// A `row` event for a removed movie.
        case removed
        /// A `row` event for a confirmation that timed out.
        case timedOut
        /// The rows the input closed, named in the live reply.
        case closed([RowID])
    }

    public var t: UInt64
    public var kind: String
    /// The Row, worded in `form`; nil for `refused` and `closed`.
    public var row: RowRender?
    public var form: RowForm
    /// A `row` event (else a reply).
    public var event: Bool
    public var note: Note?
    /// The thresholds the reply's input crossed (rule 12), when the connection asked for them.
    public var crossed = Crossings()
    /// The reply's touch scrolls (rule 13).
    public var scroll = false
}

public enum Replay {
    /// Every step of `recording`, in order.
    public static func run(_ recording: Recording) -> [ReplayStep] {
        var list = SwipeList(layout: recording.layout, viewport: recording.viewport)
        list.reportsCrossings = recording.crossings
        var form = recording.rows
        var flags: [RowID: RowFlags] = [:]
        for m in recording.movies { flags[m.movie] = m.flags }
        var steps: [ReplayStep] = []
        for entry in recording.entries {
            let t = entry.t
            let kind = entry.input.kind
            func render(_ row: RowID) -> RowRender { list.render(row, flags: flags[row] ?? []) }
            func event(_ row: RowRender, _ note: ReplayStep.Note? = nil) {
                steps.append(ReplayStep(t: t, kind: kind, row: row, form: form, event: true, note: note))
            }
            func reply(_ row: RowID, _ note: ReplayStep.Note? = nil, _ outcome: GestureOutcome? = nil) {
                steps.append(
                    ReplayStep(
                        t: t, kind: kind, row: render(row), form: form, event: false, note: note,
                        crossed: outcome?.crossed ?? Crossings(), scroll: outcome?.scroll ?? false))
            }
            /// The rows the engine closed besides the input's: a `row` event each.
            func apply(_ effects: [Effect]) {
                for case .closed(let row) in effects { event(render(row)) }
            }
            func closedAll() {
                let closed = list.close(row: nil).compactMap { effect -> RowID? in
                    if case .closed(let row) = effect { return row }
                    return nil
                }
                steps.append(
                    ReplayStep(t: t, kind: kind, row: nil, form: form, event: false, note: .closed(closed)))
            }
            /// A gesture, applied as the connection applied it (`GestureOutcome`).
            func gesture(_ input: Input, _ row: RowID) {
                let outcome: GestureOutcome
                do throws(SwipeError) {
                    outcome = try GestureOutcome(applying: input, to: &list)
                } catch {
                    steps.append(
                        ReplayStep(
                            t: t, kind: kind, row: nil, form: form, event: false,
                            note: .refused(WireError(swipe: error))))
                    return
                }
                apply(outcome.effects)
                // What the connection's reply names: the action waiting, else the one fired.
                let note: ReplayStep.Note? =
                    if let action = outcome.pending {
                        .pending(action: action)
                    } else if let action = outcome.fired {
                        .fired(action: action, bound: BoundAction(rawValue: action) != nil)
                    } else {
                        nil
                    }
                reply(row, note, outcome)
            }
            switch entry.input {
            case .flags(let m): flags[m.movie] = m.flags
            case .options(let f): form = f
            case .crossings(let on): list.reportsCrossings = on
            case .viewport(let v):
                closedAll()
                list.viewport = v
            case .configure(let layout):
                closedAll()
                list.layout = layout
            case .drag, .release, .tap, .open, .perform, .peek:
                guard let (input, row) = entry.input.gesture else {
                    preconditionFailure("\(entry.input) is not a gesture")
                }
                gesture(input, row)
            case .close(nil): closedAll()
            case .close(let row?):
                apply(list.close(row: row))
                reply(row)
            case .closeTimer(let row):
                apply(list.timerFired(row: row))
                event(render(row))
            case .confirmTimer(let row):
                apply(list.confirmTimedOut(row: row))
                event(render(row), .timedOut)
            case .movieChanged(let row):
                event(render(row))
            case .movieRemoved(let row):
                apply(list.rowRemoved(row: row))
                event(list.render(row, flags: []), .removed)
            }
        }
        return steps
    }
}

extension Encode {
    /// One line of `swipectl replay`: `{"t":…,"kind":…,"row":Row,…}`, or with `closed`.
    public static func replayStep(_ out: inout JSONWriter, _ step: ReplayStep) {
        out.literal(#"{"t":"#)
        out.uint64(step.t)
        out.literal(#","kind":"#)
        out.string(step.kind)
        if let row = step.row {
            out.literal(step.event ? #","event":"row","row":"# : #","row":"#)
            self.row(&out, row, form: step.form)
        }
        gestureNotes(&out, crossed: step.crossed, scroll: step.scroll)
        switch step.note {
        case nil: break
        case .fired(let action, let bound):
            out.literal(#","fired":{"action":"#)
            out.string(action)
            out.literal(bound ? #","bound":true}"# : #","bound":false}"#)
        case .pending(let action):
            out.literal(#","pending":{"action":"#)
            out.string(action)
            out.bytes.append(UInt8(ascii: "}"))
        case .refused(let error):
            out.literal(#","refused":"#)
            errorObject(&out, error)
        case .removed: out.literal(#","removed":true"#)
        case .timedOut: out.literal(#","cancelled":"timeout""#)
        case .closed(let rows):
            out.literal(#","closed":"#)
            stringArray(&out, rows)
        }
        end(&out)
    }
}

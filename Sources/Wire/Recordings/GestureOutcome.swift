// A gesture applied to a client's swipe engine: the one function a connection (the Session's
// general path, Session+Swipe.swift) and a replay of its recording (Replay.swift) both call, so
// that a replay does with an input what the connection did. What happens around it differs and
// stays with each: the connection checks `--writers`, submits bound actions' commands and
// replies; a replay only reports what fired.
import Movies
import SwipeEngine

/// What an input did to the engine: its effects, and the action it fired or that now waits for
/// its confirmation (rule 10), if any; the thresholds its drag crossed (rule 12) and whether its
/// touch scrolls (rule 13), for the reply.
public struct GestureOutcome {
    public var effects: [Effect]
    public var fired: String? = nil
    public var pending: String? = nil
    public var crossed = Crossings()
    public var scroll = false

    /// Whether the action fired, or the one waiting, is bound (it runs, or would run, a command).
    public var isBound: Bool {
        fired.flatMap(BoundAction.init(rawValue:)) != nil
            || pending.flatMap(BoundAction.init(rawValue:)) != nil
    }
}

extension GestureOutcome {
    /// Sends `input` to `list`. A refused input leaves the list as it was (the engine's
    /// guarantee) and throws the engine's error.
    public init(applying input: Input, to list: inout SwipeList) throws(SwipeError) {
        effects = try list.send(input)
        for effect in effects {
            switch effect {
            case .fire(_, let action): fired = action
            case .pending(_, let action): pending = action
            case .crossed(_, let crossing): crossed.append(crossing)
            case .scroll: scroll = true
            case .schedule, .cancel, .closed: break
            }
        }
    }
}

extension RecordedInput {
    /// A gesture's engine input, as recorded; nil for the engine's other inputs (a connection
    /// records closes, timers and removals as they happen, not as gestures).
    public init?(gesture input: Input) {
        switch input {
        case .dragChanged(let row, let dx, let dy): self = .drag(movie: row, dx: dx, dy: dy)
        case .released(let row, let dx, let vx): self = .release(movie: row, dx: dx, vx: vx)
        case .tapped(let row, let action): self = .tap(movie: row, action: action)
        case .open(let row, let edge): self = .open(movie: row, edge: edge)
        case .perform(let row, let action): self = .perform(movie: row, action: action)
        case .peek(let row, let edge): self = .peek(movie: row, edge: edge)
        case .close, .timerFired, .rowRemoved, .confirmTimedOut: return nil
        }
    }

    /// The engine input of a recorded gesture, and its row; nil for every other entry.
    public var gesture: (input: Input, row: RowID)? {
        switch self {
        case .drag(let row, let dx, let dy): (.dragChanged(row: row, dx: dx, dy: dy), row)
        case .release(let row, let dx, let vx): (.released(row: row, dx: dx, vx: vx), row)
        case .tap(let row, let action): (.tapped(row: row, action: action), row)
        case .open(let row, let edge): (.open(row: row, edge: edge), row)
        case .perform(let row, let action): (.perform(row: row, action: action), row)
        case .peek(let row, let edge): (.peek(row: row, edge: edge), row)
        case .crossings, .viewport, .configure, .options, .close, .closeTimer, .confirmTimer, .movieChanged,
            .movieRemoved,
            .flags:
            nil
        }
    }
}

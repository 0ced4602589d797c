// How one command is decided: the rule every store applies, whenever it decides. A command
// whose idempotency key is in the log gets that key's outcome again (or a key conflict);
// any other is decided by the state (`MovieState.decideAndApply`: an event folded in, or a
// refusal). SQLiteStore and InMemoryStore decide once, at submit, against the projected
// state (`CommandQueue.decide`, and `CommandQueue.answer(_:_:key:loggedAs:_:)` for a key in
// the log); every store decides again after a failed commit (`CommandQueue.redecide`);
// PostgresStore decides a second time at commit, with this same function, against the state
// caught up under the appends' lock (PostgresWorker+Commit.swift says why).
import Movies

package enum CommandDecision {
    /// The key is in the log: its original outcome again, or a key conflict; nothing written.
    case replayed(Result<CommittedEvent, StoreError>)
    /// Refused by the state; nothing written.
    case refused(CommandError)
    /// Accepted: `event` is folded into the state, `after` is its movie right after it.
    case accepted(MovieEvent, after: Movie?)

    /// Decides `command` against `state`, folding what it accepts. `logged`: what the command's
    /// key wrote when the key is in the log (the event and its outcome), nil when it is not.
    @inline(__always)
    package static func decide(
        _ command: MovieCommand, logged: (event: MovieEvent, committed: CommittedEvent)?,
        in state: inout MovieState
    ) -> CommandDecision {
        if let key = command.key, let logged {
            return .replayed(
                CommandQueue.replay(command, key: key, loggedAs: logged.event, logged.committed))
        }
        do throws(CommandError) {
            let (event, after) = try state.decideAndApply(command)
            return .accepted(event, after: after)
        } catch {
            return .refused(error)
        }
    }
}

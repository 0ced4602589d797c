// The command bookkeeping both stores share: commands decided against the projected state and
// not yet committed, key waiters, and the recovery that decides them again after a failed commit.
// Where and how commits happen is each store's own.
import Movies

/// The commands a store has decided but not yet committed. Commands are decided at once against
/// the *projected* state (committed plus pending); refusals and key outcomes known at once are
/// kept in `answered` for the next `completions()`. The store hands `queued` on to be committed
/// and reports each entry with `Entry.report(_:into:)`.
package struct CommandQueue {
    package struct Entry {
        package var token: UInt64
        package var command: MovieCommand
        package var event: MovieEvent
        /// The movie right after the event, as projected (stored with the event for history).
        package var after: Movie?
        package var waiters: [UInt64] = []  // later submissions with the same key

        /// Reports `result` to the command and to every later submission of its key.
        package func report(_ result: Result<CommittedEvent, StoreError>, into out: inout Completions) {
            Self.report(result, token: token, waiters: waiters, into: &out)
        }

        /// `report`, given an entry's token and waiters: a method called on an array's element
        /// had the whole entry copied first (its command, event and movie, a dozen references:
        /// about 400 instructions with its destruction), on every commit of every command.
        package static func report(
            _ result: Result<CommittedEvent, StoreError>, token: UInt64, waiters: [UInt64],
            into out: inout Completions
        ) {
            out.commands.append(CommandResult(token: token, result: result))
            for t in waiters {
                out.commands.append(CommandResult(token: t, result: result, replayed: true))
            }
        }
    }

    /// The committed state plus every entry decided and not yet committed or failed.
    package var projected: MovieState
    /// Decided, not yet handed on to be committed.
    package var queued: [Entry] = []
    /// Handed on but not written because an earlier commit failed: decided again, before what is
    /// queued, by `redecide(after:_:)`.
    package var aborted: [Entry] = []
    /// Outcomes known at `submit` (refusals, key replays), for the next `completions()`.
    package var answered: [CommandResult] = []

    package init(projecting state: MovieState) {
        projected = state
    }

    @inline(__always)
    package mutating func answer(
        _ token: UInt64, _ result: Result<CommittedEvent, StoreError>, replayed: Bool = false
    ) {
        answered.append(CommandResult(token: token, result: result, replayed: replayed))
    }

    /// Decides `command` against the projected state: queued when accepted, answered when refused.
    @inline(__always)
    package mutating func decide(_ command: consuming MovieCommand, token: UInt64) {
        do throws(CommandError) {
            let (event, after) = try projected.decideAndApply(command)
            queued.append(Entry(token: token, command: command, event: event, after: after))
        } catch {
            answer(token, .failure(StoreError(error)))
        }
    }

    // MARK: - Keys

    /// A command whose key is pending in `queued` or `aborted` waits for it, or is a conflict
    /// when the key wrote another command. Returns whether it is dealt with.
    package mutating func join(_ key: String, _ command: MovieCommand, token: UInt64) -> Bool {
        Self.join(key, command, token, &queued, &answered)
            || Self.join(key, command, token, &aborted, &answered)
    }

    /// As `join(_:_:token:)`, for entries the store holds (handed on, not yet committed).
    package mutating func join(_ key: String, _ command: MovieCommand, token: UInt64, among entries: inout [Entry])
        -> Bool
    {
        Self.join(key, command, token, &entries, &answered)
    }

    private static func join(
        _ key: String, _ command: MovieCommand, _ token: UInt64, _ entries: inout [Entry],
        _ answered: inout [CommandResult]
    ) -> Bool {
        guard let i = entries.firstIndex(where: { $0.command.key == key }) else { return false }
        if command.wrote(entries[i].event) {
            entries[i].waiters.append(token)
        } else {
            answered.append(CommandResult(token: token, result: .failure(.keyReused(key))))
        }
        return true
    }

    // MARK: - Failures

    /// After a failed commit: decides what was aborted and what is queued again, in order,
    /// against the committed `state`; those now refused fail in `out`.
    package mutating func redecide(after state: MovieState, _ out: inout Completions) {
        projected = state
        let again = aborted + queued
        aborted = []
        queued = []
        for var entry in again {
            do throws(CommandError) {
                (entry.event, entry.after) = try projected.decideAndApply(entry.command)
                queued.append(entry)
            } catch {
                entry.report(.failure(StoreError(error)), into: &out)
            }
        }
    }

    /// Fails every entry of `entries` with `error` in `out`.
    package static func fail(_ entries: some Sequence<Entry>, _ error: StoreError, _ out: inout Completions) {
        for e in entries { e.report(.failure(error), into: &out) }
    }

    /// The store stopped: fails what is aborted and queued with `error`, and projects the
    /// committed `state` again.
    package mutating func failAll(_ error: StoreError, reverting state: MovieState, _ out: inout Completions) {
        Self.fail(aborted, error, &out)
        Self.fail(queued, error, &out)
        aborted = []
        queued = []
        projected = state
    }
}

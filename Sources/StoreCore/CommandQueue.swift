// The one decision path for commands and idempotency keys, which every store uses (SQLiteStore,
// PostgresStore, InMemoryStore): commands decided against the projected state and not yet
// committed (each decision by the rule of CommandDecision.swift), the rules for a key pending or already in the log, and the recovery that decides
// again after a failed commit. Where and how commits happen, and where a store keeps what it has
// handed on, is each store's own; the contract suite (StoreContractTests) holds every store to
// the outcomes these rules give.
import Movies

/// The commands a store has decided but not yet committed. Commands are decided at once against
/// the *projected* state (committed plus pending); refusals and key outcomes known at once are
/// kept in `answered` for the next `completions()`. The store hands `queued` on to be committed
/// and reports each entry with `Entry.report(_:into:)`.
package struct CommandQueue {
    package struct Entry {
        package var token: UInt64
        package var command: MovieCommand
        /// What the command gives against the projected state. Nil for a command the projection
        /// refused in a store that does not refuse at submit (`refusesAtSubmit` false): another
        /// daemon may already have made it right, so it is decided at commit.
        package var event: MovieEvent?
        /// The movie right after the event, as projected (stored with the event for history).
        package var after: Movie?
        package var waiters: [UInt64] = []  // later submissions with the same key

        /// Whether `other`, sent with this entry's key, is this entry's command again: it would
        /// write the event decided (`MovieCommand.wrote`), or, undecided, it is the same op.
        package func isSent(again other: MovieCommand) -> Bool {
            if let event { return other.wrote(event, undoes: command.undoes) }
            return other.isUndo ? command.isUndo : other.op == command.op
        }

        /// Reports `result` to the command and to every later submission of its key.
        package func report(_ result: Result<CommittedEvent, StoreError>, into out: inout Completions) {
            Self.report(result, token: token, waiters: waiters, into: &out)
        }

        /// `report`, given an entry's token and waiters: a method called on an array's element
        /// had the whole entry copied first (its command, event and movie, a dozen references:
        /// about 400 instructions with its destruction), on every commit of every command.
        /// `replayed`: the command's own outcome is a key's replay, not its commit.
        package static func report(
            _ result: Result<CommittedEvent, StoreError>, token: UInt64, waiters: [UInt64],
            replayed: Bool = false, into out: inout Completions
        ) {
            out.commands.append(CommandResult(token: token, result: result, replayed: replayed))
            for t in waiters {
                out.commands.append(CommandResult(token: t, result: result, replayed: true))
            }
        }
    }

    /// Whether a command the projected state refuses is answered at once (`Store.refusesAtSubmit`).
    package let refusesAtSubmit: Bool
    /// The committed state plus every entry decided and not yet committed or failed.
    package var projected: MovieState
    /// Decided, not yet handed on to be committed.
    package var queued: [Entry] = []
    /// Handed on but not written because an earlier commit failed: decided again, before what is
    /// queued, by `redecide(after:_:)`.
    package var aborted: [Entry] = []
    /// Outcomes known at `submit` (refusals, key replays), for the next `completions()`.
    package var answered: [CommandResult] = []

    package init(projecting state: MovieState, refusesAtSubmit: Bool = true) {
        projected = state
        self.refusesAtSubmit = refusesAtSubmit
    }

    @inline(__always)
    package mutating func answer(
        _ token: UInt64, _ result: Result<CommittedEvent, StoreError>, replayed: Bool = false
    ) {
        answered.append(CommandResult(token: token, result: result, replayed: replayed))
    }

    /// Decides `command` against the projected state: queued when accepted; when refused,
    /// answered, unless the store does not refuse at submit and another daemon could make it
    /// right (anything but a bad request): then it is queued undecided, for the commit to decide.
    @inline(__always)
    package mutating func decide(_ command: consuming MovieCommand, token: UInt64) {
        do throws(CommandError) {
            let (event, after) = try projected.decideAndApply(command)
            queued.append(Entry(token: token, command: command, event: event, after: after))
        } catch {
            if refusesAtSubmit || error.isBadRequest {
                answer(token, .failure(StoreError(error)))
            } else {
                queued.append(Entry(token: token, command: command, event: nil, after: nil))
            }
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
    package mutating func join(
        _ key: String, _ command: MovieCommand, token: UInt64, among entries: inout [Entry]
    ) -> Bool {
        Self.join(key, command, token, &entries, &answered)
    }

    /// `command`, sent with the key of `pending` (an entry the store holds): waits for it when it
    /// is its command again, else is a conflict.
    package mutating func join(_ command: MovieCommand, token: UInt64, pending: inout Entry) {
        Self.join(command, token, &pending, &answered)
    }

    private static func join(
        _ key: String, _ command: MovieCommand, _ token: UInt64, _ entries: inout [Entry],
        _ answered: inout [CommandResult]
    ) -> Bool {
        guard let i = entries.firstIndex(where: { $0.command.key == key }) else { return false }
        join(command, token, &entries[i], &answered)
        return true
    }

    /// The one rule for a key pending: static, so that `queued` and `answered` are reached at once.
    private static func join(
        _ command: MovieCommand, _ token: UInt64, _ pending: inout Entry, _ answered: inout [CommandResult]
    ) {
        guard let key = pending.command.key, command.key == key else {
            preconditionFailure("\(command) joined \(pending.command), whose key is not its key")
        }
        if pending.isSent(again: command) {
            pending.waiters.append(token)
        } else {
            answered.append(CommandResult(token: token, result: .failure(.keyReused(key))))
        }
    }

    /// `command`, sent with `key`, which is in the log on `event` (`committed`): answered with
    /// the original outcome when it is the command that wrote it, else a conflict.
    package mutating func answer(
        _ token: UInt64, _ command: MovieCommand, key: String, loggedAs event: MovieEvent,
        _ committed: CommittedEvent
    ) {
        let result = CommandQueue.replay(command, key: key, loggedAs: event, committed)
        answer(token, result, replayed: result.isSuccess)
    }

    /// The outcome of `command` sent with `key`, which is in the log on `event` (`committed`):
    /// a replay of it, or a conflict. The store thread of PostgresStore applies it at commit to
    /// keys it finds in the database.
    package static func replay(
        _ command: MovieCommand, key: String, loggedAs event: MovieEvent, _ committed: CommittedEvent
    ) -> Result<CommittedEvent, StoreError> {
        command.wrote(event, undoes: committed.undoes) ? .success(committed) : .failure(.keyReused(key))
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
            // A key in the log was answered at submit; one pending is this entry's own.
            switch CommandDecision.decide(entry.command, logged: nil, in: &projected) {
            case .accepted(let event, let after):
                entry.event = event
                entry.after = after
                queued.append(entry)
            case .refused(let error):
                entry.report(.failure(StoreError(error)), into: &out)
            case .replayed:
                preconditionFailure("a command decided without its key's log was replayed")
            }
        }
    }

    /// Fails every entry of `entries` with `error` in `out`.
    package static func fail(_ entries: some Sequence<Entry>, _ error: StoreError, _ out: inout Completions) {
        for e in entries { e.report(.failure(error), into: &out) }
    }

    /// The store stopped: fails what is aborted and queued with `error`, and projects the
    /// committed `state` again.
    package mutating func failAll(_ error: StoreError, reverting state: MovieState, _ out: inout Completions)
    {
        Self.fail(aborted, error, &out)
        Self.fail(queued, error, &out)
        aborted = []
        queued = []
        projected = state
    }
}

extension CommandError {
    /// A request no state could make right (a blank title).
    fileprivate var isBadRequest: Bool {
        switch self {
        case .badRequest: true
        case .notFound, .conflict: false
        }
    }
}

extension Result {
    /// Whether this is a success (a key's replay is one; its conflict is not).
    package var isSuccess: Bool {
        switch self {
        case .success: true
        case .failure: false
        }
    }
}

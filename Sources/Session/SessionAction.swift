// What a Session asks its manager to do. The Session decides; the manager owns the file
// descriptors, the sd-event sources and the store, and turns each action into system calls.
// Bytes for the peer are not actions: they accumulate in the Session's output
// (`Session.pendingOutput`), which the manager writes whenever it is not empty.
import Metrics
import Movies
import People
import StoreCore
import SwipeEngine

public enum SessionAction: Equatable, Sendable {
    /// Hand `command` to the store; answer with `SessionInput.commandAnswered`. `op` is
    /// the request's, for the journal.
    case submit(ticket: UInt64, op: String, MovieCommand)
    /// Ask the store for a read; answer with `SessionInput.readAnswered`.
    case read(ticket: UInt64, StoreRead)
    /// A subscriber catching up asks for the next page of the log: the events after `after`, at
    /// most `limit` (`StoreRead.events`); answer with `SessionInput.readAnswered`. The
    /// connection counts against the daemon's cap on catch-ups from its first page until
    /// `catchUpEnded`; past the cap, the read waits for room, and is answered then.
    case catchUp(ticket: UInt64, after: UInt64, limit: Int)
    /// This connection's catch-up holds nothing more (it is caught up and its output written,
    /// or its subscription ended): its share of the cap is free, and a page of it still waiting
    /// for room is not wanted any more.
    case catchUpEnded
    /// Start (or restart) a timer; when it elapses, give it `SessionInput.timerFired`.
    case arm(SessionTimer, microseconds: UInt64)
    /// Drop a timer armed earlier; it must not fire.
    case cancel(SessionTimer)
    /// This connection now receives live movie events (`Session.liveEvent`) from the seq it
    /// reports with `Session.wantsLiveEvent(seq:)`, or no longer does.
    case subscription(active: Bool)
    /// A line for the journal.
    case log(SessionLog)
    /// This connection now shares its rows (`share`), or no longer does.
    case sharing(active: Bool)
    /// Rows of this sharing connection changed (or watchers must see them closed): gather them
    /// with `Session.peerRowsDue` (then `SessionInput.peerRowsSent`) at the next flush (at most
    /// every `Session.peerInterval`).
    case peerRowsChanged
    /// `peers`: this connection watches (or no longer does); answer with
    /// `SessionInput.peersAnswered` listing every sharing connection.
    case peers(ticket: UInt64, watch: Bool)
    /// `status`: answer with `SessionInput.statusAnswered`, the daemon's figures now.
    case status(ticket: UInt64)
    /// `auth` or an admin's op: answer with `SessionInput.peopleAnswered`.
    case people(ticket: UInt64, PeopleAsk)
    /// A request or the connection itself was refused (`op` empty for the latter): for the
    /// journal, the metrics and `denials`, with the person the manager knows this connection as.
    case denied(op: String, DenialReason)
}

/// The timers a Session may ask for.
public enum SessionTimer: Hashable, Sendable {
    /// Close a `fired` row (the engine's 0.5 s close after a full swipe).
    case closeRow(RowID)
    /// Cancel a `confirming` row's confirmation (the engine's 3 s, rule 10).
    case confirmRow(RowID)
    /// Close a connection that has not read its `bye` in time.
    case goodbye
    /// Read the log again for a subscriber whose catch-up read failed.
    case retryCatchUp
}

/// A journal entry: a constant message, its data in fields.
public struct SessionLog: Equatable, Sendable {
    /// `debug`: one per request (a refusal), sent only with `--log-level debug`.
    public enum Level: Equatable, Sendable { case err, warning, info, debug }

    public var level: Level
    public var message: String
    public var fields: [Field]

    public struct Field: Equatable, Sendable {
        public var name: String
        public var value: String
        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    public init(_ level: Level, _ message: String, _ fields: [Field]) {
        self.level = level
        self.message = message
        self.fields = fields
    }
}

/// Where a Session's actions go: appended in order, read and cleared by the manager after each
/// input. The manager reuses one sink, so appending allocates only while it grows.
public struct SessionActions: Sendable {
    public private(set) var actions: [SessionAction] = []
    /// The next ticket: what a session's `submit`, `read` and `peers` are answered by.
    ///
    /// Tickets come from the sink, not from each Session, because the manager lends one sink to
    /// every session: so a ticket is unique across the daemon, and the manager hands it to the
    /// store as the request's token as it is, keeping no numbers of its own (a manager's token
    /// per request and a table from it back to the session's ticket did only that). A request
    /// has then two numbers on its way: this ticket, from the socket to the store and back; and,
    /// inside a store, the number of what carries it to disk, which stays the store's own: one
    /// SQLite group commit carries the commands of many tickets, and a PostgreSQL commit token
    /// is written with the event so that a commit whose answer a broken connection lost can be
    /// found again, which needs a number unique beyond this process's life.
    private var nextTicket: UInt64 = 1
    /// The requests handled and failed, counted where they are decided (`status`,
    /// `/metrics`): the manager lends this one sink to every session, so the counters are the
    /// daemon's, and counting is an array increment with no action appended. A request that
    /// submits a command is timed by the manager, from the request's wake-up to its outcome's
    /// (the mutation class); every other one is answered in the wake-up that read it.
    public var metrics = LoopMetrics()

    public init() {}

    /// A ticket not handed out before by this sink.
    @inline(__always)
    mutating func takeTicket() -> UInt64 {
        defer { nextTicket += 1 }
        return nextTicket
    }

    @inline(__always)
    mutating func append(_ action: consuming SessionAction) { actions.append(action) }

    /// Inlinable: the manager asks it twice a round, and through a call it copied the whole
    /// sink out of the manager's property first (a retain and a release of each array in it).
    @inlinable
    public var isEmpty: Bool { actions.isEmpty }

    /// Hands every action to `body` in order, then forgets them (keeping the capacity).
    public mutating func drain(_ body: (consuming SessionAction) -> Void) {
        // By index: a `for in` would copy the array's buffer reference and iterate a copy. Each
        // action is moved out (swapped for one without a payload) rather than copied: a copy
        // retained the command's strings, and `body` copied them again to keep them (≈ 200
        // instructions a toggle, callgrind).
        var i = 0
        while i < actions.count {
            var action = SessionAction.peerRowsChanged
            swap(&action, &actions[i])
            body(action)
            i += 1
        }
        actions.removeAll(keepingCapacity: true)
    }

    /// The actions so far, and forgets them (for tests).
    public mutating func take() -> [SessionAction] {
        defer { actions.removeAll(keepingCapacity: true) }
        return actions
    }
}

// One client connection as a pure state machine: facts in, actions out. It owns what a
// connection is (the line framer, the replies in their order, the swipe engine with its layout
// and viewport, the fast lanes' memos, the subscription cursor, the lifecycle) and decides
// everything; it does no I/O and reads no clock. The manager (Daemon/Server.swift) owns the
// socket, the timers and the store, feeds the facts in and carries the actions out, as
// swift-nio's protocol state machines sit under their channel handlers.
//
// Its one way in: SessionInput.swift (every fact, and `handle`, which dispatches to the
// functions below). Where a request is answered: Session+Requests.swift (dispatch,
// shared-state ops), Session+Swipe.swift (this client's swipe engine).
//
// Inputs take the shared, committed movie state as a borrowed parameter: the Session reads it
// (a gesture's movie, `list`, the latest seq) but never keeps it.
import JSONCodec
import Movies
import People
import StoreCore
import SwipeEngine
import Wire

public struct SessionConfig: Equatable, Sendable {
    /// This connection's number (`hello.client`, the journal's `CLIENT=`).
    public var client: UInt64
    /// Who the connection acts for when it opens: a Unix peer's user with the role its groups
    /// (or an admin) give it, an anonymous WebSocket, a trusted proxy's user. It may sign in as
    /// another (`auth`) and be re-judged (`Session.identityChanged`).
    public var identity: Identity
    /// The writers group, for the `forbidden` message.
    public var writersGroup: String?
    /// `--max-line`.
    public var maxLine: Int
    /// `--max-queue`: what the connection may hold for its peer before reading stops.
    public var maxQueue: Int
    /// The fast lanes (the repeat and fast decoders, the drag path with row templates). Off only
    /// in tests, which check that the lanes answer byte for byte as the general path does.
    public var fastLanes: Bool

    public init(
        client: UInt64, identity: Identity, writersGroup: String? = nil, maxLine: Int = 65_536,
        maxQueue: Int = 1 << 20, fastLanes: Bool = true
    ) {
        self.client = client
        self.identity = identity
        self.writersGroup = writersGroup
        self.maxLine = maxLine
        self.maxQueue = maxQueue
        self.fastLanes = fastLanes
    }
}

/// Where a connection is in its life. One value, instead of flags that could contradict.
public enum Lifecycle: Equatable, Sendable {
    /// Reading and answering requests.
    case reading
    /// What it holds for its peer passed `--max-queue`: reading stops until it drains to half.
    case paused
    /// The peer closed its writing side: lines already read are answered, then the connection
    /// closes (a subscriber stays until the peer closes for good).
    case halfClosed
    /// A `bye` is queued: what is owed is written, then the connection closes. Nothing more is
    /// read or answered.
    case sayingBye(reason: ByeReason)
    /// Done: the manager closes the socket and forgets the Session.
    case closed(reason: CloseReason)
}

/// Why a connection the Session ended is closed. Payload-free of strings, like the rest of the
/// lifecycle: a `Lifecycle` is copied and compared on every request, and a String in it would
/// be retained and released each time.
public enum CloseReason: Equatable, Sendable, CustomStringConvertible {
    /// The peer closed its writing side and was owed nothing more.
    case peerClosed
    /// Its `bye` was written.
    case closedByServer
    /// It did not read its `bye` in time.
    case byeNotRead(ByeReason)

    /// For the journal's `REASON=`.
    public var description: String {
        switch self {
        case .peerClosed: "peer closed"
        case .closedByServer: "closed by server"
        case .byeNotRead(let bye): "did not read its bye (\(bye.rawValue))"
        }
    }
}

/// A subscriber's position in the log.
struct Subscription: Equatable {
    /// The seq of the last movie event sent.
    var cursor: UInt64
    var catchUp: CatchUp = .idle
    /// Whether it counts against the daemon's cap on catch-ups: from its first page asked
    /// (`.catchUp`) until `.catchUpEnded` (Session+CatchUp.swift).
    var holdsShare = false
    /// The longest event line of its last page: what the next page is sized by.
    var eventBytes = Session.catchUpEventEstimate

    enum CatchUp: Equatable {
        case idle
        /// A read from `cursor` is in flight.
        case reading(ticket: UInt64)
        /// A read failed; the next waits for the retry timer.
        case retryArmed
    }
}

public final class Session {
    public let config: SessionConfig
    /// Who this connection acts for now, and so what it may do (Session+People.swift).
    public internal(set) var identity: Identity {
        didSet { role = identity.role }
    }
    /// `identity.role`, kept apart: every request reads it, and reading it through `identity`
    /// copied the whole identity (a retain and a release of its strings, ≈ 150 instructions a
    /// drag under callgrind).
    public private(set) var role: AccessRole
    /// Whether its role may change the shared state.
    var mayWrite: Bool { role >= .writer }
    /// The ticket of a question to the manager about people being answered (`auth`, an admin's
    /// op): the lines after it wait for it, so that they are judged as whoever it signed in as
    /// and read what it changed.
    var heldBy: UInt64?
    public private(set) var lifecycle: Lifecycle = .reading
    var framer: LineFramer
    var replies = ReplyQueue()
    var list = SwipeList(layout: MovieLayout.standard)
    /// The form of every row this connection receives (`options`): each row is worded in the
    /// form in force when it is worded. A reply is worded when its request is handled, also one
    /// that then waits for a commit (`CommandReply.fired` keeps its request's form).
    var rowForm = RowForm.full

    /// Lends `list` in place. Handing `list` itself to a function of another module copies the
    /// engine's state (a retain per array in it, and its value witnesses: ≈ 120 instructions a
    /// drag, callgrind); the drag path lends it through this instead.
    @inline(__always)
    func withList<R>(_ body: (inout SwipeList) -> R) -> R { body(&list) }
    /// The movie of this client's last gesture, and the seq it was read at (Session+Swipe.swift).
    var gestureMovie: GestureMovie?
    /// This client's last drag line, for the next one (Wire's RequestRepeat.swift).
    var dragRepeat = DragRepeat()
    /// This client's rows encoded with holes for their numbers (Wire's RowTemplate.swift).
    let rowTemplates = RowTemplates()
    var subscription: Subscription?
    /// Counts subscribe and unsubscribe requests (see `LateReply.subscribe`).
    var subscriptionGeneration: UInt64 = 0
    /// Row timers armed and not yet fired or cancelled.
    var armedRows: Set<RowID> = []
    /// The rows whose confirmation timer (`SessionTimer.confirmRow`) is armed.
    var armedConfirms: Set<RowID> = []
    /// This connection's changes, for `undo`: nil until its first (UndoHistory.swift).
    var undoHistory: UndoHistory?
    /// An `undo` of the change at a seq, waiting for the store's read of that change (at most
    /// one: it is the first reply due while it waits).
    var undoLookup: UndoLookup?
    public private(set) var requests: UInt64 = 0
    /// The manager's monotonic clock, µs, as of the fact being fed in: time is an input. Read
    /// only while recording (a recording's entries carry the time since its start).
    public var clock: UInt64 { clockNow }
    /// `clock`'s storage, set by `handle` (inlined into the manager's round).
    @usableFromInline var clockNow: UInt64 = 0
    /// The recording going on or the last one (Session+Record.swift); nil until the first.
    var recording: Recording?
    var recordingOn = false
    /// The daemon's cap on long `list` replies, shared by every connection (ListStream.swift).
    let largeReplies: LargeReplies
    /// Shared rows (Session+Share.swift): whether this connection shares and watches; the rows
    /// changed since they last went to watchers; the rows watchers last saw not closed; whether
    /// watchers still owe a closed row for each (sharing stopped).
    var sharing = false
    var watching = false
    var peerDirty: Set<RowID> = []
    var peerShown: Set<RowID> = []
    var peerClosing = false

    /// A new connection: greets its peer with `hello` (`log`: the store's `logID`).
    public init(
        config: SessionConfig, latestSeq: UInt64, log: String, largeReplies: LargeReplies = LargeReplies()
    ) {
        self.config = config
        identity = config.identity
        role = config.identity.role
        self.largeReplies = largeReplies
        framer = LineFramer(maxLine: config.maxLine)
        replies.push {
            Encode.hello(
                &$0, client: config.client, seq: latestSeq, user: config.identity.user,
                role: config.identity.role,
                log: log)
        }
    }

    // MARK: - What the manager reads

    /// Bytes to write to the socket, in order. After writing some, report them with `wrote`.
    public func withPendingOutput<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        replies.out.bytes.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[replies.head...])) }
    }

    /// How many changes of this connection are kept for `undo` (at most 100); nil while it has
    /// made none (no history is allocated until then).
    public var undoableChanges: Int? { undoHistory?.count }

    /// How many bytes wait for the socket.
    public var pendingOutput: Int { replies.queued }

    /// Everything held for the peer (the output and the replies waiting): what `--max-queue`
    /// limits.
    public var backlog: Int { replies.backlog }

    /// Whether the manager should watch the socket for reading.
    public var wantsRead: Bool {
        if case .reading = lifecycle { return true }
        return false
    }

    /// Whether this connection has nothing to catch up with: not subscribed, or subscribed and
    /// sent every event up to `seq`.
    public func caughtUp(to seq: UInt64) -> Bool { (subscription?.cursor ?? seq) >= seq }

    /// Whether any row of this client is not closed (movie changes re-render those).
    public var hasOpenRows: Bool { list.hasOpenRows }

    /// Whether the live movie event `seq` is due to this connection now: it is subscribed, has
    /// sent everything up to `seq - 1`, and is not closing.
    @inline(__always)
    public func wantsLiveEvent(seq: UInt64) -> Bool {
        // `goodbye` ends the subscription: a connection saying bye is never subscribed.
        subscription?.cursor == seq &- 1
    }

    var isOpenForEvents: Bool {
        switch lifecycle {
        case .reading, .paused, .halfClosed: true
        case .sayingBye, .closed: false
        }
    }

    // MARK: - Facts (each a case of SessionInput, given through `handle`)

    /// Bytes arrived from the peer.
    @usableFromInline
    func received(
        _ bytes: UnsafeRawBufferPointer, _ state: borrowing MovieState, _ sink: inout SessionActions
    ) {
        switch lifecycle {
        case .reading, .paused: break
        case .halfClosed, .sayingBye, .closed:
            preconditionFailure("client \(config.client): bytes arrived while \(lifecycle)")
        }
        framer.append(bytes)
        answerLines(state, &sink)
        settle()
    }

    /// The peer closed its writing side (read returned 0). A last line without a newline is
    /// answered as a line.
    @usableFromInline
    func readEnded(_ state: borrowing MovieState, _ sink: inout SessionActions) {
        switch lifecycle {
        case .reading, .paused:
            lifecycle = .halfClosed
            framer.finish()
            answerLines(state, &sink)
        case .halfClosed, .sayingBye, .closed:
            return
        }
        settle()
    }

    /// `n` bytes of the output were written.
    @usableFromInline
    func consumed(_ n: Int) {
        replies.consumed(n)
        settle()
    }

    /// Whether `resume` may have something to do: lines left in the framer, reading paused, or
    /// a subscription behind `latestSeq`. False on the common paths (every line answered, a
    /// subscriber up to date), where the manager skips the call.
    @inline(__always)
    public func mayResume(latestSeq: UInt64) -> Bool {
        if framer.buffered > 0 { return true }
        if replies.lateDue { return true }
        if case .paused = lifecycle { return true }
        // A subscriber behind the log, with no catch-up read in flight, reads the next page; one
        // caught up gives its share of the catch-ups' cap back once its output is written.
        if let subscription, subscription.catchUp == .idle {
            return subscription.cursor < latestSeq || (subscription.holdsShare && replies.owed == 0)
        }
        return false
    }

    /// The manager wrote what it could: the connection catches up with what waited for room
    /// (lines held back by the cap, a subscriber's catch-up). Whether it answered any line is
    /// `requests` moving (the manager writes again and resumes while it does).
    @usableFromInline
    func resume(_ state: borrowing MovieState, _ sink: inout SessionActions) {
        if replies.lateDue {
            replies.lateDue = false
            releaseDue(state, &sink)
        }
        if case .paused = lifecycle, replies.backlog <= config.maxQueue / 2 { lifecycle = .reading }
        if framer.buffered > 0, replies.backlog <= config.maxQueue / 2 {
            switch lifecycle {
            case .reading, .halfClosed: answerLines(state, &sink)
            case .paused, .sayingBye, .closed: break
            }
        }
        if subscription != nil { catchUp(state, &sink) }
        settle()
    }

    /// A command's outcome came back from the store.
    @usableFromInline
    func commandAnswered(
        _ ticket: UInt64, _ result: Result<CommittedEvent, WireError>, _ state: borrowing MovieState,
        _ sink: inout SessionActions
    ) {
        // A connection told `bye` gets nothing after it.
        guard isOpenForEvents else { return }
        // What undo needs of the reply, not the reply itself: a `fired` one carries a whole row,
        // and copying it out of its slot retained every array in it.
        var note: UndoNote?
        let filled = replies.fill(command: ticket) { out, reply in
            Self.word(&out, reply, result)
            note = reply.undoNote
        }
        precondition(filled, "client \(config.client): no reply waits for command \(ticket)")
        if let note { noteForUndo(note, result) }
        releaseDue(state, &sink)
        settle()
    }

    /// A read's outcome came back from the store.
    @usableFromInline
    func readAnswered(
        _ ticket: UInt64, _ result: Result<[CommittedEvent], WireError>, _ state: borrowing MovieState,
        _ sink: inout SessionActions
    ) {
        guard isOpenForEvents else { return }
        if let subscription, subscription.catchUp == .reading(ticket: ticket) {
            pageAnswered(result, state, &sink)
        } else if let lookup = undoLookup, lookup.ticket == ticket {
            undoLookup = nil
            undoRead(lookup, result, state, &sink)
            releaseDue(state, &sink)
        } else {
            let latest = state.lastSeq
            let filled = replies.fill(read: ticket) { out, id in
                switch result {
                case .success(let events): Encode.history(&out, id: id, seq: latest, events: events)
                case .failure(let error): Encode.error(&out, id: id, error)
                }
            }
            // Not a history page: the catch-up of a subscription ended since, which has no
            // place to go.
            if filled {
                if case .failure(let error) = result {
                    sink.metrics.failed(code: error.code.metricsIndex)
                    sink.append(.log(requestFailed("history", error)))
                }
                releaseDue(state, &sink)
            }
        }
        catchUp(state, &sink)
        settle()
    }

    /// A timer the Session armed has elapsed.
    @usableFromInline
    func timerFired(_ timer: SessionTimer, _ state: borrowing MovieState, _ sink: inout SessionActions) {
        switch timer {
        case .goodbye:
            guard case .sayingBye(let reason) = lifecycle else {
                preconditionFailure("client \(config.client): goodbye timer while \(lifecycle)")
            }
            lifecycle = .closed(reason: .byeNotRead(reason))
        case .closeRow(let row):
            guard armedRows.remove(row) != nil else {
                preconditionFailure("client \(config.client): close timer of \(row), which was not armed")
            }
            guard isOpenForEvents else { return }
            observeRows(row, state, &sink)
            record(.closeTimer(movie: row), &sink)
            apply(list.timerFired(row: row), report: true, state, &sink)
            pushRow(row, state, &sink)
        case .confirmRow(let row):
            guard armedConfirms.remove(row) != nil else {
                preconditionFailure("client \(config.client): confirm timer of \(row), which was not armed")
            }
            guard isOpenForEvents else { return }
            observeRows(row, state, &sink)
            record(.confirmTimer(movie: row), &sink)
            apply(list.confirmTimedOut(row: row), report: true, state, &sink)
            pushRow(row, state, &sink, timedOut: true)
        case .retryCatchUp:
            if subscription?.catchUp == .retryArmed { subscription?.catchUp = .idle }
            catchUp(state, &sink)
        }
        settle()
    }

    /// The manager ends the connection: `bye` with `reason`, written after every reply already
    /// worded; nothing more is read or answered. Closed after `goodbyeGrace` regardless.
    @usableFromInline
    func goodbye(_ reason: ByeReason, _ sink: inout SessionActions) {
        guard isOpenForEvents else { return }
        endSubscription(&sink)
        lifecycle = .sayingBye(reason: reason)
        replies.push { Encode.bye(&$0, reason: reason) }
        sink.append(.arm(.goodbye, microseconds: Session.goodbyeGrace))
        settle()
    }

    /// How long a connection told `bye` may take to read it before it is closed regardless.
    public static let goodbyeGrace: UInt64 = 1_000_000

    /// A live movie event, worded once for every subscriber (`wantsLiveEvent(seq:)` was true).
    @usableFromInline
    func liveEvent(seq: UInt64, line: [UInt8], _ sink: inout SessionActions) {
        precondition(wantsLiveEvent(seq: seq), "client \(config.client): event \(seq) is not due")
        if replies.backlog > config.maxQueue {
            sink.append(
                .log(
                    SessionLog(
                        .warning, "subscriber too slow, disconnecting",
                        [
                            .init("CLIENT", "\(config.client)"), .init("QUEUED", "\(replies.backlog)"),
                            .init("SEQ", "\(seq)"),
                        ])))
            goodbye(.slowConsumer, &sink)
            return
        }
        replies.push(bytes: line)
        subscription?.cursor = seq
        settle()
    }

    /// Whether the manager may write a live event to the socket before this session sees it (the
    /// fan-out lane, `liveEvent(seq:line:written:_:)`): nothing of this connection waits to be
    /// written, so the event is next on the wire either way, and the cap cannot be exceeded.
    @inline(__always)
    public var takesLiveEventsDirectly: Bool { replies.backlog == 0 }

    /// The fan-out lane of `liveEvent(seq:line:_:)`: with `takesLiveEventsDirectly` true, the
    /// manager wrote the first `written` bytes of the line itself; the rest waits as the whole
    /// line would have. One change of 10,000 subscribers' then costs one `send` each and no
    /// copy, and the first of them read while the last are still being written to.
    @usableFromInline
    func liveEvent(seq: UInt64, line: [UInt8], written: Int, _ sink: inout SessionActions) {
        precondition(wantsLiveEvent(seq: seq), "client \(config.client): event \(seq) is not due")
        precondition(
            takesLiveEventsDirectly && written >= 0 && written <= line.count,
            "client \(config.client): \(written) of \(line.count) bytes written past a backlog of \(replies.backlog)"
        )
        if written < line.count { replies.push(bytes: line[written...]) }
        subscription?.cursor = seq
        settle()
    }

    /// A committed event changed a movie: this client's row of it re-renders where it is, or is
    /// dropped when the movie was removed (rule 9).
    @usableFromInline
    func movieChanged(
        _ event: CommittedEvent, _ state: borrowing MovieState, _ sink: inout SessionActions
    ) {
        let row = event.movie.id
        guard isOpenForEvents, list.hasOpenRows, list.state(of: row).phase != .closed else { return }
        observeRows(row, state, &sink)
        if event.kind == MovieEvent.Kind.removed {
            record(.movieRemoved(movie: row), &sink)
            touchedRow(row, &sink)
            apply(list.rowRemoved(row: row), report: true, state, &sink)
            let render = list.render(row, flags: [])
            let form = rowForm
            replies.send { Encode.rowEvent(&$0, row: render, form: form, removed: true) }
        } else {
            record(.movieChanged(movie: row), &sink)
            pushRow(row, state, &sink)
        }
        settle()
    }

    // MARK: - Inside

    /// Answers the complete lines buffered, stopping when what the connection holds passes its
    /// cap (the rest stays in the framer until the peer reads).
    func answerLines(_ state: borrowing MovieState, _ sink: inout SessionActions) {
        while replies.backlog <= config.maxQueue, isOpenForEvents, heldBy == nil {
            guard let frame = framer.next() else { break }
            requests += 1
            switch frame {
            case .line(let bytes):
                bytes.withUnsafeBytes { handle(line: $0, state, &sink) }
            case .tooLarge(let length):
                reply(
                    id: nil, op: nil,
                    error: WireError(
                        .tooLarge,
                        "line of \(length) bytes is longer than the limit of \(config.maxLine) bytes; skipped"
                    ),
                    &sink)
            }
        }
    }

    /// After every input: a connection holding more than the cap for its peer stops reading; one
    /// that owes nothing more closes.
    func settle() {
        if case .reading = lifecycle, replies.backlog > config.maxQueue { lifecycle = .paused }
        guard !replies.hasSlots, replies.queued == 0 else { return }
        switch lifecycle {
        case .sayingBye:
            lifecycle = .closed(reason: .closedByServer)
        case .halfClosed where framer.buffered == 0 && subscription == nil:
            lifecycle = .closed(reason: .peerClosed)
        case .reading, .paused, .halfClosed, .closed:
            break
        }
    }

    func requestFailed(_ op: String?, _ error: WireError) -> SessionLog {
        var fields: [SessionLog.Field] = [
            .init("CLIENT", "\(config.client)"), .init("ERROR", error.code.rawValue),
            .init("ERROR_MESSAGE", error.message),
        ]
        if let op { fields.append(.init("OP", op)) }
        // A refusal is the client's business, one entry per request (debug: a client sending
        // bad requests as fast as it can must not flood the journal, where journald's rate
        // limit would then drop the daemon's own warnings); the daemon's failures are errors.
        let level: SessionLog.Level =
            switch error.code {
            case .internal, .storage: .err
            case .badJSON, .badRequest, .unknownOp, .notFound, .conflict, .notRevealed, .tooLarge, .forbidden,
                .overloaded, .unavailable:
                .debug
            }
        return SessionLog(level, "request failed", fields)
    }

    /// An error reply, in request order, and its journal line.
    func reply(id: [UInt8]?, op: String?, error: WireError, _ sink: inout SessionActions) {
        replies.send { Encode.error(&$0, id: id, error) }
        sink.metrics.failed(code: error.code.metricsIndex)
        sink.append(.log(requestFailed(op, error)))
    }
}

extension WireError {
    /// The store's errors keep their code: the wire has the same names. The one mapping.
    public init(_ error: StoreError) {
        let code: ErrorCode =
            switch error.code {
            case .notFound: .notFound
            case .badRequest: .badRequest
            case .conflict: .conflict
            case .storage: .storage
            case .unavailable: .unavailable
            case .internal: .internal
            }
        self.init(code, error.message, reason: error.reason)
    }
}

// A connection's one way in: every fact it can hear is a case of `SessionInput`, and
// `Session.handle` is the only entry (the manager calls it from one place, `Server.round`), as
// swift-nio's state machines take their events. What the Session answers goes to the sink as
// `SessionAction`s; what the manager reads of it without changing it (its output, what it wants
// watched, the rows a watcher starts from) are the properties and queries on `Session`.
import Metrics
import Movies
import People
import StoreCore
import SwipeEngine
import Wire

/// Every fact a connection can hear, each with what it carries.
public enum SessionInput {
    /// Bytes arrived from the peer (a stream: lines end with `\n`), or a WebSocket read's whole
    /// text messages, each with a `\n` added (FrameLink moves them together in the read buffer).
    case bytes(UnsafeRawBufferPointer)
    /// The peer closed its writing side (read returned 0).
    case readEnded
    /// This many bytes of the output (`withPendingOutput`) were written.
    case written(Int)
    /// The manager wrote what it could: catch up with what waited for room (lines held back by
    /// the cap, a subscriber's next page). Asked only while `mayResume` is true.
    case resume
    /// A command's outcome came back from the store, or the manager refused it (overloaded, a
    /// rate limit): the same fact to the connection.
    case commandAnswered(ticket: UInt64, Result<CommittedEvent, WireError>)
    /// A read's outcome came back from the store.
    case readAnswered(ticket: UInt64, Result<[CommittedEvent], WireError>)
    /// A timer the Session armed has elapsed (or could not be made: then at once).
    case timerFired(SessionTimer)
    /// The manager ends the connection: `bye` with this reason after every reply worded.
    case goodbye(ByeReason)
    /// A live movie event, worded once for every subscriber, due to this one
    /// (`wantsLiveEvent(seq:)`). `written`: the manager wrote that much of it to the socket
    /// itself (`takesLiveEventsDirectly` was true: the fan-out lane); nil, none.
    case liveEvent(seq: UInt64, line: [UInt8], written: Int?)
    /// Committed events changed movies: this client's open rows of them re-render, in order.
    case moviesChanged([CommittedEvent])
    /// The manager's answer to a `PeopleAsk` (`SessionAction.people`).
    case peopleAnswered(ticket: UInt64, PeopleAnswer)
    /// The manager re-judged this connection: it acts as `who` from its next request on.
    /// `tokenLost`: the person of the token it signed in with, which went.
    case identityChanged(Identity, tokenLost: String?)
    /// The manager's answer to `SessionAction.peers`: the sharing connections' rows.
    case peersAnswered(ticket: UInt64, [PeerRows])
    /// The manager's answer to `SessionAction.status`: the daemon's figures, the detail a
    /// writer sees, and every connection for an admin. Boxed (`indirect`): the figures are
    /// 456 bytes, and inline they made every input that size, copied on every read, write and
    /// commit (+11 % instructions a toggle, callgrind), for an answer a person asks for.
    indirect case statusAnswered(
        ticket: UInt64, MetricsSnapshot, detail: Bool, connections: [ConnectionSummary]?)
    /// A `peer-row` event for this watcher, worded once for every watcher in its form.
    case peerRow([UInt8])
    /// The rows `peerRowsDue` gave went to the watchers: it forgets them.
    case peerRowsSent([RowRender])
}

extension Session {
    /// The one entry: gives this connection `input`, with the committed state lent to it; its
    /// actions go to `sink`. `now`: the manager's monotonic clock (µs) when the fact is one
    /// whose time counts (bytes read, a timer, a change while recording); time is an input.
    ///
    /// Inlinable, so that the manager's `round`, which names the case it gives, calls the
    /// function below directly: out of line, every input was built whole (its largest case,
    /// a command's outcome, is 161 bytes) and its payload copied out again, retains and all
    /// (+4 % instructions a toggle, callgrind).
    @inlinable
    public func handle(
        _ input: SessionInput, at now: UInt64? = nil, _ state: borrowing MovieState,
        _ sink: inout SessionActions
    ) {
        if let now { clockNow = now }
        switch input {
        case .bytes(let bytes): received(bytes, state, &sink)
        case .readEnded: readEnded(state, &sink)
        case .written(let n): consumed(n)
        case .resume: resume(state, &sink)
        case .commandAnswered(let ticket, let result): commandAnswered(ticket, result, state, &sink)
        case .readAnswered(let ticket, let result): readAnswered(ticket, result, state, &sink)
        case .timerFired(let timer): timerFired(timer, state, &sink)
        case .goodbye(let reason): goodbye(reason, &sink)
        case .liveEvent(let seq, let line, let written?):
            liveEvent(seq: seq, line: line, written: written, &sink)
        case .liveEvent(let seq, let line, nil): liveEvent(seq: seq, line: line, &sink)
        case .moviesChanged(let events): for event in events { movieChanged(event, state, &sink) }
        case .peopleAnswered(let ticket, let answer): peopleAnswered(ticket, answer, state, &sink)
        case .identityChanged(let who, let lost): identityChanged(who, tokenLost: lost, &sink)
        case .peersAnswered(let ticket, let peers): peersAnswered(ticket, peers, state, &sink)
        case .statusAnswered(let ticket, let snapshot, let detail, let connections):
            statusAnswered(ticket, snapshot, detail: detail, connections: connections, state, &sink)
        case .peerRow(let line): peerRow(line, &sink)
        case .peerRowsSent(let rows): peerRowsSent(rows)
        }
    }
}

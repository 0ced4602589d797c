// `subscribe` and a subscriber's catch-up from the log (protocol.md, `subscribe` and Limits).
// Events the peer has not read stay in the log: a subscriber behind the log is fed a page at a
// time, each page asked only once what the connection owes its peer has drained to a low-water
// mark, and worded only as far as the catch-up window (64 KB) allows; what does not fit is read
// again later. So a subscriber that never reads holds at most the window, whatever
// `--max-queue` is, as a long `list` holds at most its chunk (ListStream.swift), and it resumes
// the same way: the manager asks the connection to resume once its output drained.
//
// Live events need no care here: one is due only to a subscriber whose cursor is just before it
// (`wantsLiveEvent`), so while a catch-up is behind, the live events are read from the log with
// the rest, and the first event after the last page goes live: none lost, none twice.
//
// The daemon caps what catch-ups hold together (the manager's CatchUps, Server+CatchUp.swift):
// a subscriber counts against that cap from its first page (`.catchUp`) until it is caught up
// with its output written, or its subscription ends (`.catchUpEnded`). A page the cap holds back
// is simply answered later.
import JSONCodec
import Movies
import StoreCore
import Wire

extension Session {
    /// The most catch-up worded for the peer a subscriber holds (less when `--max-queue` / 2 is
    /// less): a page is worded only as far as what the connection owes stays within it.
    public static let catchUpWindow = 64 * 1024

    /// The most events a page asks for.
    static let catchUpPage = 256

    /// What the first page is sized by, before any event was seen: a movie event is about 200
    /// bytes with short titles. A page sized too large is only cut, and read again from there.
    static let catchUpEventEstimate = 256

    /// This connection's catch-up window: `catchUpWindow`, or half of `--max-queue` when less.
    var catchUpWindow: Int { min(Session.catchUpWindow, config.maxQueue / 2) }

    func subscribe(
        from: UInt64?, id: [UInt8]?, op: String, _ state: borrowing MovieState, _ sink: inout SessionActions
    ) {
        let latest = state.lastSeq
        if let from, from > latest {
            return reply(
                id: id, op: op,
                error: .badRequest("\"from\" (\(from)) is ahead of the latest seq (\(latest))"),
                &sink)
        }
        endSubscription(&sink)
        subscriptionGeneration += 1
        late(.subscribe(id: id, from: from, generation: subscriptionGeneration), state, &sink)
    }

    /// Ends the subscription, giving back its share of the daemon's cap on catch-ups if it held
    /// one (a read of it in flight is answered to nobody: its ticket is no longer awaited).
    func endSubscription(_ sink: inout SessionActions) {
        guard let ended = subscription else { return }
        subscription = nil
        if ended.holdsShare { sink.append(.catchUpEnded) }
        sink.append(.subscription(active: false))
    }

    /// A lagging subscriber asks for the next page of the log once its output has drained to a
    /// quarter of its window, sized to what the window has room for; a subscriber caught up
    /// gives its share back once its output is written.
    func catchUp(_ state: borrowing MovieState, _ sink: inout SessionActions) {
        guard let current = subscription, current.catchUp == .idle, isOpenForEvents else { return }
        guard current.cursor < state.lastSeq else { return endCatchUpIfWritten(&sink) }
        let window = catchUpWindow
        let owed = replies.owed
        guard owed <= window / 4 else { return }
        let limit = min(Session.catchUpPage, max(1, (window - owed) / current.eventBytes))
        let ticket = sink.takeTicket()
        subscription?.catchUp = .reading(ticket: ticket)
        subscription?.holdsShare = true
        sink.append(.catchUp(ticket: ticket, after: current.cursor, limit: limit))
    }

    /// Gives the share back once everything the catch-up worded is written.
    private func endCatchUpIfWritten(_ sink: inout SessionActions) {
        guard subscription?.holdsShare == true, replies.owed == 0 else { return }
        subscription?.holdsShare = false
        sink.append(.catchUpEnded)
    }

    /// A page of the log came back: its events are worded in order, the first always (the page
    /// was asked with room for it), the next ones while the window holds them. Those that do not
    /// fit are dropped here and read again with the next page: the cursor is the last worded.
    func pageAnswered(
        _ result: Result<[CommittedEvent], WireError>, _ state: borrowing MovieState,
        _ sink: inout SessionActions
    ) {
        subscription?.catchUp = .idle
        switch result {
        case .success(let events):
            let window = catchUpWindow
            // Each event is worded aside first, so that the output never holds, even for a
            // moment, more than the window (its buffer would grow to twice that and keep it).
            var line = JSONWriter(capacity: 0)
            if let last = events.last, last.seq > subscription?.cursor ?? .max {
                replies.reserve(owed: window)
            }
            var longest = 0
            var first = true
            for event in events where event.seq > subscription?.cursor ?? .max {
                line.reset()
                Encode.movieEvent(&line, event)
                longest = max(longest, line.bytes.count)
                guard first || replies.owed + line.bytes.count <= window else { break }
                replies.push(bytes: line.bytes)
                first = false
                subscription?.cursor = event.seq
            }
            if longest > 0 { subscription?.eventBytes = longest }
        case .failure(let error):
            sink.append(
                .log(
                    SessionLog(
                        .err, "cannot read the log for a subscriber, retrying in 1 s",
                        [.init("CLIENT", "\(config.client)"), .init("ERROR", error.message)])))
            sink.append(.arm(.retryCatchUp, microseconds: 1_000_000))
            // No new read until the timer: a failing disk must not make the loop spin.
            subscription?.catchUp = .retryArmed
        }
    }
}

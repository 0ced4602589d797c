// `share` and `peers` (protocol.md, "Shared rows"): a sharing connection's rows go to the
// connections that watch. The Session keeps which of its rows changed since they last went out
// and which the watchers last saw open; the manager (Daemon/Server+Peers.swift) gathers the
// changed rows of every sharer at most once every `Session.peerInterval` and hands each watcher
// the events (`peerRow`), so that a row's events are coalesced to one per interval, its latest
// state always last. While not sharing, each hook costs one test of `sharing`.
import Metrics
import Movies
import SwipeEngine
import Wire

extension Session {
    /// At most one `peer-row` event per row in this time (µs): 16 ms, a frame at 60 Hz.
    public static let peerInterval: UInt64 = 16_000

    /// Whether this connection shares its rows now.
    public var isSharing: Bool { sharing }

    /// Whether this connection receives `peer-row` events.
    public var isWatching: Bool { watching }

    /// Whether rows changed (or must be closed for watchers) since they last went out (`peerRowsSent`).
    public var hasPeerRows: Bool { !peerDirty.isEmpty || peerClosing }

    func share(on: Bool, id: [UInt8]?, _ sink: inout SessionActions) {
        if on != sharing {
            sharing = on
            if on {
                peerClosing = false
                sink.append(.sharing(active: true))
                // Its open rows are news to every watcher, and rows they last saw open may be
                // closed since.
                for row in peerShown.union(list.openRows).sorted() { markPeerDirty(row, &sink) }
            } else {
                // Watchers get a closed row for each row they may think open, at the next flush.
                peerClosing = true
                peerDirty.removeAll()
                sink.append(.sharing(active: false))
                sink.append(.peerRowsChanged)
            }
        }
        replies.send { Encode.share(&$0, id: id, on: on) }
    }

    func peers(watch: Bool, id: [UInt8]?, _ sink: inout SessionActions) {
        watching = watch
        let ticket = sink.takeTicket()
        replies.park(.read(ticket: ticket, id: id))
        sink.append(.peers(ticket: ticket, watch: watch))
    }

    /// The manager's answer to `.peers`: the sharing connections, for the reply.
    @usableFromInline
    func peersAnswered(
        _ ticket: UInt64, _ peers: [PeerRows], _ state: borrowing MovieState, _ sink: inout SessionActions
    ) {
        guard isOpenForEvents else { return }
        let (form, watch) = (rowForm, watching)
        let filled = replies.fill(read: ticket) { out, id in
            Encode.peers(&out, id: id, watch: watch, peers: peers, form: form)
        }
        precondition(filled, "client \(config.client): no reply waits for peers \(ticket)")
        releaseDue(state, &sink)
        settle()
    }

    /// The manager's answer to `.status`: the daemon's figures, with where the store is, the
    /// pid and the limits when `detail` (a writer or root: protocol.md, "status").
    @usableFromInline
    func statusAnswered(
        _ ticket: UInt64, _ snapshot: MetricsSnapshot, detail: Bool, connections: [ConnectionSummary]? = nil,
        _ state: borrowing MovieState, _ sink: inout SessionActions
    ) {
        guard isOpenForEvents else { return }
        let filled = replies.fill(read: ticket) { out, id in
            Encode.status(&out, id: id, snapshot, detail: detail, connections: connections)
        }
        precondition(filled, "client \(config.client): no reply waits for status \(ticket)")
        releaseDue(state, &sink)
        settle()
    }

    /// This connection's rows as a watcher starts from them.
    public func peerSnapshot(_ state: borrowing MovieState) -> PeerRows {
        PeerRows(
            client: config.client, viewport: list.viewport, rows: list.openRows.map { render($0, state) })
    }

    /// The rows changed since they last went to the watchers, each in its latest state (a
    /// closed row for each row the watchers may think open, when sharing stopped). Reading them
    /// changes nothing: once sent, the manager says so (`SessionInput.peerRowsSent`).
    public func peerRowsDue(_ state: borrowing MovieState) -> [RowRender] {
        if peerClosing { return closedPeerRows(state) }
        return peerDirty.sorted().map { render($0, state) }
    }

    /// `rows` (what `peerRowsDue` gave) went to the watchers: forget them, and remember which
    /// the watchers now think open.
    @usableFromInline
    func peerRowsSent(_ rows: [RowRender]) {
        if peerClosing {
            peerClosing = false
            if !sharing { peerShown.removeAll() }
            return
        }
        peerDirty.removeAll()
        for row in rows {
            if row.phase == .closed { peerShown.remove(row.row) } else { peerShown.insert(row.row) }
        }
    }

    /// A closed row for every row the watchers may think open: for a sharer that goes.
    public func peerFarewell(_ state: borrowing MovieState) -> [RowRender] {
        guard sharing || peerClosing else { return [] }
        return closedPeerRows(state)
    }

    private func closedPeerRows(_ state: borrowing MovieState) -> [RowRender] {
        let closed = SwipeList(layout: list.layout, viewport: list.viewport)
        return peerShown.union(list.openRows).sorted().map { row in
            let flags = state.movie(row).map {
                RowData(watched: $0.watched, watchedWithFriends: $0.watchedWithFriends).flags
            }
            return closed.render(row, flags: flags ?? [])
        }
    }

    /// A `peer-row` event for this watcher, worded once for every watcher in its form.
    /// A watcher that does not read falls under the subscribers' rule: over `--max-queue` when
    /// an event is due, it is told `bye` (`slow-consumer`).
    @usableFromInline
    func peerRow(_ line: [UInt8], _ sink: inout SessionActions) {
        guard watching, isOpenForEvents else { return }
        if replies.backlog > config.maxQueue {
            sink.append(
                .log(
                    SessionLog(
                        .warning, "peer watcher too slow, disconnecting",
                        [.init("CLIENT", "\(config.client)"), .init("QUEUED", "\(replies.backlog)")])))
            goodbye(.slowConsumer, &sink)
            return
        }
        // In line with the replies: after the `peers` reply that it follows.
        replies.send { $0.bytes.append(contentsOf: line) }
        settle()
    }

    /// The form this connection's rows are worded in.
    public var rowFormNow: RowForm { rowForm }

    /// A row of this connection changed (a reply's or a `row` event's row, or a close).
    @inline(__always)
    func touchedRow(_ row: RowID, _ sink: inout SessionActions) {
        if sharing { markPeerDirty(row, &sink) }
    }

    @inline(__always)
    func noteRowsChanged(_ rows: [RowID], _ sink: inout SessionActions) {
        if sharing { for row in rows { markPeerDirty(row, &sink) } }
    }

    private func markPeerDirty(_ row: RowID, _ sink: inout SessionActions) {
        if peerDirty.isEmpty && !peerClosing { sink.append(.peerRowsChanged) }
        peerDirty.insert(row)
    }
}

extension Session {
    /// This connection's viewport (a `peer-row` event's `viewport`).
    public var viewport: Viewport { list.viewport }
}

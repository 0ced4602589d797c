// Shared rows (protocol.md, "Shared rows"): the rows of sharing connections go to watching ones.
// A sharer's Session notes which of its rows changed; here they are gathered at most once every
// `Session.peerInterval` (one timer for the whole daemon, armed only while some sharer has
// changes), each worded once per row form and handed to every watcher but the sharer itself.
// So a row gets at most one `peer-row` event per interval and its latest state is always the
// last one sent. Nobody sharing: no timer, nothing per iteration.
import JSONCodec
import Movies
import Session
import SwipeEngine
import Wire

extension Server {
    /// Rows of a sharer that went, to close at the next flush.
    struct PeerFarewell {
        let client: UInt64
        let viewport: Viewport
        let rows: [RowRender]
    }

    /// A sharer has rows for the watchers: flush within the interval.
    func peerRowsChanged(_ c: Connection) {
        peerChanged[c.client] = c
        armPeerFlush()
    }

    func armPeerFlush() {
        guard !peerFlushArmed else { return }
        peerFlushArmed = true
        peerTimer?.arm(afterMicroseconds: Session.peerInterval)
    }

    /// Every sharer's changed rows, to every watcher; then writes.
    func flushPeerRows() {
        peerFlushArmed = false
        let changed = peerChanged.values.sorted { $0.client < $1.client }
        peerChanged.removeAll(keepingCapacity: true)
        let farewells = peerFarewells
        peerFarewells.removeAll()
        var touched: [UInt64: Connection] = [:]
        /// Watchers a write failed to: closed once the flush is done.
        var gone: [UInt64: SystemError] = [:]
        func send(client: UInt64, viewport: Viewport, rows: [RowRender]) {
            for row in rows {
                var worded: [RowForm: [UInt8]] = [:]
                for w in watchers.values where w.client != client && gone[w.client] == nil {
                    let form = w.session.rowFormNow
                    if worded[form] == nil {
                        var out = JSONWriter()
                        Encode.peerRow(&out, client: client, viewport: viewport, row: row, form: form)
                        worded[form] = out.bytes
                    }
                    let before = w.session.lifecycle
                    round(w, .peerRow(worded[form]!))
                    // Told `bye` for this row (too slow): counted once, as subscribers are.
                    if before != w.session.lifecycle, case .sayingBye(.slowConsumer) = w.session.lifecycle {
                        sink.metrics.dropped &+= 1
                    }
                    touched[w.client] = w
                    // A flush carries many rows: write as they come, so that the backlog rule
                    // (--max-queue) counts what the watcher does not read, not one flush's size.
                    if w.session.pendingOutput >= Self.peerWriteChunk, let failure = flush(w) {
                        gone[w.client] = failure
                    }
                }
            }
        }
        for f in farewells { send(client: f.client, viewport: f.viewport, rows: f.rows) }
        for c in changed where connections[c.client] === c {
            let rows = store.withState { c.session.peerRowsDue($0) }
            send(client: c.client, viewport: c.session.viewport, rows: rows)
            round(c, .peerRowsSent(rows))
            if !c.session.isSharing { sharers[c.client] = nil }
        }
        for w in touched.values {
            if let failure = gone[w.client] { writeFailed(w, failure) } else { afterWork(w) }
        }
    }

    /// What a watcher's output may hold in a flush before it is written.
    static var peerWriteChunk: Int { 4096 }

    /// `peers`: every other sharing connection's open rows, now, as the answer `perform` has
    /// `c` hear; `c` watches from now on when `watch`.
    func peersAnswer(_ c: Connection, ticket: UInt64, watch: Bool) -> SessionInput {
        watchers[c.client] = watch ? c : nil
        let peers = store.withState { state in
            sharers.values.filter { $0.client != c.client && $0.session.isSharing }
                .sorted { $0.client < $1.client }
                .map { $0.session.peerSnapshot(state) }
        }
        return .peersAnswered(ticket: ticket, peers)
    }

    /// A connection goes: as a watcher it gets nothing more; as a sharer, the watchers get a
    /// closed row for each of its rows they may think open, at the next flush.
    func peerGone(_ c: Connection) {
        watchers[c.client] = nil
        peerChanged[c.client] = nil
        guard sharers.removeValue(forKey: c.client) != nil else { return }
        let rows = store.withState { c.session.peerFarewell($0) }
        guard !rows.isEmpty else { return }
        peerFarewells.append(PeerFarewell(client: c.client, viewport: c.session.viewport, rows: rows))
        armPeerFlush()
    }
}

// One client connection: its socket, read framer, bounded write queue, replies owed in order,
// its own swipe engine, its subscription cursor and its row timers. The Server drives it; this
// file is only the connection's I/O mechanics.
import JSONCodec
import Movies
import SwipeEngine
import Wire

#if canImport(Glibc)
    import Glibc
#endif

/// Who is on the other end, from SO_PEERCRED at connect time.
struct Peer {
    var pid: Int32 = 0
    var uid: UInt32 = UInt32.max
    var gid: UInt32 = UInt32.max
    var groups: [UInt32] = []
}

/// A reply in the order it is owed: waiting for the commit of `token`, worded already in
/// `bytes`, or to be worded by `late` once it is due.
struct ReplySlot {
    var token: UInt64?
    var bytes: JSONWriter
    var late: ((inout JSONWriter) -> Void)?
    /// What the slot counts against the write-queue cap: its bytes, or an estimate while it has
    /// none yet (a reply waiting for a commit, or one worded late).
    var cost: Int
}

final class Connection {
    let client: UInt64
    let fd: Int32
    let peer: Peer
    let mayWrite: Bool
    /// The epoll events this connection is watched for in the server's ConnectionPoller.
    var watched: UInt32 = 0
    var framer: LineFramer
    /// Bytes queued for the socket; `outHead` bytes of it are already written.
    var out = JSONWriter(capacity: 0)
    var outHead = 0
    /// Replies owed behind one that waits for a commit. Empty in the common case, where replies
    /// go straight to `out`.
    var slots: [ReplySlot] = []
    var list = SwipeList(layout: MovieLayout.standard)

    /// Works on `list` in place. Reading `c.list` from outside the class copies the engine's
    /// state (a retain per array and dictionary in it) each time; the drag path reads it through
    /// this instead.
    @inline(__always)
    func withList<R, E: Error>(_ body: (inout SwipeList) throws(E) -> R) throws(E) -> R { try body(&list) }
    /// The movie of this client's last gesture: the id it asked for, the stored id, the row's
    /// flags, and the seq they were read at (Server.gestureMovie).
    var gestureMovie: (seq: UInt64, asked: String, id: RowID, data: RowData)?
    /// This client's last drag line, for the next one (RequestRepeat.swift).
    var dragRepeat = DragRepeat()
    /// This client's rows encoded with holes for their numbers (drag replies: RowTemplate.swift).
    let rowTemplates = RowTemplates()
    /// The seq of the last movie event sent; nil when not subscribed.
    var cursor: UInt64?
    /// Counts subscribe and unsubscribe requests: a subscribe's reply, worded late, starts the
    /// subscription only if no later (un)subscribe came meanwhile.
    var subscriptionGeneration: UInt64 = 0
    var timers: [RowID: EventLoop.Timer] = [:]
    /// Closes the connection if its `bye` is not read in time.
    var goodbyeTimer: EventLoop.Timer?
    /// The write queue passed its cap: reading stops until it drains to half.
    var readPaused = false
    /// The peer closed its writing side; replies still owed are sent, then the socket closes.
    var readClosed = false
    /// A `bye` was queued: flush, then close.
    var closing = false
    var requests: UInt64 = 0

    init(client: UInt64, fd: Int32, peer: Peer, mayWrite: Bool, maxLine: Int) {
        self.client = client
        self.fd = fd
        self.peer = peer
        self.mayWrite = mayWrite
        self.framer = LineFramer(maxLine: maxLine)
    }

    /// Bytes in `out` not yet written: what the socket still has to take.
    var queued: Int { out.bytes.count - outHead }

    /// What the replies parked in `slots` count against the cap.
    private(set) var slotBytes = 0
    /// The estimate for a slot without bytes yet: a mutation's reply or a late read's.
    static let slotEstimate = 1024

    /// Everything this connection holds for its peer: the write queue and the parked replies.
    /// The cap (`--max-queue`) applies to this, so that a client pipelining behind its own
    /// pending mutation cannot make the daemon hold unbounded replies.
    var backlog: Int { queued + slotBytes }

    /// Whether the connection has nothing more to do: every reply it is owed has been written
    /// (including those of lines still in the framer), and either a `bye` was sent or the peer
    /// closed its writing side without a subscription (a half-closed subscriber keeps receiving
    /// events until it closes for good).
    var isFinished: Bool {
        guard slots.isEmpty && queued == 0 else { return false }
        return closing || (readClosed && framer.buffered == 0 && cursor == nil)
    }

    /// Appends a reply in request order, worded now (the swipe ops: a reply shows the row as
    /// that request left it): straight to the write queue unless an earlier reply is still
    /// waiting for a commit.
    func send(reply: (inout JSONWriter) -> Void) {
        sendInLine(reply)
    }

    /// `send(reply:)` for what is not a reply but must keep its place among them (row events).
    func sendInLine(_ reply: (inout JSONWriter) -> Void) {
        if slots.isEmpty {
            reply(&out)
        } else {
            var bytes = JSONWriter(capacity: 0)
            reply(&bytes)
            park(ReplySlot(token: nil, bytes: bytes, late: nil, cost: bytes.bytes.count))
        }
    }

    /// Appends a reply in request order, worded only when it is due: a read of the shared state
    /// (`list`, `history`, `subscribe`) pipelined behind this client's own mutation sees it.
    func sendLate(_ reply: @escaping (inout JSONWriter) -> Void) {
        if slots.isEmpty {
            reply(&out)
        } else {
            park(
                ReplySlot(
                    token: nil, bytes: JSONWriter(capacity: 0), late: reply, cost: Connection.slotEstimate))
        }
    }

    /// Reserves the place of a reply that waits for the commit of `token`.
    func reserve(token: UInt64) {
        park(
            ReplySlot(token: token, bytes: JSONWriter(capacity: 0), late: nil, cost: Connection.slotEstimate))
    }

    private func park(_ slot: ReplySlot) {
        slotBytes += slot.cost
        slots.append(slot)
    }

    /// Fills the reserved place of `token`, then moves every reply that is now due to `out`.
    func fulfil(token: UInt64, reply: (inout JSONWriter) -> Void) {
        guard let index = slots.firstIndex(where: { $0.token == token }) else { return }
        if index == 0 {
            reply(&out)
            slotBytes -= slots.removeFirst().cost
        } else {
            reply(&slots[index].bytes)
            slots[index].token = nil
            slotBytes += slots[index].bytes.bytes.count - slots[index].cost
            slots[index].cost = slots[index].bytes.bytes.count
        }
        while let first = slots.first, first.token == nil {
            slotBytes -= slots.removeFirst().cost
            if let late = first.late {
                late(&out)
            } else {
                out.bytes.append(contentsOf: first.bytes.bytes)
            }
        }
    }

    /// Server-initiated messages (events) are not replies: they never wait behind a commit.
    func push(_ write: (inout JSONWriter) -> Void) {
        write(&out)
    }

    func push(bytes: [UInt8]) {
        out.bytes.append(contentsOf: bytes)
    }

    /// Writes as much of the queue as the socket takes. Returns false when the peer is gone.
    func flush() -> Bool {
        while outHead < out.bytes.count {
            let result = out.bytes.withUnsafeBytes { raw -> IOResult in
                do {
                    return try writeNonBlocking(fd, UnsafeRawBufferPointer(rebasing: raw[outHead...]))
                } catch {
                    return .eof
                }
            }
            switch result {
            case .done(let n): outHead += n
            case .wouldBlock:
                // Keep the unwritten tail at the front once the written head is large, so a
                // slow reader's queue does not creep forward through memory.
                if outHead >= 64 * 1024 && outHead * 2 >= out.bytes.count {
                    out.bytes.removeFirst(outHead)
                    outHead = 0
                }
                return true
            case .eof: return false
            }
        }
        // Drained: keep a small buffer for the next replies, give a large one back, so that
        // 1,000 idle clients cost little memory.
        if out.bytes.capacity > 64 * 1024 {
            out = JSONWriter(capacity: 0)
        } else {
            out.reset()
        }
        outHead = 0
        return true
    }
}

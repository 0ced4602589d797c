// A connection's output: the bytes owed to the peer, and the replies that wait for something
// (a commit, a read) holding the place of everything behind them. Replies go out in request
// order; events the server pushes on its own (movie events, hello, bye) never wait.
import JSONCodec
import Movies
import StoreCore
import SwipeEngine
import Wire

/// How a reply waiting for a commit is worded once its outcome is known.
enum CommandReply: Equatable {
    /// `add`, the toggles, `remove`: the seq and the movie after.
    case mutation(id: [UInt8]?, op: String)
    /// A gesture that fired a bound action: the row as the gesture left it, in the connection's
    /// form when the gesture was handled, the thresholds its dx crossed (rule 12), and the outcome.
    case fired(id: [UInt8]?, op: String, row: RowRender, form: RowForm, action: String, crossed: Crossings)
    /// `undo` of this connection's change `original` (nil: a keyed undo with none left here,
    /// which only its key's replay answers): the seq, the movie after, `undoes`.
    /// `originalBy`: who made the change it undoes (the reply's `undoesBy`).
    case undo(id: [UInt8]?, original: UInt64?, originalBy: String? = nil)

    var op: String {
        switch self {
        case .mutation(_, let op), .fired(_, let op, _, _, _, _): op
        case .undo: "undo"
        }
    }

    var undoNote: UndoNote {
        switch self {
        case .mutation, .fired: .change
        case .undo(_, let original, _): .undo(original: original)
        }
    }
}

/// What `undo` learns from a command's reply: a change of this connection, or an undo of one.
enum UndoNote: Equatable {
    case change
    case undo(original: UInt64?)
}

/// A reply worded only when it is due, from the state at that moment: a read pipelined behind
/// this client's own mutation sees it (read-your-writes).
enum LateReply: Equatable {
    case list(id: [UInt8]?, ListQuery)
    case history(id: [UInt8]?, from: UInt64, limit: Int, by: String?)
    /// The subscription starts when its reply is written, so that the reply comes first. Only
    /// the newest (un)subscribe of a pipeline decides: each has its generation.
    case subscribe(id: [UInt8]?, from: UInt64?, generation: UInt64)
    /// An undo is decided when due: after this connection's earlier changes came back, so that
    /// it undoes the newest of them; or, with `seq`, once the store has read that change.
    case undo(id: [UInt8]?, key: String?, seq: UInt64?)
}

/// A place in the reply order.
enum Slot: Equatable {
    /// Worded.
    case ready([UInt8])
    /// Waiting for the store's answer to command `ticket`.
    case command(ticket: UInt64, CommandReply)
    /// Waiting for the store's answer to read `ticket` (a `history` page).
    case read(ticket: UInt64, id: [UInt8]?)
    /// To be worded when due.
    case late(LateReply)
    /// A long `list` being worded into the output as it drains (`ReplyQueue.stream`): always
    /// the first slot.
    case streaming

    /// What the slot counts against the write-queue cap: its bytes, or an estimate while it has
    /// none yet.
    var cost: Int {
        switch self {
        case .ready(let bytes): bytes.count
        case .command, .read, .late, .streaming: ReplyQueue.slotEstimate
        }
    }
}

struct ReplyQueue {
    /// Bytes for the socket; `head` bytes of it are already written.
    var out = JSONWriter(capacity: 0)
    var head = 0
    /// Replies owed behind one that waits, from `front` on. Empty in the common case, where
    /// replies go straight to `out`. A pipelining client keeps a window of commands waiting
    /// here and each commit answers the first: removing it by shifting the others cost about
    /// 400 instructions per reply with 16 waiting (callgrind), so the first slot is left
    /// behind (empty) and the array compacted once most of it is left behind.
    private var slots: [Slot] = []
    private var front = 0
    /// What `slots` count against the cap.
    private(set) var slotBytes = 0
    /// The long `list` reply in progress (ListStream.swift), whose line ends `out` unfinished;
    /// `held`: what is pushed meanwhile (events, a `bye`), written once the line ends.
    private(set) var stream: ListStream?
    private var held: [UInt8] = []
    /// A stream ended as the output drained and a late reply is due behind it: the Session words
    /// it when it next resumes, with the state lent (`Session.mayResume`).
    var lateDue = false
    /// A stream ended, or a catch-up page was worded, since the output last drained: its buffer
    /// (a chunk, up to tens of KB) is given back then, so that clients idle after a long `list`
    /// or a catch-up cost little memory.
    private var shrinkWhenDrained = false

    /// The estimate for a slot without bytes yet.
    static let slotEstimate = 1024

    /// Bytes in `out` not yet written.
    var queued: Int { out.bytes.count - head }

    /// Everything held for the peer: the cap (`--max-queue`) applies to this, so that a client
    /// pipelining behind its own pending mutation cannot make the daemon hold unbounded replies.
    var backlog: Int { queued + slotBytes + held.count }

    /// What is owed to the peer already worded: the output and what waits for a stream to end.
    var owed: Int { queued + held.count }

    var hasSlots: Bool { front < slots.count }

    /// A reply worded now, in request order: straight out unless an earlier reply still waits.
    @inline(__always)
    mutating func send(_ word: (inout JSONWriter) -> Void) {
        if !hasSlots {
            word(&out)
        } else {
            var bytes = JSONWriter(capacity: 0)
            word(&bytes)
            park(.ready(bytes.bytes))
        }
    }

    /// Server-initiated messages (events) are not replies: they never wait, but for the end of
    /// a line in progress.
    mutating func push(_ word: (inout JSONWriter) -> Void) {
        guard stream != nil else { return word(&out) }
        var bytes = JSONWriter(capacity: 0)
        swap(&bytes.bytes, &held)
        word(&bytes)
        swap(&bytes.bytes, &held)
    }

    mutating func push(bytes: [UInt8]) {
        if stream == nil { out.bytes.append(contentsOf: bytes) } else { held.append(contentsOf: bytes) }
    }

    mutating func push(bytes: ArraySlice<UInt8>) {
        if stream == nil { out.bytes.append(contentsOf: bytes) } else { held.append(contentsOf: bytes) }
    }

    /// Makes room, in one allocation, for what is owed to grow to `window` bytes (a subscriber's
    /// catch-up page): grown by appends, the buffer would double past the window, to nearly
    /// twice it, and keep that. The buffer is given back once the output drains.
    mutating func reserve(owed window: Int) {
        shrinkWhenDrained = true
        if stream != nil {
            if window > queued { held.reserveCapacity(window - queued) }
            return
        }
        // What was written is dropped first (at most a quarter of the window is left to move:
        // a page is asked only once the output drained to that).
        if head > 0 {
            out.bytes.removeFirst(head)
            head = 0
        }
        out.bytes.reserveCapacity(window)
    }

    /// Makes the first slot (a due `list`) the stream `s`, and words its first part.
    mutating func start(_ s: ListStream) {
        precondition(stream == nil, "a list reply starts while another is worded")
        replaceFirst(with: .streaming)
        stream = s
        pump()
    }

    /// Words more of the stream in progress while the output is short of a chunk; when the
    /// reply ends, writes what was held behind it and leaves its slot. Returns whether no
    /// stream is left in progress.
    @discardableResult
    mutating func pump() -> Bool {
        guard let s = stream else { return true }
        guard s.cursor.word(s.movies, into: &out, head: head, target: ListStream.chunk) else { return false }
        stream = nil
        shrinkWhenDrained = true
        out.bytes.append(contentsOf: held)
        held = []
        removeFirst()
        return true
    }

    mutating func park(_ slot: consuming Slot) {
        slotBytes += slot.cost
        slots.append(slot)
    }

    /// Fills the slot of command `ticket` with its reply.
    mutating func fill(command ticket: UInt64, _ word: (inout JSONWriter, CommandReply) -> Void) -> Bool {
        for i in front..<slots.count {
            guard case .command(ticket, let reply) = slots[i] else { continue }
            fill(at: i) { word(&$0, reply) }
            return true
        }
        return false
    }

    /// Fills the slot of read `ticket` with its reply.
    mutating func fill(read ticket: UInt64, _ word: (inout JSONWriter, [UInt8]?) -> Void) -> Bool {
        for i in front..<slots.count {
            guard case .read(ticket, let id) = slots[i] else { continue }
            fill(at: i) { word(&$0, id) }
            return true
        }
        return false
    }

    private mutating func fill(at i: Int, _ word: (inout JSONWriter) -> Void) {
        if i == front {
            // Due now (the common case): straight to the output.
            word(&out)
            removeFirst()
            return
        }
        var bytes = JSONWriter(capacity: 0)
        word(&bytes)
        slotBytes += bytes.bytes.count - slots[i].cost
        slots[i] = .ready(bytes.bytes)
    }

    /// Replaces the first slot (a late reply becoming a read).
    mutating func replaceFirst(with slot: Slot) {
        slotBytes += slot.cost - slots[front].cost
        slots[front] = slot
    }

    /// Moves the worded replies at the front to `out`; returns the first reply still waiting
    /// when it is one to be worded now (nil when none waits, or the first waits for the store:
    /// returning that slot copied it, on every reply of a pipelining client).
    mutating func release() -> LateReply? {
        while hasSlots {
            switch slots[front] {
            case .ready(let bytes):
                out.bytes.append(contentsOf: bytes)
                removeFirst()
            case .late(let reply):
                return reply
            case .command, .read, .streaming:
                return nil
            }
        }
        return nil
    }

    /// The id of read `ticket` when it is the first slot (an undo's read of its change, which
    /// is always first: it is read only when due).
    func firstRead(_ ticket: UInt64) -> [UInt8]?? {
        guard hasSlots, case .read(ticket, let id) = slots[front] else { return nil }
        return .some(id)
    }

    /// Removes the first slot (a late reply worded straight into `out` by the caller).
    mutating func dropFirst() {
        removeFirst()
    }

    /// Leaves the first slot behind, empty (see `slots`).
    private mutating func removeFirst() {
        slotBytes -= slots[front].cost
        slots[front] = .ready([])
        front += 1
        if front == slots.count {
            slots.removeAll(keepingCapacity: true)
            front = 0
        } else if front >= 32 && front * 2 >= slots.count {
            slots.removeFirst(front)
            front = 0
        }
    }

    /// `n` more bytes were written.
    mutating func consumed(_ n: Int) {
        head += n
        precondition(head <= out.bytes.count, "wrote \(head) of \(out.bytes.count) queued bytes")
        if head == out.bytes.count {
            // Drained: keep a small buffer for the next replies, give a large one back, so that
            // 10,000 idle clients cost little memory.
            if out.bytes.capacity > 64 * 1024 || shrinkWhenDrained {
                out = JSONWriter(capacity: 0)
                shrinkWhenDrained = false
            } else {
                out.reset()
            }
            head = 0
        } else if head >= 64 * 1024 && head * 2 >= out.bytes.count {
            // Keep the unwritten tail at the front once the written head is large, so that a
            // slow reader's queue does not creep forward through memory.
            out.bytes.removeFirst(head)
            head = 0
        }
        // The replies behind an ended stream go out now; a late one among them needs the state.
        if stream != nil && queued < ListStream.chunk && pump() && release() != nil { lateDue = true }
    }
}

// Subscribers catching up from the log, capped for the whole daemon. Each subscriber holds at
// most its catch-up window worded for its peer (Session+CatchUp.swift); here the manager caps
// how many hold one at a time, as it caps long `list` replies together (LargeReplies): a
// catch-up counts its whole window from its first page until the Session says it ended (caught
// up with its output written, unsubscribed, or gone). Past the cap, pages wait their turn, in
// the order they were asked, and are read as shares free up: a catch-up is never refused nor
// dropped for it, only slower. Counting whole windows keeps this off the paths every request
// takes (a drag, a ping): only a page asked, a catch-up ended and a connection closed touch it.
import Session
import StoreCore

/// What catching-up subscribers hold together, against one cap.
struct CatchUps {
    /// What each catch-up counts for: its window, the most it holds worded for its peer.
    static let share = Session.catchUpWindow
    /// 64 MiB, as long `list` replies: 1,024 catch-ups at a time.
    static let defaultCap = 64 << 20

    let cap: Int
    /// The clients whose catch-up holds a share.
    private(set) var holders: Set<UInt64> = []
    /// Pages of subscribers without a share, in the order asked, from `head` on: each is read
    /// once a share is free for it. A page whose catch-up ended meanwhile stays in the queue
    /// until its turn, and is skipped then (`waiting` no longer names it).
    private var queue: [Page] = []
    private var head = 0
    /// The ticket of the page each waiting client asked for.
    private(set) var waiting: [UInt64: UInt64] = [:]
    /// Whether the cap was met since the shares held were last at most half of it: the journal
    /// says so once per such episode, not once per page held back.
    private(set) var warned = false

    /// A page of the log a subscriber asked for (`SessionAction.catchUp`).
    struct Page {
        let client: UInt64
        let ticket: UInt64
        let after: UInt64
        let limit: Int
    }

    init(cap: Int = CatchUps.defaultCap) {
        self.cap = cap
    }

    /// The bytes the shares held stand for.
    var held: Int { holders.count * CatchUps.share }

    /// Whether `client`'s page may be read now: it holds a share, or takes one (no page waits
    /// before it and the cap has room). False: the caller queues the page (`wait`).
    mutating func admit(_ client: UInt64) -> Bool {
        if holders.contains(client) { return true }
        guard waiting.isEmpty, held + CatchUps.share <= cap else { return false }
        holders.insert(client)
        return true
    }

    /// Queues a page the cap holds back; true when the journal should say so (the first since
    /// the shares held were at most half the cap).
    mutating func wait(_ page: Page) -> Bool {
        queue.append(page)
        waiting[page.client] = page.ticket
        defer { warned = true }
        return !warned
    }

    /// `client`'s catch-up ended: its share is free, and a page of it still waiting is dropped.
    mutating func release(_ client: UInt64) {
        holders.remove(client)
        waiting[client] = nil
        if held <= cap / 2 { warned = false }
    }

    /// The next waiting page that may be read now, its share taken; nil when none waits or the
    /// cap has no room.
    mutating func next() -> Page? {
        while head < queue.count, held + CatchUps.share <= cap {
            let page = queue[head]
            head += 1
            guard waiting[page.client] == page.ticket else { continue }
            waiting[page.client] = nil
            holders.insert(page.client)
            return page
        }
        // Given back once every page was taken (or skipped), or half of it was.
        if head == queue.count {
            queue = []
            head = 0
        } else if head >= 1024 && head * 2 >= queue.count {
            queue.removeFirst(head)
            head = 0
        }
        return nil
    }
}

extension Server {
    /// `c`'s session asked for a page to catch up with: read now, or once a share is free.
    func catchUpAsked(_ c: Connection, _ page: CatchUps.Page) {
        if catchUps.admit(c.client) { return readPage(page) }
        if catchUps.wait(page) {
            journal.log(
                .warning,
                "subscribers catching up reached their cap, the next wait their turn until shares free up",
                [
                    ("CLIENT", "\(c.client)"), ("HELD", "\(catchUps.held)"), ("CAP", "\(catchUps.cap)"),
                    ("CATCHING_UP", "\(catchUps.holders.count)"), ("WAITING", "\(catchUps.waiting.count)"),
                ])
        }
    }

    /// `client`'s catch-up ended (or it went): its share goes to the pages waiting.
    func catchUpEnded(_ client: UInt64) {
        catchUps.release(client)
        // Once stopping, the store is closed: the pages still waiting are not wanted.
        guard !shuttingDown else { return }
        while let page = catchUps.next() { readPage(page) }
    }

    private func readPage(_ page: CatchUps.Page) {
        pending[page.ticket] = Pending(client: page.client, what: .read)
        store.read(.events(after: page.after, limit: page.limit), token: page.ticket)
        storeTouched = true
    }
}

/// One client's list: its layout, its viewport and the state of every row that is not closed.
/// The reducer is `send(_:)` (in SwipeList+Reduce.swift); what a row looks like is `render` (in
/// SwipeList+Render.swift). A value type with no clock and no I/O: the same inputs always give the
/// same states and effects, which is what makes recordings replayable.
public struct SwipeList: Equatable, Sendable {
    /// Assigning a different layout closes every row WITHOUT reporting it (offsets and timers of
    /// the old layout mean nothing in the new one); use `reconfigure` to learn what closed.
    public var layout: Layout {
        didSet {
            if layout != oldValue {
                rows.removeAll()
                scrolling = nil
            }
        }
    }
    /// Same as `layout`: a different viewport (rotation, direction) closes every row silently.
    public var viewport: Viewport {
        didSet {
            if viewport != oldValue {
                rows.removeAll()
                scrolling = nil
            }
        }
    }
    /// Every row that is not closed. Invariant: no value has phase `.closed`.
    @usableFromInline internal var rows = RowTable()
    /// Rule 12: whether drags report the thresholds they cross (`.crossed`). Off by default: a
    /// host turns it on for a client that asked (the daemon's `options`).
    public var reportsCrossings = false
    /// Rule 13: the row whose touch is a scroll, until that touch ends. It is closed (not in
    /// `rows`) for as long.
    public internal(set) var scrolling: RowID?

    public init(layout: Layout = Layout(), viewport: Viewport = Viewport()) {
        self.layout = layout
        self.viewport = viewport
    }

    /// The row's state; `RowState.closed` when the row is not tracked.
    public func state(of row: RowID) -> RowState {
        rows[row] ?? .closed
    }

    /// Whether any row is not closed.
    public var hasOpenRows: Bool { !rows.isEmpty }

    /// Every row that is not closed, with its state.
    public var trackedRows: [RowID: RowState] { rows.dictionary }

    /// The ids of every row that is not closed, sorted: the answer to a
    /// client's `rows` op, in a stable order.
    public var openRows: [RowID] { rows.keys.sorted() }

    /// Changes the layout and/or viewport. When something actually changes, every row closes and
    /// the result says so: `.closed(row:)` for each tracked row, then `.cancel` of the timer of
    /// each row that had one (`fired`, `dismissed`, `confirming`, `peeking`), both ordered by row
    /// id. Nothing changes → no effects.
    public mutating func reconfigure(layout: Layout? = nil, viewport: Viewport? = nil) -> [Effect] {
        let newLayout = layout ?? self.layout
        let newViewport = viewport ?? self.viewport
        guard newLayout != self.layout || newViewport != self.viewport else { return [] }
        let effects = closeAll()
        self.layout = newLayout
        self.viewport = newViewport
        return effects
    }

    /// Drops every row and any scroll (rule 13); returns `.closed` for each row, then `.cancel`
    /// for the timers of the ones that had one, by row id.
    mutating func closeAll() -> [Effect] {
        scrolling = nil  // Rule 13: the list's rows are all closed anew; no touch goes on.
        let ids = rows.keys.sorted()
        var effects: [Effect] = ids.map { .closed(row: $0) }
        for id in ids {
            if let timer = rows[id].flatMap({ SwipeList.timer(of: id, $0) }) {
                effects.append(.cancel(timer))
            }
        }
        rows.removeAll()
        return effects
    }
}

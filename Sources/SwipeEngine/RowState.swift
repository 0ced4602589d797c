/// An opaque row id; the host checks that the row's data exists before sending inputs.
public typealias RowID = String

/// What the engine remembers of a row that is not closed: 16 bytes, a phase and, while
/// `confirming`, which action waits. A closed row is not
/// stored (dropping the state IS closing), so `phase` is never `.closed` inside a `SwipeList`;
/// `SwipeList.state(of:)` returns `RowState.closed` for untracked rows.
public struct RowState: Equatable, Sendable {
    /// Physical offset of the row's content, points (+ = moved right).
    public var offset: Double
    /// The offset at the end of the last gesture: where rule 2 starts the next drag from.
    public var restingOffset: Double
    public var phase: Phase
    /// In `confirming` (rule 10): the index, among the actions of the edge the row reveals, of
    /// the action waiting for its confirmation. nil in every other phase.
    public var pending: Int?

    public init(offset: Double, restingOffset: Double, phase: Phase, pending: Int? = nil) {
        self.offset = offset
        self.restingOffset = restingOffset
        self.phase = phase
        self.pending = pending
    }

    /// The closed row: offset 0, nothing revealed.
    public static let closed = RowState(offset: 0, restingOffset: 0, phase: .closed)

    /// Whether the current gesture has passed the minimum distance (rule 1). A gesture that has
    /// started is exactly a row in `dragging`: release ends it, and `fired` ignores drags. Derived,
    /// so it can never disagree with `phase`.
    @inlinable public var started: Bool { phase == .dragging }
}

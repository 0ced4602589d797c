/// The swipe actions of every row of a list. Arrays are OUTERMOST FIRST, as in SwiftUI, where the
/// first button of `.swipeActions` is the one a full swipe fires.
public struct Layout: Equatable, Sendable {
    public var leading: [ActionSpec]
    public var trailing: [ActionSpec]
    public var allowsFullSwipeLeading: Bool
    public var allowsFullSwipeTrailing: Bool
    /// W, points.
    public var buttonWidth: Double
    /// What a full swipe on each edge does once its action fires (rule 15).
    public var fullSwipeStyleLeading: FullSwipeStyle
    public var fullSwipeStyleTrailing: FullSwipeStyle

    public init(
        leading: [ActionSpec] = [], trailing: [ActionSpec] = [],
        allowsFullSwipeLeading: Bool = true, allowsFullSwipeTrailing: Bool = true,
        buttonWidth: Double = Rules.defaultButtonWidth, fullSwipeStyleLeading: FullSwipeStyle = .fill,
        fullSwipeStyleTrailing: FullSwipeStyle = .fill
    ) {
        self.leading = leading
        self.trailing = trailing
        self.allowsFullSwipeLeading = allowsFullSwipeLeading
        self.allowsFullSwipeTrailing = allowsFullSwipeTrailing
        self.buttonWidth = buttonWidth
        self.fullSwipeStyleLeading = fullSwipeStyleLeading
        self.fullSwipeStyleTrailing = fullSwipeStyleTrailing
    }

    /// The actions of one edge, outermost first.
    @inlinable public func actions(_ edge: Edge) -> [ActionSpec] {
        switch edge {
        case .leading: leading
        case .trailing: trailing
        }
    }

    @inlinable public func allowsFullSwipe(_ edge: Edge) -> Bool {
        switch edge {
        case .leading: allowsFullSwipeLeading
        case .trailing: allowsFullSwipeTrailing
        }
    }

    public func fullSwipeStyle(_ edge: Edge) -> FullSwipeStyle {
        switch edge {
        case .leading: fullSwipeStyleLeading
        case .trailing: fullSwipeStyleTrailing
        }
    }

    /// The edge holding `action` and its index there (outermost 0), or nil when the layout has
    /// no such action.
    public func position(of action: String) -> (edge: Edge, index: Int)? {
        if let i = leading.firstIndex(where: { $0.action == action }) { return (.leading, i) }
        if let i = trailing.firstIndex(where: { $0.action == action }) { return (.trailing, i) }
        return nil
    }

    /// The edge holding `action` (leading first), or nil when the layout has no such action.
    public func edge(of action: String) -> Edge? {
        if leading.contains(where: { $0.action == action }) { return .leading }
        if trailing.contains(where: { $0.action == action }) { return .trailing }
        return nil
    }
}

/// What a full swipe does once its action fires (rule 15).
public enum FullSwipeStyle: String, Sendable, Hashable, CaseIterable {
    /// The outermost button fills the row (phase `fired`, offset ±R), and the row closes 0.5 s
    /// later: SwiftUI's and UIKit's full swipe, and swiped's only style before issue 47.
    case fill
    /// The row closes as the action fires: nothing lingers (Gmail's archive).
    case close
    /// The row slides out with the action (phase `dismissed`, offset ±R) and stays out until its
    /// data is removed (a delete), springing back only if it is not within `Rules.dismissTimeout`.
    case dismiss
}

/// The list's geometry.
public struct Viewport: Equatable, Sendable {
    /// R, points: the row's width, and the most a row can move (rule 3).
    public var width: Double
    public var direction: Direction

    public init(width: Double = Rules.defaultRowWidth, direction: Direction = .ltr) {
        self.width = width
        self.direction = direction
    }
}

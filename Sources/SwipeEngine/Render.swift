// The contract a front end draws from: pure values, in physical coordinates.

/// One visible button.
public struct ButtonRender: Equatable, Sendable {
    public var action: String
    public var label: String?
    public var icon: String?
    /// Always a color name (the spec's `effectiveTint`).
    public var tint: String
    public var role: Role?
    /// From the row's LEFT edge, points.
    public var x: Double
    public var width: Double

    public init(
        action: String, label: String?, icon: String?, tint: String, role: Role?, x: Double,
        width: Double
    ) {
        self.action = action
        self.label = label
        self.icon = icon
        self.tint = tint
        self.role = role
        self.x = x
        self.width = width
    }
}

/// How to animate toward `target`, in SwiftUI's terms (`.spring(response:dampingFraction:)`).
/// `target` is the row's offset: the engine snaps state, the front end animates to it.
public struct SpringHint: Equatable, Sendable {
    public var target: Double
    /// Seconds (SwiftUI's `response`).
    public var response: Double
    public var dampingFraction: Double

    public init(target: Double, response: Double, dampingFraction: Double) {
        self.target = target
        self.response = response
        self.dampingFraction = dampingFraction
    }
}

/// An action offered without swiping (VoiceOver's actions rotor and the like).
public struct AccessibilityAction: Equatable, Sendable {
    public var action: String
    /// The resolved label for the row's flags, else the resolved icon name, else the action name:
    /// never empty, since a screen reader must say something.
    public var label: String
    public var destructive: Bool
    public var edge: Edge

    public init(action: String, label: String, destructive: Bool, edge: Edge) {
        self.action = action
        self.label = label
        self.destructive = destructive
        self.edge = edge
    }
}

/// Everything a front end needs to draw one row.
public struct RowRender: Equatable, Sendable {
    public var row: RowID
    /// Physical offset of the row's content (+ = moved right).
    public var offset: Double
    public var phase: Phase
    /// The revealed edge; nil when nothing is revealed (offset 0).
    public var edge: Edge?
    /// Rule 4: only the outermost button shows, as wide as the offset. True while `fired`.
    public var fullSwipe: Bool
    /// The visible buttons, LEFT TO RIGHT; they tile the revealed strip exactly.
    public var buttons: [ButtonRender]
    public var spring: SpringHint
    /// Every action of the row: leading outermost first, then trailing outermost first.
    public var accessibilityActions: [AccessibilityAction]

    public init(
        row: RowID, offset: Double, phase: Phase, edge: Edge?, fullSwipe: Bool,
        buttons: [ButtonRender], spring: SpringHint, accessibilityActions: [AccessibilityAction]
    ) {
        self.row = row
        self.offset = offset
        self.phase = phase
        self.edge = edge
        self.fullSwipe = fullSwipe
        self.buttons = buttons
        self.spring = spring
        self.accessibilityActions = accessibilityActions
    }
}

/// What a row's looks depend on besides the layout and the row's data: two rows of one shape
/// differ only in their numbers (`RowGeometry`).
public struct RowShape: Equatable, Sendable {
    public var phase: Phase
    /// The revealed edge; nil when nothing is revealed.
    public var edge: Edge?
    public var fullSwipe: Bool
    /// How many buttons show (rule 4: 1 in full swipe).
    public var shown: Int
    /// Whether the revealed strip is on the row's left, where buttons go outermost first.
    public var onLeft: Bool
    /// `confirming` (rule 10): the index of the one action showing, among its edge's actions.
    public var pending: Int?
}

/// A row's numbers: what changes from one drag to the next. `RowRender` is built from these.
public struct RowGeometry: Equatable, Sendable {
    public var offset: Double
    public var shape: RowShape
    /// x of the leftmost button, from the row's left edge.
    public var start: Double
    /// Every showing button's width.
    public var width: Double

    /// x of the `i`-th showing button, left to right.
    @inlinable public func x(_ i: Int) -> Double { start + Double(i) * width }

    /// The spring toward the offset: interactive while dragging, settling otherwise.
    public var spring: SpringHint {
        var spring = shape.phase == .dragging ? Rules.interactiveSpring : Rules.settleSpring
        spring.target = offset
        return spring
    }
}

/// One swipe button's template. What it shows may depend on the row's data: when the row's flags
/// contain `action`, `activeLabel`/`activeIcon` replace `label`/`icon` (e.g. Watched shows `eye`,
/// and `eye.slash` once the movie is watched).
public struct ActionSpec: Equatable, Sendable {
    /// The name fired (`Effect.fire`) and tapped (`Input.tapped`); unique within a layout.
    public var action: String
    public var label: String?
    /// An SF Symbol name.
    public var icon: String?
    /// A color name; nil = the default (`effectiveTint`).
    public var tint: String?
    public var role: Role?
    public var activeLabel: String?
    public var activeIcon: String?
    /// Rule 10: where this action would fire, the row asks to confirm it first.
    public var confirm: Bool
    /// The confirming button's label; nil = `Rules.defaultConfirmLabel`.
    public var confirmLabel: String?

    public init(
        action: String, label: String? = nil, icon: String? = nil, tint: String? = nil,
        role: Role? = nil, activeLabel: String? = nil, activeIcon: String? = nil, confirm: Bool = false,
        confirmLabel: String? = nil
    ) {
        self.action = action
        self.label = label
        self.icon = icon
        self.tint = tint
        self.role = role
        self.activeLabel = activeLabel
        self.activeIcon = activeIcon
        self.confirm = confirm
        self.confirmLabel = confirmLabel
    }

    /// The label of the confirming button (rule 10).
    public var effectiveConfirmLabel: String { confirmLabel ?? Rules.defaultConfirmLabel }

    /// `tint`, or red for a destructive action, or gray.
    public var effectiveTint: String {
        tint ?? (role == .destructive ? Rules.destructiveTint : Rules.defaultTint)
    }

    /// The label shown for a row with these flags (`activeLabel` when active, falling back to `label`).
    public func label(for flags: RowFlags) -> String? {
        flags.contains(action) ? activeLabel ?? label : label
    }

    /// The icon shown for a row with these flags (`activeIcon` when active, falling back to `icon`).
    public func icon(for flags: RowFlags) -> String? {
        flags.contains(action) ? activeIcon ?? icon : icon
    }
}

/// Names of the actions that are "active" for a row's data (see `ActionSpec.activeLabel`).
public typealias RowFlags = Set<String>

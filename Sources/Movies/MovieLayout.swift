import SwipeEngine

/// The swipe layouts of the product, expressed with the engine's public types only (no Movie type:
/// a row's data reaches the engine as `RowFlags`).
public enum MovieLayout {
    /// Seed 002, the movie row. Leading (full swipe): `watched` (eye, or eye.slash once watched,
    /// green), `watched-with-friends` (person.3, indigo). Trailing (full swipe): `delete` (trash,
    /// destructive, red).
    public static let standard = Layout(
        leading: [
            ActionSpec(
                action: BoundAction.watched.rawValue, label: "Watched", icon: "eye", tint: "green",
                activeIcon: "eye.slash"),
            ActionSpec(
                action: BoundAction.watchedWithFriends.rawValue, label: "With Friends", icon: "person.3",
                tint: "indigo"),
        ],
        trailing: [
            ActionSpec(
                action: BoundAction.delete.rawValue, label: "Delete", icon: "trash", tint: "red",
                role: .destructive)
        ],
        allowsFullSwipeLeading: true, allowsFullSwipeTrailing: true)

    /// Seed 000, the demo, as seed 000 shows it: leading Text | Flag and trailing Read | Trash,
    /// left to right in ltr, and a full swipe fires Text or Trash. Written outermost first (the
    /// protocol's order), the trailing edge is therefore Trash, Read. Text: text only, default
    /// gray; Flag: flag, green; Read: envelope.open, blue; Trash: red. Full swipe on both edges.
    public static let demo000 = Layout(
        leading: [
            ActionSpec(action: "text", label: "Text"),
            ActionSpec(action: "flag", label: "Flag", icon: "flag", tint: "green"),
        ],
        trailing: [
            ActionSpec(action: "trash", label: "Trash", tint: "red"),
            ActionSpec(action: "read", label: "Read", icon: "envelope.open", tint: "blue"),
        ],
        allowsFullSwipeLeading: true, allowsFullSwipeTrailing: true)

    /// A movie's data as the engine sees it: `watched` is active once the movie is watched (the
    /// Watched button then shows eye.slash). Watched with friends has no alternate look, but is
    /// flagged too so a front end can tell.
    public static func flags(watched: Bool, watchedWithFriends: Bool) -> RowFlags {
        var flags: RowFlags = []
        if watched { flags.insert(BoundAction.watched.rawValue) }
        if watchedWithFriends { flags.insert(BoundAction.watchedWithFriends.rawValue) }
        return flags
    }
}

/// The actions whose firing runs a movie command (protocol.md, "bound" actions); every other
/// action of a layout is custom: the connection reports it fired and changes nothing. The one
/// list of their names (issue 42): the layout below, the Session, replays and the TUI spell
/// them from it.
public enum BoundAction: String, CaseIterable, Sendable {
    case watched
    case watchedWithFriends = "watched-with-friends"
    case delete

    /// The command firing this action on `movie` runs.
    public func command(movie: String) -> MovieCommand {
        switch self {
        case .watched: MovieCommand(.toggleWatched(movie: movie))
        case .watchedWithFriends: MovieCommand(.toggleWatchedWithFriends(movie: movie))
        case .delete: MovieCommand(.remove(movie: movie))
        }
    }
}

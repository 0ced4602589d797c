// What the front end shows, as plain values: the model a frame is drawn from. The front end
// (swipectl tui) keeps it up to date from the daemon's replies and events and from the clock;
// `ScreenLayout` turns it into cells.
import SwipeEngine

/// One movie's row as it is drawn at this instant.
public struct RowView: Equatable, Sendable {
    public var id: String
    public var title: String
    public var watched: Bool
    public var watchedWithFriends: Bool
    /// The content's offset drawn now (points, + = moved right): the engine's offset, or where
    /// the spring carrying the row toward it has got to.
    public var offset: Double
    /// The engine's buttons, left to right, and the offset the engine laid them out for: while
    /// the row moves they are stretched to the strip the drawn offset reveals.
    public var buttons: [ButtonRender]
    public var buttonsOffset: Double
    public var phase: Phase
    /// 1 for a row in the list; toward 0 while a removed row collapses.
    public var height: Double
    /// Another person's finger on this row, drawn faintly (issue 18): where their content's
    /// left edge would be, in points. nil: nobody else.
    public var ghostOffset: Double?

    public init(
        id: String, title: String, watched: Bool = false, watchedWithFriends: Bool = false,
        offset: Double = 0, buttons: [ButtonRender] = [], buttonsOffset: Double = 0, phase: Phase = .closed,
        height: Double = 1, ghostOffset: Double? = nil
    ) {
        self.id = id
        self.title = title
        self.watched = watched
        self.watchedWithFriends = watchedWithFriends
        self.offset = offset
        self.buttons = buttons
        self.buttonsOffset = buttonsOffset
        self.phase = phase
        self.height = height
        self.ghostOffset = ghostOffset
    }
}

public enum ConnectionState: Equatable, Sendable {
    case connecting
    case connected
    /// Lost; the next attempt is number `attempt`.
    case reconnecting(attempt: Int)
}

public struct ScreenModel: Equatable, Sendable {
    /// The daemon's socket, as the header shows it.
    public var daemon: String
    public var connection: ConnectionState = .connecting
    public var seq: UInt64 = 0
    public var writer = true
    public var rows: [RowView] = []
    /// The selected row's index (keyboard), if any.
    public var selected: Int?
    /// The index of the first row shown.
    public var scroll = 0
    public var direction: Direction = .ltr
    public var ascii = false
    public var trueColor = false
    /// The line above the keys: a hint ("Deleted … u undoes"), a confirmation, an error.
    public var status: String?
    public var statusIsError = false
    /// The add prompt's text while it is open.
    public var prompt: String?
    public var help = false

    public init(daemon: String) { self.daemon = daemon }
}

/// What is under a cell.
public enum Hit: Equatable, Sendable {
    case none
    /// Row `index`; `button`: the action whose revealed button is there.
    case row(index: Int, button: String?)
}

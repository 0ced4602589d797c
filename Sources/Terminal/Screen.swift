// What the front end shows, as plain values: the model a frame is drawn from. The front end
// (swipectl tui) keeps it up to date from the daemon's replies and events and from the clock;
// `ScreenLayout` turns it into cells.
import SwipeEngine

/// One movie's row as it is drawn at this instant.
public struct RowView: Equatable, Sendable {
    public var id: String
    public var title: String
    /// The movie's image name, drawn as its poster tile (`PosterTile`).
    public var image: String
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
    /// Other people's fingers on this row (issue 18), drawn faintly under this row's own
    /// buttons, in this terminal's points; in the order they are drawn (the last on top).
    public var ghosts: [Ghost]

    public init(
        id: String, title: String, image: String = "", watched: Bool = false,
        watchedWithFriends: Bool = false,
        offset: Double = 0, buttons: [ButtonRender] = [], buttonsOffset: Double = 0, phase: Phase = .closed,
        height: Double = 1, ghosts: [Ghost] = []
    ) {
        self.id = id
        self.title = title
        self.image = image
        self.watched = watched
        self.watchedWithFriends = watchedWithFriends
        self.offset = offset
        self.buttons = buttons
        self.buttonsOffset = buttonsOffset
        self.phase = phase
        self.height = height
        self.ghosts = ghosts
    }
}

/// A sharing connection's row (a `peer-row`), laid out again for this terminal: positions are
/// in the sharer's viewport, so they are scaled by this row's width over the sharer's, and
/// mirrored when the sharer's direction is not this list's, so that the ghost reveals the same
/// edge, the same actions, as the sharer's finger (as the web page draws them).
public struct Ghost: Equatable, Sendable {
    /// The sharer's client number.
    public var client: Int
    /// Where the sharer's content's left edge is, in this row's points (+ = moved right).
    public var offset: Double
    /// The sharer's revealed buttons at that offset, in this row's points, left to right.
    public var buttons: [ButtonRender]

    public init(client: Int, offset: Double, buttons: [ButtonRender] = []) {
        self.client = client
        self.offset = offset
        self.buttons = buttons
    }

    /// `row`, laid out by the sharer for a row `sharerWidth` points wide in `sharerDirection`,
    /// as it falls on a row `width` points wide in `direction` (a sharer width that is not
    /// positive is taken as this row's).
    public init(
        client: Int, row: RowRender, sharerWidth: Double, sharerDirection: Direction = .ltr, width: Double,
        direction: Direction = .ltr
    ) {
        let factor = sharerWidth > 0 ? width / sharerWidth : 1
        let mirrored = sharerDirection != direction
        self.client = client
        offset = row.offset * factor * (mirrored ? -1 : 1)
        let scaled = row.buttons.map { button in
            var scaled = button
            scaled.width = button.width * factor
            scaled.x = mirrored ? width - (button.x + button.width) * factor : button.x * factor
            return scaled
        }
        buttons = mirrored ? scaled.reversed() : scaled
    }
}

/// The recording of this connection (issue 18), as the header shows it.
public enum RecordingState: Equatable, Sendable {
    case off
    /// Recording; `r` stops it and saves the file.
    case on
    /// Stopped, the recording being fetched and written.
    case saving
    /// The connection it was made on went away, and the daemon's copy with it.
    case lost
}

public enum ConnectionState: Equatable, Sendable {
    case connecting
    case connected
    /// Lost; the next attempt is number `attempt`.
    case reconnecting(attempt: Int)
}

/// The search (`/`) as the footer shows it.
public struct SearchLine: Equatable, Sendable {
    public var text: String
    /// Whether keys type into it (else n and N go to the next and previous match).
    public var typing: Bool
    /// How many titles contain `text`.
    public var count: Int
    /// The selected row's place among the matches (from 1), when it is one.
    public var position: Int?

    public init(text: String, typing: Bool, count: Int, position: Int? = nil) {
        self.text = text
        self.typing = typing
        self.count = count
        self.position = position
    }
}

public struct ScreenModel: Equatable, Sendable {
    /// The daemon's socket, as the header shows it.
    public var daemon: String
    public var connection: ConnectionState = .connecting
    public var seq: UInt64 = 0
    /// Whether this connection may change the list (hello's `writer`; a role of writer or admin).
    public var writer = true
    /// Who the connection acts for (issue 45): hello's `user`, then the sign-in's and the `role`
    /// events'; nil for nobody (anonymous) or a daemon before people.
    public var user: String?
    /// Its role (`none`, `reader`, `writer`, `admin`); nil from a daemon before roles, when the
    /// header says `writer` or `read-only` from `writer` alone.
    public var role: String?
    /// Between hello and the sign-in's reply: the header says so instead of the hello's person.
    public var signingIn = false
    /// The rows from `firstRow` on: those on screen, or the whole list (`firstRow` 0).
    public var rows: [RowView] = []
    /// The list index of `rows[0]`: a long list is drawn from the few rows the screen shows.
    public var firstRow = 0
    /// The selected row's index in the list (keyboard), if any.
    public var selected: Int?
    /// The list index of the first row shown.
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
    public var recording: RecordingState = .off
    /// Whether this connection shares its rows (`s`).
    public var sharing = false
    /// nil: other people's fingers are not shown; else how many connections share theirs (`g`).
    public var ghosts: Int?
    /// Whether the daemon's layout asks before deleting (`c`, `--confirm-delete`).
    public var confirmDelete = false
    /// What a full swipe does (`F`, `--full-swipe`); the header names it when not `fill`.
    public var fullSwipeStyle = FullSwipeStyle.fill
    /// The search (`/`) while there is one.
    public var search: SearchLine?
    /// While a row's grip is held (issue 48): the row's list index, drawn with its grip lit.
    public var dragged: Int?
    /// Where the dragged row would go when let go, marked on the line there: before the row at
    /// this list index (the row count: after the last); nil when it would stay.
    public var drop: Int?

    public init(daemon: String) { self.daemon = daemon }
}

/// What is under a cell.
public enum Hit: Equatable, Sendable {
    case none
    /// Row `index`; `button`: the action whose revealed button is there.
    case row(index: Int, button: String?)
    /// Row `index`'s grip, which moves it up or down the list (issue 48).
    case grip(index: Int)
}

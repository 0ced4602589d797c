// What `TuiStateMachine` exchanges with the I/O that runs it (swipectl's TuiApp), as plain
// values: the requests it asks to send, the daemon's replies and events already decoded, and
// the actions it asks for. The JSON stays on swipectl's side: this module knows no wire format.
import Movies
import SwipeEngine

/// A request to the daemon, with what its reply needs to be understood (a title for the
/// message, whether it was asked by a key). swipectl writes each as one protocol line.
public enum TuiRequest: Equatable, Sendable {
    /// `auth` with the token swipectl holds (this module never sees it), first on every
    /// connection when `TuiOptions.signsIn`; `quiet` on a new connection (the reconnect says its
    /// say).
    case signIn(quiet: Bool)
    case list
    case subscribe(from: UInt64)
    case viewport(width: Double, direction: Direction)
    case drag(movie: String, dx: Double)
    case release(movie: String, vx: Double)
    case tap(movie: String, action: String)
    case open(movie: String, edge: Edge)
    case close(movie: String)
    /// `close` without a movie: every open row of this connection.
    case closeAll
    case perform(movie: String, action: String)
    /// Show the row's buttons part-way and spring it back (the hint on first use, rule 14).
    case peek(movie: String)
    /// Replies to this connection's drags list the thresholds they cross (rule 12).
    case crossings(on: Bool)
    case add(title: String)
    /// `move` (issue 48): right after the movie `after`, first when nil; `expect`: the version
    /// the row shows.
    case move(movie: String, after: String?, expect: UInt64)
    /// `removedBy`: whose removal it undoes (said when it was someone else's).
    case restore(movie: String, expect: UInt64, title: String, removedBy: TuiAuthor = .me)
    case record(on: Bool)
    case recording
    /// `quiet`: asked again on a new connection, not by a key (the reconnect says its say).
    case share(on: Bool, quiet: Bool)
    case peers(watch: Bool, quiet: Bool)
    /// The movie layout, asking before a delete or not, with a full-swipe style for both edges
    /// (`TuiRequest.layout(confirmDelete:style:)`).
    case configure(confirmDelete: Bool, quiet: Bool, style: FullSwipeStyle = .fill)
}

extension TuiRequest {
    /// What delete's confirming button says.
    public static let confirmDeleteLabel = "Delete?"

    /// The daemon's default movie layout, its delete asking to be confirmed when
    /// `confirmDelete`, a full swipe on either edge doing `style` (`configure` replaces the whole
    /// layout, so all of it is sent).
    public static func layout(confirmDelete: Bool, style: FullSwipeStyle = .fill) -> Layout {
        func asking(_ actions: [ActionSpec]) -> [ActionSpec] {
            actions.map { spec in
                guard spec.action == BoundAction.delete.rawValue else { return spec }
                var spec = spec
                spec.confirm = true
                spec.confirmLabel = confirmDeleteLabel
                return spec
            }
        }
        var layout = MovieLayout.standard
        if confirmDelete {
            layout.leading = asking(layout.leading)
            layout.trailing = asking(layout.trailing)
        }
        layout.fullSwipeStyleLeading = style
        layout.fullSwipeStyleTrailing = style
        return layout
    }
}

/// Who made a change, as the front end words it (issue 46: events say `by`).
public enum TuiAuthor: Equatable, Sendable {
    /// This front end's person: a delete it fired, or an event whose `by` is its own name.
    case me
    /// Another person, by name.
    case person(String)
    /// A person the daemon names nobody for: an anonymous browser (`--web-anonymous writer`).
    case someone

    /// As a sentence starts with it: the name as it is, "You" or "Someone".
    public var subject: String {
        switch self {
        case .me: return "You"
        case .person(let name): return name
        case .someone: return "Someone"
        }
    }

    /// As it is said inside a sentence: the name, "you" or "someone".
    public var name: String {
        switch self {
        case .me: return "you"
        case .person(let name): return name
        case .someone: return "someone"
        }
    }
}

/// What a `fired` object in a reply says.
public struct TuiFired: Equatable, Sendable {
    public var action: String
    /// The daemon's message when the action did not happen.
    public var error: String?
    /// The event's seq, when it wrote one.
    public var seq: UInt64?

    public init(action: String, error: String? = nil, seq: UInt64? = nil) {
        self.action = action
        self.error = error
        self.seq = seq
    }
}

/// A sharing connection's rows as `peers` or a `peer-row` event gave them.
public struct TuiPeer: Equatable, Sendable {
    public var width: Double
    public var direction: Direction
    /// Its rows that are not closed, by movie.
    public var rows: [String: RowRender]

    public init(width: Double, direction: Direction = .ltr, rows: [String: RowRender] = [:]) {
        self.width = width
        self.direction = direction
        self.rows = rows
    }
}

/// What a recording reply says about the recording (the recording itself stays with swipectl,
/// which saves it).
public struct TuiRecordingSummary: Equatable, Sendable {
    public var inputs: UInt64?
    /// Whether the daemon cut it at its cap.
    public var cut: Bool

    public init(inputs: UInt64?, cut: Bool) {
        self.inputs = inputs
        self.cut = cut
    }
}

/// A reply, decoded for the request it answers.
public enum TuiReply: Equatable, Sendable {
    /// `ok:false`: `description` is the code and message, `message` the message alone.
    case refused(description: String, message: String)
    /// `ok:false` with `forbidden`: this connection's role may not do it (the daemon's message
    /// says which role it needs and who asked), or a sign-in was refused.
    case forbidden(message: String)
    /// `auth`'s: who the connection acts for now (nil: nobody), and its role.
    case signedIn(user: String?, role: String)
    /// A reply this client cannot read, in words (for `list`, whose reply it cannot do without).
    case unreadable(String)
    case list(seq: UInt64, movies: [Movie])
    /// A reply whose `closed` lists rows that are closed now (subscribe, viewport, configure,
    /// close without a movie, record on).
    case closed([String])
    /// A row's reply: the row (nil with `unreadable` when it could not be read), what fired or
    /// waits for its confirmation, and the thresholds its drag crossed (rule 12).
    case row(
        RowRender?, unreadable: String? = nil, fired: TuiFired? = nil, pending: String? = nil,
        crossed: [Crossing] = [])
    /// `move`'s: the seq of its `moved` event.
    case moved(seq: UInt64)
    /// `recording`'s: nil when the reply holds none.
    case recording(TuiRecordingSummary?)
    /// `peers`' (with `watch: true`): each sharing connection's open rows; `unreadable`: the
    /// last row that could not be read (it is left out).
    case peers([Int: TuiPeer], unreadable: String? = nil)
    /// Any other ok reply (add, restore, record off, share, peers off).
    case ok
}

/// A message the daemon sent on its own.
public enum TuiEvent: Equatable, Sendable {
    case movie(CommittedEvent)
    case row(RowRender, removed: Bool, cancelled: String?)
    /// A `peer-row`: `row` nil with `unreadable` when it could not be read; `width` and
    /// `direction`: its viewport's, when it says.
    case peerRow(
        client: Int, row: RowRender?, unreadable: String? = nil, width: Double? = nil,
        direction: Direction? = nil)
    case bye(reason: String)
    /// This connection's rights changed while it lives (a role given or taken back, its token
    /// revoked or expired): it acts for `user` with `role` from now on.
    case role(user: String?, role: String)
    /// An event this front end does not show.
    case other
}

/// What the machine asks its runner to do, in order.
public enum TuiAction: Equatable, Sendable {
    /// Send this request on the connection (there is one: the machine says so itself when not).
    case send(TuiRequest)
    /// Draw a frame soon: something the screen shows changed (motion alone asks for none: see
    /// `isAnimating`).
    case redraw
    /// Connect to the daemon again; report `connected` or `lost`.
    case connect
    /// Drop the connection (every request on it goes unanswered).
    case disconnect
    /// See whether recordings can be saved; report `recordDirectoryChecked`.
    case checkRecordDirectory
    /// Save the recording of the reply just given, next to these rows; report `recordingSaved`
    /// or `recordingNotSaved`.
    case saveRecording(rows: [String], TuiRecordingSummary)
    /// Restore the terminal and exit.
    case quit
}

// Everything `swipectl tui` knows, as one value: what `TuiStateMachine` changes and its tests
// compare whole.
import Movies
import SwipeEngine

/// How the front end was started.
public struct TuiOptions: Equatable, Sendable {
    /// The daemon's socket, as the header shows it.
    public var socket: String
    public var ascii: Bool
    public var direction: Direction
    public var trueColor: Bool
    /// Where `r` saves recordings (as messages name it).
    public var recordDirectory: String
    /// `--confirm-delete`: "Ask before deleting" is on from the start.
    public var confirmDelete: Bool
    /// Peek the first row once, when the list first comes, to show that rows have actions
    /// (issue 47; swipectl turns it on unless `--no-peek`).
    public var peekHint: Bool
    /// Ask the daemon for threshold crossings and show each as a cue (issue 47; swipectl turns
    /// it on).
    public var crossingCues: Bool
    /// `--full-swipe`: what a full swipe does on either edge (rule 15), from the start.
    public var fullSwipeStyle: FullSwipeStyle
    /// Whether to sign in (`auth`) first on every connection: swipectl was given a token
    /// (`--token`, `--token-file`, `$SWIPED_TOKEN`), which it keeps and sends itself.
    public var signsIn: Bool

    public init(
        socket: String, ascii: Bool = false, direction: Direction = .ltr, trueColor: Bool = false,
        recordDirectory: String = ".", confirmDelete: Bool = false, peekHint: Bool = false,
        crossingCues: Bool = false, fullSwipeStyle: FullSwipeStyle = .fill, signsIn: Bool = false
    ) {
        self.socket = socket
        self.ascii = ascii
        self.direction = direction
        self.trueColor = trueColor
        self.recordDirectory = recordDirectory
        self.confirmDelete = confirmDelete
        self.peekHint = peekHint
        self.crossingCues = crossingCues
        self.fullSwipeStyle = fullSwipeStyle
        self.signsIn = signsIn
    }
}

public struct TuiState: Equatable, Sendable {
    /// A movie in list order; `removedAt`: when its removal arrived (it collapses, then goes),
    /// `removedSeq`: that removal's seq.
    public struct Entry: Equatable, Sendable {
        public var movie: Movie
        public var removedAt: Double?
        public var removedSeq: UInt64?

        public init(movie: Movie, removedAt: Double? = nil, removedSeq: UInt64? = nil) {
            self.movie = movie
            self.removedAt = removedAt
            self.removedSeq = removedSeq
        }
    }

    /// The buttons a row showed last and the offset they were for: a closing row keeps drawing
    /// them while it slides back.
    public struct Buttons: Equatable, Sendable {
        public var buttons: [ButtonRender]
        public var offset: Double

        public init(_ buttons: [ButtonRender], offset: Double) {
            self.buttons = buttons
            self.offset = offset
        }
    }

    /// A finger (the mouse button) down on a row.
    public struct Press: Equatable, Sendable {
        public struct Sample: Equatable, Sendable {
            public var time: Double
            public var dx: Double

            public init(time: Double, dx: Double) {
                self.time = time
                self.dx = dx
            }
        }

        public var movie: String
        public var column: Int
        /// The action whose button the press began on.
        public var button: String?
        public var dragged = false
        public var lastDX = 0.0
        /// The drag's steps of the last 0.2 s, for the velocity at release.
        public var samples: [Sample] = []

        public init(movie: String, column: Int, button: String?) {
            self.movie = movie
            self.column = column
            self.button = button
        }
    }

    /// A delete `u` can undo until `until`: this front end's own, or another person's (`by`,
    /// issue 46).
    public struct Undo: Equatable, Sendable {
        public var movie: String
        public var title: String
        public var seq: UInt64
        public var until: Double
        public var by: TuiAuthor

        public init(movie: String, title: String, seq: UInt64, until: Double, by: TuiAuthor = .me) {
            self.movie = movie
            self.title = title
            self.seq = seq
            self.until = until
            self.by = by
        }
    }

    /// A move this front end asked for (issue 48; TuiStateMachine+Order.swift), until its
    /// `moved` event arrives: the keys pressed meanwhile wait for it, so that each move is sent
    /// from the place the last one put the row in, with the version it gave the movie.
    public struct Move: Equatable, Sendable {
        /// The move's seq, once its reply says it: the event with that seq ends it.
        public var seq: UInt64?
        /// How many rows further the keys asked for meanwhile (+ down, − up): one move, sent
        /// when this one has ended.
        public var steps: Int

        public init(seq: UInt64? = nil, steps: Int = 0) {
            self.seq = seq
            self.steps = steps
        }
    }

    /// A row's grip held down (issue 48): let go, the row takes the place of the row at `target`.
    public struct Grip: Equatable, Sendable {
        public var movie: String
        /// The list index of the row under the pointer (the row's own: it stays).
        public var target: Int

        public init(movie: String, target: Int) {
            self.movie = movie
            self.target = target
        }
    }

    /// `/`: a search of the titles (TuiStateMachine+Search.swift).
    public struct Search: Equatable, Sendable {
        /// What was typed.
        public var text: String
        /// Whether keys still type into it; after Enter, n and N go to the next and previous
        /// match.
        public var typing = true
        /// The row selected when `/` was pressed: typing selects the first match from there,
        /// and goes back there while nothing matches.
        public var origin: Int
        /// The entries whose title contains `text`, by index, in list order.
        public var matches: [Int] = []

        public init(text: String = "", typing: Bool = true, origin: Int, matches: [Int] = []) {
            self.text = text
            self.typing = typing
            self.origin = origin
            self.matches = matches
        }
    }

    /// What a frame is drawn from (its rows are filled in by `frame(at:)`: only those on
    /// screen, from `model.firstRow`).
    public var model: ScreenModel
    public var columns: Int
    public var lines: Int
    /// Whether there is a connection (made, perhaps not yet greeted): requests can be sent.
    public var connected = true
    /// Whether the terminal said it knows synchronized output (mode 2026): frames are then
    /// wrapped in it, so that it shows each one whole.
    public var synchronizedOutput = false

    public var entries: [Entry] = []
    /// Where each entry that is not being removed is in `entries`, by movie: an event finds its
    /// row without a look through the list (`positions(of:)` makes it from the entries).
    public var positions: [String: Int] = [:]
    /// How many entries are collapsing (`removedAt` set), so that a frame or a tick need not
    /// look through every entry to know.
    public var collapsing = 0
    public var search: Search?
    /// Each row's last render from the daemon, while it is not closed at rest.
    public var renders: [String: RowRender] = [:]
    public var lastButtons: [String: Buttons] = [:]
    public var motions: [String: Motion] = [:]
    /// The seq of the last event applied (nil until the first list).
    public var lastSeq: UInt64?
    /// The log's id the last hello said (nil until one says it).
    public var log: String?
    public var press: Press?
    /// The grip held down, while a row is being dragged to another place (issue 48).
    public var grip: Grip?
    /// The moves asked for and not yet seen in the list, by movie.
    public var moves: [String: Move] = [:]
    public var undo: Undo?
    /// A delete whose `removed` event has not arrived yet (replies and events may come in
    /// either order): the undo hint starts when it does.
    public var pendingUndo: UInt64?
    /// When the status line's message ends.
    public var statusUntil: Double?
    /// Whether the status line's message is another person's change (issue 46), which the next
    /// such change may replace; a message of the front end's own is never replaced by one.
    public var statusIsNews = false
    /// Reconnect attempts since the last hello.
    public var attempt = 0
    public var reconnectAt: Double?
    /// While recording: the lines with a row this connection received since `record` said on
    /// (the rows a replay of the recording must give); then, until it is saved, those up to
    /// the `record` that stopped it.
    public var transcript: [String]?
    public var recordedRows: [String] = []
    /// Whether a `record` or `recording` is on its way (`r` waits for it).
    public var recordBusy = false
    /// What the person asked for with `s`, `g` and `c` ("Ask before deleting"); asked for
    /// again on a new connection.
    public var sharing = false
    public var watching = false
    public var confirmDelete: Bool
    /// What a full swipe does (`F`, `--full-swipe`); asked for again on a new connection.
    public var fullSwipeStyle: FullSwipeStyle
    /// Whether the first-use peek has been asked for (once a run).
    public var peeked = false
    public var peers: [Int: TuiPeer] = [:]

    /// `positions` for these entries.
    public static func positions(of entries: [Entry]) -> [String: Int] {
        var positions: [String: Int] = [:]
        positions.reserveCapacity(entries.count)
        for (i, entry) in entries.enumerated() where entry.removedAt == nil { positions[entry.movie.id] = i }
        return positions
    }

    public init(options: TuiOptions, columns: Int, lines: Int) {
        model = ScreenModel(daemon: options.socket)
        model.ascii = options.ascii
        model.direction = options.direction
        model.trueColor = options.trueColor
        self.columns = columns
        self.lines = lines
        confirmDelete = options.confirmDelete
        fullSwipeStyle = options.fullSwipeStyle
        model.fullSwipeStyle = options.fullSwipeStyle
    }
}

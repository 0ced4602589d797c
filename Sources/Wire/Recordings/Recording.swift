// A recording of one connection's swipe session (`record`, `recording`; protocol.md,
// "Recordings"): everything the rows it received depend on, so that replaying it on the pure
// engine (Replay.swift) gives the same rows with nothing else. Format 1.
//
// What the rows depend on: the layout and the viewport (at the start, and every change), the
// form rows are worded in, the flags of the movies they render (before a movie's first row
// that shows them, and every change the connection saw: not the whole list at the start, which
// may hold 100,000 movies), every input the engine took (gestures, closes, timers) and the movie
// events that re-rendered or dropped a row. The flags are recorded as the connection rendered
// them, not as events report them: a batch of two toggles re-renders a row twice from the
// state after both, and a replay must do the same. A recording is bounded (`cap` inputs,
// `maxBytes` of entries) whatever the connection does.
//
// Format 2 (issue 47) adds what the engine's rules 12 to 15 depend on: a drag's `dy`, `peek`
// entries (their timers are `close-timer` entries, as a full swipe's), whether the connection
// asked for threshold crossings (`crossings`, at the start and as it changes) and the layout's
// full-swipe styles. A format 1 recording is format 2 without them; both are read
// (Recording+Read.swift), and a replay of either gives the rows the connection got.
import JSONCodec
import Movies
import SwipeEngine

/// One movie's flags, as a row renders them.
public struct MovieFlags: Equatable, Sendable {
    public var movie: RowID
    public var watched: Bool
    public var watchedWithFriends: Bool

    public init(movie: RowID, watched: Bool, watchedWithFriends: Bool) {
        self.movie = movie
        self.watched = watched
        self.watchedWithFriends = watchedWithFriends
    }

    public var flags: RowFlags { MovieLayout.flags(watched: watched, watchedWithFriends: watchedWithFriends) }
}

/// What a recording holds at one moment.
public enum RecordedInput: Equatable, Sendable {
    /// The viewport changed (every row closed).
    case viewport(Viewport)
    /// The layout changed (every row closed).
    case configure(Layout)
    /// The form rows are worded in.
    case options(RowForm)
    case drag(movie: RowID, dx: Double, dy: Double? = nil)
    case release(movie: RowID, dx: Double?, vx: Double?)
    case tap(movie: RowID, action: String)
    case open(movie: RowID, edge: Edge)
    case perform(movie: RowID, action: String)
    /// `peek` (format 2), with its edge as asked (nil: the engine's choice, rule 14).
    case peek(movie: RowID, edge: Edge?)
    /// `options` changed whether replies report threshold crossings (format 2; rule 12).
    case crossings(Bool)
    /// `close`: one row, or every row (nil).
    case close(movie: RowID?)
    /// The close timer of a fired row elapsed.
    case closeTimer(movie: RowID)
    /// The confirmation timer of a confirming row elapsed (rule 10).
    case confirmTimer(movie: RowID)
    /// A committed movie event re-rendered the row (a `row` event).
    case movieChanged(movie: RowID)
    /// The movie was removed: the row is dropped (a `row` event with `removed`).
    case movieRemoved(movie: RowID)
    /// A movie's flags changed (not an input: it counts nothing against the cap).
    case flags(MovieFlags)

    /// The entry's `kind`.
    public var kind: String {
        switch self {
        case .viewport: "viewport"
        case .configure: "configure"
        case .options: "options"
        case .drag: "drag"
        case .release: "release"
        case .tap: "tap"
        case .open: "open"
        case .perform: "perform"
        case .peek: "peek"
        case .crossings: "crossings"
        case .close: "close"
        case .closeTimer: "close-timer"
        case .confirmTimer: "confirm-timer"
        case .movieChanged: "movie-changed"
        case .movieRemoved: "movie-removed"
        case .flags: "flags"
        }
    }
}

public struct RecordedEntry: Equatable, Sendable {
    /// Milliseconds since the recording started.
    public var t: UInt64
    public var input: RecordedInput

    public init(t: UInt64, _ input: RecordedInput) {
        self.t = t
        self.input = input
    }
}

public struct Recording: Equatable, Sendable {
    /// The format's version (the object's `recording`) of the recordings made now.
    public static let format = 2
    /// The versions read: 1 (before issue 47) and 2.
    public static let formats: ClosedRange<Int> = 1...2
    /// The most inputs a recording holds: the next one cuts it (recording stops).
    public static let cap = 10_000
    /// The most bytes its `movies` and `entries` take as JSON, and the most its entries hold in
    /// memory (`held`): an entry that would go past either cuts the recording (recording stops).
    /// With the rest of the Recording object (its layout: at most about 140 KB as JSON, 16
    /// actions of 7 strings of 200 bytes escaped, and about 31 KB in memory) it bounds what a
    /// connection that records holds, and the `recording` reply, whatever it records. Counting
    /// JSON alone let layouts of plain text, which take more in memory than written (a string's
    /// header and the allocator's rounding), hold 1.4 MB for 1 MiB of JSON.
    public static let maxBytes = 1 << 20

    public var layout: Layout
    public var viewport: Viewport
    public var rows: RowForm
    /// Whether the connection's replies reported threshold crossings at the start (format 2).
    public var crossings: Bool
    /// The format this recording was read from (`format` for one made here).
    public var version = Recording.format
    /// The flags of every movie in the list at the start, in list order.
    public var movies: [MovieFlags]
    public var entries: [RecordedEntry] = []
    /// Entries that are inputs (every kind but `flags`).
    public internal(set) var inputs = 0
    /// The cap was reached: recording stopped there.
    public internal(set) var cut = false
    /// What `movies` and `entries` take as JSON, each with its comma (not written).
    public internal(set) var bytes = 0
    /// What the entries hold in memory as `append` and `observe` counted it (Recording+Held.swift;
    /// not written, 0 for a recording read from JSON).
    public private(set) var held = 0
    /// The manager's clock at the start, µs (not written: entries carry the time since).
    public var startedAt: UInt64 = 0
    /// The flags as last recorded, to record only changes (not written).
    var known: [RowID: MovieFlags] = [:]

    public init(
        layout: Layout, viewport: Viewport, rows: RowForm, movies: [MovieFlags], startedAt: UInt64 = 0,
        crossings: Bool = false
    ) {
        self.layout = layout
        self.viewport = viewport
        self.rows = rows
        self.crossings = crossings
        self.movies = movies
        self.startedAt = startedAt
        known.reserveCapacity(movies.count)
        for m in movies {
            known[m.movie] = m
            bytes += Recording.size(m)
        }
    }

    /// The bytes `m` takes in `movies`, with its comma.
    static func size(_ m: MovieFlags) -> Int {
        var out = JSONWriter()
        out.literal(#"{"movie":"#)
        out.string(m.movie)
        Encode.flagFields(&out, m)
        return out.bytes.count + 1
    }

    /// The bytes `e` takes in `entries`, with its comma.
    static func size(_ e: RecordedEntry) -> Int {
        var out = JSONWriter()
        Encode.entry(&out, e)
        return out.bytes.count + 1
    }

    /// Whether inputs are still taken (not cut).
    public var isOpen: Bool { !cut }

    /// Records `input` at `now` (µs on the clock `startedAt` is on). Past either cap (`cap`
    /// inputs, `maxBytes`) the recording is cut instead, and takes nothing more; returns whether
    /// it took the input.
    @discardableResult
    public mutating func append(_ input: RecordedInput, now: UInt64) -> Bool {
        append(input, now: now, alsoHeld: 0)
    }

    /// `append`, counting `alsoHeld` more bytes held with the entry (a movie's flags known).
    private mutating func append(_ input: RecordedInput, now: UInt64, alsoHeld: Int) -> Bool {
        guard !cut else { return false }
        let isInput: Bool
        if case .flags = input { isInput = false } else { isInput = true }
        let entry = RecordedEntry(t: (now &- startedAt) / 1000, input)
        let size = Recording.size(entry)
        // The entries' array grows by hand, so that what it takes is known before it grows.
        let growth = entries.count < entries.capacity ? 0 : Recording.growth(entries.capacity)
        let more = Recording.held(input) + alsoHeld + (growth + 1) * Recording.slot
        guard !isInput || inputs < Recording.cap, bytes + size <= Recording.maxBytes,
            held + more <= Recording.maxBytes
        else {
            cut = true
            return false
        }
        if growth > 0 {
            let before = entries.capacity
            entries.reserveCapacity(before + growth)
            held += (entries.capacity - before) * Recording.slot
        }
        if isInput { inputs += 1 }
        bytes += size
        held += Recording.held(input) + alsoHeld
        entries.append(entry)
        return true
    }

    /// A row is about to be rendered with these flags: recorded when they differ from the last.
    public mutating func observe(_ flags: MovieFlags, now: UInt64) {
        guard !cut else { return }
        let last = known[flags.movie]
        guard last != flags else { return }
        // A movie never seen renders as unflagged: nothing to record for it until it is flagged.
        if last == nil && !flags.watched && !flags.watchedWithFriends { return }
        guard append(.flags(flags), now: now, alsoHeld: last == nil ? Recording.knownEntry : 0) else {
            return
        }
        known[flags.movie] = flags
    }
}

// MARK: - Format 1 as JSON

extension Encode {
    /// `{"ok":true,"recording":Recording}`.
    public static func recording(_ out: inout JSONWriter, id: [UInt8]?, _ r: Recording) {
        begin(&out, id: id, ok: true)
        key(&out, "recording")
        recording(&out, r)
        end(&out)
    }

    /// `{"ok":true,"record":{"on":…,"inputs":…,"cut":…},"closed":[…]}`.
    public static func record(
        _ out: inout JSONWriter, id: [UInt8]?, on: Bool, inputs: Int, cut: Bool, closed: [RowID]
    ) {
        begin(&out, id: id, ok: true)
        key(&out, "record")
        out.literal(#"{"on":"#)
        out.bool(on)
        out.literal(#","inputs":"#)
        out.int(inputs)
        out.literal(#","cut":"#)
        out.bool(cut)
        out.bytes.append(UInt8(ascii: "}"))
        key(&out, "closed")
        stringArray(&out, closed)
        end(&out)
    }

    /// A Recording object (format 2), on one line.
    public static func recording(_ out: inout JSONWriter, _ r: Recording) {
        out.literal(#"{"recording":"#)
        out.int(Recording.format)
        out.literal(#","cap":"#)
        out.int(Recording.cap)
        out.literal(#","inputs":"#)
        out.int(r.inputs)
        out.literal(#","cut":"#)
        out.bool(r.cut)
        out.literal(#","layout":"#)
        layoutObject(&out, r.layout)
        out.literal(#","viewport":"#)
        viewportObject(&out, r.viewport)
        out.literal(#","rows":"#)
        out.string(r.rows.rawValue)
        if r.crossings { out.literal(#","crossings":true"#) }
        out.literal(#","movies":"#)
        array(&out, r.movies) { out, m in
            out.literal(#"{"movie":"#)
            out.string(m.movie)
            flagFields(&out, m)
        }
        out.literal(#","entries":"#)
        array(&out, r.entries) { entry(&$0, $1) }
        out.bytes.append(UInt8(ascii: "}"))
    }

    static func flagFields(_ out: inout JSONWriter, _ m: MovieFlags) {
        out.literal(m.watched ? #","watched":true"# : #","watched":false"#)
        out.literal(m.watchedWithFriends ? #","watchedWithFriends":true}"# : #","watchedWithFriends":false}"#)
    }

    static func entry(_ out: inout JSONWriter, _ e: RecordedEntry) {
        out.literal(#"{"t":"#)
        out.uint64(e.t)
        out.literal(#","kind":"#)
        out.string(e.input.kind)
        func movie(_ id: RowID) {
            out.literal(#","movie":"#)
            out.string(id)
        }
        switch e.input {
        case .viewport(let v):
            out.literal(#","viewport":"#)
            viewportObject(&out, v)
        case .configure(let layout):
            out.literal(#","layout":"#)
            layoutObject(&out, layout)
        case .options(let form):
            out.literal(#","rows":"#)
            out.string(form.rawValue)
        case .drag(let row, let dx, let dy):
            movie(row)
            out.literal(#","dx":"#)
            out.double(dx)
            if let dy {
                out.literal(#","dy":"#)
                out.double(dy)
            }
        case .peek(let row, let edge):
            movie(row)
            if let edge {
                out.literal(#","edge":"#)
                out.string(edge.rawValue)
            }
        case .crossings(let on):
            out.literal(on ? #","on":true"# : #","on":false"#)
        case .release(let row, let dx, let vx):
            movie(row)
            if let dx {
                out.literal(#","dx":"#)
                out.double(dx)
            }
            if let vx {
                out.literal(#","vx":"#)
                out.double(vx)
            }
        case .tap(let row, let action), .perform(let row, let action):
            movie(row)
            out.literal(#","action":"#)
            out.string(action)
        case .open(let row, let edge):
            movie(row)
            out.literal(#","edge":"#)
            out.string(edge.rawValue)
        case .close(let row):
            if let row { movie(row) }
        case .closeTimer(let row), .confirmTimer(let row), .movieChanged(let row), .movieRemoved(let row):
            movie(row)
        case .flags(let m):
            movie(m.movie)
            flagFields(&out, m)
            return
        }
        out.bytes.append(UInt8(ascii: "}"))
    }
}

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
    case drag(movie: RowID, dx: Double)
    case release(movie: RowID, dx: Double?, vx: Double?)
    case tap(movie: RowID, action: String)
    case open(movie: RowID, edge: Edge)
    case perform(movie: RowID, action: String)
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

    /// The entry's `kind` in format 1.
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
    /// The format's version (the object's `recording`).
    public static let format = 1
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
    /// The flags of every movie in the list at the start, in list order.
    public var movies: [MovieFlags]
    public var entries: [RecordedEntry] = []
    /// Entries that are inputs (every kind but `flags`).
    public private(set) var inputs = 0
    /// The cap was reached: recording stopped there.
    public private(set) var cut = false
    /// What `movies` and `entries` take as JSON, each with its comma (not written).
    public private(set) var bytes = 0
    /// What the entries hold in memory as `append` and `observe` counted it (Recording+Held.swift;
    /// not written, 0 for a recording read from JSON).
    public private(set) var held = 0
    /// The manager's clock at the start, µs (not written: entries carry the time since).
    public var startedAt: UInt64 = 0
    /// The flags as last recorded, to record only changes (not written).
    var known: [RowID: MovieFlags] = [:]

    public init(
        layout: Layout, viewport: Viewport, rows: RowForm, movies: [MovieFlags], startedAt: UInt64 = 0
    ) {
        self.layout = layout
        self.viewport = viewport
        self.rows = rows
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

    /// A Recording object (format 1), on one line.
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

    static func layoutObject(_ out: inout JSONWriter, _ layout: Layout) {
        out.literal(#"{"leading":"#)
        actions(&out, layout.leading)
        out.literal(#","trailing":"#)
        actions(&out, layout.trailing)
        out.literal(#","allowsFullSwipeLeading":"#)
        out.bool(layout.allowsFullSwipeLeading)
        out.literal(#","allowsFullSwipeTrailing":"#)
        out.bool(layout.allowsFullSwipeTrailing)
        out.literal(#","buttonWidth":"#)
        out.double(layout.buttonWidth)
        out.bytes.append(UInt8(ascii: "}"))
    }

    static func viewportObject(_ out: inout JSONWriter, _ viewport: Viewport) {
        out.literal(#"{"width":"#)
        out.double(viewport.width)
        out.literal(#","direction":"#)
        out.string(viewport.direction.rawValue)
        out.bytes.append(UInt8(ascii: "}"))
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
        case .drag(let row, let dx):
            movie(row)
            out.literal(#","dx":"#)
            out.double(dx)
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

/// Why a recording could not be read: what is wrong, and where.
public struct RecordingError: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

extension Recording {
    /// Reads a Recording object (format 1): the `recording` op's reply's `recording`, or the
    /// reply itself.
    public init(json: JSON) throws(RecordingError) {
        guard case .object(var object) = json else { throw RecordingError("a recording is a JSON object") }
        if case .object(let inner)? = object["recording"] { object = inner }
        guard case .number(let format)? = object["recording"], format.int == Int64(Recording.format) else {
            throw RecordingError("not a recording of format \(Recording.format) (its \"recording\" is not 1)")
        }
        let layout = try Recording.layout(object["layout"], "layout")
        let viewport = try Recording.viewport(object["viewport"], "viewport")
        guard let rows = object["rows"]?.stringValue.flatMap(RowForm.init(rawValue:)) else {
            throw RecordingError("\"rows\" must be \"full\" or \"compact\"")
        }
        guard case .array(let movieItems)? = object["movies"] else {
            throw RecordingError("\"movies\" must be an array")
        }
        var movies: [MovieFlags] = []
        for (i, item) in movieItems.enumerated() {
            movies.append(try Recording.flags(item, "movies[\(i)]"))
        }
        self.init(layout: layout, viewport: viewport, rows: rows, movies: movies)
        guard case .array(let items)? = object["entries"] else {
            throw RecordingError("\"entries\" must be an array")
        }
        for (i, item) in items.enumerated() {
            let path = "entries[\(i)]"
            guard case .object(let e) = item, case .number(let t)? = e["t"], let ms = t.int, ms >= 0 else {
                throw RecordingError(
                    "\(path) must be an object with \"t\", a whole number of milliseconds ≥ 0")
            }
            entries.append(RecordedEntry(t: UInt64(ms), try Recording.input(e, path)))
            bytes += Recording.size(entries.last!)
            if case .flags = entries.last!.input {} else { inputs += 1 }
        }
        if case .bool(let cut)? = object["cut"] { self.cut = cut }
    }

    private static func input(_ e: JSONObject, _ path: String) throws(RecordingError) -> RecordedInput {
        guard let kind = e["kind"]?.stringValue else { throw RecordingError("\(path) has no \"kind\"") }
        func movie() throws(RecordingError) -> RowID {
            guard let id = e["movie"]?.stringValue else {
                throw RecordingError("\(path) (\(kind)) needs \"movie\"")
            }
            return id
        }
        func number(_ name: String, required: Bool) throws(RecordingError) -> Double? {
            guard let value = e[name] else {
                if required { throw RecordingError("\(path) (\(kind)) needs \"\(name)\"") }
                return nil
            }
            guard case .number(let n) = value else {
                throw RecordingError("\(path).\(name) must be a number")
            }
            return n.double
        }
        func text(_ name: String) throws(RecordingError) -> String {
            guard let value = e[name]?.stringValue else {
                throw RecordingError("\(path) (\(kind)) needs \"\(name)\" (a string)")
            }
            return value
        }
        switch kind {
        case "viewport": return .viewport(try viewport(e["viewport"], "\(path).viewport"))
        case "configure": return .configure(try layout(e["layout"], "\(path).layout"))
        case "options":
            guard let form = RowForm(rawValue: try text("rows")) else {
                throw RecordingError("\(path).rows must be \"full\" or \"compact\"")
            }
            return .options(form)
        case "drag": return .drag(movie: try movie(), dx: try number("dx", required: true)!)
        case "release":
            return .release(
                movie: try movie(), dx: try number("dx", required: false),
                vx: try number("vx", required: false))
        case "tap": return .tap(movie: try movie(), action: try text("action"))
        case "perform": return .perform(movie: try movie(), action: try text("action"))
        case "open":
            guard let edge = Edge(rawValue: try text("edge")) else {
                throw RecordingError("\(path).edge must be \"leading\" or \"trailing\"")
            }
            return .open(movie: try movie(), edge: edge)
        case "close": return .close(movie: e["movie"] == nil ? nil : try movie())
        case "close-timer": return .closeTimer(movie: try movie())
        case "confirm-timer": return .confirmTimer(movie: try movie())
        case "movie-changed": return .movieChanged(movie: try movie())
        case "movie-removed": return .movieRemoved(movie: try movie())
        case "flags": return .flags(try flags(.object(e), path))
        default: throw RecordingError("\(path) has an unknown kind \"\(MessageText.truncated(kind))\"")
        }
    }

    private static func flags(_ json: JSON, _ path: String) throws(RecordingError) -> MovieFlags {
        guard case .object(let m) = json, let id = m["movie"]?.stringValue,
            let watched = m["watched"]?.boolValue,
            let friends = m["watchedWithFriends"]?.boolValue
        else {
            throw RecordingError("\(path) must have \"movie\", \"watched\" and \"watchedWithFriends\"")
        }
        return MovieFlags(movie: id, watched: watched, watchedWithFriends: friends)
    }

    private static func viewport(_ json: JSON?, _ path: String) throws(RecordingError) -> Viewport {
        guard case .object(let v)? = json, case .number(let width)? = v["width"],
            let direction = v["direction"]?.stringValue.flatMap(Direction.init(rawValue:))
        else {
            throw RecordingError("\(path) must be {\"width\":number,\"direction\":\"ltr\" or \"rtl\"}")
        }
        return Viewport(width: width.double, direction: direction)
    }

    /// A layout object, checked as `configure`'s arguments are (the op table's declarations).
    private static func layout(_ json: JSON?, _ path: String) throws(RecordingError) -> Layout {
        guard case .object(let object)? = json else {
            throw RecordingError("\(path) must be a layout object")
        }
        var args = Arguments(op: Ops.spec(.configure))
        for (key, value) in object.members {
            guard let index = args.op.args.firstIndex(where: { $0.name == key }) else {
                throw RecordingError("\(path) has an unknown key \"\(MessageText.truncated(key))\"")
            }
            args.values[index] = value
        }
        let change: LayoutChange
        do {
            guard case .configure(let c) = try args.build() else {
                preconditionFailure("configure built another op")
            }
            change = c
        } catch {
            throw RecordingError("\(path): \(error.message)")
        }
        return Layout(
            leading: change.leading ?? [], trailing: change.trailing ?? [],
            allowsFullSwipeLeading: change.allowsFullSwipeLeading ?? true,
            allowsFullSwipeTrailing: change.allowsFullSwipeTrailing ?? true,
            buttonWidth: change.buttonWidth ?? Rules.defaultButtonWidth)
    }
}

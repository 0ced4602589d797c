// Reading a Recording object (protocol.md, "Recordings and replays"): format 1, as recorded
// before issue 47, and format 2. Every entry is checked as its live request was (a layout as
// `configure`'s arguments), and each error names where it is (`entries[3].dx`).
import JSONCodec
import Movies
import SwipeEngine

/// Why a recording could not be read: what is wrong, and where.
public struct RecordingError: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }

    /// A value as a message shows it: its JSON, short, or "missing".
    static func text(_ value: JSON?) -> String {
        guard let value else { return "missing" }
        var out = JSONWriter()
        out.value(value)
        return MessageText.truncated(String(decoding: out.bytes, as: UTF8.self))
    }
}

extension Recording {
    /// Reads a Recording object of format 1 or 2: the `recording` op's reply's `recording`, or
    /// the reply itself. What format 2 added (a drag's `dy`, `peek`, `crossings`, full-swipe
    /// styles) is refused in a format 1 recording, which could not hold it.
    public init(json: JSON) throws(RecordingError) {
        guard case .object(var object) = json else { throw RecordingError("a recording is a JSON object") }
        if case .object(let inner)? = object["recording"] { object = inner }
        guard case .number(let number)? = object["recording"], let format = number.int,
            Recording.formats.contains(Int(format))
        else {
            throw RecordingError(
                "not a recording of format 1 or 2 (its \"recording\" is \(RecordingError.text(object["recording"])))"
            )
        }
        let version = Int(format)
        let layout = try Recording.layout(object["layout"], "layout", version: version)
        let viewport = try Recording.viewport(object["viewport"], "viewport")
        guard let rows = object["rows"]?.stringValue.flatMap(RowForm.init(rawValue:)) else {
            throw RecordingError("\"rows\" must be \"full\" or \"compact\"")
        }
        var crossings = false
        if let value = object["crossings"] {
            guard version >= 2 else { throw RecordingError("\"crossings\" needs format 2") }
            guard case .bool(let on) = value else {
                throw RecordingError("\"crossings\" must be true or false")
            }
            crossings = on
        }
        guard case .array(let movieItems)? = object["movies"] else {
            throw RecordingError("\"movies\" must be an array")
        }
        var movies: [MovieFlags] = []
        for (i, item) in movieItems.enumerated() {
            movies.append(try Recording.flags(item, "movies[\(i)]"))
        }
        self.init(layout: layout, viewport: viewport, rows: rows, movies: movies, crossings: crossings)
        self.version = version
        guard case .array(let items)? = object["entries"] else {
            throw RecordingError("\"entries\" must be an array")
        }
        for (i, item) in items.enumerated() {
            let path = "entries[\(i)]"
            guard case .object(let e) = item, case .number(let t)? = e["t"], let ms = t.int, ms >= 0 else {
                throw RecordingError(
                    "\(path) must be an object with \"t\", a whole number of milliseconds ≥ 0")
            }
            entries.append(RecordedEntry(t: UInt64(ms), try Recording.input(e, path, version: version)))
            bytes += Recording.size(entries.last!)
            if case .flags = entries.last!.input {} else { inputs += 1 }
        }
        if case .bool(let cut)? = object["cut"] { self.cut = cut }
    }

    private static func input(_ e: JSONObject, _ path: String, version: Int) throws(RecordingError)
        -> RecordedInput
    {
        guard let kind = e["kind"]?.stringValue else { throw RecordingError("\(path) has no \"kind\"") }
        func format2(_ what: String) throws(RecordingError) {
            if version < 2 { throw RecordingError("\(path): \(what) needs format 2") }
        }
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
        case "configure": return .configure(try layout(e["layout"], "\(path).layout", version: version))
        case "options":
            guard let form = RowForm(rawValue: try text("rows")) else {
                throw RecordingError("\(path).rows must be \"full\" or \"compact\"")
            }
            return .options(form)
        case "drag":
            let dy = try number("dy", required: false)
            if dy != nil { try format2("\"dy\"") }
            return .drag(movie: try movie(), dx: try number("dx", required: true)!, dy: dy)
        case "peek":
            try format2("a peek")
            var edge: Edge?
            if e["edge"] != nil {
                guard let given = Edge(rawValue: try text("edge")) else {
                    throw RecordingError("\(path).edge must be \"leading\" or \"trailing\"")
                }
                edge = given
            }
            return .peek(movie: try movie(), edge: edge)
        case "crossings":
            try format2("\"crossings\"")
            guard let on = e["on"]?.boolValue else {
                throw RecordingError("\(path) (crossings) needs \"on\" (true or false)")
            }
            return .crossings(on)
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

    /// A layout object, checked as `configure`'s arguments are (the op table's declarations);
    /// full-swipe styles only in format 2.
    private static func layout(_ json: JSON?, _ path: String, version: Int) throws(RecordingError) -> Layout {
        guard case .object(let object)? = json else {
            throw RecordingError("\(path) must be a layout object")
        }
        var args = Arguments(op: Ops.spec(.configure))
        for (key, value) in object.members {
            if version < 2 && key.hasPrefix("fullSwipeStyle") {
                throw RecordingError("\(path).\(key) needs format 2")
            }
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
        return change.layout
    }
}

// Turning the daemon's JSON back into typed values (the inverse of Wire's Encode).
import JSONCodec
import Movies
import SwipeEngine
import Wire

extension JSONObject {
    public func string(_ key: String) -> String? {
        if case .string(let s)? = self[key] { return s }
        return nil
    }

    public func uint(_ key: String) -> UInt64? {
        if case .number(let n)? = self[key], let i = n.int, i >= 0 { return UInt64(i) }
        return nil
    }

    public func double(_ key: String) -> Double? {
        if case .number(let n)? = self[key] { return n.double }
        return nil
    }

    public func bool(_ key: String) -> Bool? {
        if case .bool(let b)? = self[key] { return b }
        return nil
    }

    public func object(_ key: String) -> JSONObject? {
        if case .object(let o)? = self[key] { return o }
        return nil
    }
}

extension JSON {
    static func integer(_ value: UInt64) -> JSON { .number(JSONNumber(Int64(clamping: value))) }
    static func double(_ value: Double) -> JSON { .number(JSONNumber(value)) }
}

// The decoders are public so that front ends holding a raw `Reply` (or a line from elsewhere)
// decode it exactly as the typed ops do.
extension SwipedClient {
    /// One line from the daemon as a JSON object.
    public static func object(_ line: [UInt8]) throws(ClientError) -> JSONObject {
        let value: JSON
        do {
            value = try JSONParser.parse(line)
        } catch {
            throw ClientError(
                .protocol,
                "the daemon sent invalid JSON (\(error)): \(String(decoding: line.prefix(200), as: UTF8.self))"
            )
        }
        guard case .object(let object) = value else {
            throw ClientError(.protocol, "the daemon sent a JSON value that is not an object")
        }
        return object
    }

    /// A Movie object (protocol.md, Objects).
    public static func movie(_ value: JSON) throws(ClientError) -> Movie {
        guard case .object(let o) = value, let id = o.string("id"), let title = o.string("title"),
            let image = o.string("image"), let watched = o.bool("watched"),
            let friends = o.bool("watchedWithFriends"), let version = o.uint("version")
        else { throw ClientError(.protocol, "malformed movie object") }
        return Movie(
            id: id, title: title, image: image, watched: watched, watchedWithFriends: friends,
            version: version)
    }

    /// An event object (`history` item or `movie` event), with its `at` text as sent. `by`, who
    /// made it (issue 46), is nil when the daemon left it out (an event of an older build, or an
    /// anonymous browser's).
    public static func committedEvent(_ o: JSONObject) throws(ClientError) -> (CommittedEvent, String) {
        guard let seq = o.uint("seq"), let kind = o.string("kind"), let movie = o["movie"],
            let at = o.string("at")
        else {
            throw ClientError(.protocol, "malformed event object")
        }
        return (
            CommittedEvent(
                seq: seq, kind: EventKind(kind), movie: try SwipedClient.movie(movie),
                at: RFC3339.parse(at) ?? 0,
                undoes: o.uint("undoes"), by: o.string("by"), to: place(o, "after"), from: place(o, "from")),
            at
        )
    }

    /// A `moved` or `restored` event's place (issue 48): an id, first for null, nil when absent.
    public static func place(_ o: JSONObject, _ name: String) -> ListPlace? {
        switch o[name] {
        case .null?: .first
        case .string(let id)?: .after(id)
        default: nil
        }
    }

    /// An object the daemon sent on its own (it has an `event` key).
    public static func event(_ o: JSONObject) throws(ClientError) -> ServerEvent {
        switch o.string("event") {
        case "movie":
            let (event, at) = try committedEvent(o)
            return .movie(event, at: at)
        case "row":
            return .row(
                try row(o.object("row")), removed: o.bool("removed") ?? false,
                cancelled: o.string("cancelled"))
        case "bye":
            return .bye(reason: o.string("reason") ?? "?")
        case let name?:
            return .other(name: name, o)
        case nil:
            throw ClientError(.protocol, "event without a name")
        }
    }

    /// A Row object; nil (a missing `row`) is a protocol error. Protocol 1 grows by additions
    /// (protocol.md, "How protocol 1 grows"): keys this client does not know are ignored, and a
    /// phase it does not know is shown as the row's offset and buttons say (`phase(_:offset:buttons:)`).
    public static func row(_ object: JSONObject?) throws(ClientError) -> RowRender {
        guard let o = object, let movie = o.string("movie"), let offset = o.double("offset"),
            let phaseName = o.string("phase"), let fullSwipe = o.bool("fullSwipe"),
            case .array(let buttonItems)? = o["buttons"], let spring = o.object("spring"),
            case .array(let a11yItems)? = o["accessibilityActions"]
        else { throw ClientError(.protocol, "malformed row object") }
        var buttons: [ButtonRender] = []
        for item in buttonItems {
            guard case .object(let b) = item, let action = b.string("action"), let tint = b.string("tint"),
                let x = b.double("x"), let width = b.double("width")
            else { throw ClientError(.protocol, "malformed button object") }
            buttons.append(
                ButtonRender(
                    action: action, label: b.string("label"), icon: b.string("icon"), tint: tint,
                    role: b.string("role").flatMap(Role.init(rawValue:)), x: x, width: width))
        }
        var actions: [AccessibilityAction] = []
        for item in a11yItems {
            guard case .object(let a) = item, let action = a.string("action"), let label = a.string("label"),
                let destructive = a.bool("destructive"),
                let edge = a.string("edge").flatMap(Edge.init(rawValue:))
            else { throw ClientError(.protocol, "malformed accessibility action") }
            actions.append(
                AccessibilityAction(action: action, label: label, destructive: destructive, edge: edge))
        }
        return RowRender(
            row: movie, offset: offset, phase: phase(phaseName, offset: offset, buttons: buttons),
            edge: o.string("edge").flatMap(Edge.init(rawValue:)),
            fullSwipe: fullSwipe, buttons: buttons,
            spring: SpringHint(
                target: spring.double("target") ?? 0, response: spring.double("response") ?? 0,
                dampingFraction: spring.double("dampingFraction") ?? 0),
            accessibilityActions: actions)
    }

    /// The phase named `name`; one this client does not know (added to protocol 1 after it was
    /// written) is taken for what the offset and buttons show: a
    /// closed row at rest with nothing revealed, else an open one.
    public static func phase(_ name: String, offset: Double, buttons: [ButtonRender]) -> Phase {
        if let known = Phase(rawValue: name) { return known }
        return offset == 0 && buttons.isEmpty ? .closed : .open
    }
}

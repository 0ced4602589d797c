// The terminal front end's requests, replies and events as protocol 1 writes them: the model
// (Terminal's TuiStateMachine) speaks in typed values, this is where they meet the JSON.
import JSONCodec
import Movies
import SwipeEngine
import SwipedClient
import Terminal

enum TuiWire {
    /// `request` as an op and its arguments; `token`: the one to sign in with, which only
    /// `.signIn` sends (the machine asks for it only when swipectl has one).
    static func line(_ request: TuiRequest, token: String? = nil) -> (op: String, arguments: [(String, JSON)])
    {
        if case .signIn = request {
            guard let token else { preconditionFailure("a sign-in without a token (TuiOptions.signsIn)") }
            return ("auth", [("token", .string(token))])
        }
        return switch request {
        case .signIn: preconditionFailure("answered above")
        case .list: ("list", [])
        case .subscribe(let from): ("subscribe", [("from", .number(JSONNumber(Int64(clamping: from))))])
        case .viewport(let width, let direction):
            ("viewport", [("width", .number(JSONNumber(width))), ("direction", .string(direction.rawValue))])
        case .drag(let movie, let dx): ("drag", [("movie", .string(movie)), ("dx", .number(JSONNumber(dx)))])
        case .release(let movie, let vx):
            ("release", [("movie", .string(movie)), ("vx", .number(JSONNumber(vx)))])
        case .tap(let movie, let action): ("tap", [("movie", .string(movie)), ("action", .string(action))])
        case .open(let movie, let edge):
            ("open", [("movie", .string(movie)), ("edge", .string(edge.rawValue))])
        case .close(let movie): ("close", [("movie", .string(movie))])
        case .closeAll: ("close", [])
        case .perform(let movie, let action):
            ("perform", [("movie", .string(movie)), ("action", .string(action))])
        case .peek(let movie): ("peek", [("movie", .string(movie))])
        case .crossings(let on): ("options", [("crossings", .bool(on))])
        case .add(let title): ("add", [("title", .string(title))])
        case .move(let movie, let after, let expect):
            (
                "move",
                [
                    ("movie", .string(movie)), ("after", after.map(JSON.string) ?? .null),
                    ("expect", .number(JSONNumber(Int64(clamping: expect)))),
                ]
            )
        case .restore(let movie, let expect, _, _):
            (
                "restore",
                [("movie", .string(movie)), ("expect", .number(JSONNumber(Int64(clamping: expect))))]
            )
        case .record(let on): ("record", [("on", .bool(on))])
        case .recording: ("recording", [])
        case .share(let on, _): ("share", [("on", .bool(on))])
        case .peers(let watch, _): ("peers", [("watch", .bool(watch))])
        case .configure(let confirmDelete, _, let style):
            ("configure", layout(TuiRequest.layout(confirmDelete: confirmDelete, style: style)))
        }
    }

    /// `configure`'s arguments for `layout` (protocol.md, "configure").
    static func layout(_ layout: Layout) -> [(String, JSON)] {
        func action(_ spec: ActionSpec) -> JSON {
            var o = JSONObject()
            o.append("action", .string(spec.action))
            let strings = [
                ("label", spec.label), ("icon", spec.icon), ("tint", spec.tint),
                ("role", spec.role?.rawValue),
                ("activeLabel", spec.activeLabel), ("activeIcon", spec.activeIcon),
            ]
            for case (let key, let value?) in strings { o.append(key, .string(value)) }
            if spec.confirm { o.append("confirm", .bool(true)) }
            if let label = spec.confirmLabel { o.append("confirmLabel", .string(label)) }
            return .object(o)
        }
        return [
            ("leading", .array(layout.leading.map(action))),
            ("trailing", .array(layout.trailing.map(action))),
            ("allowsFullSwipeLeading", .bool(layout.allowsFullSwipeLeading)),
            ("allowsFullSwipeTrailing", .bool(layout.allowsFullSwipeTrailing)),
            ("buttonWidth", .number(JSONNumber(layout.buttonWidth))),
        ]
            // The styles only when not the default: a daemon before issue 47 takes the rest.
            + (layout.fullSwipeStyleLeading == .fill
                ? [] : [("fullSwipeStyleLeading", .string(layout.fullSwipeStyleLeading.rawValue))])
            + (layout.fullSwipeStyleTrailing == .fill
                ? [] : [("fullSwipeStyleTrailing", .string(layout.fullSwipeStyleTrailing.rawValue))])
    }

    /// The reply to `request`, decoded for it.
    static func reply(_ reply: Reply, to request: TuiRequest) -> TuiReply {
        if let error = reply.error {
            if error.code == "forbidden" { return .forbidden(message: error.message) }
            return .refused(description: error.description, message: error.message)
        }
        let o = reply.object
        switch request {
        case .signIn:
            return .signedIn(user: o.string("user"), role: o.string("role") ?? "?")
        case .list:
            return list(o)
        case .subscribe, .viewport, .closeAll, .configure:
            return .closed(closed(o))
        case .record(on: true):
            return .closed(closed(o))
        case .drag, .release, .tap, .open, .close, .perform, .peek:
            return row(o)
        case .recording:
            return .recording(
                o["recording"].map { recording in
                    TuiRecordingSummary(
                        inputs: recording.objectValue?.uint("inputs"),
                        cut: recording.objectValue?.bool("cut") == true)
                })
        case .peers(let watch, _):
            return watch ? peers(o) : .peers([:])
        case .move:
            return o.uint("seq").map(TuiReply.moved) ?? .unreadable("a move reply without seq")
        case .add, .restore, .record(on: false), .share, .crossings:
            return .ok
        }
    }

    private static func closed(_ o: JSONObject) -> [String] {
        guard case .array(let ids)? = o["closed"] else { return [] }
        return ids.compactMap { if case .string(let id) = $0 { id } else { nil } }
    }

    private static func list(_ o: JSONObject) -> TuiReply {
        guard let seq = o.uint("seq"), case .array(let items)? = o["movies"] else {
            return .unreadable("the daemon sent a list without seq and movies")
        }
        var movies: [Movie] = []
        for item in items {
            do {
                movies.append(try SwipedClient.movie(item))
            } catch {
                return .unreadable("the daemon sent a list this client cannot read: \(error.message)")
            }
        }
        return .list(seq: seq, movies: movies)
    }

    private static func row(_ o: JSONObject) -> TuiReply {
        var row: RowRender?
        var unreadable: String?
        do {
            row = try SwipedClient.row(o.object("row"))
        } catch {
            unreadable = error.message
        }
        let fired = o.object("fired").map { fired in
            TuiFired(
                action: fired.string("action") ?? "?",
                error: fired.object("error").map { $0.string("message") ?? "?" }, seq: fired.uint("seq"))
        }
        return .row(
            row, unreadable: unreadable, fired: fired, pending: o.object("pending")?.string("action"),
            crossed: crossings(o))
    }

    /// A reply's `crossed` (rule 12): the crossings it can read, in order.
    private static func crossings(_ o: JSONObject) -> [Crossing] {
        guard case .array(let items)? = o["crossed"] else { return [] }
        return items.compactMap { item in
            guard let threshold = item.objectValue?.string("threshold").flatMap(Crossing.Threshold.init),
                let direction = item.objectValue?.string("direction").flatMap(Crossing.Direction.init)
            else { return nil }
            return Crossing(threshold, direction)
        }
    }

    /// A `peers` reply: each sharing connection's rows that are not closed.
    private static func peers(_ o: JSONObject) -> TuiReply {
        var peers: [Int: TuiPeer] = [:]
        var unreadable: String?
        guard case .array(let items)? = o["peers"] else { return .peers([:]) }
        for case .object(let item) in items {
            guard let client = item.uint("client"), case .array(let rows)? = item["rows"] else { continue }
            let viewport = item.object("viewport")
            var peer = TuiPeer(width: viewport?.double("width") ?? 0)
            peer.direction = viewport?.string("direction").flatMap(Direction.init(rawValue:)) ?? .ltr
            for case .object(let row) in rows {
                do {
                    let render = try SwipedClient.row(row)
                    if render.phase != .closed { peer.rows[render.row] = render }
                } catch {
                    unreadable = error.message
                }
            }
            peers[Int(client)] = peer
        }
        return .peers(peers, unreadable: unreadable)
    }

    static func event(_ event: ServerEvent) -> TuiEvent {
        switch event {
        case .movie(let committed, _):
            return .movie(committed)
        case .row(let row, let removed, let cancelled):
            return .row(row, removed: removed, cancelled: cancelled)
        case .bye(let reason):
            return .bye(reason: reason)
        case .other(name: "role", let o):
            return .role(user: o.string("user"), role: o.string("role") ?? "?")
        case .other(name: "peer-row", let o):
            guard let client = o.uint("client").map(Int.init) else { return .other }
            let viewport = o.object("viewport")
            let width = viewport?.double("width")
            let direction = viewport?.string("direction").flatMap(Direction.init(rawValue:))
            do {
                return .peerRow(
                    client: client, row: try SwipedClient.row(o.object("row")), width: width,
                    direction: direction)
            } catch {
                return .peerRow(
                    client: client, row: nil, unreadable: error.message, width: width, direction: direction)
            }
        case .other:
            return .other
        }
    }

    /// Whether `message` holds a Row of this connection's own: a reply's or a `row` event's
    /// (not a peer's).
    static func hasRow(_ message: StreamConnection.Message) -> Bool {
        switch message {
        case .reply(_, let reply): reply.object["row"] != nil
        case .event(.row): true
        case .hello, .event: false
        }
    }
}

// Every message the server writes, as one compact JSON object per line. Hand-written on the
// JSON writer rather than reflected: these run for every reply and every event, and the exact
// bytes are the protocol (protocol.md).
import Movies
import SwipeEngine

/// What a gesture fired, for the reply's `fired`.
public enum Fired: Equatable, Sendable {
    case bound(action: String, seq: UInt64)
    case custom(action: String)
    case failed(action: String, error: WireError)
}

public enum Encode {
    // MARK: Replies

    /// `{"id":…,"ok":true` — the caller adds fields and closes with `end`.
    @inline(__always)
    static func begin(_ out: inout [UInt8], id: [UInt8]?, ok: Bool) {
        if let id {
            out.append(contentsOf: #"{"id":"#.utf8)
            out.append(contentsOf: id)
            out.append(contentsOf: ok ? #","ok":true"#.utf8 : #","ok":false"#.utf8)
        } else {
            out.append(contentsOf: ok ? #"{"ok":true"#.utf8 : #"{"ok":false"#.utf8)
        }
    }

    @inline(__always)
    static func end(_ out: inout [UInt8]) {
        out.append(UInt8(ascii: "}"))
        out.append(UInt8(ascii: "\n"))
    }

    @inline(__always)
    static func key(_ out: inout [UInt8], _ name: StaticString) {
        out.append(UInt8(ascii: ","))
        out.append(UInt8(ascii: "\""))
        out.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        out.append(UInt8(ascii: "\""))
        out.append(UInt8(ascii: ":"))
    }

    public static func ok(_ out: inout [UInt8], id: [UInt8]?) {
        begin(&out, id: id, ok: true)
        end(&out)
    }

    public static func error(_ out: inout [UInt8], id: [UInt8]?, _ error: WireError) {
        begin(&out, id: id, ok: false)
        key(&out, "error")
        errorObject(&out, error)
        end(&out)
    }

    static func errorObject(_ out: inout [UInt8], _ error: WireError) {
        out.append(contentsOf: #"{"code":"#.utf8)
        JSONWriter.string(&out, error.code.rawValue)
        out.append(contentsOf: #","message":"#.utf8)
        JSONWriter.string(&out, error.message)
        out.append(UInt8(ascii: "}"))
    }

    public static func seq(_ out: inout [UInt8], id: [UInt8]?, seq: UInt64) {
        begin(&out, id: id, ok: true)
        key(&out, "seq")
        JSONWriter.integer(&out, seq)
        end(&out)
    }

    public static func mutation(_ out: inout [UInt8], id: [UInt8]?, seq: UInt64, movie: Movie) {
        begin(&out, id: id, ok: true)
        key(&out, "seq")
        JSONWriter.integer(&out, seq)
        key(&out, "movie")
        self.movie(&out, movie)
        end(&out)
    }

    public static func list(_ out: inout [UInt8], id: [UInt8]?, seq: UInt64, movies: [Movie]) {
        begin(&out, id: id, ok: true)
        key(&out, "seq")
        JSONWriter.integer(&out, seq)
        key(&out, "movies")
        out.append(UInt8(ascii: "["))
        for (index, m) in movies.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            movie(&out, m)
        }
        out.append(UInt8(ascii: "]"))
        end(&out)
    }

    public static func history(_ out: inout [UInt8], id: [UInt8]?, seq: UInt64, events: [CommittedEvent]) {
        begin(&out, id: id, ok: true)
        key(&out, "seq")
        JSONWriter.integer(&out, seq)
        key(&out, "events")
        out.append(UInt8(ascii: "["))
        for (index, e) in events.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            event(&out, e, asEvent: false)
        }
        out.append(UInt8(ascii: "]"))
        end(&out)
    }

    public static func row(_ out: inout [UInt8], id: [UInt8]?, row: RowRender, fired: Fired?) {
        begin(&out, id: id, ok: true)
        key(&out, "row")
        self.row(&out, row)
        if let fired {
            key(&out, "fired")
            switch fired {
            case .bound(let action, let seq):
                out.append(contentsOf: #"{"action":"#.utf8)
                JSONWriter.string(&out, action)
                key(&out, "seq")
                JSONWriter.integer(&out, seq)
            case .custom(let action):
                out.append(contentsOf: #"{"action":"#.utf8)
                JSONWriter.string(&out, action)
            case .failed(let action, let error):
                out.append(contentsOf: #"{"action":"#.utf8)
                JSONWriter.string(&out, action)
                key(&out, "error")
                errorObject(&out, error)
            }
            out.append(UInt8(ascii: "}"))
        }
        end(&out)
    }

    public static func rows(_ out: inout [UInt8], id: [UInt8]?, rows: [RowRender]) {
        begin(&out, id: id, ok: true)
        key(&out, "rows")
        out.append(UInt8(ascii: "["))
        for (index, r) in rows.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            row(&out, r)
        }
        out.append(UInt8(ascii: "]"))
        end(&out)
    }

    public static func closed(_ out: inout [UInt8], id: [UInt8]?, closed: [RowID]) {
        begin(&out, id: id, ok: true)
        key(&out, "closed")
        stringArray(&out, closed)
        end(&out)
    }

    public static func viewport(_ out: inout [UInt8], id: [UInt8]?, viewport: Viewport, closed: [RowID]) {
        begin(&out, id: id, ok: true)
        key(&out, "viewport")
        out.append(contentsOf: #"{"width":"#.utf8)
        JSONWriter.number(&out, viewport.width)
        out.append(contentsOf: #","direction":"#.utf8)
        JSONWriter.string(&out, viewport.direction.rawValue)
        out.append(UInt8(ascii: "}"))
        key(&out, "closed")
        stringArray(&out, closed)
        end(&out)
    }

    public static func layout(_ out: inout [UInt8], id: [UInt8]?, layout: Layout, closed: [RowID]) {
        begin(&out, id: id, ok: true)
        key(&out, "layout")
        out.append(contentsOf: #"{"leading":"#.utf8)
        actions(&out, layout.leading)
        out.append(contentsOf: #","trailing":"#.utf8)
        actions(&out, layout.trailing)
        out.append(contentsOf: #","allowsFullSwipeLeading":"#.utf8)
        JSONWriter.bool(&out, layout.allowsFullSwipeLeading)
        out.append(contentsOf: #","allowsFullSwipeTrailing":"#.utf8)
        JSONWriter.bool(&out, layout.allowsFullSwipeTrailing)
        out.append(contentsOf: #","buttonWidth":"#.utf8)
        JSONWriter.number(&out, layout.buttonWidth)
        out.append(UInt8(ascii: "}"))
        key(&out, "closed")
        stringArray(&out, closed)
        end(&out)
    }

    public static func help(_ out: inout [UInt8], id: [UInt8]?) {
        begin(&out, id: id, ok: true)
        out.append(contentsOf: #","protocol":1,"ops":["#.utf8)
        for (index, op) in Ops.all.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: #"{"op":"#.utf8)
            JSONWriter.string(&out, op.name)
            out.append(contentsOf: #","scope":"#.utf8)
            JSONWriter.string(&out, op.scope.rawValue)
            out.append(contentsOf: #","mutates":"#.utf8)
            JSONWriter.bool(&out, op.mutates)
            out.append(contentsOf: #","summary":"#.utf8)
            JSONWriter.string(&out, op.summary)
            out.append(contentsOf: #","args":["#.utf8)
            for (i, arg) in op.args.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                out.append(contentsOf: #"{"name":"#.utf8)
                JSONWriter.string(&out, arg.name)
                out.append(contentsOf: #","type":"#.utf8)
                JSONWriter.string(&out, arg.type.rawValue)
                out.append(contentsOf: #","required":"#.utf8)
                JSONWriter.bool(&out, arg.required)
                out.append(contentsOf: #","summary":"#.utf8)
                JSONWriter.string(&out, arg.summary)
                out.append(UInt8(ascii: "}"))
            }
            out.append(contentsOf: "]}".utf8)
        }
        out.append(UInt8(ascii: "]"))
        end(&out)
    }

    // MARK: Events

    public static func hello(_ out: inout [UInt8], client: UInt64, seq: UInt64, writer: Bool) {
        out.append(contentsOf: #"{"event":"hello","protocol":1,"server":"swiped/"#.utf8)
        out.append(contentsOf: swipedVersion.utf8)
        out.append(contentsOf: #"","client":"#.utf8)
        JSONWriter.integer(&out, client)
        out.append(contentsOf: #","seq":"#.utf8)
        JSONWriter.integer(&out, seq)
        out.append(contentsOf: #","writer":"#.utf8)
        JSONWriter.bool(&out, writer)
        end(&out)
    }

    public static func bye(_ out: inout [UInt8], reason: String) {
        out.append(contentsOf: #"{"event":"bye","reason":"#.utf8)
        JSONWriter.string(&out, reason)
        end(&out)
    }

    public static func movieEvent(_ out: inout [UInt8], _ e: CommittedEvent) {
        event(&out, e, asEvent: true)
        out.append(UInt8(ascii: "\n"))
    }

    public static func rowEvent(_ out: inout [UInt8], row: RowRender, removed: Bool) {
        out.append(contentsOf: #"{"event":"row","row":"#.utf8)
        self.row(&out, row)
        if removed { out.append(contentsOf: #","removed":true"#.utf8) }
        end(&out)
    }

    // MARK: Objects

    public static func movie(_ out: inout [UInt8], _ m: Movie) {
        out.append(contentsOf: #"{"id":"#.utf8)
        JSONWriter.string(&out, m.id)
        out.append(contentsOf: #","title":"#.utf8)
        JSONWriter.string(&out, m.title)
        out.append(contentsOf: #","image":"#.utf8)
        JSONWriter.string(&out, m.image)
        out.append(contentsOf: m.watched ? #","watched":true"#.utf8 : #","watched":false"#.utf8)
        out.append(contentsOf: m.watchedWithFriends ? #","watchedWithFriends":true"#.utf8 : #","watchedWithFriends":false"#.utf8)
        out.append(contentsOf: #","version":"#.utf8)
        JSONWriter.integer(&out, m.version)
        out.append(UInt8(ascii: "}"))
    }

    static func event(_ out: inout [UInt8], _ e: CommittedEvent, asEvent: Bool) {
        out.append(contentsOf: asEvent ? #"{"event":"movie","seq":"#.utf8 : #"{"seq":"#.utf8)
        JSONWriter.integer(&out, e.seq)
        out.append(contentsOf: #","kind":"#.utf8)
        JSONWriter.string(&out, e.kind)
        out.append(contentsOf: #","movie":"#.utf8)
        movie(&out, e.movie)
        out.append(contentsOf: #","at":""#.utf8)
        out.append(contentsOf: RFC3339.format(microseconds: e.at).utf8)
        out.append(contentsOf: #""}"#.utf8)
    }

    public static func row(_ out: inout [UInt8], _ r: RowRender) {
        out.append(contentsOf: #"{"movie":"#.utf8)
        JSONWriter.string(&out, r.row)
        out.append(contentsOf: #","offset":"#.utf8)
        JSONWriter.number(&out, r.offset)
        out.append(contentsOf: #","phase":""#.utf8)
        out.append(contentsOf: r.phase.rawValue.utf8)
        out.append(contentsOf: #"","edge":"#.utf8)
        if let edge = r.edge {
            out.append(UInt8(ascii: "\""))
            out.append(contentsOf: edge.rawValue.utf8)
            out.append(UInt8(ascii: "\""))
        } else {
            out.append(contentsOf: "null".utf8)
        }
        out.append(contentsOf: #","fullSwipe":"#.utf8)
        JSONWriter.bool(&out, r.fullSwipe)
        out.append(contentsOf: #","buttons":["#.utf8)
        for (index, b) in r.buttons.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: #"{"action":"#.utf8)
            JSONWriter.string(&out, b.action)
            if let label = b.label {
                out.append(contentsOf: #","label":"#.utf8)
                JSONWriter.string(&out, label)
            }
            if let icon = b.icon {
                out.append(contentsOf: #","icon":"#.utf8)
                JSONWriter.string(&out, icon)
            }
            out.append(contentsOf: #","tint":"#.utf8)
            JSONWriter.string(&out, b.tint)
            if let role = b.role {
                out.append(contentsOf: #","role":""#.utf8)
                out.append(contentsOf: role.rawValue.utf8)
                out.append(UInt8(ascii: "\""))
            }
            out.append(contentsOf: #","x":"#.utf8)
            JSONWriter.number(&out, b.x)
            out.append(contentsOf: #","width":"#.utf8)
            JSONWriter.number(&out, b.width)
            out.append(UInt8(ascii: "}"))
        }
        out.append(contentsOf: #"],"spring":{"target":"#.utf8)
        JSONWriter.number(&out, r.spring.target)
        out.append(contentsOf: #","response":"#.utf8)
        JSONWriter.number(&out, r.spring.response)
        out.append(contentsOf: #","dampingFraction":"#.utf8)
        JSONWriter.number(&out, r.spring.dampingFraction)
        out.append(contentsOf: #"},"accessibilityActions":["#.utf8)
        for (index, a) in r.accessibilityActions.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: #"{"action":"#.utf8)
            JSONWriter.string(&out, a.action)
            out.append(contentsOf: #","label":"#.utf8)
            JSONWriter.string(&out, a.label)
            out.append(contentsOf: a.destructive ? #","destructive":true"#.utf8 : #","destructive":false"#.utf8)
            out.append(contentsOf: #","edge":""#.utf8)
            out.append(contentsOf: a.edge.rawValue.utf8)
            out.append(contentsOf: #""}"#.utf8)
        }
        out.append(contentsOf: "]}".utf8)
    }

    static func actions(_ out: inout [UInt8], _ list: [ActionSpec]) {
        out.append(UInt8(ascii: "["))
        for (index, a) in list.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: #"{"action":"#.utf8)
            JSONWriter.string(&out, a.action)
            for (name, value) in [("label", a.label), ("icon", a.icon), ("activeLabel", a.activeLabel),
                                  ("activeIcon", a.activeIcon)] {
                guard let value else { continue }
                out.append(contentsOf: ",\"\(name)\":".utf8)
                JSONWriter.string(&out, value)
            }
            out.append(contentsOf: #","tint":"#.utf8)
            JSONWriter.string(&out, a.effectiveTint)
            if let role = a.role {
                out.append(contentsOf: #","role":"#.utf8)
                JSONWriter.string(&out, role.rawValue)
            }
            out.append(UInt8(ascii: "}"))
        }
        out.append(UInt8(ascii: "]"))
    }

    static func stringArray(_ out: inout [UInt8], _ list: [String]) {
        out.append(UInt8(ascii: "["))
        for (index, s) in list.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            JSONWriter.string(&out, s)
        }
        out.append(UInt8(ascii: "]"))
    }
}

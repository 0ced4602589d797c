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
    static func begin(_ out: inout JSONWriter, id: [UInt8]?, ok: Bool) {
        if let id {
            out.bytes.append(contentsOf: #"{"id":"#.utf8)
            out.bytes.append(contentsOf: id)
            out.bytes.append(contentsOf: ok ? #","ok":true"#.utf8 : #","ok":false"#.utf8)
        } else {
            out.bytes.append(contentsOf: ok ? #"{"ok":true"#.utf8 : #"{"ok":false"#.utf8)
        }
    }

    @inline(__always)
    static func end(_ out: inout JSONWriter) {
        out.bytes.append(UInt8(ascii: "}"))
        out.bytes.append(UInt8(ascii: "\n"))
    }

    @inline(__always)
    static func key(_ out: inout JSONWriter, _ name: StaticString) {
        out.bytes.append(UInt8(ascii: ","))
        out.bytes.append(UInt8(ascii: "\""))
        out.bytes.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        out.bytes.append(UInt8(ascii: "\""))
        out.bytes.append(UInt8(ascii: ":"))
    }

    public static func ok(_ out: inout JSONWriter, id: [UInt8]?) {
        begin(&out, id: id, ok: true)
        end(&out)
    }

    public static func error(_ out: inout JSONWriter, id: [UInt8]?, _ error: WireError) {
        begin(&out, id: id, ok: false)
        key(&out, "error")
        errorObject(&out, error)
        end(&out)
    }

    static func errorObject(_ out: inout JSONWriter, _ error: WireError) {
        out.bytes.append(contentsOf: #"{"code":"#.utf8)
        out.string(error.code.rawValue)
        out.bytes.append(contentsOf: #","message":"#.utf8)
        out.string(error.message)
        out.bytes.append(UInt8(ascii: "}"))
    }

    public static func seq(_ out: inout JSONWriter, id: [UInt8]?, seq: UInt64) {
        begin(&out, id: id, ok: true)
        key(&out, "seq")
        out.uint64(seq)
        end(&out)
    }

    public static func mutation(_ out: inout JSONWriter, id: [UInt8]?, seq: UInt64, movie: Movie) {
        begin(&out, id: id, ok: true)
        key(&out, "seq")
        out.uint64(seq)
        key(&out, "movie")
        self.movie(&out, movie)
        end(&out)
    }

    public static func list(_ out: inout JSONWriter, id: [UInt8]?, seq: UInt64, movies: [Movie]) {
        begin(&out, id: id, ok: true)
        key(&out, "seq")
        out.uint64(seq)
        key(&out, "movies")
        out.bytes.append(UInt8(ascii: "["))
        for (index, m) in movies.enumerated() {
            if index > 0 { out.bytes.append(UInt8(ascii: ",")) }
            movie(&out, m)
        }
        out.bytes.append(UInt8(ascii: "]"))
        end(&out)
    }

    public static func history(_ out: inout JSONWriter, id: [UInt8]?, seq: UInt64, events: [CommittedEvent]) {
        begin(&out, id: id, ok: true)
        key(&out, "seq")
        out.uint64(seq)
        key(&out, "events")
        out.bytes.append(UInt8(ascii: "["))
        for (index, e) in events.enumerated() {
            if index > 0 { out.bytes.append(UInt8(ascii: ",")) }
            event(&out, e, asEvent: false)
        }
        out.bytes.append(UInt8(ascii: "]"))
        end(&out)
    }

    public static func row(_ out: inout JSONWriter, id: [UInt8]?, row: RowRender, fired: Fired?) {
        begin(&out, id: id, ok: true)
        key(&out, "row")
        self.row(&out, row)
        if let fired {
            key(&out, "fired")
            switch fired {
            case .bound(let action, let seq):
                out.bytes.append(contentsOf: #"{"action":"#.utf8)
                out.string(action)
                key(&out, "seq")
                out.uint64(seq)
            case .custom(let action):
                out.bytes.append(contentsOf: #"{"action":"#.utf8)
                out.string(action)
            case .failed(let action, let error):
                out.bytes.append(contentsOf: #"{"action":"#.utf8)
                out.string(action)
                key(&out, "error")
                errorObject(&out, error)
            }
            out.bytes.append(UInt8(ascii: "}"))
        }
        end(&out)
    }

    public static func rows(_ out: inout JSONWriter, id: [UInt8]?, rows: [RowRender]) {
        begin(&out, id: id, ok: true)
        key(&out, "rows")
        out.bytes.append(UInt8(ascii: "["))
        for (index, r) in rows.enumerated() {
            if index > 0 { out.bytes.append(UInt8(ascii: ",")) }
            row(&out, r)
        }
        out.bytes.append(UInt8(ascii: "]"))
        end(&out)
    }

    public static func closed(_ out: inout JSONWriter, id: [UInt8]?, closed: [RowID]) {
        begin(&out, id: id, ok: true)
        key(&out, "closed")
        stringArray(&out, closed)
        end(&out)
    }

    public static func viewport(_ out: inout JSONWriter, id: [UInt8]?, viewport: Viewport, closed: [RowID]) {
        begin(&out, id: id, ok: true)
        key(&out, "viewport")
        out.bytes.append(contentsOf: #"{"width":"#.utf8)
        out.double(viewport.width)
        out.bytes.append(contentsOf: #","direction":"#.utf8)
        out.string(viewport.direction.rawValue)
        out.bytes.append(UInt8(ascii: "}"))
        key(&out, "closed")
        stringArray(&out, closed)
        end(&out)
    }

    public static func layout(_ out: inout JSONWriter, id: [UInt8]?, layout: Layout, closed: [RowID]) {
        begin(&out, id: id, ok: true)
        key(&out, "layout")
        out.bytes.append(contentsOf: #"{"leading":"#.utf8)
        actions(&out, layout.leading)
        out.bytes.append(contentsOf: #","trailing":"#.utf8)
        actions(&out, layout.trailing)
        out.bytes.append(contentsOf: #","allowsFullSwipeLeading":"#.utf8)
        out.bool(layout.allowsFullSwipeLeading)
        out.bytes.append(contentsOf: #","allowsFullSwipeTrailing":"#.utf8)
        out.bool(layout.allowsFullSwipeTrailing)
        out.bytes.append(contentsOf: #","buttonWidth":"#.utf8)
        out.double(layout.buttonWidth)
        out.bytes.append(UInt8(ascii: "}"))
        key(&out, "closed")
        stringArray(&out, closed)
        end(&out)
    }

    public static func help(_ out: inout JSONWriter, id: [UInt8]?) {
        begin(&out, id: id, ok: true)
        out.bytes.append(contentsOf: #","protocol":1,"ops":["#.utf8)
        for (index, op) in Ops.all.enumerated() {
            if index > 0 { out.bytes.append(UInt8(ascii: ",")) }
            out.bytes.append(contentsOf: #"{"op":"#.utf8)
            out.string(op.name)
            out.bytes.append(contentsOf: #","scope":"#.utf8)
            out.string(op.scope.rawValue)
            out.bytes.append(contentsOf: #","mutates":"#.utf8)
            out.bool(op.mutates)
            out.bytes.append(contentsOf: #","summary":"#.utf8)
            out.string(op.summary)
            out.bytes.append(contentsOf: #","args":["#.utf8)
            for (i, arg) in op.args.enumerated() {
                if i > 0 { out.bytes.append(UInt8(ascii: ",")) }
                out.bytes.append(contentsOf: #"{"name":"#.utf8)
                out.string(arg.name)
                out.bytes.append(contentsOf: #","type":"#.utf8)
                out.string(arg.type.rawValue)
                out.bytes.append(contentsOf: #","required":"#.utf8)
                out.bool(arg.required)
                out.bytes.append(contentsOf: #","summary":"#.utf8)
                out.string(arg.summary)
                out.bytes.append(UInt8(ascii: "}"))
            }
            out.bytes.append(contentsOf: "]}".utf8)
        }
        out.bytes.append(UInt8(ascii: "]"))
        end(&out)
    }

    // MARK: Events

    public static func hello(_ out: inout JSONWriter, client: UInt64, seq: UInt64, writer: Bool) {
        out.bytes.append(contentsOf: #"{"event":"hello","protocol":1,"server":"swiped/"#.utf8)
        out.bytes.append(contentsOf: swipedVersion.utf8)
        out.bytes.append(contentsOf: #"","client":"#.utf8)
        out.uint64(client)
        out.bytes.append(contentsOf: #","seq":"#.utf8)
        out.uint64(seq)
        out.bytes.append(contentsOf: #","writer":"#.utf8)
        out.bool(writer)
        end(&out)
    }

    public static func bye(_ out: inout JSONWriter, reason: String) {
        out.bytes.append(contentsOf: #"{"event":"bye","reason":"#.utf8)
        out.string(reason)
        end(&out)
    }

    public static func movieEvent(_ out: inout JSONWriter, _ e: CommittedEvent) {
        event(&out, e, asEvent: true)
        out.bytes.append(UInt8(ascii: "\n"))
    }

    public static func rowEvent(_ out: inout JSONWriter, row: RowRender, removed: Bool) {
        out.bytes.append(contentsOf: #"{"event":"row","row":"#.utf8)
        self.row(&out, row)
        if removed { out.bytes.append(contentsOf: #","removed":true"#.utf8) }
        end(&out)
    }

    // MARK: Objects

    public static func movie(_ out: inout JSONWriter, _ m: Movie) {
        out.bytes.append(contentsOf: #"{"id":"#.utf8)
        out.string(m.id)
        out.bytes.append(contentsOf: #","title":"#.utf8)
        out.string(m.title)
        out.bytes.append(contentsOf: #","image":"#.utf8)
        out.string(m.image)
        out.bytes.append(contentsOf: m.watched ? #","watched":true"#.utf8 : #","watched":false"#.utf8)
        out.bytes.append(contentsOf: m.watchedWithFriends ? #","watchedWithFriends":true"#.utf8 : #","watchedWithFriends":false"#.utf8)
        out.bytes.append(contentsOf: #","version":"#.utf8)
        out.uint64(m.version)
        out.bytes.append(UInt8(ascii: "}"))
    }

    static func event(_ out: inout JSONWriter, _ e: CommittedEvent, asEvent: Bool) {
        out.bytes.append(contentsOf: asEvent ? #"{"event":"movie","seq":"#.utf8 : #"{"seq":"#.utf8)
        out.uint64(e.seq)
        out.bytes.append(contentsOf: #","kind":"#.utf8)
        out.string(e.kind)
        out.bytes.append(contentsOf: #","movie":"#.utf8)
        movie(&out, e.movie)
        out.bytes.append(contentsOf: #","at":""#.utf8)
        RFC3339.append(microsecondsSinceEpoch: e.at, to: &out.bytes)
        out.bytes.append(contentsOf: #""}"#.utf8)
    }

    public static func row(_ out: inout JSONWriter, _ r: RowRender) {
        out.bytes.append(contentsOf: #"{"movie":"#.utf8)
        out.string(r.row)
        out.bytes.append(contentsOf: #","offset":"#.utf8)
        out.double(r.offset)
        out.bytes.append(contentsOf: #","phase":""#.utf8)
        out.bytes.append(contentsOf: r.phase.rawValue.utf8)
        out.bytes.append(contentsOf: #"","edge":"#.utf8)
        if let edge = r.edge {
            out.bytes.append(UInt8(ascii: "\""))
            out.bytes.append(contentsOf: edge.rawValue.utf8)
            out.bytes.append(UInt8(ascii: "\""))
        } else {
            out.bytes.append(contentsOf: "null".utf8)
        }
        out.bytes.append(contentsOf: #","fullSwipe":"#.utf8)
        out.bool(r.fullSwipe)
        out.bytes.append(contentsOf: #","buttons":["#.utf8)
        for (index, b) in r.buttons.enumerated() {
            if index > 0 { out.bytes.append(UInt8(ascii: ",")) }
            out.bytes.append(contentsOf: #"{"action":"#.utf8)
            out.string(b.action)
            if let label = b.label {
                out.bytes.append(contentsOf: #","label":"#.utf8)
                out.string(label)
            }
            if let icon = b.icon {
                out.bytes.append(contentsOf: #","icon":"#.utf8)
                out.string(icon)
            }
            out.bytes.append(contentsOf: #","tint":"#.utf8)
            out.string(b.tint)
            if let role = b.role {
                out.bytes.append(contentsOf: #","role":""#.utf8)
                out.bytes.append(contentsOf: role.rawValue.utf8)
                out.bytes.append(UInt8(ascii: "\""))
            }
            out.bytes.append(contentsOf: #","x":"#.utf8)
            out.double(b.x)
            out.bytes.append(contentsOf: #","width":"#.utf8)
            out.double(b.width)
            out.bytes.append(UInt8(ascii: "}"))
        }
        out.bytes.append(contentsOf: #"],"spring":{"target":"#.utf8)
        out.double(r.spring.target)
        out.bytes.append(contentsOf: #","response":"#.utf8)
        out.double(r.spring.response)
        out.bytes.append(contentsOf: #","dampingFraction":"#.utf8)
        out.double(r.spring.dampingFraction)
        out.bytes.append(contentsOf: #"},"accessibilityActions":["#.utf8)
        for (index, a) in r.accessibilityActions.enumerated() {
            if index > 0 { out.bytes.append(UInt8(ascii: ",")) }
            out.bytes.append(contentsOf: #"{"action":"#.utf8)
            out.string(a.action)
            out.bytes.append(contentsOf: #","label":"#.utf8)
            out.string(a.label)
            out.bytes.append(contentsOf: a.destructive ? #","destructive":true"#.utf8 : #","destructive":false"#.utf8)
            out.bytes.append(contentsOf: #","edge":""#.utf8)
            out.bytes.append(contentsOf: a.edge.rawValue.utf8)
            out.bytes.append(contentsOf: #""}"#.utf8)
        }
        out.bytes.append(contentsOf: "]}".utf8)
    }

    static func actions(_ out: inout JSONWriter, _ list: [ActionSpec]) {
        out.bytes.append(UInt8(ascii: "["))
        for (index, a) in list.enumerated() {
            if index > 0 { out.bytes.append(UInt8(ascii: ",")) }
            out.bytes.append(contentsOf: #"{"action":"#.utf8)
            out.string(a.action)
            for (name, value) in [("label", a.label), ("icon", a.icon), ("activeLabel", a.activeLabel),
                                  ("activeIcon", a.activeIcon)] {
                guard let value else { continue }
                out.bytes.append(contentsOf: ",\"\(name)\":".utf8)
                out.string(value)
            }
            out.bytes.append(contentsOf: #","tint":"#.utf8)
            out.string(a.effectiveTint)
            if let role = a.role {
                out.bytes.append(contentsOf: #","role":"#.utf8)
                out.string(role.rawValue)
            }
            out.bytes.append(UInt8(ascii: "}"))
        }
        out.bytes.append(UInt8(ascii: "]"))
    }

    static func stringArray(_ out: inout JSONWriter, _ list: [String]) {
        out.bytes.append(UInt8(ascii: "["))
        for s in list { out.string(s) }  // the writer places the commas
        out.bytes.append(UInt8(ascii: "]"))
    }
}

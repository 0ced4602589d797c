// Every message the server writes, as one compact JSON object per line. Hand-written on the
// JSON writer rather than reflected: these run for every reply and every event, and the exact
// bytes are the protocol (protocol.md).
import JSONCodec
import Movies
import People
import SwipeEngine

/// What a gesture fired, for the reply's `fired`; or the action it now waits to confirm, for the
/// reply's `pending` (the engine's rule 10).
public enum Fired: Equatable, Sendable {
    case bound(action: String, seq: UInt64)
    case custom(action: String)
    case failed(action: String, error: WireError)
    case pending(action: String)
}

public enum Encode {
    // MARK: Replies

    /// `{"id":…,"ok":true` — the caller adds fields and closes with `end`.
    @inline(__always)
    static func begin(_ out: inout JSONWriter, id: [UInt8]?, ok: Bool) {
        if let id {
            out.literal(#"{"id":"#)
            out.bytes.append(contentsOf: id)
            out.literal(ok ? #","ok":true"# : #","ok":false"#)
        } else {
            out.literal(ok ? #"{"ok":true"# : #"{"ok":false"#)
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
        out.bytes.append(
            contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
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
        out.literal(#"{"code":"#)
        out.string(error.code.rawValue)
        out.literal(#","message":"#)
        out.string(error.message)
        if let reason = error.reason {
            out.literal(#","reason":"#)
            out.string(reason.name)
        }
        if let ms = error.retryAfter {
            out.literal(#","retryAfter":"#)
            out.uint64(ms)
        }
        out.bytes.append(UInt8(ascii: "}"))
    }

    public static func seq(_ out: inout JSONWriter, id: [UInt8]?, seq: UInt64) {
        begin(&out, id: id, ok: true)
        key(&out, "seq")
        out.uint64(seq)
        end(&out)
    }

    /// `{"ok":true,"seq":N,"movie":M}`, `"undoes":S` for the event of an `undo`, `"by":P` for
    /// its author (issue 46), and `"undoesBy":Q` for the author of the change an `undo` undid.
    ///
    /// Every toggle's reply: written in one reservation when the movie's strings need no
    /// escapes (nearly always), as `plainMutation` writes it otherwise; the people's names after
    /// it, escaped as any string.
    public static func mutation(
        _ out: inout JSONWriter, id: [UInt8]?, seq: UInt64, movie: Movie, undoes: UInt64? = nil,
        by: String? = nil, undoesBy: String? = nil, to: ListPlace? = nil, from: ListPlace? = nil
    ) {
        let flags = MovieScalars(movie)
        let written = withPlainStrings(movie) { movieID, title, image in
            // At most 129 bytes of literals and three numbers of at most 20 digits.
            let reserved = 189 + (id?.count ?? 0) + movieID.count + title.count + image.count
            write(&out, atMost: reserved, "a mutation reply") { w in
                okOpening(&w, id: id, withID: #","ok":true,"seq":"#, without: #"{"ok":true,"seq":"#)
                w.uint64(seq)
                w.copy(#","movie":"#)
                movieObject(&w, flags, movieID, title, image)
                if let undoes {
                    w.copy(#","undoes":"#)
                    w.uint64(undoes)
                }
            }
        }
        if !written {
            return plainMutation(
                &out, id: id, seq: seq, movie: movie, undoes: undoes, by: by, undoesBy: undoesBy, to: to,
                from: from)
        }
        places(&out, to: to, from: from)
        authors(&out, by: by, undoesBy: undoesBy)
        end(&out)
    }

    /// `"after"` and `"from"` of a move, and `"after"` of a restore (issue 48): a movie's id, or
    /// null for the first place.
    @inline(__always)
    static func places(_ out: inout JSONWriter, to: ListPlace?, from: ListPlace?) {
        if let to { place(&out, "after", to) }
        if let from { place(&out, "from", from) }
    }

    private static func place(_ out: inout JSONWriter, _ name: StaticString, _ place: ListPlace) {
        key(&out, name)
        switch place {
        case .first: out.literal("null")
        case .after(let id): out.string(id)
        }
    }

    @inline(__always)
    static func authors(_ out: inout JSONWriter, by: String?, undoesBy: String?) {
        if let by {
            key(&out, "by")
            out.string(by)
        }
        if let undoesBy {
            key(&out, "undoesBy")
            out.string(undoesBy)
        }
    }

    /// `mutation`, a part at a time, escaping the movie's strings.
    static func plainMutation(
        _ out: inout JSONWriter, id: [UInt8]?, seq: UInt64, movie: Movie, undoes: UInt64?, by: String? = nil,
        undoesBy: String? = nil, to: ListPlace? = nil, from: ListPlace? = nil
    ) {
        begin(&out, id: id, ok: true)
        key(&out, "seq")
        out.uint64(seq)
        key(&out, "movie")
        plainMovie(&out, movie)
        if let undoes {
            key(&out, "undoes")
            out.uint64(undoes)
        }
        places(&out, to: to, from: from)
        authors(&out, by: by, undoesBy: undoesBy)
        end(&out)
    }

    public static func history(_ out: inout JSONWriter, id: [UInt8]?, seq: UInt64, events: [CommittedEvent]) {
        begin(&out, id: id, ok: true)
        key(&out, "seq")
        out.uint64(seq)
        key(&out, "events")
        array(&out, events) { event(&$0, $1, asEvent: false) }
        end(&out)
    }

    public static func rows(_ out: inout JSONWriter, id: [UInt8]?, rows: [RowRender], form: RowForm) {
        begin(&out, id: id, ok: true)
        key(&out, "rows")
        array(&out, rows) { row(&$0, $1, form: form) }
        end(&out)
    }

    /// `{"ok":true,"options":{"rows":…}}`: this connection's options as they now are;
    /// `"crossings":true` only when on (a client that never asked sees what it always saw).
    public static func options(_ out: inout JSONWriter, id: [UInt8]?, rows: RowForm, crossings: Bool = false)
    {
        begin(&out, id: id, ok: true)
        key(&out, "options")
        out.literal(#"{"rows":"#)
        out.string(rows.rawValue)
        if crossings { out.literal(#","crossings":true"#) }
        out.bytes.append(UInt8(ascii: "}"))
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
        out.literal(#"{"width":"#)
        out.double(viewport.width)
        out.literal(#","direction":"#)
        out.string(viewport.direction.rawValue)
        out.bytes.append(UInt8(ascii: "}"))
        key(&out, "closed")
        stringArray(&out, closed)
        end(&out)
    }

    public static func layout(_ out: inout JSONWriter, id: [UInt8]?, layout: Layout, closed: [RowID]) {
        begin(&out, id: id, ok: true)
        key(&out, "layout")
        layoutObject(&out, layout)
        key(&out, "closed")
        stringArray(&out, closed)
        end(&out)
    }

    // MARK: Events

    public static func hello(
        _ out: inout JSONWriter, client: UInt64, seq: UInt64, user: String?, role: AccessRole, log: String
    ) {
        out.literal(#"{"event":"hello","protocol":1,"server":"swiped/"#)
        out.bytes.append(contentsOf: swipedVersion.utf8)
        out.literal(#"","client":"#)
        out.uint64(client)
        out.literal(#","seq":"#)
        out.uint64(seq)
        // `writer` stays for protocol-1 clients that know no roles.
        out.literal(#","writer":"#)
        out.bool(role >= .writer)
        who(&out, user: user, role: role)
        out.literal(#","log":"#)
        out.string(log)
        end(&out)
    }

    public static func bye(_ out: inout JSONWriter, reason: ByeReason) {
        out.literal(#"{"event":"bye","reason":"#)
        out.string(reason.rawValue)
        end(&out)
    }

    public static func movieEvent(_ out: inout JSONWriter, _ e: CommittedEvent) {
        event(&out, e, asEvent: true)
        out.bytes.append(UInt8(ascii: "\n"))
    }

    /// A `row` event; `timedOut`: the row closed because its confirmation timed out (rule 10).
    public static func rowEvent(
        _ out: inout JSONWriter, row: RowRender, form: RowForm, removed: Bool, timedOut: Bool = false
    ) {
        out.literal(#"{"event":"row","row":"#)
        self.row(&out, row, form: form)
        if removed { out.literal(#","removed":true"#) }
        if timedOut { out.literal(#","cancelled":"timeout""#) }
        end(&out)
    }

    // MARK: Objects

    /// A Movie object: in one reservation when its strings need no escapes (nearly always), as
    /// `plainMovie` writes it otherwise.
    public static func movie(_ out: inout JSONWriter, _ m: Movie) {
        let flags = MovieScalars(m)
        let written = withPlainStrings(m) { id, title, image in
            write(&out, atMost: 105 + id.count + title.count + image.count, "a movie") { w in
                movieObject(&w, flags, id, title, image)
            }
        }
        if !written { plainMovie(&out, m) }
    }

    /// Appends what `body` writes through a cursor, in one reservation of `reserved` bytes, which
    /// it must not exceed (`what` names it in the assertion).
    @inline(__always)
    static func write(
        _ out: inout JSONWriter, atMost reserved: Int, _ what: StaticString,
        _ body: (inout ByteCursor) -> Void
    ) {
        out.bytes.append(addingCapacity: reserved) { span in
            span.withUnsafeMutableBufferPointer { buffer, count in
                let start = buffer.baseAddress! + count
                var w = ByteCursor(p: start)
                body(&w)
                assert(start.distance(to: w.p) <= reserved, "\(what) overran its reservation")
                count += start.distance(to: w.p)
            }
        }
    }

    /// The opening of an `ok` reply through a cursor: `{"id":` and the request's id, then
    /// `withID`; or `without` when the request had none. The literals stay whole, so no case
    /// copies more pieces than the same bytes written out in place.
    @inline(__always)
    static func okOpening(
        _ w: inout ByteCursor, id: [UInt8]?, withID: StaticString, without: StaticString
    ) {
        if let id {
            w.copy(#"{"id":"#)
            w.copy(id)
            w.copy(withID)
        } else {
            w.copy(without)
        }
    }

    /// Calls `body` with the UTF-8 of the movie's id, title and image when none needs an escape
    /// (as `JSONWriter.string` would find); returns whether it did.
    @inline(__always)
    static func withPlainStrings(
        _ m: Movie,
        _ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Void
    ) -> Bool {
        var id = m.id
        var title = m.title
        var image = m.image
        return id.withUTF8 { id in
            title.withUTF8 { title in
                image.withUTF8 { image in
                    guard JSONText.isPlain(id), JSONText.isPlain(title), JSONText.isPlain(image) else {
                        return false
                    }
                    body(id, title, image)
                    return true
                }
            }
        }
    }

    /// The movie object's bytes, its strings given plain (at most 85 bytes of literals and a
    /// number of at most 20 digits besides them).
    @inline(__always)
    static func movieObject(
        _ w: inout ByteCursor, _ m: MovieScalars, _ id: UnsafeBufferPointer<UInt8>,
        _ title: UnsafeBufferPointer<UInt8>, _ image: UnsafeBufferPointer<UInt8>
    ) {
        w.copy(#"{"id":""#)
        w.copy(id)
        w.copy(#"","title":""#)
        w.copy(title)
        w.copy(#"","image":""#)
        w.copy(image)
        w.copy(m.watched ? #"","watched":true"# : #"","watched":false"#)
        w.copy(m.watchedWithFriends ? #","watchedWithFriends":true"# : #","watchedWithFriends":false"#)
        w.copy(#","version":"#)
        w.uint64(m.version)
        w.copy("}")
    }

    /// A movie's fields besides its strings: what the closures that write a movie capture (a
    /// captured movie was copied, its three strings retained and released).
    struct MovieScalars {
        var watched: Bool
        var watchedWithFriends: Bool
        var version: UInt64

        @inline(__always)
        init(_ m: Movie) {
            watched = m.watched
            watchedWithFriends = m.watchedWithFriends
            version = m.version
        }
    }

    /// `movie`, a part at a time, escaping its strings.
    static func plainMovie(_ out: inout JSONWriter, _ m: Movie) {
        out.literal(#"{"id":"#)
        out.string(m.id)
        out.literal(#","title":"#)
        out.string(m.title)
        out.literal(#","image":"#)
        out.string(m.image)
        out.literal(m.watched ? #","watched":true"# : #","watched":false"#)
        out.literal(m.watchedWithFriends ? #","watchedWithFriends":true"# : #","watchedWithFriends":false"#)
        out.literal(#","version":"#)
        out.uint64(m.version)
        out.bytes.append(UInt8(ascii: "}"))
    }

    static func event(_ out: inout JSONWriter, _ e: CommittedEvent, asEvent: Bool) {
        out.literal(asEvent ? #"{"event":"movie","seq":"# : #"{"seq":"#)
        out.uint64(e.seq)
        out.literal(#","kind":"#)
        out.string(e.kind.rawValue)
        out.literal(#","movie":"#)
        movie(&out, e.movie)
        out.literal(#","at":""#)
        RFC3339.append(microsecondsSinceEpoch: e.at, to: &out.bytes)
        out.bytes.append(UInt8(ascii: "\""))
        if let undoes = e.undoes {
            key(&out, "undoes")
            out.uint64(undoes)
        }
        places(&out, to: e.to, from: e.from)
        if let by = e.by {
            key(&out, "by")
            out.string(by)
        }
        out.bytes.append(UInt8(ascii: "}"))
    }

    /// A layout object, as `configure` takes it and a recording holds it.
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
        // Written only when not the default, as `confirm` is: a layout of protocol 1 before
        // issue 47 reads as it always did.
        if layout.fullSwipeStyleLeading != .fill {
            out.literal(#","fullSwipeStyleLeading":"#)
            out.string(layout.fullSwipeStyleLeading.rawValue)
        }
        if layout.fullSwipeStyleTrailing != .fill {
            out.literal(#","fullSwipeStyleTrailing":"#)
            out.string(layout.fullSwipeStyleTrailing.rawValue)
        }
        out.bytes.append(UInt8(ascii: "}"))
    }

    /// A viewport object, as `viewport` takes it, and a peer and a recording show it.
    static func viewportObject(_ out: inout JSONWriter, _ viewport: Viewport) {
        out.literal(#"{"width":"#)
        out.double(viewport.width)
        out.literal(#","direction":"#)
        out.string(viewport.direction.rawValue)
        out.bytes.append(UInt8(ascii: "}"))
    }

    static func actions(_ out: inout JSONWriter, _ list: [ActionSpec]) {
        out.bytes.append(UInt8(ascii: "["))
        for (index, a) in list.enumerated() {
            if index > 0 { out.bytes.append(UInt8(ascii: ",")) }
            out.literal(#"{"action":"#)
            out.string(a.action)
            for (name, value) in [
                ("label", a.label), ("icon", a.icon), ("activeLabel", a.activeLabel),
                ("activeIcon", a.activeIcon), ("confirmLabel", a.confirmLabel),
            ] {
                guard let value else { continue }
                out.key(name)
                out.string(value)
            }
            out.literal(#","tint":"#)
            out.string(a.effectiveTint)
            if let role = a.role {
                out.literal(#","role":"#)
                out.string(role.rawValue)
            }
            if a.confirm { out.literal(#","confirm":true"#) }
            out.bytes.append(UInt8(ascii: "}"))
        }
        out.bytes.append(UInt8(ascii: "]"))
    }

    /// `[a,b,…]`, each element written by `element` (which writes a whole value).
    @inline(__always)
    static func array<T>(_ out: inout JSONWriter, _ items: [T], _ element: (inout JSONWriter, T) -> Void) {
        out.bytes.append(UInt8(ascii: "["))
        for (index, item) in items.enumerated() {
            if index > 0 { out.bytes.append(UInt8(ascii: ",")) }
            element(&out, item)
        }
        out.bytes.append(UInt8(ascii: "]"))
    }

    static func stringArray(_ out: inout JSONWriter, _ list: [String]) {
        out.bytes.append(UInt8(ascii: "["))
        for s in list { out.string(s) }  // the writer places the commas
        out.bytes.append(UInt8(ascii: "]"))
    }
}

extension JSONWriter {
    /// Appends a literal's bytes as they are (a memcpy): the fixed parts of every message.
    @inline(__always)
    mutating func literal(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }
}

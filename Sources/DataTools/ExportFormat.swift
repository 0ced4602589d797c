// The export format (docs/export-format.md): JSON lines, a header, the events in seq order as
// `history` shows them (in version 2 with their author, `by`) plus their key, (version 2) the
// people tables' tokens and role grants, and a trailer that makes a cut or altered file evident.
import JSONCodec
import Movies
import People

public enum ExportFormat {
    /// The format this build writes and the newest it reads (it reads 1 too). Version 2 (issue
    /// 45) added the people lines (ExportFormat+People.swift) and their counts in the trailer,
    /// and (issue 46) the events' authors, `by`.
    public static let version = 3
    public static let name = "swiped-export"
    /// The longest line a reader accepts, newline excluded: what `import` and `verify` hold of
    /// one line at most, whatever they are given (a 256 MiB line used to be read whole). An
    /// event's line is at most about 26 KiB: a title of 1,024 bytes on the wire (Wire's
    /// `Limits.stringBytes`) that NFC may make 3,072, an image of 1,024 (`maxImageBytes`), a key
    /// of 128, an id of 64 and its suffix, every byte of them written as a 6-byte `\u00XX` at
    /// worst, an author of 64 bytes (384 escaped), and about 300 bytes of names, numbers and
    /// time. The header's is at most about
    /// 25 KiB (a source path of PATH_MAX, 4,096 bytes, escaped). 64 KiB leaves twice that.
    public static let maxLineBytes = 64 << 10

    public struct Header: Equatable, Sendable {
        public var version: Int
        public var source: String
        /// The seq the export ends at (its last event's).
        public var seq: UInt64
        /// When the export was made, µs since the epoch.
        public var at: Int64
    }

    public struct Trailer: Equatable, Sendable {
        public var seq: UInt64
        public var events: UInt64
        /// The number of token lines and of role grant lines (version 2; nil in version 1).
        public var tokens: UInt64? = nil
        public var grants: UInt64? = nil
        /// `LogChecker.digest` of the state at `seq`.
        public var digest: String
        /// SHA-256 (hex) of every byte of the file before the trailer line.
        public var sha256: String
    }

    public enum Line: Equatable, Sendable {
        case header(Header)
        case event(ExportedEvent)
        /// Version 2: a token of the people tables (its hash, never a token).
        case token(TokenRecord)
        /// Version 2: a role given to a name.
        case grant(name: String, role: AccessRole)
        case trailer(Trailer)
    }

    // MARK: - Writing

    public static func header(_ h: Header) -> [UInt8] {
        var w = JSONWriter()
        w.literal(#"{"format":"#)
        w.string(name)
        w.literal(#","version":"#)
        w.int(h.version)
        w.literal(#","source":"#)
        w.string(h.source)
        w.literal(#","seq":"#)
        w.uint64(h.seq)
        w.literal(#","at":""#)
        RFC3339.append(microsecondsSinceEpoch: h.at, to: &w.bytes)
        w.literal("\"}\n")
        return w.bytes
    }

    /// `{"seq":…,"kind":…,"movie":{…},"at":"…"[,"undoes":U][,"after":A][,"from":F][,"by":"…"]`
    /// `[,"key":"…"]}` and a
    /// newline: the event exactly as `history` writes it (protocol.md, "Event"), then its key.
    public static func event(_ x: ExportedEvent, into w: inout JSONWriter) {
        let e = x.event
        w.literal(#"{"seq":"#)
        w.uint64(e.seq)
        w.literal(#","kind":"#)
        w.string(e.kind.rawValue)
        w.literal(#","movie":{"id":"#)
        w.string(e.movie.id)
        w.literal(#","title":"#)
        w.string(e.movie.title)
        w.literal(#","image":"#)
        w.string(e.movie.image)
        w.literal(e.movie.watched ? #","watched":true"# : #","watched":false"#)
        w.literal(
            e.movie.watchedWithFriends ? #","watchedWithFriends":true"# : #","watchedWithFriends":false"#)
        w.literal(#","version":"#)
        w.uint64(e.movie.version)
        w.literal(#"},"at":""#)
        RFC3339.append(microsecondsSinceEpoch: e.at, to: &w.bytes)
        w.literal("\"")
        if let undoes = e.undoes {
            w.literal(#","undoes":"#)
            w.uint64(undoes)
        }
        if let to = e.to { place(to, #","after":"#, into: &w) }
        if let from = e.from { place(from, #","from":"#, into: &w) }
        if let by = e.by {
            w.literal(#","by":"#)
            w.string(by)
        }
        if let key = x.key {
            w.literal(#","key":"#)
            w.string(key)
        }
        w.literal("}\n")
    }

    private static func place(_ p: ListPlace, _ name: StaticString, into w: inout JSONWriter) {
        w.literal(name)
        switch p {
        case .first: w.literal("null")
        case .after(let id): w.string(id)
        }
    }

    public static func trailer(_ t: Trailer) -> [UInt8] {
        var w = JSONWriter()
        w.literal(#"{"end":true,"seq":"#)
        w.uint64(t.seq)
        w.literal(#","events":"#)
        w.uint64(t.events)
        if let tokens = t.tokens, let grants = t.grants {
            w.literal(#","tokens":"#)
            w.uint64(tokens)
            w.literal(#","grants":"#)
            w.uint64(grants)
        }
        w.literal(#","digest":"#)
        w.string(t.digest)
        w.literal(#","sha256":"#)
        w.string(t.sha256)
        w.literal("}\n")
        return w.bytes
    }

    // MARK: - Reading

    /// One line (without its newline). `first`: whether it is the file's first line, which
    /// must be the header; `version`: the header's (what the other lines may be). Throws what is
    /// wrong with it, without the line number.
    public static func parse(_ line: ArraySlice<UInt8>, first: Bool, version: Int = ExportFormat.version)
        throws(Fault) -> Line
    {
        let value: JSON
        do throws(JSONError) {
            value = try JSONParser.parse(line)
        } catch {
            throw Fault("not JSON: \(error)")
        }
        guard case .object(let o) = value else { throw Fault("not a JSON object") }
        var fields = Fields(o)
        if first {
            guard case .string(let format)? = o["format"], format == name else {
                throw Fault("not a swiped export: the first line has no \"format\":\"\(name)\"")
            }
            let v = try fields.int("version")
            guard v >= 1 else { throw Fault("format version \(v) is not a version") }
            guard v <= version else {
                throw Fault(
                    "format version \(v) is newer than this swiped reads (up to \(version)): use a newer swiped"
                )
            }
            _ = try fields.string("format")
            let h = Header(
                version: v, source: try fields.string("source"), seq: try fields.uint("seq"),
                at: try fields.time("at"))
            try fields.done()
            return .header(h)
        }
        if o["end"] != nil {
            guard case .bool(true)? = o["end"] else { throw Fault("\"end\" must be true") }
            _ = fields.take("end")
            let seq = try fields.uint("seq")
            let events = try fields.uint("events")
            let people = version >= 2 ? (try fields.uint("tokens"), try fields.uint("grants")) : nil
            let t = Trailer(
                seq: seq, events: events, tokens: people?.0, grants: people?.1,
                digest: try fields.string("digest"),
                sha256: try fields.string("sha256"))
            try fields.done()
            return .trailer(t)
        }
        if o["token"] != nil || o["grant"] != nil {
            guard version >= 2 else {
                throw Fault("a \(o["token"] != nil ? "token" : "role grant") line in a version 1 export")
            }
            return o["token"] != nil ? .token(try token(&fields)) : try grant(&fields)
        }
        let seq = try fields.uint("seq")
        let kind = try fields.string("kind")
        guard case .object(let m)? = fields.take("movie") else { throw Fault("\"movie\" must be an object") }
        var mf = Fields(m)
        let movie = Movie(
            id: try mf.string("id"), title: try mf.string("title"), image: try mf.string("image"),
            watched: try mf.bool("watched"), watchedWithFriends: try mf.bool("watchedWithFriends"),
            version: try mf.uint("version"))
        try mf.done()
        let at = try fields.time("at")
        let undoes: UInt64? = o["undoes"] == nil ? nil : try fields.uint("undoes")
        let to = try place(&fields, "after", version: version)
        let from = try place(&fields, "from", version: version)
        let by: String? = o["by"] == nil ? nil : try author(&fields, version: version)
        let key: String? = o["key"] == nil ? nil : try fields.string("key")
        try fields.done()
        guard movie.version == seq else {
            throw Fault("the movie's version \(movie.version) is not the event's seq \(seq)")
        }
        return .event(
            ExportedEvent(
                event: CommittedEvent(
                    seq: seq, kind: EventKind(kind), movie: movie, at: at, undoes: undoes, by: by, to: to,
                    from: from),
                key: key))
    }

    /// An event's `after` or `from` (version 3, issue 48): a movie id, or null for the first
    /// place; nil when the line has none.
    private static func place(_ fields: inout Fields, _ name: String, version: Int) throws(Fault)
        -> ListPlace?
    {
        guard let value = fields.take(name) else { return nil }
        guard version >= 3 else { throw Fault("an event with \"\(name)\" in a version \(version) export") }
        switch value {
        case .null: return .first
        case .string(let id): return .after(id)
        default: throw Fault("\"\(name)\" must be a movie id or null")
        }
    }

    /// An event's `by` (version 2): a person's name.
    private static func author(_ fields: inout Fields, version: Int) throws(Fault) -> String {
        guard version >= 2 else { throw Fault("an event with \"by\" in a version 1 export") }
        let by = try fields.string("by")
        if let why = PersonName.problem(by) { throw Fault("\"by\" is not a person's name: \(why)") }
        return by
    }

    /// An object's members taken one by one; `done` refuses any left (a line has no others).
    struct Fields {
        /// A handful of members: a scan costs less than a dictionary made for each line.
        var members: [JSONObject.Member]
        init(_ o: JSONObject) { members = o.members }

        mutating func take(_ k: String) -> JSON? {
            guard let i = members.firstIndex(where: { $0.key == k }) else { return nil }
            return members.remove(at: i).value
        }

        mutating func string(_ k: String) throws(Fault) -> String {
            guard case .string(let s)? = take(k) else { throw Fault("\"\(k)\" must be a string") }
            return s
        }
        mutating func bool(_ k: String) throws(Fault) -> Bool {
            guard case .bool(let b)? = take(k) else { throw Fault("\"\(k)\" must be true or false") }
            return b
        }
        mutating func int(_ k: String) throws(Fault) -> Int {
            guard case .number(let n)? = take(k), let i = n.int else {
                throw Fault("\"\(k)\" must be a whole number")
            }
            return Int(i)
        }
        mutating func uint(_ k: String) throws(Fault) -> UInt64 {
            guard case .number(let n)? = take(k), let i = n.int, i >= 0 else {
                throw Fault("\"\(k)\" must be a whole number ≥ 0")
            }
            return UInt64(i)
        }
        mutating func time(_ k: String) throws(Fault) -> Int64 {
            guard case .string(let s)? = take(k), let t = RFC3339.parse(s) else {
                throw Fault("\"\(k)\" must be an RFC 3339 time")
            }
            return t
        }
        func done() throws(Fault) {
            guard members.isEmpty else {
                throw Fault(
                    "unknown field \(members.map(\.key).sorted().map { "\"\($0)\"" }.joined(separator: ", "))"
                )
            }
        }
    }
}

extension JSONWriter {
    /// Bytes known to need no escaping.
    mutating func literal(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }
}

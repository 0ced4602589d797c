// A fast path for the event lines of an export, in exactly the form `ExportFormat.event` writes
// them: most of an import's time went to the general parser building a JSON value, with its
// strings, for every line. Anything else (an escape in a string, other spacing, another field
// order, a byte that is not what is expected) returns nil, and the line goes to the general
// parser, which accepts or refuses it and says why. ExportFormatTests checks that the two agree
// on every line of an export and on damaged ones.
import JSONCodec
import Movies
import People

extension ExportFormat {
    static func fastEvent(_ line: ArraySlice<UInt8>) -> ExportedEvent? {
        line.withUnsafeBufferPointer { b -> ExportedEvent? in
            var r = FastReader(b)
            guard r.literal(#"{"seq":"#), let seq = r.number(), r.literal(#","kind":"#),
                let kind = r.string(),
                r.literal(#","movie":{"id":"#), let id = r.string(), r.literal(#","title":"#),
                let title = r.string(), r.literal(#","image":"#), let image = r.string(),
                r.literal(#","watched":"#), let watched = r.bool(), r.literal(#","watchedWithFriends":"#),
                let friends = r.bool(), r.literal(#","version":"#), let version = r.number(), version == seq,
                r.literal(#"},"at":"#), let atText = r.string(), let at = RFC3339.parse(atText)
            else { return nil }
            var undoes: UInt64?
            var by: String?
            var key: String?
            var to: ListPlace?
            var from: ListPlace?
            if r.literal(#","undoes":"#) {
                guard let u = r.number() else { return nil }
                undoes = u
            }
            if r.literal(#","after":"#) {
                guard let p = r.place() else { return nil }
                to = p
            }
            if r.literal(#","from":"#) {
                guard let p = r.place() else { return nil }
                from = p
            }
            if r.literal(#","by":"#) {
                // A name the general parser would refuse goes to it, to be refused with why.
                guard let b = r.string(), PersonName.problem(b) == nil else { return nil }
                by = b
            }
            if r.literal(#","key":"#) {
                guard let k = r.string() else { return nil }
                key = k
            }
            guard r.literal("}"), r.atEnd else { return nil }
            let movie = Movie(
                id: id, title: title, image: image, watched: watched, watchedWithFriends: friends,
                version: version)
            return ExportedEvent(
                event: CommittedEvent(
                    seq: seq, kind: EventKind(kind), movie: movie, at: at, undoes: undoes, by: by, to: to,
                    from: from),
                key: key)
        }
    }

    private struct FastReader {
        let b: UnsafeBufferPointer<UInt8>
        var at = 0
        init(_ b: UnsafeBufferPointer<UInt8>) { self.b = b }

        var atEnd: Bool { at == b.count }

        mutating func literal(_ text: StaticString) -> Bool {
            let n = text.utf8CodeUnitCount
            guard b.count - at >= n else { return false }
            let p = text.utf8Start
            for i in 0..<n where b[at + i] != p[i] { return false }
            at += n
            return true
        }

        /// A JSON integer 0…2⁶³−1 without sign, fraction, exponent or leading zero.
        mutating func number() -> UInt64? {
            let start = at
            var v: UInt64 = 0
            while at < b.count, b[at] >= 0x30, b[at] <= 0x39 {
                let (m, o1) = v.multipliedReportingOverflow(by: 10)
                let (s, o2) = m.addingReportingOverflow(UInt64(b[at] - 0x30))
                guard !o1, !o2, s <= UInt64(Int64.max) else { return nil }
                v = s
                at += 1
            }
            let digits = at - start
            guard digits > 0, digits == 1 || b[start] != 0x30 else { return nil }
            // A number ends where a JSON number ends: not at `.`, `e` or `E`.
            if at < b.count, b[at] == 0x2E || b[at] == 0x65 || b[at] == 0x45 { return nil }
            return v
        }

        /// A place (`after`, `from`): null for the first, or a movie id.
        mutating func place() -> ListPlace? {
            if literal("null") { return .first }
            return string().map(ListPlace.after)
        }

        mutating func bool() -> Bool? {
            if literal("true") { return true }
            if literal("false") { return false }
            return nil
        }

        /// A string without escapes or control characters, valid UTF-8.
        mutating func string() -> String? {
            guard at < b.count, b[at] == 0x22 else { return nil }
            let start = at + 1
            var i = start
            while i < b.count, b[i] != 0x22 {
                guard b[i] != 0x5C, b[i] >= 0x20 else { return nil }
                i += 1
            }
            guard i < b.count else { return nil }
            at = i + 1
            return String(validating: UnsafeBufferPointer(rebasing: b[start..<i]), as: UTF8.self)
        }
    }
}

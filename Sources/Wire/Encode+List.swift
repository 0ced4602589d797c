// The `list` reply (protocol.md), whole or a part at a time: the daemon words a long one as the
// client reads it (Session's ListStream.swift), to the bytes of the whole reply.
import JSONCodec
import Movies

extension Encode {
    /// A whole `list` reply. The daemon words long ones a part at a time (`listHead`,
    /// `listMovie`, `listTail`: the Session's ListStream), to the same bytes.
    public static func list(
        _ out: inout JSONWriter, id: [UInt8]?, seq: UInt64, movies: [Movie], next: String? = nil
    ) {
        listHead(&out, id: id, seq: seq)
        for (index, m) in movies.enumerated() { listMovie(&out, m, first: index == 0) }
        listTail(&out, next: next)
    }

    /// A `list` reply up to its first movie.
    public static func listHead(_ out: inout JSONWriter, id: [UInt8]?, seq: UInt64) {
        begin(&out, id: id, ok: true)
        key(&out, "seq")
        out.uint64(seq)
        key(&out, "movies")
        out.bytes.append(UInt8(ascii: "["))
    }

    /// One movie of a `list` reply; the comma before it is written here, not guessed from the
    /// buffer's last byte: a long reply's buffer is emptied as it is written.
    @inline(__always)
    public static func listMovie(_ out: inout JSONWriter, _ m: Movie, first: Bool) {
        if !first { out.bytes.append(UInt8(ascii: ",")) }
        movie(&out, m)
    }

    /// The end of a `list` reply: `next`, the id to ask after for more, or null at the end.
    public static func listTail(_ out: inout JSONWriter, next: String?) {
        out.bytes.append(UInt8(ascii: "]"))
        out.literal(#","next":"#)
        if let next { out.string(next) } else { out.literal("null") }
        end(&out)
    }
}

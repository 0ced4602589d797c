/// Where a movie is in list order, by its neighbour (issue 48): first, or right after a movie.
/// What a `move` asks for (`after`: an id, or null for first), what a `moved` event says it did
/// and where the movie was before (`from`), and where a `restored` movie went.
public enum ListPlace: Hashable, Sendable, CustomStringConvertible {
    case first
    case after(String)

    /// `after: id`, or first for nil: the wire's spelling (`"after":"x"` or `"after":null`).
    public init(after id: String?) { self = id.map(ListPlace.after) ?? .first }

    /// The movie it comes after, nil when first.
    public var after: String? {
        switch self {
        case .first: nil
        case .after(let id): id
        }
    }

    public var description: String {
        switch self {
        case .first: "first"
        case .after(let id): "after \(MovieState.quoted(id))"
        }
    }

    // The log's bytes: 0 for first, 1 then the id (a 4-byte length and UTF-8).
    func write(_ w: inout ByteWriter) {
        switch self {
        case .first: w.u8(0)
        case .after(let id):
            w.u8(1)
            w.string(id)
        }
    }

    static func read(_ r: inout ByteReader, _ what: String) throws(MovieDecodingError) -> ListPlace {
        switch try r.u8(what) {
        case 0: return .first
        case 1:
            let id = try r.string(what)
            guard MovieState.isValidID(id) else {
                throw MovieDecodingError("bad movie id \(String(reflecting: id)) in \(what)")
            }
            return .after(id)
        case let tag: throw MovieDecodingError("bad \(what) tag \(tag)")
        }
    }
}

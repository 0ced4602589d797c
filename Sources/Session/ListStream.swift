// A `list` reply worded as the socket drains: with 100,000 movies the whole reply is about
// 18 MB, and wording it whole into the connection's output cost that much per connection that
// asked and did not read. A long reply keeps the movies as they were at its seq (an array is
// copy-on-write: taking it is a reference, and the store copies its own array at its next
// change while any reply still holds the old one) and a cursor, and words a part at a time
// into the output when the output runs low (ReplyQueue.pump). The bytes are those of the reply
// worded whole: one line.
//
// What long replies hold is capped for the whole daemon (LargeReplies): past the cap a long
// `list` is refused `overloaded`; pages (`limit`) short enough to word at once never are.
import JSONCodec
import Movies
import Wire

/// Where a `list` reply is: the next movie to consider, how many more it may hold, the filter.
/// Worded to its end at once (short replies) or a part at a time (ListStream).
struct ListCursor {
    let id: [UInt8]?
    let seq: UInt64
    /// The index in `movies` of the next movie to consider.
    var position: Int
    /// How many more movies the reply may hold.
    var remaining: Int
    let match: TitleMatch?
    /// Whether a movie was worded yet (commas).
    var started = false
    /// The index of the last movie worded: the reply's `next` when more follow.
    var last: Int?
    var scratch: [UInt8] = []
    var headWritten = false

    init(id: [UInt8]?, seq: UInt64, position: Int, limit: Int?, match: TitleMatch?) {
        self.id = id
        self.seq = seq
        self.position = position
        remaining = limit ?? .max
        self.match = match
    }

    /// Words the reply on into `out` until `out` holds `target` bytes from `head` on, or the
    /// reply ends; returns whether it ended.
    mutating func word(_ movies: [Movie], into out: inout JSONWriter, head: Int, target: Int) -> Bool {
        if !headWritten {
            Encode.listHead(&out, id: id, seq: seq)
            headWritten = true
        }
        while position < movies.count {
            if out.bytes.count - head >= target { return false }
            let i = position
            if let match, !match.matches(movies[i].title, scratch: &scratch) {
                position += 1
                continue
            }
            if remaining == 0 {
                // One more matches: the reply ends with where to ask from.
                Encode.listTail(&out, next: movies[last!].id)
                return true
            }
            Encode.listMovie(&out, movies[i], first: !started)
            started = true
            last = i
            remaining -= 1
            position += 1
        }
        Encode.listTail(&out, next: nil)
        return true
    }
}

/// A long `list` reply in progress: the movies at its seq, its cursor, its share of the cap.
final class ListStream {
    let movies: [Movie]
    var cursor: ListCursor
    let budget: LargeReplies

    init(movies: [Movie], cursor: ListCursor, budget: LargeReplies) {
        self.movies = movies
        self.cursor = cursor
        self.budget = budget
    }

    /// A dropped connection frees its reply's share, in whatever state the reply is.
    deinit { budget.release(seq: cursor.seq) }

    /// What the output is refilled to: part of a reply waits there for the socket, the
    /// rest is worded only once the peer read this much.
    static let chunk = 16 * 1024

    /// A reply this long or shorter (in movies) is worded at once: up to ≈ 330 KB with the
    /// longest titles and images allowed, as much as the other replies of a connection.
    static let shortReply = 256
}

/// What the daemon's long `list` replies hold, against one cap: each reply's output (at most
/// `reservation` bytes: a chunk and the buffer's growth) and, once per seq however many replies
/// hold it, the movies at that seq (their array: `MemoryLayout<Movie>.stride` bytes a movie; strings
/// are shared, not copied). The manager makes one and gives it to every Session.
public final class LargeReplies {
    /// The bytes long replies may hold together.
    public let cap: Int
    /// The bytes held now.
    public private(set) var held = 0
    /// The long replies in progress.
    public private(set) var replies = 0
    /// Per seq held: how many replies hold it, and what its movies count for.
    private var snapshots: [UInt64: (replies: Int, bytes: Int)] = [:]
    /// Whether the cap was met since the held bytes were last under half of it: a refusal is
    /// logged once per such episode, not once per request.
    private(set) var warned = false

    /// What each reply counts for besides its movies.
    public static let reservation = 2 * ListStream.chunk

    /// 64 MiB: 2,000 replies of one seq, or 9 of distinct seqs, with 100,000 movies.
    public static let defaultCap = 64 << 20

    public init(cap: Int = LargeReplies.defaultCap) {
        self.cap = cap
    }

    /// Takes a share for a reply of the movies at `seq`; false (and nothing taken) when it
    /// would pass the cap.
    func admit(seq: UInt64, movies: Int) -> Bool {
        let snapshot = snapshots[seq] == nil ? movies * MemoryLayout<Movie>.stride : 0
        guard held + LargeReplies.reservation + snapshot <= cap else { return false }
        held += LargeReplies.reservation + snapshot
        snapshots[seq, default: (0, snapshot)].replies += 1
        replies += 1
        return true
    }

    /// Gives back the share `admit(seq:movies:)` took.
    func release(seq: UInt64) {
        guard let entry = snapshots[seq] else {
            preconditionFailure(
                "a list reply of seq \(seq) ends, none was admitted (held: \(snapshots.keys.sorted()))")
        }
        held -= LargeReplies.reservation
        if entry.replies == 1 {
            snapshots[seq] = nil
            held -= entry.bytes
        } else {
            snapshots[seq] = (entry.replies - 1, entry.bytes)
        }
        replies -= 1
        if held <= cap / 2 { warned = false }
    }

    /// Whether a refusal now is the first since the cap was last met: it is logged.
    func firstRefusal() -> Bool {
        defer { warned = true }
        return !warned
    }
}

// The drag path under test: what one connection of the daemon does with the bytes of drag lines,
// rebuilt from the public APIs of Wire, SwipeEngine and Movies, in the daemon's order:
//   Server.handleIO          framer.append(bytes read)
//   Server.processLines      framer.next() → .line
//   Server.handle(line:on:)  RequestDecoder.withFastRequest(line, repeating: &dragRepeat)
//   Server+Swipe drag(...)   gestureMovie memo, list.dragThenGeometry(of:dx:),
//                            rowTemplates.template(...), Encode.row(&out, id:template:geometry:)
//   Connection.flush         the write, then out.reset()
// The socket's read and write (system calls, no allocation) are left out.
//
// When Session (issue 11) owns this path, replace `ConnectionDragPath` with a type that feeds a
// Session the same bytes and drains its actions, and name it in main.swift's `PathUnderTest`.
// Nothing else in alloc-guard knows what the path is.
import Movies
import SwipeEngine
import Wire

/// A connection's drag path as the guard drives it: one read's bytes in, replies out. The guard
/// is generic over it (never an existential), so that it adds no allocation of its own.
protocol DragPath {
    init()
    /// Handles the bytes of one read; returns the reply bytes that were written out.
    mutating func receive(_ bytes: UnsafeRawBufferPointer) -> Int
}

struct ConnectionDragPath: DragPath {
    private var framer = LineFramer()
    private var dragRepeat = DragRepeat()
    private var swipe = Swipe()

    init() {}

    mutating func receive(_ bytes: UnsafeRawBufferPointer) -> Int {
        framer.append(bytes)
        while let frame = framer.next() {
            guard case .line(let line) = frame else { preconditionFailure("alloc-guard sent \(frame)") }
            line.withUnsafeBytes { line in
                let fast = RequestDecoder.withFastRequest(line, repeating: &dragRepeat) { request, id, kind in
                    guard case .drag(let movie, let dx) = request, kind == .drag else {
                        preconditionFailure("alloc-guard sent a line that is not a drag")
                    }
                    swipe.drag(movie, dx: dx, id: id)
                }
                precondition(fast, "a drag line missed the fast path")
            }
        }
        return swipe.flush()
    }
}

/// What Server+Swipe's `drag` works on: the connection's engine, templates and write queue,
/// and the store's movies.
private struct Swipe {
    var list = SwipeList(layout: MovieLayout.standard)
    let rowTemplates = RowTemplates()
    var out = JSONWriter(capacity: 0)
    /// The store, for the first look-up of a row's movie (then the memo answers).
    var movies = MovieState()
    /// Server.gestureMovie's memo: the id asked, the movie's stored id, its flags.
    var memo: (asked: String, id: RowID, watched: Bool, watchedWithFriends: Bool)?

    init() {
        for (seq, event) in MovieState.seedCatalogue.enumerated() {
            _ = movies.apply(event, seq: UInt64(seq + 1))
        }
    }

    mutating func drag(_ asked: String, dx: Double, id: [UInt8]?) {
        if memo?.asked != asked {
            guard let found = movies.movie(asked) else { preconditionFailure("no movie \(asked)") }
            memo = (asked, found.id, found.watched, found.watchedWithFriends)
        }
        let movie = memo!
        let (effects, geometry) = list.dragThenGeometry(of: movie.id, dx: dx)
        precondition(effects.isEmpty, "a drag on the dragging row had effects: \(effects)")
        let dataKey: UInt64 = (movie.watched ? 1 : 0) | (movie.watchedWithFriends ? 2 : 0)
        let template = rowTemplates.template(movie.id, shape: geometry.shape, dataKey: dataKey, in: list) {
            MovieLayout.flags(watched: movie.watched, watchedWithFriends: movie.watchedWithFriends)
        }
        Encode.row(&out, id: id, template: template, geometry: geometry)
    }

    /// Connection.flush once the socket took everything: the bytes written, the buffer kept.
    mutating func flush() -> Int {
        let written = out.bytes.count
        out.reset()
        return written
    }
}

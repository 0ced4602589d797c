// The drag path under test: what one connection of the daemon does with the bytes of drag
// lines. Since issue 11 a connection's decisions are its `Session` (Sources/Session), so the
// guard drives a Session exactly as the manager does; only the socket's read and write (system
// calls, no allocation) are left out.
import Movies
import People
import Session
import SwipeEngine
import Wire

/// A connection's drag path as the guard drives it: one read's bytes in, replies out. The guard
/// is generic over it (never an existential), so that it adds no allocation of its own.
protocol DragPath {
    init()
    /// Handles the bytes of one read; returns the reply bytes that were written out.
    mutating func receive(_ bytes: UnsafeRawBufferPointer) -> Int
}

/// A connection's `Session` fed one read's bytes, with the
/// committed movie state lent to it, and its output written out as the manager does
/// (Daemon/Server+Connections.swift: `received`, `withPendingOutput`, `consumed`, `resume`).
final class SessionDragPath: DragPath {
    private let session = Session(
        config: SessionConfig(
            client: 1, identity: Identity(user: "bench", role: .writer, door: .unix(uid: 1000))),
        latestSeq: 10,
        log: "0123456789abcdef0123456789abcdef")
    private var state = MovieState()
    private var sink = SessionActions()

    init() {
        for (seq, event) in MovieState.seedCatalogue.enumerated() {
            _ = state.apply(event, seq: UInt64(seq + 1))
        }
        _ = written()  // the hello
    }

    func receive(_ bytes: UnsafeRawBufferPointer) -> Int {
        session.handle(.bytes(bytes), state, &sink)
        precondition(sink.isEmpty, "a drag asked the manager for something")
        return written()
    }

    private func written() -> Int {
        var total = 0
        while session.pendingOutput > 0 {
            let n = session.withPendingOutput { $0.count }
            session.handle(.written(n), state, &sink)
            total += n
            session.handle(.resume, state, &sink)
        }
        return total
    }
}

/// The same connection after `{"op":"options","rows":"compact"}`: its drags fill the compact
/// form's templates.
final class CompactSessionDragPath: DragPath {
    private let path = SessionDragPath()

    init() {
        let options = Array(#"{"op":"options","rows":"compact"}"#.utf8) + [0x0A]
        _ = options.withUnsafeBytes { path.receive($0) }
    }

    func receive(_ bytes: UnsafeRawBufferPointer) -> Int { path.receive(bytes) }
}

/// The same connection after `{"op":"options","crossings":true}` (issue 47): its drags cross the
/// thresholds both ways on every sweep, and their replies say so (`crossed`).
final class CrossingsSessionDragPath: DragPath {
    private let path = SessionDragPath()

    init() {
        let options = Array(#"{"op":"options","crossings":true}"#.utf8) + [0x0A]
        _ = options.withUnsafeBytes { path.receive($0) }
    }

    func receive(_ bytes: UnsafeRawBufferPointer) -> Int { path.receive(bytes) }
}

// Fault injection for the PostgreSQL store, filling the store's commit seam (PGCommitPath):
// a test opens a store with `PostgresStore.open(…, commitPath: faults)` and arms a fault.
import Foundation
import Glibc
import StorePostgres

/// Breaks the connection around the next commit of appended events, so that a test sees a
/// commit in doubt, or reads the WAL's flushed position as unknown.
package final class PostgresFaults: PGCommitPath, @unchecked Sendable {
    package enum Break: Sendable {
        /// The connection breaks before the commit is sent: nothing is written.
        case beforeCommit
        /// The commit reaches the server whole, then the connection breaks before its answer.
        case afterCommitSent
    }

    private let lock = NSLock()
    // Guarded by `lock`: armed by the test's thread, taken by the store's.
    private var armed: Break?
    private var then: (@Sendable () -> Void)?
    private var unflushed = false

    package init() {}

    /// Breaks the connection once, at the next commit of appended events, then calls `then` on
    /// the store's thread (a test stops the database there, so that the store cannot reconnect).
    package func breakNextCommit(_ how: Break, then: (@Sendable () -> Void)? = nil) {
        lock.lock()
        armed = how
        self.then = then
        lock.unlock()
    }

    /// While on, the store reads the WAL's flushed position as unknown: no event another daemon
    /// wrote is handed over before this daemon's own flush (PostgresWorker's commit).
    package func reportWALUnflushed(_ on: Bool) {
        lock.lock()
        unflushed = on
        lock.unlock()
    }

    package func run(
        _ conn: PGConnection, _ steps: [(PGStatement, [PGParam])], early: Int, onEarly: (PGResult?) -> Void
    ) throws(PGFailure) -> [PGResult?] {
        lock.lock()
        let fault = armed
        let after = then
        let hidesFlushed = unflushed
        armed = nil
        then = nil
        lock.unlock()
        let seen: (PGResult?) -> Void = { rows in onEarly(hidesFlushed ? nil : rows) }
        switch fault {
        case nil:
            return try conn.run(steps, early: early, onEarly: seen)
        case .beforeCommit:
            defer { after?() }
            _ = shutdown(conn.socket, Int32(SHUT_RDWR))
            return try conn.run(steps, early: early, onEarly: seen)
        case .afterCommitSent:
            defer { after?() }
            // Sent whole (on a blocking connection PQpipelineSync writes everything before it
            // returns): the server runs it and commits. The socket is then shut and the answer
            // not read. Shutting it alone left a race: a server quick enough had its whole
            // answer in the socket's buffer before the shutdown, libpq read it, and the commit
            // was answered as usual, so the break was only seen at the next read (a test meant
            // to cover a commit in doubt then covered a plain reconnection).
            try conn.sendPipeline(steps, early: early)
            _ = shutdown(conn.socket, Int32(SHUT_RDWR))
            throw .lost("the connection broke after the commit was sent (injected by a test)")
        }
    }
}

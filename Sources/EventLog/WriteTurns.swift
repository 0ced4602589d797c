// Write transactions on one log file, taken in turn by this process's connections (the log's
// writer and the people store's, issue 45). SQLite lets one connection write at a time and makes
// the others wait in its busy handler, which polls with growing sleeps (1, 2, 5 … 100 ms): a
// connection that writes again as soon as it has committed finds the lock free before the
// waiting one wakes, and kept the log's writer out for as long as it went on (350 people changes
// in a row held 10 events back for 2 s, and past the 5 s busy timeout a commit would fail with
// "database is locked"). Tickets, served in order, make each wait at most for the transactions
// that asked before it. Another process writing the file still meets the busy timeout.
import Foundation
import Glibc

final class WriteTurns: @unchecked Sendable {
    private let cond = NSCondition()
    // Guarded by `cond`.
    private var next: UInt64 = 0
    private var serving: UInt64 = 0
    /// Tickets whose holders stopped waiting (`take`'s bound): skipped when their turn comes.
    private var abandoned = Set<UInt64>()

    /// How long a caller waits for its turn at most, as SQLite's busy timeout (SQLiteConnection):
    /// a transaction that hangs (a disk that does not answer) holds the others up no longer
    /// than it did without turns, and they then meet the busy timeout as before.
    static let boundSeconds = 5.0

    /// Waits for this caller's turn: every caller that asked before it has given its turn back.
    /// False when the bound passed first: the caller goes on without one (SQLite's busy timeout
    /// then decides) and must not give it back.
    func take() -> Bool {
        cond.lock()
        defer { cond.unlock() }
        let ticket = next
        next += 1
        let deadline = Date(timeIntervalSinceNow: WriteTurns.boundSeconds)
        while serving != ticket {
            if !cond.wait(until: deadline) && serving != ticket {
                abandoned.insert(ticket)
                return false
            }
        }
        return true
    }

    /// Ends the caller's turn, when `take` gave it one.
    func give(_ had: Bool) {
        guard had else { return }
        cond.lock()
        serving += 1
        while abandoned.remove(serving) != nil { serving += 1 }
        cond.broadcast()
        cond.unlock()
    }

    /// The turns of the file at `path` (by device and inode: any spelling of it, any link),
    /// shared by every connection of this process to it; a file that cannot be looked at gets
    /// turns of its own.
    static func of(_ path: String) -> WriteTurns {
        var st = stat()
        guard stat(path, &st) == 0 else { return WriteTurns() }
        let key = FileKey(device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
        return registry.withLock { files in
            if let t = files[key] { return t }
            let t = WriteTurns()
            files[key] = t
            return t
        }
    }

    private struct FileKey: Hashable {
        var device: UInt64
        var inode: UInt64
    }

    /// Every file's turns, kept for the process's life (a daemon opens one log, a test a few
    /// hundred: a few bytes each).
    private static let registry = Registry()

    private final class Registry: @unchecked Sendable {
        private let lock = NSLock()
        private var files: [FileKey: WriteTurns] = [:]

        func withLock<R>(_ body: (inout [FileKey: WriteTurns]) -> R) -> R {
            lock.lock()
            defer { lock.unlock() }
            return body(&files)
        }
    }
}

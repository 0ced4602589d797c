// The PostgreSQL store thread's connection: reconnecting with backoff, losing it (said once,
// writes refused meanwhile), and stopping for good after a fatal error.
import Foundation
import Glibc
import Plumbing
import StoreCore

extension PostgresWorker {
    /// `connectTimeout`: seconds for each host's connect (a closing thread's remaining time).
    func reconnectIfDue(connectTimeout: Int? = nil) {
        let now = SystemClock.monotonicNanoseconds()
        guard now >= nextAttempt else { return }
        do throws(StoreError) {
            conn = try PGConnection(
                conninfo, durability: durability, reconnecting: true, connectTimeout: connectTimeout,
                stopSignal: stopSignal)
        } catch {
            nextAttempt = now + UInt64(backoffMillis) * 1_000_000
            backoffMillis = min(backoffMillis * 2, PostgresWorker.maxBackoffMillis)
            return
        }
        backoffMillis = 50
        guard let c = conn, servesTheSameLog(c) else { return }
        // A new session: its setup ran LISTEN.
        listening = true
        let since = downSince ?? "?"
        downSince = nil
        emit([
            .connection(
                StoreNote(
                    .info, "PostgreSQL connection restored, catching up",
                    reason: "unreachable since \(since)"), status: nil)
        ])
        catchUp()
    }

    /// Whether the database still holds the log this store serves. While the connection was
    /// away the log may have been replaced (`swiped import` after the tables were dropped, a
    /// restore): its seqs are then another history's, and catching up would fold them onto
    /// this state and show clients a mix under the old `hello` id. Stopping instead (as for a
    /// head below what was applied) lets a restart serve the new log under its own id, which
    /// clients see and start over from.
    func servesTheSameLog(_ c: PGConnection) -> Bool {
        let found: String?
        do throws(PGFailure) {
            let rows = try c.execute("SELECT log FROM swiped_identity WHERE id = 1")
            found = rows.first?.rows.first?.first ?? nil
        } catch {
            switch error {
            case .lost(let why):
                lost(why)
                return false
            case .failed:
                found = nil
            }
        }
        guard found != logID else { return true }
        fatal(
            StoreError(
                .storage,
                "the database holds another log (\(found ?? "none: swiped_identity cannot be read")), not \(logID)"
                    + " which this daemon serves: it was replaced (imported or restored) while the connection"
                    + " was lost; stopping, so that a restart serves the new log"))
        return false
    }

    /// The connection broke: drop it, tell the loop once, retry with backoff.
    func lost(_ why: String) {
        conn = nil
        dropUnflushed()
        nextAttempt = SystemClock.monotonicNanoseconds() + UInt64(backoffMillis) * 1_000_000
        guard downSince == nil else { return }
        var t = time(nil)
        var tm = tm()
        gmtime_r(&t, &tm)
        let since = String(format: "%02d:%02d:%02d UTC", tm.tm_hour, tm.tm_min, tm.tm_sec)
        downSince = since
        emit([
            .connection(
                StoreNote(
                    .warning,
                    "PostgreSQL connection lost, reconnecting with backoff; writes are refused meanwhile",
                    reason: why),
                status: "PostgreSQL unreachable since \(since), retrying; writes refused.")
        ])
    }

    func fatal(_ e: StoreError) {
        var e = e
        e.fatal = true
        failed = true
        unflushed = []
        unflushedDoubts = []
        emit([.fatal(e)])
        answerAll(.failure(e))
        inDoubt = [:]
        inDoubtOrder = []
    }
}

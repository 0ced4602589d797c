// `COPY … TO STDOUT` on a store connection (PostgresConnection.swift): the rows streamed while
// this thread decodes them, and bounded as every round trip of the store thread is.
import CLibPQ
import Glibc
import StoreCore

extension PGConnection {
    /// Runs `COPY (query) TO STDOUT (FORMAT binary)` and hands `row` each row's fields as the
    /// server sends them: the server reads and formats the next rows while the caller decodes
    /// these, where a page per query made the two take turns. `row` returns false to ignore the
    /// rest (they are read and dropped: the statement must end before the connection is used
    /// again). `query` takes no parameters: COPY has none.
    func copyOut(_ query: String, _ row: (CopyRow) -> Bool) throws(PGFailure) {
        guard PQsendQuery(conn, "COPY (\(query)) TO STDOUT (FORMAT binary)") == 1 else {
            throw .lost(PGConnection.message(conn))
        }
        var failed: PGFailure?
        var wanted = true
        var header = true
        // Bounded as every round trip is (`awaitResult`), counted from the last bytes that came:
        // a catch-up under way when the link went silent held the store thread, and with it
        // every write's answer, for tcp_user_timeout (15 s; issue 40). A long COPY that keeps
        // sending is never cut.
        var progress = SystemClock.monotonicNanoseconds()
        cancelled = false
        while try awaitResult(since: progress), let r = PQgetResult(conn) {
            let status = PQresultStatus(r)
            if status == PGRES_COPY_OUT {
                PQclear(r)
                while true {
                    var buffer: UnsafeMutablePointer<CChar>?
                    let n = PQgetCopyData(conn, &buffer, stopSignal == nil ? 0 : 1)
                    if n == 0 {
                        // Nothing whole yet (non-blocking): wait for more within the bound.
                        if !(try awaitInput(since: progress)) { break }
                        continue
                    }
                    if n < 0 { break }  // -1: the end (PQgetResult says how it ended); -2: broken
                    progress = SystemClock.monotonicNanoseconds()
                    defer { PQfreemem(buffer) }
                    guard wanted, failed == nil, let buffer else { continue }
                    var bytes = UnsafeRawBufferPointer(start: buffer, count: Int(n))
                    if header {
                        // "PGCOPY\n\377\r\n\0", flags, the header extension's length and bytes;
                        // the server sends it with the first row.
                        header = false
                        guard bytes.count >= 19, let ext = CopyRow.int32(bytes, 15), ext >= 0,
                            bytes.count >= 19 + Int(ext)
                        else {
                            failed = .failed(
                                sqlState: "XX000", message: "COPY sent a header that cannot be read")
                            continue
                        }
                        bytes = UnsafeRawBufferPointer(rebasing: bytes[(19 + Int(ext))...])
                    }
                    // The trailer: a field count of -1.
                    if bytes.count == 2 && bytes[0] == 0xFF && bytes[1] == 0xFF { continue }
                    guard let parsed = CopyRow(bytes) else {
                        failed = .failed(sqlState: "XX000", message: "COPY sent a row that cannot be read")
                        continue
                    }
                    wanted = row(parsed)
                }
                continue
            }
            if failed == nil { failed = failure(r) }
            PQclear(r)
        }
        if cancelled { throw givenUp() }
        if isBroken { throw .lost(PGConnection.message(conn)) }
        drainNotifications()
        if case .failed(let state, let message) = failed, PGConnection.meansLost(sqlState: state) {
            throw .lost(message)
        }
        if let failed { throw failed }
    }
}

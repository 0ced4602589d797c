// The PostgreSQL store thread reading the log: catching up with what other daemons appended
// (on a notification, after a reconnection, on the safety net's timer), folding the rows into
// its state, handing them to the loop once they are on disk, and answering `history` pages (of
// the whole log, or of one person's events).
import Movies
import Plumbing
import StoreCore

extension PostgresWorker {
    /// The head a notification announced, nil for a payload that is not one (a `NOTIFY swiped`
    /// from elsewhere: `PGConnection` reads it as the highest head, so that it is not ignored).
    static func announced(_ head: UInt64) -> UInt64? { head == .max ? nil : head }

    /// Reads and applies what was committed after the position applied here, in pages, without
    /// a lock (every snapshot sees a prefix of the positions), and hands it to the loop once it
    /// is durable. `notified`: the head of a notification, sent after the flush of its commit,
    /// so everything up to it is on disk: the read stops there and each page goes to the loop
    /// as it comes (a later commit brings its own notification). Not so when commits wait for a
    /// synchronous standby: a writer whose wait for the standby was cancelled
    /// (`PGConnection.cancelAfterNanos`) has committed on the primary alone, and its pipeline's
    /// notification still runs; what the read found then waits for a flush of this daemon's,
    /// one after the whole read. Otherwise (a reconnection, the safety net) the read goes to
    /// the head, and what it found waits for a flush started after it; a read that found
    /// nothing flushes nothing (an idle daemon would otherwise write a WAL record and wait for
    /// the disk every second).
    func catchUp(notified: UInt64? = nil) {
        guard let conn, stateIsCurrent(conn) else { return }
        do throws(PGFailure) {
            if let notified {
                var barrier = false
                var first = durability == .full
                while notified > state.lastSeq {
                    let count = Int(min(notified - state.lastSeq, UInt64(PostgresSchema.page)))
                    var steps: [(PGStatement, [PGParam])] = [
                        (.eventsBetween, PostgresWorker.range(after: state.lastSeq, count: count))
                    ]
                    if first { steps.append((.syncStandbys, [])) }
                    let r = try conn.run(steps)
                    guard applyRows(r[0]) else { return }
                    if first { barrier = !(r.count == 2 ? r[1]?.text(0, 0) ?? "" : "").isEmpty }
                    first = false
                    if !barrier { handOver() }
                    if (r[0]?.count ?? 0) < count { break }
                }
                if barrier && !unflushed.isEmpty {
                    _ = try conn.run([(.flush, [])])
                    handOver()
                }
                return
            }
            while true {
                let r = try conn.run([
                    (.head, []),
                    (.eventsBetween, PostgresWorker.range(after: state.lastSeq, count: PostgresSchema.page)),
                ])
                guard r.count == 2, let head = PostgresWorker.head(r[0]) else {
                    return fatal(StoreError(.storage, "swiped_head cannot be read"))
                }
                if head < handedOver {
                    return fatal(
                        StoreError(
                            .storage,
                            "the database lost events this daemon applied (its head is \(head), this daemon is at \(handedOver)); restarting from the database"
                        ))
                }
                guard applyRows(r[1]) else { return }
                let read = r[1]?.count ?? 0
                if read > 0 && durability == .full { _ = try conn.run([(.flush, [])]) }
                handOver()
                if read < PostgresSchema.page {
                    lastReadToHead = SystemClock.monotonicNanoseconds()
                    meters?.readToHead(at: lastReadToHead)
                    return
                }
            }
        } catch {
            lost(error.message)
        }
    }

    /// Applies rows read from swiped_events (in seq order) to `state`, into `unflushed`,
    /// matching the commands in doubt they commit. False after a fatal error.
    func applyRows(_ rows: PGResult?) -> Bool {
        guard let rows else { return true }
        unflushed.reserveCapacity(unflushed.count + rows.count)
        for i in 0..<rows.count {
            let row: PostgresSchema.Row
            do throws(StoreError) {
                row = try PostgresSchema.Row(rows, i)
            } catch {
                fatal(error)
                return false
            }
            guard row.seq == state.lastSeq + 1, state.apply(row.event, seq: row.seq) != nil else {
                fatal(
                    StoreError(
                        .storage,
                        "event \(row.seq) does not follow this daemon's state at \(state.lastSeq) (\(row.event))"
                    ))
                return false
            }
            var token: UInt64?
            if let t = row.token, let job = inDoubt.removeValue(forKey: t) {
                token = job.token
                unflushedDoubts.append(Attempt(job: job, token: t))
            }
            unflushed.append(.applied(row.committed, row.event, key: row.key, token: token))
        }
        return true
    }

    /// A flush after everything in `state` returned: the events waiting for it, then `more`
    /// (the outcomes of the transaction's commands), go to the loop. `through`: the position
    /// the loop then has, when `state` is further on (a transaction's own events, decided and
    /// folded, not yet committed: what a failure drops and reads again from there).
    func handOver(_ more: [Output] = [], through: UInt64? = nil) {
        let out = unflushed.isEmpty ? more : unflushed + more
        unflushed = []
        unflushedDoubts = []
        handedOver = through ?? state.lastSeq
        emit(out)
    }

    /// The transaction or read under way failed before its flush returned: what it applied is
    /// not handed over (it is read again, if the database kept it), the commands in doubt it
    /// matched are in doubt again (first: they are the older), and the state is read again up to
    /// what the loop has.
    func dropUnflushed() {
        let again = unflushedDoubts.filter { inDoubt[$0.token] == nil }
        for d in again { inDoubt[d.token] = d.job }
        inDoubtOrder = again.map(\.token) + inDoubtOrder.filter { t in !again.contains { $0.token == t } }
        unflushed = []
        unflushedDoubts = []
        if state.lastSeq > handedOver && !failed { reloadTo = min(reloadTo ?? handedOver, handedOver) }
    }

    /// Answers `history` pages, of the whole log or of one person's events. A page ends at the
    /// last position handed to the loop: a later event may not be on disk yet, and the loop's
    /// own state has not reached it.
    func answer(_ rs: [Read]) {
        guard let conn else { return }
        var out: [Output] = []
        for r in rs {
            let count = r.after >= handedOver ? 0 : Int(min(UInt64(max(r.limit, 0)), handedOver - r.after))
            guard count > 0 else {
                out.append(.read(ReadResult(token: r.token, result: .success([]))))
                continue
            }
            let step: (PGStatement, [PGParam]) =
                if let person = r.person {
                    (
                        .eventsBy,
                        [
                            .text(person), .int64(Int64(r.after)), .int64(Int64(handedOver)),
                            .int64(Int64(count)),
                        ]
                    )
                } else {
                    (.eventsBetween, PostgresWorker.range(after: r.after, count: count))
                }
            do throws(PGFailure) {
                let rows = try conn.run([step])
                var page: [CommittedEvent] = []
                var bad: StoreError?
                for i in 0..<(rows.first??.count ?? 0) {
                    do throws(StoreError) {
                        page.append(try PostgresSchema.Row(rows[0]!, i).committed)
                    } catch {
                        bad = error
                        break
                    }
                }
                out.append(
                    .read(ReadResult(token: r.token, result: bad.map { .failure($0) } ?? .success(page))))
            } catch .lost(let why) {
                out.append(.read(ReadResult(token: r.token, result: .failure(unavailable))))
                lost(why)
            } catch {
                out.append(
                    .read(ReadResult(token: r.token, result: .failure(StoreError(.storage, error.message)))))
            }
        }
        emit(out)
    }
}

// What the PostgreSQL store does beyond the contract every store keeps (StoreContractTests):
// connection strings with passwords refused, the schema created once by stores starting
// together, another store's events arriving in order, commits in doubt answered from the log,
// and writes refused `unavailable` while the database is down. On a real cluster
// (PostgresStoreSupport.swift).
import Foundation
import Glibc
import Metrics
import Movies
import StoreCore
import StoreTestSupport
import TestSupport
import XCTest

@testable import StorePostgres

final class PostgresStoreTests: XCTestCase {
    /// What a test's session that holds a lock on purpose runs first: a store's session (as
    /// PGConnection sets it up) would be ended by the server after 3 s idle in its transaction,
    /// which a slow machine could reach before the test lets go.
    static let held = "SET idle_in_transaction_session_timeout = 0; "

    override class func tearDown() {
        SharedCluster.destroy()
        super.tearDown()
    }

    func testAConnectionStringWithAPasswordIsRefusedWithoutRepeatingIt() throws {
        for conninfo in [
            "host=/tmp dbname=swiped password=hunter2", "postgresql://swiped:hunter2@db.example/swiped",
            "postgres://swiped:hunter2@db.example:5432/swiped?sslmode=verify-full",
            "host=db.example dbname='postgresql://swiped:hunter2@elsewhere/swiped'",
        ] {
            let why = try XCTUnwrap(PostgresStore.refusal(conninfo: conninfo), conninfo)
            XCTAssertTrue(why.contains("must not contain a password"), why)
            XCTAssertFalse(why.contains("hunter2"), why)
            XCTAssertThrowsError(try PostgresStore.open(conninfo: conninfo)) { error in
                XCTAssertEqual((error as? StoreError)?.code, .badRequest)
                XCTAssertFalse("\(error)".contains("hunter2"))
            }
        }
        let bad = try XCTUnwrap(PostgresStore.refusal(conninfo: "host=/tmp dbname='hunter2"))
        XCTAssertFalse(bad.contains("hunter2"), bad)
        for fine in [
            "host=/run/postgresql dbname=swiped", "postgresql://swiped@db.example/swiped?sslmode=verify-full",
            "password='' host=/tmp",
        ] {
            XCTAssertNil(PostgresStore.refusal(conninfo: fine), fine)
        }
    }

    func testStoresStartingTogetherCreateTheSchemaOnce() throws {
        let db = try SharedCluster.newNamedDatabase()
        let opened = Opened()
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            do {
                opened.add(try PostgresStore.open(conninfo: db.conninfo))
            } catch {
                opened.fail("\(error)")
            }
        }
        XCTAssertEqual(opened.failures, [])
        XCTAssertEqual(opened.stores.count, 4)
        XCTAssertEqual(opened.stores.filter(\.startup.seeded).count, 1, "seeded more than once")
        for s in opened.stores {
            XCTAssertEqual(s.latestSeq, 10)
            XCTAssertTrue(s.startupFields.contains { $0 == ("SCHEMA_VERSION", "3") })
            s.close()
        }
        let cluster = try SharedCluster.get()
        XCTAssertEqual(try cluster.psql("SELECT count(*) FROM swiped_events", database: db.name), "10")
        XCTAssertEqual(try cluster.psql("SELECT version FROM swiped_schema", database: db.name), "3")
        XCTAssertEqual(try cluster.psql("SELECT seq FROM swiped_head", database: db.name), "10")
        // One log, one id, kept by every daemon and every start.
        let id = try cluster.psql("SELECT log FROM swiped_identity", database: db.name)
        XCTAssertEqual(Set(opened.stores.map(\.logID)), [id])
        XCTAssertEqual(id.count, 32)
        let reopened = try PostgresStore.open(conninfo: db.conninfo)
        XCTAssertEqual(reopened.logID, id)
        XCTAssertTrue(reopened.startupFields.contains { $0 == ("LOG_ID", id) })
        reopened.close()
        // A database from before ids gets one at the next start, and keeps it.
        _ = try cluster.psql("DROP TABLE swiped_identity", database: db.name)
        let upgraded = try PostgresStore.open(conninfo: db.conninfo)
        let made = try cluster.psql("SELECT log FROM swiped_identity", database: db.name)
        XCTAssertEqual(upgraded.logID, made)
        XCTAssertNotEqual(made, id)
        upgraded.close()
        XCTAssertEqual(try PostgresStore.open(conninfo: db.conninfo).logID, made)

        // A schema newer than this build is refused, the database untouched.
        _ = try cluster.psql("UPDATE swiped_schema SET version = 4", database: db.name)
        XCTAssertThrowsError(try PostgresStore.open(conninfo: db.conninfo)) { error in
            XCTAssertTrue("\(error)".contains("schema version 4"), "\(error)")
        }
        XCTAssertEqual(try cluster.psql("SELECT version FROM swiped_schema", database: db.name), "4")
    }

    /// Start-up folds the log (no snapshot here) and refuses one it cannot fold, saying which
    /// event and why: a payload that does not decode, an empty one, then a missing position.
    func testADamagedLogIsRefusedAtStartNamingTheEvent() throws {
        let db = try SharedCluster.newNamedDatabase()
        let cluster = try SharedCluster.get()
        let store = try PostgresStore.open(conninfo: db.conninfo)
        for movie in ["seven", "matrix", "seven"] {
            XCTAssertNotNil(store.submitOK(MovieCommand(.toggleWatched(movie: movie))))
        }
        store.close()
        let reopened = try PostgresStore.open(conninfo: db.conninfo)
        XCTAssertEqual(reopened.latestSeq, 13)
        XCTAssertEqual(reopened.startup.replayed, 13)
        reopened.close()
        _ = try cluster.psql(
            "UPDATE swiped_events SET payload = '\\x0000'::bytea WHERE seq = 12", database: db.name)
        XCTAssertThrowsError(try PostgresStore.open(conninfo: db.conninfo)) { error in
            XCTAssertEqual((error as? StoreError)?.code, .storage, "\(error)")
            XCTAssertTrue(
                "\(error)".contains("event 12 in swiped_events cannot be decoded: truncated"), "\(error)")
        }
        // Every event the store writes records its movie: an empty payload is damage too.
        _ = try cluster.psql("UPDATE swiped_events SET payload = ''::bytea WHERE seq = 12", database: db.name)
        XCTAssertThrowsError(try PostgresStore.open(conninfo: db.conninfo)) { error in
            XCTAssertTrue(
                "\(error)".contains(
                    "event 12 in swiped_events cannot be decoded: the payload does not record the movie"),
                "\(error)")
        }
        _ = try cluster.psql("DELETE FROM swiped_events WHERE seq = 12", database: db.name)
        XCTAssertThrowsError(try PostgresStore.open(conninfo: db.conninfo)) { error in
            XCTAssertEqual((error as? StoreError)?.code, .storage, "\(error)")
            XCTAssertTrue("\(error)".contains("gap in swiped_events: event 13 follows 11"), "\(error)")
        }
    }

    /// Each commit's flush writes a WAL record with pg_logical_emit_message (docs/postgres.md,
    /// "The lock is not held through the flush"); a database that does not let the role run it
    /// is found when the store opens, with what to grant, not at its first commit.
    func testARoleThatMayNotFlushIsRefusedAtStartWithWhatToGrant() throws {
        let cluster = try SharedCluster.get()
        try cluster.psql("CREATE ROLE noflush LOGIN")
        try cluster.createDatabase("noflush", owner: "noflush")
        let conninfo = "host=\(cluster.socketDirectory) dbname=noflush user=noflush"
        // As the role may: it opens, and commits.
        let fine = try PostgresStore.open(conninfo: conninfo)
        XCTAssertEqual(fine.submitOK(MovieCommand(.toggleWatched(movie: "seven")))?.seq, 11)
        fine.close()
        try cluster.psql(
            "REVOKE EXECUTE ON FUNCTION pg_logical_emit_message(boolean, text, text) FROM PUBLIC",
            database: "noflush")
        for durability in [Durability.full, .normal] {
            XCTAssertThrowsError(try PostgresStore.open(conninfo: conninfo, durability: durability)) {
                error in
                let e = error as? StoreError
                XCTAssertEqual(e?.code, .storage, "\(error)")
                XCTAssertTrue(e?.message.contains("pg_logical_emit_message") ?? false, "\(error)")
                XCTAssertTrue(e?.message.contains("permission denied") ?? false, "\(error)")
                XCTAssertTrue(e?.message.contains("the role needs EXECUTE on it") ?? false, "\(error)")
            }
        }
        XCTAssertEqual(try cluster.psql("SELECT seq FROM swiped_head", database: "noflush"), "11")
    }

    /// The notification goes in a transaction of its own after the flush's; when PostgreSQL
    /// refuses it (here the role may not run pg_notify), the commit before it is on disk all
    /// the same: the command is answered `ok`, one warning says what happens instead, and
    /// another store reads the events on its safety-net timer.
    /// A database of its own, and a role of that name that owns it, where nobody may run
    /// `pg_notify`: a store there commits without waking the others.
    private func databaseWithoutNotifications(_ name: String) throws -> String {
        let cluster = try SharedCluster.get()
        try cluster.psql("CREATE ROLE \(name) LOGIN")
        try cluster.createDatabase(name, owner: name)
        try cluster.psql("REVOKE EXECUTE ON FUNCTION pg_notify(text, text) FROM PUBLIC", database: name)
        return "host=\(cluster.socketDirectory) dbname=\(name) user=\(name)"
    }

    func testARefusedNotificationStillAnswersTheCommitAndWarnsOnce() throws {
        let cluster = try SharedCluster.get()
        let conninfo = try databaseWithoutNotifications("nonotify")
        let a = try PostgresStore.open(conninfo: conninfo)
        defer { a.close() }
        let b = try PostgresStore.open(conninfo: conninfo)
        defer { b.close() }
        var notes: [StoreNote] = []
        var seqs: [UInt64] = []
        for (i, movie) in ["seven", "matrix", "seven"].enumerated() {
            a.submit(MovieCommand(.toggleWatched(movie: movie)), token: UInt64(i + 1))
            let c = a.settle(results: 1)
            notes += c.notes
            seqs += c.commands.compactMap { try? $0.result.get().seq }
        }
        XCTAssertEqual(seqs, [11, 12, 13])
        XCTAssertEqual(notes.map(\.level), [.warning], "\(notes)")
        XCTAssertTrue(
            notes.first?.message.hasPrefix("notifying the other daemons failed") ?? false, "\(notes)")
        XCTAssertTrue(notes.first?.reason.contains("pg_notify") ?? false, "\(notes)")
        var seen: [UInt64] = []
        let deadline = Date().addingTimeInterval(4)
        while seen.count < 3 && Date() < deadline {
            var p = pollfd(fd: b.completionFD, events: Int16(POLLIN), revents: 0)
            _ = poll(&p, 1, 50)
            seen += b.completions().committed.map(\.seq)
        }
        XCTAssertEqual(seen, [11, 12, 13])
        XCTAssertEqual(try cluster.psql("SELECT seq FROM swiped_head", database: "nonotify"), "13")
    }

    /// The safety net reads on time however the store's thread is kept busy with `history`
    /// reads, none of which reads past what the store has: woken by one every 20 ms (a timer
    /// restarted at each wake-up would never fire), or never idle, 50 more asked every 1 ms
    /// while fewer than 400 are unanswered, so that more wait whenever the thread has answered
    /// what it took (a thread that looked for what is due only when idle would never look). A's
    /// notifications are refused, so B learns of A's events by the safety net's read alone.
    func testTheSafetyNetReadsOnTimeWhileReadsKeepTheStoreBusy() throws {
        let conninfo = try databaseWithoutNotifications("unheard")
        let a = try PostgresStore.open(conninfo: conninfo)
        defer { a.close() }
        let b = try PostgresStore.open(conninfo: conninfo, safetyNetMillis: 200)
        defer { b.close() }
        var asked: UInt64 = 0
        var answered: UInt64 = 0
        for (seq, (chunk, most, pause)) in [
            (UInt64(11), (UInt64(1), UInt64(1), UInt32(20_000))), (12, (50, 400, 1_000)),
        ] {
            XCTAssertEqual(a.submitOK(MovieCommand(.toggleWatched(movie: "seven")))?.seq, seq)
            var seen: [UInt64] = []
            let before = answered
            let start = Date()
            while seen.isEmpty && Date().timeIntervalSince(start) < 3 {
                for _ in 0..<min(chunk, most - (asked - answered)) {
                    asked += 1
                    b.read(.events(after: 9, limit: 1), token: asked)
                }
                usleep(pause)
                let c = b.completions()
                seen += c.committed.map(\.seq)
                answered += UInt64(c.reads.count)
            }
            let pages = answered - before
            XCTAssertEqual(seen, [seq], "after \(pages) pages read, \(chunk) asked every \(pause) µs")
            XCTAssertGreaterThan(pages, 3 * most, "the reads did not keep the store busy")
        }
    }

    /// An idle store writes nothing: its safety-net read, every second, finds nothing and so
    /// flushes nothing (a flush is a WAL record and a wait for the disk; it follows only a read
    /// that found events). On a cluster of its own, without autovacuum and at `wal_level =
    /// minimal`, so that nothing else writes WAL meanwhile (at `replica` the background writer
    /// logs the running transactions 15 s after the server starts, which a slow machine could
    /// bring into the window measured).
    func testAnIdleStoreWritesNothingToTheWAL() throws {
        let cluster = try PostgresCluster(
            database: "idle",
            settings: ["autovacuum": "off", "wal_level": "minimal", "max_wal_senders": "0"],
            prefix: "swiped-pgidle")
        defer { cluster.destroy() }
        let store = try PostgresStore.open(conninfo: cluster.conninfo)
        defer { store.close() }
        XCTAssertEqual(store.submitOK(MovieCommand(.toggleWatched(movie: "seven")))?.seq, 11)
        let lsn = { try cluster.psql("SELECT pg_current_wal_insert_lsn()") }
        // After the first safety-net read (which may prune the head's old row version, once).
        usleep(1_300_000)
        let before = try lsn()
        usleep(3_300_000)
        XCTAssertEqual(try lsn(), before, "an idle store wrote WAL")
    }

    /// A store listens for the other daemons' notifications only while it is quiet: its
    /// transactions read their events under the head's lock anyway, and a notification would
    /// wake its backend and its thread for nothing (docs/postgres.md, "Listening only while
    /// quiet"). Its transaction stops it; a while without one starts it again, and a read then
    /// finds what came meanwhile. The safety net is a minute here: what B learns came by a
    /// notification or by that read.
    func testAStoreListensOnlyWhileQuietAndReadsWhatCameMeanwhile() throws {
        let db = try SharedCluster.newNamedDatabase()
        let a = try PostgresStore.open(conninfo: db.conninfo, safetyNetMillis: 60_000)
        defer { a.close() }
        // Half a second of quiet before B listens again: long enough to see it not listening.
        let b = try PostgresStore.open(conninfo: db.conninfo, safetyNetMillis: 60_000, relistenMillis: 500)
        defer { b.close() }
        func heard(_ count: Int) -> [UInt64] {
            b.collect(until: { $0.committed.count >= count }, seconds: 10).committed.map(\.seq)
        }
        XCTAssertTrue(b.worker.isListening)
        XCTAssertEqual(a.submitOK(MovieCommand(.toggleWatched(movie: "seven")))?.seq, 11)
        XCTAssertEqual(heard(1), [11], "a quiet store is notified")
        var seq: UInt64 = 11
        for _ in 0..<3 {
            b.submit(MovieCommand(.toggleWatched(movie: "matrix")), token: 1)
            let own = b.settle(results: 1)
            seq += 1
            XCTAssertEqual(try own.commands.first?.result.get().seq, seq)
            XCTAssertEqual(own.committed.map(\.seq), [seq])
            XCTAssertFalse(b.worker.isListening, "a transaction leaves its store not listening")
            // Committed while B does not listen: B reads it once it listens again.
            XCTAssertEqual(a.submitOK(MovieCommand(.toggleWatched(movie: "seven")))?.seq, seq + 1)
            seq += 1
            XCTAssertEqual(heard(1), [seq])
            XCTAssertTrue(b.worker.isListening)
            XCTAssertTrue(b.stateCopy == a.stateCopy, "B's state at \(b.latestSeq), A's at \(a.latestSeq)")
        }
        // Quiet and listening again: notified, as at first.
        XCTAssertEqual(a.submitOK(MovieCommand(.toggleWatched(movie: "seven")))?.seq, seq + 1)
        XCTAssertEqual(heard(1), [seq + 1])
    }

    func testAnotherStoresEventsArriveInOrderAndDecisionsFoldThem() throws {
        let db = try SharedCluster.newNamedDatabase()
        let a = try PostgresStore.open(conninfo: db.conninfo)
        defer { a.close() }
        let b = try PostgresStore.open(conninfo: db.conninfo)
        defer { b.close() }
        var written: [CommittedEvent] = []
        for i in 0..<20 {
            written +=
                b.submitOK(MovieCommand(.toggleWatched(movie: i % 2 == 0 ? "seven" : "matrix"))).map { [$0] }
                ?? []
        }
        let keyed = try XCTUnwrap(b.submitOK(MovieCommand(.add(title: "Alien", image: nil), key: "alien")))
        written.append(keyed)
        // A learns them by NOTIFY (or its 1 s safety net), in order, each once.
        var seen: [CommittedEvent] = []
        let deadline = Date().addingTimeInterval(5)
        while seen.count < written.count && Date() < deadline {
            var p = pollfd(fd: a.completionFD, events: Int16(POLLIN), revents: 0)
            _ = poll(&p, 1, 100)
            seen += a.completions().committed
        }
        XCTAssertEqual(seen, written)
        XCTAssertEqual(a.stateCopy, b.stateCopy)
        // A's decisions fold B's events: a toggle of seven on A is the 11th, watched again.
        let mine = try XCTUnwrap(a.submitOK(MovieCommand(.toggleWatched(movie: "seven"), expect: 29)))
        XCTAssertEqual(mine.seq, 32)
        XCTAssertEqual(mine.movie.watched, true)
        // B's key holds on A: a replay, nothing written.
        let replay = a.outcome(MovieCommand(.add(title: "Alien", image: nil), key: "alien"))
        XCTAssertEqual(replay?.replayed, true)
        XCTAssertEqual(try replay?.result.get(), keyed)
        // An add of the same title on both gives two ids.
        a.submit(MovieCommand(.add(title: "Heat", image: nil)), token: 1)
        b.submit(MovieCommand(.add(title: "Heat", image: nil)), token: 1)
        let ids = [a.settle(results: 1), b.settle(results: 1)].compactMap {
            try? $0.commands.first?.result.get().movie.id
        }
        XCTAssertEqual(Set(ids), ["heat", "heat_2"])
        let cluster = try SharedCluster.get()
        XCTAssertEqual(try cluster.psql("SELECT count(*) FROM swiped_events", database: db.name), "34")
    }

    func testAStoreMoreThanAPageBehindReadsEverythingUnderTheLockBeforeItDecides() throws {
        let db = try SharedCluster.newNamedDatabase()
        let a = try PostgresStore.open(conninfo: db.conninfo)
        defer { a.close() }
        // Another writer takes the head's lock and appends more than a page of toggles of seven
        // (the store's own append statement, each event with its movie-after payload).
        let other = try PGConnection(db.conninfo, durability: .full)
        _ = try other.execute(
            PostgresStoreTests.held + "BEGIN; SELECT seq FROM swiped_head WHERE id = 1 FOR UPDATE")
        var state = a.stateCopy
        let count = PostgresSchema.page + 5
        var seqs: [Int64] = []
        var payloads: [[UInt8]] = []
        for _ in 0..<count {
            let event = try state.decide(MovieCommand(.toggleWatched(movie: "seven")))
            let seq = state.lastSeq + 1
            let movie = try XCTUnwrap(state.apply(event, seq: seq))
            seqs.append(Int64(seq))
            payloads.append(event.payload(after: movie))
        }
        let texts = { (s: String) in [String?](repeating: s, count: count) }
        let nulls = [String?](repeating: nil, count: count)
        _ = try other.run([
            (
                .append,
                [
                    .int64s(seqs), .texts(texts("seven")), .texts(texts("watched-toggled")),
                    .byteas(payloads),
                    .int64s(seqs.map { _ in 0 }), .texts(nulls), .texts(nulls), .texts(nulls),
                    .int64(Int64(state.lastSeq)),
                ]
            )
        ])
        // A's command waits for that lock (seen in pg_locks), so A's transaction, not a catch-up,
        // is what reads them: a page, then the rest, then it decides against all of them.
        a.submit(MovieCommand(.toggleWatched(movie: "seven")), token: 1)
        a.flush()
        XCTAssertEqual(try waitingLocks(db.name), "transactionid", "A waits for the row lock")
        _ = try other.execute("COMMIT")
        let done = a.settle(results: 1)
        let mine = try XCTUnwrap(try done.commands.first?.result.get())
        XCTAssertEqual(mine.seq, UInt64(10 + count + 1))
        XCTAssertEqual(mine.movie.watched, state.movie("seven")?.watched == false)
        XCTAssertEqual(a.stateCopy.lastSeq, UInt64(10 + count + 1))
        XCTAssertEqual(done.committed.count, count + 1)
        XCTAssertEqual(done.committed.map(\.seq), Array(11...UInt64(10 + count + 1)))
    }

    /// Another store's event, read under the lock by a busy store's transaction, reaches that
    /// store's loop while its own append still waits (here for a session that holds
    /// swiped_events): the WAL was on disk past it (its own store's flush), so it does not wait
    /// for this transaction's flush.
    func testAnotherStoresEventOnDiskIsHandedOverBeforeThisTransactionsFlush() throws {
        let (b, blocker, db) = try busyStoreBlockedAfterReadingAnotherStoresEvent()
        defer { b.close() }
        XCTAssertEqual(b.collect(until: { $0.committed.count >= 1 }).committed.map(\.seq), [12])
        XCTAssertEqual(b.completions(), Completions(), "its own command waits for its append")
        _ = try blocker.execute("ROLLBACK")
        let done = b.settle(results: 1)
        XCTAssertEqual(try done.commands.first?.result.get().seq, 13)
        XCTAssertEqual(done.committed.map(\.seq), [13])
        XCTAssertEqual(try SharedCluster.get().psql("SELECT seq FROM swiped_head", database: db), "13")
    }

    /// The connection breaks after that handover, while the append waits (its backend
    /// terminated): the store's own command, decided and folded but not committed, is in doubt,
    /// not found in the log, and decided again at the next position after what the loop has.
    /// (Handed over, the store once counted its own folded events as what the loop had: it read
    /// on after them and handed the loop a gap, which stopped the daemon.)
    func testAConnectionLostAfterAnEarlyHandOverGoesOnFromWhatTheLoopHas() throws {
        let (b, blocker, db) = try busyStoreBlockedAfterReadingAnotherStoresEvent()
        defer { b.close() }
        XCTAssertEqual(b.collect(until: { $0.committed.count >= 1 }).committed.map(\.seq), [12])
        let cluster = try SharedCluster.get()
        XCTAssertEqual(
            try cluster.psql(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_locks WHERE NOT granted", database: db),
            "1")
        _ = try blocker.execute("ROLLBACK")
        let done = b.settle(results: 1)
        XCTAssertEqual(try done.commands.first?.result.get().seq, 13)
        XCTAssertEqual(done.committed.map(\.seq), [13])
        XCTAssertEqual(b.stateCopy.lastSeq, 13)
        XCTAssertEqual(try cluster.psql("SELECT seq FROM swiped_head", database: db), "13")
    }

    /// The same, with the WAL's flushed position read as 0 (a fault of the test's): the event
    /// waits for the transaction's own flush, and comes with its own commit, first.
    func testAnotherStoresEventNotKnownOnDiskWaitsForThisTransactionsFlush() throws {
        let faults = PostgresFaults()
        faults.reportWALUnflushed(true)
        let (b, blocker, _) = try busyStoreBlockedAfterReadingAnotherStoresEvent(commitPath: faults)
        defer { b.close() }
        XCTAssertEqual(b.collect(until: { _ in false }, seconds: 0.5), Completions())
        _ = try blocker.execute("ROLLBACK")
        let done = b.settle(results: 1)
        XCTAssertEqual(try done.commands.first?.result.get().seq, 13)
        XCTAssertEqual(done.committed.map(\.seq), [12, 13])
    }

    /// A daemon of an earlier build takes only the head's row lock. Its commit can then come
    /// after this transaction read where the WAL ended, without waiting for the disk; the head
    /// read there and under the row lock differ, and its event waits for this transaction's
    /// flush, with its own commit.
    func testAnEarlierBuildsCommitBetweenTheLocksWaitsForThisTransactionsFlush() throws {
        let db = try SharedCluster.newNamedDatabase()
        let a = try PostgresStore.open(conninfo: db.conninfo, safetyNetMillis: 60_000, relistenMillis: 60_000)
        defer { a.close() }
        XCTAssertEqual(a.submitOK(MovieCommand(.toggleWatched(movie: "matrix")))?.seq, 11)
        // The earlier build: the row lock, its append (seq 12), its COMMIT not waiting for the
        // disk (as that build's appends do), sent once A's transaction waits for the row lock.
        let other = try PGConnection(db.conninfo, durability: .full)
        _ = try other.execute(
            PostgresStoreTests.held + "BEGIN; SELECT seq FROM swiped_head WHERE id = 1 FOR UPDATE")
        var state = a.stateCopy
        let event = try state.decide(MovieCommand(.toggleWatched(movie: "seven")))
        let movie = try XCTUnwrap(state.apply(event, seq: 12))
        _ = try other.run([
            (
                .append,
                [
                    .int64s([12]), .texts(["seven"]), .texts(["watched-toggled"]),
                    .byteas([event.payload(after: movie)]), .int64s([0]), .texts([nil]), .texts([nil]),
                    .texts([nil]), .int64(12),
                ]
            )
        ])
        // Everything so far on disk: A's WAL end is then on disk at once, and only the earlier
        // build's COMMIT, after it, is not.
        let flusher = try PGConnection(db.conninfo, durability: .full)
        _ = try flusher.execute("SELECT pg_logical_emit_message(true, 'test', '')")
        a.submit(MovieCommand(.toggleWatched(movie: "matrix")), token: 1)
        a.flush()
        XCTAssertEqual(try waitingLocks(db.name), "transactionid", "A waits for the row lock")
        // A session that holds swiped_events, waiting for the earlier build's append, then A's
        // append waits for it.
        let blocker = try PGConnection(db.conninfo, durability: .full)
        let locked = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var lockFailure: (any Error)?  // read after `locked` is signalled
        let blockerThread = Thread {
            do {
                _ = try blocker.execute(
                    PostgresStoreTests.held + "BEGIN; LOCK TABLE swiped_events IN EXCLUSIVE MODE")
            } catch {
                lockFailure = error
            }
            locked.signal()
        }
        blockerThread.start()
        _ = try waitingLocks(db.name) { $0 != "transactionid" }
        _ = try other.execute("COMMIT")
        XCTAssertEqual(locked.wait(timeout: .now() + 5), .success)
        XCTAssertNil(lockFailure)
        let appendWaits = try waitingLocks(db.name) { $0 == "swiped_events" }
        XCTAssertEqual(appendWaits, "swiped_events", "A's append waits for the session")
        XCTAssertEqual(a.collect(until: { _ in false }, seconds: 0.5), Completions())
        _ = try blocker.execute("ROLLBACK")
        let done = a.settle(results: 1)
        XCTAssertEqual(try done.commands.first?.result.get().seq, 13)
        XCTAssertEqual(done.committed.map(\.seq), [12, 13])
    }

    /// What waits for a lock in `database` (each waiting lock's table, or its type when it is
    /// not a table's: "transactionid" for a row lock), polled until `done` says so of it (by
    /// default: something waits), or 5 s passed.
    private func waitingLocks(_ database: String, until done: (String) -> Bool = { !$0.isEmpty }) throws
        -> String
    {
        let cluster = try SharedCluster.get()
        let deadline = Date().addingTimeInterval(5)
        while true {
            let waiting = try cluster.psql(
                "SELECT string_agg(coalesce(relation::regclass::text, locktype), ',') FROM pg_locks WHERE NOT granted",
                database: database)
            if done(waiting) || Date() >= deadline { return waiting }
            usleep(20_000)
        }
    }

    /// Store B, committed once (so not listening, and not again for a minute), then store A's
    /// toggle (seq 12, on disk when A answered it), the WAL flushed, then a session holding swiped_events in
    /// EXCLUSIVE mode (reads go on, inserts wait), then a command on B: B's transaction has
    /// read seq 12 under the lock, and its append waits for the session (seen in pg_locks).
    private func busyStoreBlockedAfterReadingAnotherStoresEvent(
        commitPath: any PGCommitPath = PGDirectCommit()
    ) throws -> (PostgresStore, PGConnection, String) {
        let db = try SharedCluster.newNamedDatabase()
        let a = try PostgresStore.open(conninfo: db.conninfo, safetyNetMillis: 60_000)
        defer { a.close() }
        let b = try PostgresStore.open(
            conninfo: db.conninfo, safetyNetMillis: 60_000, relistenMillis: 60_000, commitPath: commitPath)
        XCTAssertEqual(b.submitOK(MovieCommand(.toggleWatched(movie: "matrix")))?.seq, 11)
        XCTAssertFalse(b.worker.isListening)
        XCTAssertEqual(a.submitOK(MovieCommand(.toggleWatched(movie: "seven")))?.seq, 12)
        // A's notification committed after its flush, without waiting for the disk (the WAL
        // writer writes it within 0.6 s): a record of its own after every event, which B's
        // transaction would wait for. Under load, the next daemon's flush writes it; here
        // the session flushes the WAL.
        let blocker = try PGConnection(db.conninfo, durability: .full)
        _ = try blocker.execute("SELECT pg_logical_emit_message(true, 'test', '')")
        _ = try blocker.execute(PostgresStoreTests.held + "BEGIN; LOCK TABLE swiped_events IN EXCLUSIVE MODE")
        b.submit(MovieCommand(.toggleWatched(movie: "matrix")), token: 1)
        b.flush()
        XCTAssertEqual(try waitingLocks(db.name), "swiped_events", "B's append waits for the session")
        return (b, blocker, db.name)
    }

    /// `status`'s latest snapshot is the one the store saved last while serving.
    func testTheMetersSayWhichSnapshotWasSavedLast() throws {
        let db = try SharedCluster.newNamedDatabase()
        let meters = CommitMeters()
        let store = try PostgresStore.open(conninfo: db.conninfo, snapshotEvery: 3, meters: meters)
        defer { store.close() }
        let loaded = store.startup.snapshotSeq
        for _ in 0..<7 { _ = store.submitOK(MovieCommand(.toggleWatched(movie: "seven"))) }
        // The store thread saves a snapshot after answering the commit: wait for it to settle.
        var saved = ""
        let deadline = Date().addingTimeInterval(5)
        repeat {
            saved = try SharedCluster.get().psql("SELECT max(seq) FROM swiped_snapshots", database: db.name)
            if saved == "\(meters.latestSnapshotSeq(loaded: loaded))" && saved != "\(loaded)" { break }
            usleep(20_000)
        } while Date() < deadline
        XCTAssertEqual("\(meters.latestSnapshotSeq(loaded: loaded))", saved)
        XCTAssertGreaterThan(meters.latestSnapshotSeq(loaded: loaded), 13)
    }

    /// A store that replayed more than `snapshotEvery` events at start saves a snapshot at once,
    /// also when it is closed right after it opened: the next start folds from it. (It used to
    /// save it after its first wait for a notification, up to a second later; a daemon stopped
    /// sooner left none, and the next start replayed the whole log again.)
    func testALongReplayIsSnapshottedEvenWhenTheStoreClosesAtOnce() throws {
        let db = try SharedCluster.newNamedDatabase()
        do {
            let store = try PostgresStore.open(conninfo: db.conninfo, snapshotEvery: 1_000_000)
            for _ in 0..<30 { _ = store.submitOK(MovieCommand(.toggleWatched(movie: "matrix"))) }
            store.close()
        }
        for _ in 0..<3 {
            do {
                let store = try PostgresStore.open(conninfo: db.conninfo, snapshotEvery: 20)
                store.close()
            }
            let again = try PostgresStore.open(conninfo: db.conninfo, snapshotEvery: 20)
            XCTAssertEqual(again.startup.snapshotSeq, 40)
            XCTAssertEqual(again.startup.replayed, 0)
            again.close()
            _ = try SharedCluster.get().psql("DELETE FROM swiped_snapshots", database: db.name)
        }
    }

    func testACommitWhoseAnswerWasLostIsAnsweredFromTheLog() throws {
        let db = try SharedCluster.newNamedDatabase()
        let faults = PostgresFaults()
        let store = try PostgresStore.open(conninfo: db.conninfo, commitPath: faults)
        defer { store.close() }
        faults.breakNextCommit(.afterCommitSent)
        store.submit(MovieCommand(.toggleWatched(movie: "seven"), key: "k"), token: 1)
        store.submit(MovieCommand(.remove(movie: "matrix")), token: 2)
        let c = store.settle(results: 2)
        XCTAssertEqual(try c.resultByToken[1]?.get().seq, 11)
        XCTAssertEqual(try c.resultByToken[2]?.get().seq, 12)
        XCTAssertEqual(c.committed.map(\.seq), [11, 12])
        XCTAssertTrue(c.notes.contains { $0.message.hasPrefix("PostgreSQL connection lost") }, "\(c.notes)")
        let cluster = try SharedCluster.get()
        XCTAssertEqual(
            try cluster.psql(
                "SELECT string_agg(seq::text || kind, ',' ORDER BY seq) FROM swiped_events WHERE seq > 10",
                database: db.name),
            "11watched-toggled,12removed", "written once")
        XCTAssertEqual(store.submitOK(MovieCommand(.toggleWatched(movie: "seven")))?.seq, 13)
    }

    func testACommitThatNeverReachedTheServerIsDecidedAgain() throws {
        let db = try SharedCluster.newNamedDatabase()
        let faults = PostgresFaults()
        let store = try PostgresStore.open(conninfo: db.conninfo, commitPath: faults)
        defer { store.close() }
        faults.breakNextCommit(.beforeCommit)
        store.submit(MovieCommand(.toggleWatched(movie: "seven"), expect: 7), token: 1)
        let c = store.settle(results: 1)
        XCTAssertTrue(c.notes.contains { $0.message.hasPrefix("PostgreSQL connection lost") }, "\(c.notes)")
        let ok = try? c.commands.first?.result.get()
        XCTAssertEqual(ok?.seq, 11)
        XCTAssertEqual(ok?.movie.watched, true)
        let cluster = try SharedCluster.get()
        XCTAssertEqual(try cluster.psql("SELECT count(*) FROM swiped_events", database: db.name), "11")
        XCTAssertEqual(store.latestSeq, 11)
    }

    func testWhileTheDatabaseIsDownWritesAreUnavailableAndReadsGoOn() throws {
        let db = try SharedCluster.newNamedDatabase()
        let store = try PostgresStore.open(conninfo: db.conninfo)
        defer { store.close() }
        XCTAssertNotNil(store.submitOK(MovieCommand(.toggleWatched(movie: "seven"))))
        let cluster = try SharedCluster.get()
        try cluster.stopImmediate()
        var notes = waitFor(store) { $0.statusNote != nil }
        XCTAssertEqual(notes.map(\.message).first?.hasPrefix("PostgreSQL connection lost"), true, "\(notes)")
        XCTAssertTrue(store.statusNote?.hasPrefix("PostgreSQL unreachable since") ?? false)
        let refused = store.refusal(MovieCommand(.toggleWatched(movie: "seven")))
        XCTAssertEqual(refused?.code, .unavailable)
        XCTAssertEqual(store.movie("seven")?.watched, true, "the state is still served")
        store.read(.events(after: 0, limit: 5), token: 3)
        XCTAssertEqual(store.completions().reads.first.map { (try? $0.result.get()) == nil }, true)
        try cluster.start()
        notes = waitFor(store, seconds: 10) { $0.statusNote == nil }
        XCTAssertEqual(notes.map(\.message), ["PostgreSQL connection restored, catching up"])
        XCTAssertEqual(store.submitOK(MovieCommand(.toggleWatched(movie: "seven")))?.seq, 12)
    }

    /// Right after the server died, the store's idle connection may still read as connected
    /// (libpq reports the failed write as a result without SQLSTATE): a command sent then is
    /// `unavailable`, never `storage` ("refused").
    func testACommandSentJustAfterTheServerDiedIsUnavailableNeverStorage() throws {
        let db = try SharedCluster.newNamedDatabase()
        let store = try PostgresStore.open(conninfo: db.conninfo)
        defer { store.close() }
        XCTAssertNotNil(store.submitOK(MovieCommand(.toggleWatched(movie: "seven"))))
        let cluster = try SharedCluster.get()
        try cluster.stopImmediate()
        let result = store.outcome(MovieCommand(.toggleWatched(movie: "seven")))
        guard case .failure(let e) = result?.result else { return XCTFail("\(String(describing: result))") }
        XCTAssertEqual(e.code, .unavailable, e.message)
        // The loss is noted with the answer (the note comes first): waiting for the note's
        // end below would otherwise pass before it came, and the next command would meet the
        // reconnection's backoff.
        XCTAssertNotNil(store.statusNote)
        try cluster.start()
        _ = waitFor(store, seconds: 10) { $0.statusNote == nil }
        XCTAssertEqual(store.submitOK(MovieCommand(.toggleWatched(movie: "seven")))?.seq, 12)
    }

    func testFailuresThatMeanTheConnectionIsGone() {
        for state in ["", "08006", "08003", "08000", "57P01", "57P02", "57P03"] {
            XCTAssertTrue(PGConnection.meansLost(sqlState: state), state)
        }
        for state in ["23505", "40001", "55P03", "57014", "42P01", "XX000"] {
            XCTAssertFalse(PGConnection.meansLost(sqlState: state), state)
        }
    }

    func testACommitStillInDoubtWhenTheStoreClosesIsAnsweredStorageNeverUnavailable() throws {
        let db = try SharedCluster.newNamedDatabase()
        let faults = PostgresFaults()
        let store = try PostgresStore.open(conninfo: db.conninfo, commitPath: faults)
        let cluster = try SharedCluster.get()
        // The connection breaks with the commit sent, and the database is gone before the
        // store can reconnect and find out.
        faults.breakNextCommit(.afterCommitSent) {
            do { try cluster.stopImmediate() } catch { XCTFail("stopping the cluster: \(error)") }
        }
        store.submit(MovieCommand(.toggleWatched(movie: "seven"), key: "doubt"), token: 1)
        _ = waitFor(store) { $0.statusNote != nil }
        XCTAssertEqual(store.pendingCount, 1, "answered while in doubt")
        XCTAssertEqual(store.refusal(MovieCommand(.toggleWatched(movie: "matrix")))?.code, .unavailable)
        let began = Date()
        let c = store.close()
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(began), 4.5, "gave up before 5 s")
        XCTAssertEqual(c.commands.map(\.token), [1])
        guard case .failure(let e) = c.commands.first?.result else { return XCTFail("\(c)") }
        XCTAssertEqual(e.code, .storage)
        XCTAssertTrue(e.message.hasPrefix("the outcome is unknown"), e.message)
        // Its fate is the database's: a store opened later answers the key from the log, or
        // writes it now, once either way.
        try cluster.start()
        let later = try PostgresStore.open(conninfo: db.conninfo)
        defer { later.close() }
        let again = later.outcome(MovieCommand(.toggleWatched(movie: "seven"), key: "doubt"))
        XCTAssertEqual(try again?.result.get().seq, 11)
        XCTAssertEqual(
            try cluster.psql("SELECT count(*) FROM swiped_events WHERE key = 'doubt'", database: db.name), "1"
        )
    }

    /// Finding 2 of docs/postgres.md ("Faults, checked"): a store's session that holds the
    /// appends' lock in a transaction and goes silent (its daemon cut off after its first round
    /// trip) is ended by the server after `idleInTransactionSeconds`, which the store's session
    /// sets, and another store's write goes through, before its own round trip's bound (5 s).
    /// Without it the write waited for as long as the silent session lasted.
    func testASessionThatWentSilentHoldingTheLockIsEndedAndWritesGoOn() throws {
        let db = try SharedCluster.newNamedDatabase()
        let store = try PostgresStore.open(conninfo: db.conninfo)
        defer { store.close() }
        let silent = try PGConnection(db.conninfo, durability: .full)
        _ = try silent.execute("BEGIN; SELECT pg_advisory_xact_lock(\(PostgresSchema.appendLock))")
        let began = Date()
        store.submit(MovieCommand(.toggleWatched(movie: "seven")), token: 1)
        store.flush()
        let c = store.collect(until: { !$0.commands.isEmpty }, seconds: 10)
        XCTAssertEqual(try c.commands.first?.result.get().seq, 11)
        XCTAssertLessThan(Date().timeIntervalSince(began), 5)
        XCTAssertThrowsError(try silent.execute("SELECT 1"), "the server ended the silent session")
    }

    /// A stop while the server does not answer (its session stopped with SIGSTOP, as a server
    /// behind a silent partition: nothing answers, not even the cancel) ends within the 5 s
    /// that a stop waits, the command in flight answered. It took the round trip's whole bound
    /// (8 s), and then a reconnection, before; in the fault harness 12–22 s.
    func testAStopWhileTheServerDoesNotAnswerEndsWithinFiveSeconds() throws {
        let db = try SharedCluster.newNamedDatabase()
        let store = try PostgresStore.open(conninfo: db.conninfo)
        XCTAssertNotNil(store.submitOK(MovieCommand(.toggleWatched(movie: "seven"))))
        let cluster = try SharedCluster.get()
        let pid = try XCTUnwrap(
            Int32(
                try cluster.psql(
                    "SELECT pid FROM pg_stat_activity WHERE datname = '\(db.name)' AND application_name = 'swiped'",
                    database: db.name)))
        XCTAssertEqual(kill(pid, SIGSTOP), 0)
        defer { kill(pid, SIGCONT) }
        store.submit(MovieCommand(.toggleWatched(movie: "seven")), token: 1)
        store.flush()
        usleep(500_000)
        let began = Date()
        let c = store.close()
        XCTAssertLessThan(Date().timeIntervalSince(began), 5.5)
        XCTAssertEqual(c.commands.map(\.token), [1])
        XCTAssertNil(try? c.commands.first?.result.get(), "not ok")
    }

    /// Every libpq call of the store thread is bounded by the round trip's clock (issue 40):
    /// a session whose server goes silent (its backend stopped with SIGSTOP, as behind a silent
    /// partition; on a Unix socket no TCP timeout ends it either) is given up within
    /// `cancelAfterNanos` + `lostAfterCancelNanos` (8 s), in the first pipeline's prepares
    /// after a reconnection (PQprepare waited for as long as the kernel let it: close to
    /// tcp_user_timeout, 15 s, over TCP) and in a COPY. Each runs on a thread of its own, so
    /// that the test fails, rather than hangs, when a call is not bounded.
    func testASilentServerIsGivenUpWithinTheBoundInPreparesAndCopies() throws {
        let db = try SharedCluster.newNamedDatabase()
        _ = try PostgresStore.open(conninfo: db.conninfo).close()  // the schema
        for what in ["prepare", "copy"] {
            let signal = PGStopSignal()
            let c = try PGConnection(db.conninfo, durability: .full, stopSignal: signal)
            let pid = try XCTUnwrap(
                Int32(try XCTUnwrap(c.execute("SELECT pg_backend_pid()").first?.rows.first?.first ?? nil)))
            XCTAssertEqual(kill(pid, SIGSTOP), 0)
            defer { kill(pid, SIGCONT) }
            let outcome = Outcome()
            let began = Date()
            let thread = Thread {
                let result: String
                do {
                    if what == "prepare" {
                        _ = try c.run([(.head, [])])
                    } else {
                        try c.copyOut("SELECT seq FROM swiped_events") { _ in true }
                    }
                    result = "answered"
                } catch {
                    result = "\(error)"
                }
                outcome.set(result, Date().timeIntervalSince(began))
            }
            thread.start()
            let deadline = Date().addingTimeInterval(12)
            while outcome.value == nil && Date() < deadline { usleep(50_000) }
            let (result, seconds) = try XCTUnwrap(outcome.value, "\(what): still waiting after 12 s")
            XCTAssertTrue(result.contains("lost"), "\(what): \(result)")
            XCTAssertGreaterThan(seconds, 7.5, what)
            XCTAssertLessThan(seconds, 9, what)
        }
    }

    /// Finding 3 of docs/postgres.md ("Faults, checked"): with several hosts, a first host that
    /// accepts the connection and closes it (a proxy or port forward whose server is gone)
    /// ended libpq's whole attempt, and the second host was never tried. The store connects
    /// to the hosts one at a time.
    func testAFirstHostThatAcceptsAndClosesIsPassedForTheNext() throws {
        let db = try SharedCluster.newNamedDatabase()
        let cluster = try SharedCluster.get()
        let dir = makeTemporaryDirectory(self, "pgclose")
        let listener = try AcceptAndClose(path: dir + "/.s.PGSQL.5432")
        defer { listener.stop() }
        let conninfo = "host=\(dir),\(cluster.socketDirectory) dbname=\(db.name) user=\(cluster.user)"
        let store = try PostgresStore.open(conninfo: conninfo)
        defer { store.close() }
        XCTAssertGreaterThan(listener.accepted, 0, "the first host was tried")
        XCTAssertEqual(store.submitOK(MovieCommand(.toggleWatched(movie: "seven")))?.seq, 11)
        XCTAssertThrowsError(try PostgresStore.open(conninfo: "host=\(dir),\(dir) dbname=\(db.name)")) {
            let e = $0 as? StoreError
            XCTAssertEqual(e?.code, .unavailable)
            XCTAssertTrue(e?.message.contains("closed the connection") ?? false, "\(String(describing: e))")
        }
    }

    /// A reconnection gives a silent first host (a partition, a powered-off primary: SYNs
    /// dropped) 2 s before it tries the next, not the 5 s of a start-up: attempts of 5 s left
    /// a healed link waiting up to 2 s for the kernel's next SYN (docs/postgres.md, "Faults,
    /// checked").
    func testAReconnectionGivesASilentFirstHostTwoSecondsNotFive() throws {
        let db = try SharedCluster.newNamedDatabase()
        let cluster = try SharedCluster.get()
        let host = try SilentTCPHost()
        defer { host.close() }
        let conninfo =
            "host=127.0.0.1,\(cluster.socketDirectory) port=\(host.port),5432 dbname=\(db.name) user=\(cluster.user)"
        // Refused at first (bound, not listening): the start-up passes it at once.
        let store = try PostgresStore.open(conninfo: conninfo)
        defer { store.close() }
        XCTAssertNotNil(store.submitOK(MovieCommand(.toggleWatched(movie: "seven"))))
        try host.goSilent()
        let cut = Date()
        _ = try cluster.psql(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = '\(db.name)'")
        _ = waitFor(store, seconds: 5) { $0.statusNote != nil }
        let notes = waitFor(store, seconds: 10) { $0.statusNote == nil }
        let took = Date().timeIntervalSince(cut)
        XCTAssertEqual(notes.map(\.message), ["PostgreSQL connection restored, catching up"])
        XCTAssertGreaterThan(took, 1.9, "the silent host had its 2 s")
        XCTAssertLessThan(took, 4, "connected through the second host after the first's 2 s, not 5")
        XCTAssertEqual(store.submitOK(MovieCommand(.toggleWatched(movie: "seven")))?.seq, 12)
    }

    /// A connect whose SYN is lost does not wait for the kernel to send it again: another
    /// attempt starts after each 0.5 s of silence, and the first to answer is kept, so a write
    /// after a partition heals waits at most half a second for a SYN. The kernel resends a
    /// SYN 1 s after the first, then 2 s later (exponential, as Debian 12's 6.1 does) or 1 s
    /// later (`tcp_syn_linear_timeouts`, newer kernels): healed at 1.2 s, the connection is
    /// made at 1.5 s by the attempt started then, at 2 s or 3 s by the kernel alone.
    func testAConnectWhoseSYNIsLostTriesAgainEveryHalfSecond() throws {
        let db = try SharedCluster.newNamedDatabase()
        let cluster = try SharedCluster.get()
        // The schema first: the timed part is the connection alone.
        try PostgresStore.open(conninfo: db.conninfo).close()
        let host = try SilentTCPHost()
        defer { host.close() }
        try host.goSilent()
        let began = Date()
        DispatchQueue.global().asyncAfter(deadline: .now() + 1.2) {
            host.heal(relayingTo: cluster.socketDirectory + "/.s.PGSQL.5432")
        }
        let connection = try PGConnection(
            "host=127.0.0.1 port=\(host.port) dbname=\(db.name) user=\(cluster.user)", durability: .full)
        // When the connection reached the host, not when the session was set up (a loaded
        // machine's server start-up would count then).
        let reached = try XCTUnwrap(host.firstRelayed).timeIntervalSince(began)
        XCTAssertGreaterThan(reached, 1.45, "every SYN before the heal was lost, and the next went at 1.5 s")
        XCTAssertLessThan(
            reached, 1.75, "the attempt started at 1.5 s, not the kernel's next SYN at 2 s or 3 s")
        XCTAssertEqual(try connection.execute("SELECT 1").first?.rows.first?.first, "1")
    }

    /// A `connect_timeout` that is not a whole number is refused as libpq refuses it (the
    /// non-blocking connect does not read it: the store does).
    func testAConnectTimeoutThatIsNotANumberIsRefused() throws {
        let cluster = try SharedCluster.get()
        XCTAssertThrowsError(
            try PGConnection(
                "host=\(cluster.socketDirectory) dbname=postgres user=\(cluster.user) connect_timeout=soon",
                durability: .full)
        ) {
            let e = $0 as? StoreError
            XCTAssertEqual(e?.code, .unavailable)
            let expected = "invalid integer value \"soon\" for connection option \"connect_timeout\""
            XCTAssertTrue(e?.message.contains(expected) ?? false, "\(String(describing: e))")
        }
    }

    /// While every host refuses at once, the store tries again at least once a second (the
    /// backoff's cap): what a write waits at most after the database is back, before the
    /// connect itself.
    func testWhileEveryHostRefusesTheStoreTriesAgainEverySecond() throws {
        let db = try SharedCluster.newNamedDatabase()
        let cluster = try SharedCluster.get()
        let dir = makeTemporaryDirectory(self, "pgback")
        // Every attempt tries this first: its accepts are the attempts.
        let counter = try AcceptAndClose(path: dir + "/.s.PGSQL.5432")
        defer { counter.stop() }
        let store = try PostgresStore.open(
            conninfo: "host=\(dir),\(cluster.socketDirectory) dbname=\(db.name) user=\(cluster.user)")
        defer { store.close() }
        _ = try cluster.psql(
            """
            ALTER DATABASE "\(db.name)" ALLOW_CONNECTIONS false;
            SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = '\(db.name)'
            """)
        _ = waitFor(store, seconds: 5) { $0.statusNote != nil }
        let lost = Date()
        // 50 ms doubling reaches the cap after about 1.6 s; then 4 s at the cap.
        Thread.sleep(forTimeInterval: 5.6)
        let late = counter.times.filter { $0 > lost.addingTimeInterval(1.6) }
        let gaps = zip(late, late.dropFirst()).map { $1.timeIntervalSince($0) }
        XCTAssertGreaterThanOrEqual(late.count, 3, "\(gaps)")
        XCTAssertLessThan(gaps.max() ?? 9, 1.3, "no wait longer than the 1 s cap: \(gaps)")
        _ = try cluster.psql("ALTER DATABASE \"\(db.name)\" ALLOW_CONNECTIONS true")
        let back = Date()
        _ = waitFor(store, seconds: 5) { $0.statusNote == nil }
        XCTAssertLessThan(Date().timeIntervalSince(back), 1.5)
        XCTAssertNotNil(store.submitOK(MovieCommand(.toggleWatched(movie: "seven"))))
    }

    func testADatabaseThatLostEventsThisStoreAppliedStopsIt() throws {
        let db = try SharedCluster.newNamedDatabase()
        let store = try PostgresStore.open(conninfo: db.conninfo)
        defer { store.close() }
        XCTAssertNotNil(store.submitOK(MovieCommand(.toggleWatched(movie: "seven"))))
        XCTAssertNotNil(store.submitOK(MovieCommand(.toggleWatched(movie: "seven"))))
        // As after a restore from an older backup: the log ends before this store's position.
        _ = try SharedCluster.get().psql(
            "DELETE FROM swiped_events WHERE seq > 11; UPDATE swiped_head SET seq = 11", database: db.name)
        let fatal = fatalReported(by: store, within: 5)
        XCTAssertEqual(fatal?.fatal, true)
        XCTAssertTrue(
            fatal?.message.contains("lost events this daemon applied") ?? false,
            "\(String(describing: fatal))")
        XCTAssertEqual(store.refusal(MovieCommand(.toggleWatched(movie: "seven")))?.fatal, true)
    }

    /// A log replaced while the store's connection was away (as `swiped import` does after the
    /// tables are dropped) is another history: the store stops on reconnection rather than
    /// catching up from its old seq onto its old state.
    func testALogReplacedWhileTheConnectionWasAwayStopsTheStore() throws {
        let db = try SharedCluster.newNamedDatabase()
        let store = try PostgresStore.open(conninfo: db.conninfo)
        defer { store.close() }
        XCTAssertNotNil(store.submitOK(MovieCommand(.toggleWatched(movie: "seven"))))
        let cluster = try SharedCluster.get()
        _ = try cluster.psql(
            """
            UPDATE swiped_identity SET log = 'another';
            SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid()
            """, database: db.name)
        let fatal = fatalReported(by: store, within: 10)
        XCTAssertEqual(fatal?.fatal, true)
        XCTAssertTrue(
            fatal?.message.contains("holds another log (another)") ?? false, "\(String(describing: fatal))")
        XCTAssertEqual(store.refusal(MovieCommand(.toggleWatched(movie: "seven")))?.fatal, true)
    }

    /// The fatal error the store reports within `seconds` (nil if none).
    private func fatalReported(by store: PostgresStore, within seconds: Double) -> StoreError? {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            var p = pollfd(fd: store.completionFD, events: Int16(POLLIN), revents: 0)
            _ = poll(&p, 1, 100)
            if let fatal = store.completions().fatal { return fatal }
        }
        return nil
    }

    /// Runs the store's loop until `done` holds (or `seconds` pass); the notes it reported.
    private func waitFor(
        _ store: PostgresStore, seconds: Double = 5, _ done: (PostgresStore) -> Bool
    ) -> [StoreNote] {
        var notes: [StoreNote] = []
        let deadline = Date().addingTimeInterval(seconds)
        while !done(store) && Date() < deadline {
            var p = pollfd(fd: store.completionFD, events: Int16(POLLIN), revents: 0)
            _ = poll(&p, 1, 50)
            notes += store.completions().notes
        }
        XCTAssertTrue(done(store), "not within \(seconds) s")
        return notes
    }
}

/// What a call on another thread came to, and after how long.
private final class Outcome: @unchecked Sendable {
    private let lock = NSLock()
    private var _value: (String, Double)?
    var value: (String, Double)? { lock.withLock { _value } }
    func set(_ result: String, _ seconds: Double) { lock.withLock { _value = (result, seconds) } }
}

/// Stores opened on several threads.
private final class Opened: @unchecked Sendable {
    private let lock = NSLock()
    private var _stores: [PostgresStore] = []
    private var _failures: [String] = []
    var stores: [PostgresStore] { lock.withLock { _stores } }
    var failures: [String] { lock.withLock { _failures } }
    func add(_ s: PostgresStore) { lock.withLock { _stores.append(s) } }
    func fail(_ f: String) { lock.withLock { _failures.append(f) } }
}

/// A Unix socket that accepts every connection and closes it at once.
private final class AcceptAndClose: @unchecked Sendable {
    private let fd: Int32
    private let lock = NSLock()
    private var stamps: [Date] = []
    private var stopped = false
    private let done = DispatchSemaphore(value: 0)

    var accepted: Int { lock.withLock { stamps.count } }
    /// When each connection was accepted.
    var times: [Date] { lock.withLock { stamps } }

    init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = unixAddress(path)
        let bound = withSockaddr(&address) { bind(fd, $0, $1.pointee) }
        guard fd >= 0, bound == 0, listen(fd, 8) == 0 else {
            throw NSError(domain: "AcceptAndClose", code: Int(errno))
        }
        Thread { [self] in
            while true {
                var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                _ = poll(&p, 1, 50)
                if lock.withLock({ stopped }) { break }
                guard p.revents != 0 else { continue }
                let c = accept(fd, nil, nil)
                if c >= 0 {
                    lock.withLock { stamps.append(Date()) }
                    close(c)
                }
            }
            done.signal()
        }.start()
    }

    func stop() {
        lock.withLock { stopped = true }
        done.wait()
        close(fd)
    }
}

/// A TCP port on 127.0.0.1 that first refuses connections (bound, not listening), then, after
/// `goSilent()`, drops every SYN without a word, as a partitioned or powered-off host does:
/// Linux drops a SYN to a listener whose accept queue is full.
private final class SilentTCPHost: @unchecked Sendable {  // fillers are set before another thread sees them
    private let fd: Int32
    private var fillers: [Int32] = []
    private let lock = NSLock()
    private var relayed: Date?
    let port: UInt16
    /// When the first connection after the heal was accepted.
    var firstRelayed: Date? { lock.withLock { relayed } }

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var address = loopback(port: 0)
        let bound = withSockaddr(&address) { bind(fd, $0, $1.pointee) == 0 ? getsockname(fd, $0, $1) : -1 }
        guard fd >= 0, bound == 0 else { throw NSError(domain: "SilentTCPHost", code: Int(errno)) }
        port = UInt16(bigEndian: address.sin_port)
    }

    /// A backlog of 1 is full with two connections never accepted (a backlog of 0 would count
    /// every SYN as a flood, and the fillers would need SYN cookies to get in).
    func goSilent() throws {
        guard listen(fd, 1) == 0 else { throw NSError(domain: "SilentTCPHost.listen", code: Int(errno)) }
        var address = loopback(port: port)
        for _ in 0..<2 {
            let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            fillers.append(filler)
            let connected = withSockaddr(&address) { connect(filler, $0, $1.pointee) }
            guard connected == 0 else { throw NSError(domain: "SilentTCPHost.connect", code: Int(errno)) }
        }
    }

    /// The link heals: the queue is emptied and every connection from now on is relayed to
    /// the Unix socket at `path` (a byte pump each way, on threads of their own).
    func heal(relayingTo path: String) {
        let listener = fd
        for _ in fillers {
            let taken = accept(listener, nil, nil)
            if taken >= 0 { Glibc.close(taken) }
        }
        Thread { [self] in
            while true {
                let c = accept(listener, nil, nil)
                guard c >= 0 else { return }
                lock.withLock { relayed = relayed ?? Date() }
                let u = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
                var address = unixAddress(path)
                let ok = withSockaddr(&address) { connect(u, $0, $1.pointee) } == 0
                guard ok else {
                    Glibc.close(c)
                    Glibc.close(u)
                    continue
                }
                for (from, to) in [(c, u), (u, c)] {
                    Thread {
                        var buffer = [UInt8](repeating: 0, count: 65536)
                        while true {
                            let n = buffer.withUnsafeMutableBytes { read(from, $0.baseAddress, $0.count) }
                            guard n > 0, buffer.withUnsafeBytes({ write(to, $0.baseAddress, n) }) == n else {
                                break
                            }
                        }
                        shutdown(to, Int32(SHUT_WR))
                    }.start()
                }
            }
        }.start()
    }

    func close() {
        for filler in fillers { Glibc.close(filler) }
        shutdown(fd, Int32(SHUT_RDWR))
        Glibc.close(fd)
    }
}

/// 127.0.0.1:`port` (0: any free port).
private func loopback(port: UInt16) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = port.bigEndian
    return address
}

/// The Unix socket at `path`.
private func unixAddress(_ path: String) -> sockaddr_un {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        _ = path.utf8CString.withUnsafeBytes {
            memcpy(raw.baseAddress!, $0.baseAddress!, min($0.count, raw.count))
        }
    }
    return address
}

/// `address` as the socket calls take it: a `sockaddr` pointer and its length (in and out).
private func withSockaddr<A>(
    _ address: inout A, _ body: (UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<socklen_t>) -> Int32
) -> Int32 {
    var length = socklen_t(MemoryLayout<A>.size)
    return withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, &length) }
    }
}

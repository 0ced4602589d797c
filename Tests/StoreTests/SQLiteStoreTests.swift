import EventLog
import Foundation
import Glibc
import Metrics
import Movies
import StoreCore
import StoreSQLite
import StoreTestSupport
import XCTest

/// What only the SQLite store has: a log that outlives it, snapshots, files that may be damaged,
/// a disk that may fail. What every store does is in StoreContractTests.swift.
final class SQLiteStoreTests: XCTestCase {
    private func tempDir(_ name: String = #function) -> String { makeStateDirectory(self, name) }

    /// The fold of the whole log, from scratch.
    private func fullFold(_ dir: String) throws -> MovieState {
        let log = try EventLog(path: dir + "/events.sqlite3")
        defer { log.close() }
        var s = MovieState()
        try log.forEachEvent(after: 0) { e in
            s.apply(try! MovieEvent(stream: e.stream, kind: e.kind, payload: e.payload), seq: e.seq)
            return true
        }
        return s
    }

    // MARK: -

    /// The state directory 0700 and the log's files 0600, whatever the umask (issue 32): they
    /// were 0755 and 0644, readable by every local user.
    func testStateIsTheUsersAloneWhateverTheUmask() throws {
        let dir = tempDir() + "/made"
        let old = umask(0)
        defer { umask(old) }
        let store = try SQLiteStore.open(directory: dir)
        _ = store.submitOK(MovieCommand(.remove(movie: "godfather")))
        func mode(_ path: String) -> mode_t {
            var st = stat()
            XCTAssertEqual(stat(path, &st), 0, path)
            return st.st_mode & 0o777
        }
        XCTAssertEqual(mode(dir), 0o700)
        for file in ["events.sqlite3", "events.sqlite3-wal", "events.sqlite3-shm", "lock"] {
            XCTAssertEqual(mode(dir + "/" + file), 0o600, file)
        }
        store.close()
    }

    /// A state directory others may write is refused before anything is made in it: anyone
    /// could put another file in the log's place. One the group or others may only reach is
    /// served, with a warning that says so (issue 40).
    func testAStateDirectoryOthersMayReachIsRefusedOrWarnedOf() throws {
        let dir = tempDir()
        XCTAssertEqual(mkdir(dir, 0o700), 0)
        let warning = "the state directory is open to others, serving from it as it is"
        for mode: mode_t in [0o777, 0o1777, 0o702] {
            XCTAssertEqual(chmod(dir, mode), 0)
            XCTAssertThrowsError(try SQLiteStore.open(directory: dir), "\(mode)") { error in
                XCTAssertTrue("\(error)".contains("the state directory is writable by others"), "\(error)")
                XCTAssertTrue("\(error)".contains("chmod 0700 \(dir)"), "\(error)")
            }
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir), [], "nothing made in it")
        }
        for (mode, shown) in [
            (0o755, "mode 0755 (group r-x, others r-x)"), (0o770, "mode 0770 (group rwx, others ---)"),
        ] {
            XCTAssertEqual(chmod(dir, mode_t(mode)), 0)
            let store = try SQLiteStore.open(directory: dir)
            let note = store.startupNotes.first { $0.message == warning }
            XCTAssertEqual(note?.level, .warning, "\(shown): \(store.startupNotes)")
            XCTAssertTrue(note?.reason.contains(shown) == true, "\(note?.reason ?? "no note")")
            store.close()
        }
        XCTAssertEqual(chmod(dir, 0o700), 0)
        let store = try SQLiteStore.open(directory: dir)
        XCTAssertFalse(store.startupNotes.contains { $0.message == warning }, "\(store.startupNotes)")
        store.close()
    }

    func testSeedOnFirstStartOnly() throws {
        let dir = tempDir()
        var id = ""
        do {
            let store = try SQLiteStore.open(directory: dir)
            XCTAssertTrue(store.startup.seeded)
            id = store.logID
            XCTAssertEqual(id.count, 32)
            XCTAssertTrue(store.startupFields.contains { $0 == ("LOG_ID", id) })
            XCTAssertEqual(store.latestSeq, 10)
            XCTAssertEqual(store.stateCopy.movies.map(\.id), MovieState.seedCatalogue.map(\.movieID))
            XCTAssertEqual(store.stateCopy.movie("godfather")?.title, "The Godfather")
            XCTAssertEqual(store.stateCopy.movie("godfather")?.image, "godfather")
            _ = store.submitOK(MovieCommand(.remove(movie: "godfather")))
            store.close()
        }
        let again = try SQLiteStore.open(directory: dir)
        defer { again.close() }
        XCTAssertFalse(again.startup.seeded)
        XCTAssertEqual(again.logID, id, "the same log")
        XCTAssertEqual(again.latestSeq, 11)
        XCTAssertNil(again.stateCopy.movie("godfather"))
        XCTAssertEqual(again.stateCopy.movies.count, 9)
    }

    func testKeysAreFoundInTheLogAfterAReopen() throws {
        let dir = tempDir()
        var original: CommittedEvent?
        var removed: CommittedEvent?
        do {
            let store = try SQLiteStore.open(directory: dir)
            original = store.submitOK(MovieCommand(.toggleWatched(movie: "seven"), key: "k1"))
            _ = store.submitOK(MovieCommand(.toggleWatched(movie: "seven")))
            _ = store.submitOK(MovieCommand(.add(title: "Heat", image: nil)))
            removed = store.submitOK(MovieCommand(.remove(movie: "heat"), key: "rm"))
            store.close()
        }
        let store = try SQLiteStore.open(directory: dir)
        defer { store.close() }
        let replay = store.immediate(MovieCommand(.toggleWatched(movie: "seven"), key: "k1"))
        XCTAssertEqual(replay?.replayed, true)
        XCTAssertEqual(try replay?.result.get(), original)
        XCTAssertEqual(original?.movie.watched, true)
        XCTAssertEqual(store.movie("seven")?.watched, false)
        XCTAssertEqual(
            try store.immediate(MovieCommand(.remove(movie: "heat"), key: "rm"))?.result.get(), removed)
        XCTAssertEqual(store.refusal(MovieCommand(.remove(movie: "seven"), key: "k1"))?.code, .conflict)
        XCTAssertEqual(store.latestSeq, 14)
    }

    /// An outcome known at `submit` waits for the next `completions()` without a write to the
    /// completion descriptor (a syscall per refused command, for a wake-up the loop does not need).
    func testImmediateOutcomesDoNotWakeTheLoop() throws {
        let store = try SQLiteStore.open(directory: tempDir())
        defer { store.close() }
        store.submit(MovieCommand(.remove(movie: "nope")), token: 1)
        store.read(.events(after: 10, limit: 10), token: 2)
        var p = pollfd(fd: store.completionFD, events: Int16(POLLIN), revents: 0)
        XCTAssertEqual(poll(&p, 1, 50), 0)
        let c = store.completions()
        XCTAssertEqual(c.commands.map(\.token), [1])
        XCTAssertEqual(c.reads, [ReadResult(token: 2, result: .success([]))])
        XCTAssertEqual(poll(&p, 1, 0), 0)
    }

    /// `status`'s latest snapshot is the one saved last while serving, not only the one loaded.
    func testTheMetersSayWhichSnapshotWasSavedLast() throws {
        let meters = CommitMeters()
        let store = try SQLiteStore.open(directory: tempDir(), snapshotEvery: 3, meters: meters)
        defer { store.close() }
        XCTAssertEqual(meters.latestSnapshotSeq(loaded: store.startup.snapshotSeq), 0)
        for _ in 0..<7 { _ = store.submitOK(MovieCommand(.toggleWatched(movie: "seven"))) }
        let deadline = Date().addingTimeInterval(5)
        while meters.latestSnapshotSeq(loaded: 0) < 16 && Date() < deadline {
            var p = pollfd(fd: store.completionFD, events: Int16(POLLIN), revents: 0)
            _ = poll(&p, 1, 20)
            _ = store.completions()
        }
        // The seed is seqs 1–10; toggles 11–17: snapshots at 13 and 16.
        XCTAssertEqual(meters.latestSnapshotSeq(loaded: store.startup.snapshotSeq), 16)
        XCTAssertEqual(meters.latestSnapshotSeq(loaded: 20), 20, "the loaded one when it is newer")
    }

    func testSnapshotPlusTailEqualsFullFold() throws {
        let dir = tempDir()
        var rng = SystemRandomNumberGenerator()
        do {
            let store = try SQLiteStore.open(directory: dir, snapshotEvery: 7)
            for i in 0..<60 {
                let ids = store.stateCopy.movies.map(\.id)
                let cmd: MovieCommand
                switch Int.random(in: 0..<10, using: &rng) {
                case 0: cmd = MovieCommand(.add(title: "Movie \(i % 5)", image: nil))
                case 1 where ids.count > 3:
                    cmd = MovieCommand(.remove(movie: ids.randomElement(using: &rng)!))
                case 2...5: cmd = MovieCommand(.toggleWatched(movie: ids.randomElement(using: &rng)!))
                default: cmd = MovieCommand(.toggleWatchedWithFriends(movie: ids.randomElement(using: &rng)!))
                }
                _ = store.submitOK(cmd)
            }
            store.close()
        }
        let fold = try fullFold(dir)
        do {
            let store = try SQLiteStore.open(directory: dir)
            XCTAssertEqual(store.startup.snapshotSeq, 70, "close writes a snapshot")
            XCTAssertEqual(store.startup.replayed, 0)
            XCTAssertEqual(store.stateCopy, fold)
            XCTAssertEqual(store.stateCopy.movies, fold.movies)
            store.close()
        }
        // A snapshot in the middle: events after it are folded on top.
        let log = try EventLog(path: dir + "/events.sqlite3")
        let extra: [MovieEvent] = [
            .watchedToggled(id: "seven"), .added(id: "late", title: "Late", image: ""),
            .removed(id: "the_green_mile"),
        ].filter { e in
            e.movieID == "late" || fold.movie(e.movieID) != nil
        }
        _ = try log.append(
            extra.map { NewEvent(stream: $0.movieID, kind: $0.kind.rawValue, payload: $0.payload) })
        log.close()
        let store = try SQLiteStore.open(directory: dir)
        defer { store.close() }
        XCTAssertEqual(store.startup.snapshotSeq, 70)
        XCTAssertEqual(store.startup.replayed, extra.count)
        XCTAssertEqual(store.stateCopy, try fullFold(dir))
        XCTAssertEqual(store.stateCopy.movies.last?.id, "late")
    }

    /// Events written without their movie (by builds before events recorded it) are read back
    /// with the movie right after them, found by folding their stream: before the events this
    /// build writes, and after them too (a log written by an older build again). The per-stream
    /// index is not extended by appends, so the second kind is read through the log's tail.
    func testEventsWithoutTheirMovieAreReadBackWithIt() throws {
        let dir = tempDir()
        let path = dir + "/events.sqlite3"
        func appendUnrecorded(_ events: [MovieEvent]) throws {
            let log = try EventLog(path: path)
            defer { log.close() }
            _ = try log.append(
                events.map { NewEvent(stream: $0.movieID, kind: $0.kind.rawValue, payload: $0.payload) })
        }
        try SQLiteStore.open(directory: dir).close()
        try appendUnrecorded([.watchedToggled(id: "seven"), .watchedWithFriendsToggled(id: "seven")])
        do {
            let store = try SQLiteStore.open(directory: dir)
            for i in 0..<300 {
                _ = store.submitOK(
                    MovieCommand(
                        i % 3 == 0 ? .toggleWatched(movie: "seven") : .toggleWatched(movie: "matrix")))
            }
            store.close()
        }
        try appendUnrecorded([.watchedToggled(id: "seven"), .removed(id: "seven")])
        // The movie after each event, from a fold of the whole log.
        var state = MovieState()
        var expected: [UInt64: Movie] = [:]
        let log = try EventLog(path: path)
        try log.forEachEvent(after: 0) { e in
            if let m = state.apply(
                try! MovieEvent(stream: e.stream, kind: e.kind, payload: e.payload), seq: e.seq)
            {
                expected[e.seq] = m
            }
            return true
        }
        log.close()
        XCTAssertEqual(expected.count, 314)
        let store = try SQLiteStore.open(directory: dir)
        defer { store.close() }
        let page = try store.events(after: 10, limit: 1_000)
        XCTAssertEqual(page.map(\.seq), Array(11...314))
        for e in page { XCTAssertEqual(e.movie, expected[e.seq], "event \(e.seq)") }
        XCTAssertEqual(page[1].movie.watchedWithFriends, true)
        XCTAssertEqual(page.last?.kind, MovieEvent.Kind.removed)
    }

    func testDamagedAndForeignFilesAreRefusedUntouched() throws {
        let dir = tempDir()
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let path = dir + "/events.sqlite3"
        let junk = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ 13) }
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(junk)))
        XCTAssertThrowsError(try SQLiteStore.open(directory: dir)) { e in
            let e = e as? StoreError
            XCTAssertEqual(e?.code, .storage)
            XCTAssertTrue(e?.message.contains(path) ?? false, "\(String(describing: e))")
        }
        XCTAssertEqual(FileManager.default.contents(atPath: path), Data(junk))
    }

    func testOneStorePerDirectory() throws {
        let dir = tempDir()
        let store = try SQLiteStore.open(directory: dir)
        XCTAssertThrowsError(try SQLiteStore.open(directory: dir)) { e in
            XCTAssertTrue((e as? StoreError)?.message.contains("in use") ?? false, "\(e)")
        }
        store.close()
        let again = try SQLiteStore.open(directory: dir)
        again.close()
    }

    func testDiskFullGivesStorageAndRecovers() throws {
        let base = tempDir()
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        guard mount("tmpfs", base, "tmpfs", 0, "size=1024k") == 0 else {
            throw XCTSkip(
                "mount -t tmpfs failed: \(String(cString: strerror(errno))) (needs root / CAP_SYS_ADMIN)")
        }
        defer { _ = umount2(base, Int32(MNT_DETACH)) }
        let dir = base + "/state"
        let store = try SQLiteStore.open(directory: dir)
        defer { store.close() }
        // Fill the filesystem.
        let fd = open(base + "/filler", O_WRONLY | O_CREAT, 0o644)
        let chunk = [UInt8](repeating: 0, count: 4096)
        while chunk.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
        while chunk.withUnsafeBytes({ write(fd, $0.baseAddress, 1) }) > 0 {}
        close(fd)

        let before = store.stateCopy
        // The add, then a toggle of the new movie and one of seven: each handed to the writer at
        // once, so the toggles are in the add's transaction or queued behind it.
        store.submit(MovieCommand(.add(title: "Alien", image: nil)), token: 1)
        store.flush()
        store.submit(MovieCommand(.toggleWatched(movie: "alien")), token: 2)
        store.flush()
        store.submit(MovieCommand(.toggleWatched(movie: "seven")), token: 3)
        let c = store.settle(results: 3)
        let byToken = c.resultByToken
        guard case .failure(let e1) = byToken[1], case .failure(let e2) = byToken[2],
            case .failure(let e3) = byToken[3]
        else {
            return XCTFail("expected failures: \(c.commands)")
        }
        XCTAssertEqual(e1.code, .storage)
        XCTAssertTrue(e1.message.contains("disk is full"), e1.message)
        // In the add's transaction it fails with it; behind it, decided again, "alien" is unknown.
        // (testCommandsBehindAFailedCommitAreDecidedAgain pins the second case down.)
        XCTAssertTrue([.storage, .notFound].contains(e2.code), "\(e2)")
        XCTAssertEqual(e3.code, .storage)
        XCTAssertNil(c.fatal)
        XCTAssertEqual(c.committed, [])
        XCTAssertEqual(store.stateCopy, before)
        XCTAssertEqual(try store.events(after: 0, limit: 100).count, 10, "reads stopped working")
        // Space returns: writing works again.
        XCTAssertEqual(unlink(base + "/filler"), 0)
        let ok = store.submitOK(MovieCommand(.add(title: "Alien", image: nil)))
        XCTAssertEqual(ok?.seq, 11)
        XCTAssertEqual(ok?.movie.id, "alien")
        XCTAssertEqual(store.stateCopy, try fullFold(dir))
    }

    /// Several batches in flight: the first commit fails; those behind it come back unwritten
    /// and are decided again against the committed state, in their order.
    func testCommandsBehindAFailedCommitAreDecidedAgain() throws {
        FaultInjection.install()
        defer { FaultInjection.uninstall() }
        let dir = tempDir()
        let store = try SQLiteStore.open(directory: dir)
        defer { store.close() }
        let before = store.stateCopy
        FaultInjection.holdNextWrite()
        store.submit(MovieCommand(.add(title: "Alien", image: nil)), token: 1)
        store.flush()
        guard FaultInjection.waitForHeldWrite() else {
            FaultInjection.releaseHeldWrite(failing: false)
            return XCTFail("the add's commit never wrote")
        }
        // The writer is inside the add's transaction: these wait in its queue, two batches.
        store.submit(MovieCommand(.toggleWatched(movie: "alien")), token: 2)
        store.flush()
        store.submit(MovieCommand(.toggleWatched(movie: "seven")), token: 3)
        store.submit(MovieCommand(.toggleWatched(movie: "seven"), key: "k-seven"), token: 4)
        // The same key while pending waits for the first.
        store.submit(MovieCommand(.toggleWatched(movie: "seven"), key: "k-seven"), token: 5)
        store.flush()
        XCTAssertEqual(store.pendingCount, 5)
        FaultInjection.releaseHeldWrite(failing: true)
        let c = store.settle(results: 5)
        let byToken = c.resultByToken
        guard case .failure(let e1) = byToken[1], case .failure(let e2) = byToken[2],
            case .success(let ok3) = byToken[3], case .success(let ok4) = byToken[4],
            case .success(let ok5) = byToken[5]
        else {
            return XCTFail("unexpected results: \(c.commands)")
        }
        XCTAssertEqual(e1.code, .storage)
        XCTAssertFalse(e1.fatal)
        XCTAssertEqual(e2.code, .notFound, "decided again: there is no alien")
        XCTAssertEqual([ok3.seq, ok4.seq], [11, 12], "in submission order")
        XCTAssertEqual(ok5, ok4)
        XCTAssertEqual(ok3.movie.watched, !before.movie("seven")!.watched)
        XCTAssertEqual(ok4.movie.watched, before.movie("seven")!.watched)
        XCTAssertNil(c.fatal)
        XCTAssertEqual(store.pendingCount, 0)
        XCTAssertEqual(store.stateCopy, try fullFold(dir))
        XCTAssertEqual(store.latestSeq, 12)
    }

    func testIOErrorOnCommitIsFatal() throws {
        FaultInjection.install()
        defer { FaultInjection.uninstall() }
        let dir = tempDir()
        do {
            let store = try SQLiteStore.open(directory: dir)
            defer { store.close() }
            XCTAssertNotNil(store.submitOK(MovieCommand(.toggleWatched(movie: "seven"))))
            FaultInjection.failSyncs = true
            store.submit(MovieCommand(.toggleWatched(movie: "matrix")), token: 1)
            store.submit(MovieCommand(.remove(movie: "inception")), token: 2)
            let c = store.settle(results: 2)
            XCTAssertEqual(c.fatal?.fatal, true)
            XCTAssertEqual(c.fatal?.code, .storage)
            for r in c.commands {
                guard case .failure(let e) = r.result else { return XCTFail("\(r)") }
                XCTAssertEqual(e.code, .storage)
                XCTAssertTrue(e.fatal)
            }
            XCTAssertNotNil(store.fatal)
            XCTAssertEqual(store.latestSeq, 11)
            FaultInjection.failSyncs = false
            // No more writes, whatever comes.
            XCTAssertEqual(store.refusal(MovieCommand(.toggleWatched(movie: "godfather")))?.fatal, true)
        }
        // A restart reads what is really on disk.
        let again = try SQLiteStore.open(directory: dir)
        defer { again.close() }
        XCTAssertEqual(again.stateCopy, try fullFold(dir))
        XCTAssertGreaterThanOrEqual(again.latestSeq, 11)
    }

    func testLongReplayIsSnapshottedForTheNextStart() throws {
        let dir = tempDir()
        try SQLiteStore.open(directory: dir).close()
        // 30,000 events written behind the store's back (as if it had crashed before any snapshot).
        let log = try EventLog(path: dir + "/events.sqlite3", durability: .normal)
        let ids = MovieState.seedCatalogue.map(\.movieID)
        _ = try log.append(
            (0..<30_000).map { i in
                let e = MovieEvent.watchedToggled(id: ids[i % ids.count])
                return NewEvent(stream: e.movieID, kind: e.kind.rawValue, payload: e.payload)
            })
        log.close()
        do {
            let store = try SQLiteStore.open(directory: dir, snapshotEvery: 10_000)
            XCTAssertEqual(store.startup.snapshotSeq, 10)
            XCTAssertEqual(store.startup.replayed, 30_000)
            XCTAssertEqual(store.latestSeq, 30_010)
            store.close()
        }
        let store = try SQLiteStore.open(directory: dir, snapshotEvery: 10_000)
        defer { store.close() }
        XCTAssertEqual(store.startup.snapshotSeq, 30_010)
        XCTAssertEqual(store.startup.replayed, 0)
        XCTAssertEqual(store.stateCopy, try fullFold(dir))
        XCTAssertEqual(store.stateCopy.movie("godfather")?.watched, false)  // 3,000 toggles
        XCTAssertLessThan(store.startup.micros, 1_000_000)
    }

    /// A snapshot written by a build from before issue 13 (MVS1) has no seqs of removals: it is
    /// ignored, the whole log is replayed (with a warning that says why), and the snapshot taken
    /// on close is MVS2, so the next start replays nothing and still knows when "matrix" went.
    func testAnMVS1SnapshotIsIgnoredTheLogReplayedOnceAndSnapshottedAgain() throws {
        let dir = tempDir()
        do {
            let store = try SQLiteStore.open(directory: dir)
            _ = store.submitOK(MovieCommand(.remove(movie: "matrix")))
            store.close()
        }
        // What an earlier build's close wrote at seq 11, in place of the MVS2 snapshot.
        let log = try EventLog(path: dir + "/events.sqlite3")
        let state = try fullFold(dir)
        try log.saveSnapshot(seq: 11, data: Self.mvs1(state, removed: ["matrix"]))
        log.close()
        do {
            let store = try SQLiteStore.open(directory: dir)
            XCTAssertEqual(store.startup.snapshotSeq, 0)
            XCTAssertEqual(store.startup.replayed, 11)
            XCTAssertTrue(store.startup.snapshotIgnored?.contains("MVS1") == true, "\(store.startup)")
            XCTAssertTrue(
                store.startupNotes.contains { $0.message == "snapshot ignored, replayed the whole log" })
            XCTAssertEqual(store.stateCopy, state)
            XCTAssertEqual(
                store.stateCopy.notFound("matrix"), .notFound("movie \"matrix\" was removed at seq 11"))
            store.close()
        }
        let store = try SQLiteStore.open(directory: dir)
        defer { store.close() }
        XCTAssertEqual(store.startup.snapshotSeq, 11)
        XCTAssertEqual(store.startup.replayed, 0)
        XCTAssertNil(store.startup.snapshotIgnored)
        XCTAssertEqual(store.stateCopy.removedAt, ["matrix": 11])
    }

    /// A snapshot written by a build from before issue 14 (MVS2) has when movies were removed
    /// but not what they were: ignored, the log replayed, and a removed movie restored as it was
    /// and where it was, the undone seq of an undo read back from the log; the same after the
    /// next start, from the MVS3 snapshot taken on close.
    func testAnMVS2SnapshotIsIgnoredAndRestoreWorksAfterARestart() throws {
        let dir = tempDir()
        do {
            let store = try SQLiteStore.open(directory: dir)
            _ = store.submitOK(MovieCommand(.toggleWatchedWithFriends(movie: "matrix")))
            _ = store.submitOK(MovieCommand(.remove(movie: "matrix")))
            _ = store.submitOK(MovieCommand(.remove(movie: "inception")))
            store.close()
        }
        let log = try EventLog(path: dir + "/events.sqlite3")
        let state = try fullFold(dir)
        var mvs2 = Self.mvs1(state, removed: [])
        mvs2.replaceSubrange(0..<4, with: Array("MVS2".utf8))
        try log.saveSnapshot(seq: 13, data: mvs2)
        log.close()
        do {
            let store = try SQLiteStore.open(directory: dir)
            XCTAssertEqual(store.startup.replayed, 13)
            XCTAssertTrue(store.startup.snapshotIgnored?.contains("MVS2") == true, "\(store.startup)")
            XCTAssertEqual(store.stateCopy, state)
            let back = store.submitOK(MovieCommand(.restore(movie: "matrix"), expect: 12))
            XCTAssertEqual(
                back?.movie,
                Movie(
                    id: "matrix", title: "The Matrix", image: "matrix", watchedWithFriends: true, version: 14)
            )
            store.close()
        }
        let store = try SQLiteStore.open(directory: dir)
        defer { store.close() }
        XCTAssertEqual(store.startup.snapshotSeq, 14)
        XCTAssertEqual(store.stateCopy, try fullFold(dir))
        XCTAssertEqual(
            store.stateCopy.movies.map(\.id).prefix(5).last, "matrix", "inception is still removed")
        let undo = Undo(movie: "inception", original: 13, compensation: .restore, version: 13)
        XCTAssertEqual(store.submitOK(MovieCommand(.undo(undo)))?.undoes, 13)
        store.close()
        let again = try SQLiteStore.open(directory: dir)
        defer { again.close() }
        XCTAssertEqual(try again.events(after: 14, limit: 1).first?.undoes, 13)
        XCTAssertEqual(again.stateCopy.movies.map(\.id), MovieState.seedCatalogue.map(\.movieID))
    }

    /// The MVS1 format: magic, lastSeq, the movies, then the removed ids alone (big-endian
    /// integers, strings as a u32 length and UTF-8).
    private static func mvs1(_ state: MovieState, removed: [String]) -> [UInt8] {
        var bytes = Array("MVS1".utf8)
        func u64(_ v: UInt64) { bytes += (0..<8).reversed().map { UInt8(truncatingIfNeeded: v >> ($0 * 8)) } }
        func u32(_ v: Int) { bytes += (0..<4).reversed().map { UInt8(truncatingIfNeeded: v >> ($0 * 8)) } }
        func string(_ s: String) {
            u32(s.utf8.count)
            bytes += Array(s.utf8)
        }
        u64(state.lastSeq)
        u32(state.movies.count)
        for m in state.movies {
            string(m.id)
            string(m.title)
            string(m.image)
            bytes.append((m.watched ? 1 : 0) | (m.watchedWithFriends ? 2 : 0))
            u64(m.version)
        }
        u32(removed.count)
        for id in removed { string(id) }
        return bytes
    }
}

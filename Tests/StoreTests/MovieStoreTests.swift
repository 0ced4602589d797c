import Store
import EventLog
import Foundation
import Glibc
import Movies
import XCTest

final class MovieStoreTests: XCTestCase {
    private func tempDir(_ name: String = #function) -> String {
        var template = Array(
            "\(FileManager.default.temporaryDirectory.path)/moviestore-\(name.filter(\.isLetter))-XXXXXX"
                .utf8CString)
        let dir = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
        addTeardownBlock { try? FileManager.default.removeItem(atPath: dir) }
        return dir + "/state"  // not created yet: open creates it
    }

    /// Runs the loop until `count` results arrived (or 5 s passed).
    private func settle(
        _ store: MovieStore, results count: Int, file: StaticString = #filePath, line: UInt = #line
    ) -> Completions {
        var all = Completions()
        let deadline = Date().addingTimeInterval(5)
        while all.commands.count < count && Date() < deadline {
            var p = pollfd(fd: store.completionFD, events: Int16(POLLIN), revents: 0)
            _ = poll(&p, 1, 100)
            let c = store.completions()
            all.commands += c.commands
            all.committed += c.committed
            all.fatal = all.fatal ?? c.fatal
        }
        XCTAssertEqual(all.commands.count, count, "results did not arrive", file: file, line: line)
        return all
    }

    private func submitOK(
        _ store: MovieStore, _ cmd: MovieCommand, file: StaticString = #filePath, line: UInt = #line
    ) -> CommittedEvent? {
        let s = store.submit(cmd, token: 1)
        XCTAssertEqual(s, .pending, file: file, line: line)
        let c = settle(store, results: 1, file: file, line: line)
        return try? c.commands.first?.result.get()
    }

    private func failure(_ s: Submitted) -> StoreError? {
        if case .done(.failure(let e)) = s { return e }
        return nil
    }

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

    func testSeedOnFirstStartOnly() throws {
        let dir = tempDir()
        do {
            let store = try MovieStore.open(directory: dir)
            XCTAssertTrue(store.startup.seeded)
            XCTAssertEqual(store.latestSeq, 10)
            XCTAssertEqual(store.state.movies.map(\.id), MovieState.seedCatalogue.map(\.movieID))
            XCTAssertEqual(store.state.movie("godfather")?.title, "The Godfather")
            XCTAssertEqual(store.state.movie("godfather")?.image, "godfather")
            _ = submitOK(store, MovieCommand(.remove(movie: "godfather")))
            store.close()
        }
        let again = try MovieStore.open(directory: dir)
        defer { again.close() }
        XCTAssertFalse(again.startup.seeded)
        XCTAssertEqual(again.latestSeq, 11)
        XCTAssertNil(again.state.movie("godfather"))
        XCTAssertEqual(again.state.movies.count, 9)
    }

    func testEveryCommandAndError() throws {
        let store = try MovieStore.open(directory: tempDir())
        defer { store.close() }
        let w = submitOK(store, MovieCommand(.toggleWatched(movie: "matrix"), expect: 6))
        XCTAssertEqual(w?.seq, 11)
        XCTAssertEqual(w?.kind, "watched-toggled")
        XCTAssertEqual(
            w?.movie, Movie(id: "matrix", title: "The Matrix", image: "matrix", watched: true, version: 11))
        let f = submitOK(store, MovieCommand(.toggleWatchedWithFriends(movie: "matrix")))
        XCTAssertEqual(f?.movie.watchedWithFriends, true)
        XCTAssertEqual(f?.movie.version, 12)
        let a = submitOK(store, MovieCommand(.add(title: "The Matrix", image: nil)))
        XCTAssertEqual(
            a?.movie, Movie(id: "the_matrix", title: "The Matrix", image: "the_matrix", version: 13))
        XCTAssertEqual(store.state.movies.last?.id, "the_matrix")
        let r = submitOK(store, MovieCommand(.remove(movie: "matrix"), expect: 12))
        XCTAssertEqual(r?.kind, "removed")
        XCTAssertEqual(r?.movie.version, 14)
        XCTAssertEqual(r?.movie.watched, true)
        XCTAssertNil(store.state.movie("matrix"))
        XCTAssertGreaterThan(r?.at ?? 0, 1_700_000_000_000_000)

        XCTAssertEqual(
            failure(store.submit(MovieCommand(.toggleWatched(movie: "matrix")), token: 2))?.code, .notFound)
        XCTAssertEqual(failure(store.submit(MovieCommand(.remove(movie: "nope")), token: 2))?.code, .notFound)
        XCTAssertEqual(
            failure(store.submit(MovieCommand(.add(title: " ", image: nil)), token: 2))?.code, .badRequest)
        XCTAssertEqual(
            failure(
                store.submit(
                    MovieCommand(.add(title: String(repeating: "x", count: 201), image: nil)), token: 2))?
                .code, .badRequest)
        let conflict = failure(
            store.submit(MovieCommand(.toggleWatched(movie: "seven"), expect: 3), token: 2))
        XCTAssertEqual(conflict?.code, .conflict)
        XCTAssertEqual(conflict?.message, "movie \"seven\" is at version 7, not 3 as expected")
        XCTAssertEqual(store.latestSeq, 14, "a refused command wrote something")
        XCTAssertEqual(store.pendingCount, 0)
    }

    func testGroupsCommitInOrderAndProjectedStateDecides() throws {
        let dir = tempDir()
        let store = try MovieStore.open(directory: dir)
        defer { store.close() }
        // Decided against the projected state: the remove is pending, the toggle after it is not-found at once.
        XCTAssertEqual(store.submit(MovieCommand(.add(title: "Alien", image: "alien")), token: 1), .pending)
        XCTAssertEqual(
            store.submit(MovieCommand(.toggleWatched(movie: "alien"), expect: 11), token: 2), .pending)
        XCTAssertEqual(store.submit(MovieCommand(.remove(movie: "alien"), expect: 12), token: 3), .pending)
        XCTAssertEqual(
            failure(store.submit(MovieCommand(.toggleWatched(movie: "alien")), token: 4))?.code, .notFound)
        XCTAssertEqual(store.submit(MovieCommand(.add(title: "Alien", image: nil)), token: 5), .pending)
        for t in 6...40 as ClosedRange<UInt64> {
            XCTAssertEqual(
                store.submit(MovieCommand(.toggleWatchedWithFriends(movie: "seven")), token: t), .pending)
        }
        XCTAssertEqual(store.state.lastSeq, 10, "committed state moved before the commit")
        let c = settle(store, results: 39)
        XCTAssertEqual(c.commands.map(\.token), [1, 2, 3] + Array(5...40))
        XCTAssertEqual(c.committed.map(\.seq), Array(11...49))
        XCTAssertEqual(c.committed[3].movie.id, "alien_2")
        XCTAssertEqual(try c.commands.map { try $0.result.get() }, c.committed)
        XCTAssertEqual(store.state.movie("seven")?.watchedWithFriends, true)  // 35 toggles
        XCTAssertEqual(store.state, try fullFold(dir))
        // History: in order, with the movie as it was after each event.
        let h = try store.history(after: 10, limit: 3)
        XCTAssertEqual(h, Array(c.committed.prefix(3)))
        XCTAssertEqual(h[0].movie.watched, false)
        XCTAssertEqual(try store.history(after: 47, limit: 100).map(\.seq), [48, 49])
        XCTAssertEqual(try store.history(after: 49, limit: 100), [])
        XCTAssertEqual(try store.history(after: 0, limit: 1000).count, 49)
    }

    func testIdempotencyKeysAlsoAfterReopen() throws {
        let dir = tempDir()
        var original: CommittedEvent?
        do {
            let store = try MovieStore.open(directory: dir)
            let cmd = MovieCommand(.toggleWatched(movie: "seven"), key: "k1")
            XCTAssertEqual(store.submit(cmd, token: 1), .pending)
            XCTAssertEqual(store.submit(cmd, token: 2), .pending)  // same key while pending: waits for it
            XCTAssertEqual(
                failure(store.submit(MovieCommand(.remove(movie: "seven"), key: "k1"), token: 3))?.code,
                .conflict)
            let c = settle(store, results: 2)
            XCTAssertEqual(c.committed.count, 1, "the key wrote twice")
            original = try c.commands[0].result.get()
            XCTAssertEqual(try c.commands[1].result.get(), original)
            // More changes, then the same key again: the original seq and the movie as it was then.
            _ = submitOK(store, MovieCommand(.toggleWatched(movie: "seven")))
            XCTAssertEqual(store.submit(cmd, token: 4), .done(.success(original!)))
            XCTAssertEqual(
                failure(store.submit(MovieCommand(.toggleWatched(movie: "matrix"), key: "k1"), token: 5))?
                    .code, .conflict)
            XCTAssertEqual(
                failure(
                    store.submit(MovieCommand(.toggleWatchedWithFriends(movie: "seven"), key: "k1"), token: 5)
                )?.code, .conflict)
            let add = submitOK(store, MovieCommand(.add(title: "Heat", image: nil), key: "add-heat"))
            XCTAssertEqual(
                store.submit(MovieCommand(.add(title: "Heat", image: nil), key: "add-heat"), token: 6),
                .done(.success(add!)))
            XCTAssertEqual(
                failure(
                    store.submit(MovieCommand(.add(title: "Heat 2", image: nil), key: "add-heat"), token: 6))?
                    .code, .conflict)
            XCTAssertEqual(store.latestSeq, 13)
            store.close()
        }
        let store = try MovieStore.open(directory: dir)
        defer { store.close() }
        XCTAssertEqual(
            store.submit(MovieCommand(.toggleWatched(movie: "seven"), key: "k1"), token: 1),
            .done(.success(original!)))
        XCTAssertEqual(original?.movie.watched, true)
        XCTAssertEqual(store.state.movie("seven")?.watched, false)
        // A removed movie's key replays its last state.
        let rm = submitOK(store, MovieCommand(.remove(movie: "heat"), key: "rm"))
        XCTAssertEqual(
            store.submit(MovieCommand(.remove(movie: "heat"), key: "rm"), token: 2), .done(.success(rm!)))
        XCTAssertEqual(store.latestSeq, 14)
    }

    func testSnapshotPlusTailEqualsFullFold() throws {
        let dir = tempDir()
        var rng = SystemRandomNumberGenerator()
        do {
            let store = try MovieStore.open(directory: dir, snapshotEvery: 7)
            for i in 0..<60 {
                let ids = store.state.movies.map(\.id)
                let cmd: MovieCommand
                switch Int.random(in: 0..<10, using: &rng) {
                case 0: cmd = MovieCommand(.add(title: "Movie \(i % 5)", image: nil))
                case 1 where ids.count > 3:
                    cmd = MovieCommand(.remove(movie: ids.randomElement(using: &rng)!))
                case 2...5: cmd = MovieCommand(.toggleWatched(movie: ids.randomElement(using: &rng)!))
                default: cmd = MovieCommand(.toggleWatchedWithFriends(movie: ids.randomElement(using: &rng)!))
                }
                _ = submitOK(store, cmd)
            }
            store.close()
        }
        let fold = try fullFold(dir)
        do {
            let store = try MovieStore.open(directory: dir)
            XCTAssertEqual(store.startup.snapshotSeq, 70, "close writes a snapshot")
            XCTAssertEqual(store.startup.replayed, 0)
            XCTAssertEqual(store.state, fold)
            XCTAssertEqual(store.state.movies, fold.movies)
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
        _ = try log.append(extra.map { NewEvent(stream: $0.movieID, kind: $0.kind, payload: $0.payload) })
        log.close()
        let store = try MovieStore.open(directory: dir)
        defer { store.close() }
        XCTAssertEqual(store.startup.snapshotSeq, 70)
        XCTAssertEqual(store.startup.replayed, extra.count)
        XCTAssertEqual(store.state, try fullFold(dir))
        XCTAssertEqual(store.state.movies.last?.id, "late")
    }

    func testDamagedAndForeignFilesAreRefusedUntouched() throws {
        let dir = tempDir()
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let path = dir + "/events.sqlite3"
        let junk = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ 13) }
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(junk)))
        XCTAssertThrowsError(try MovieStore.open(directory: dir)) { e in
            let e = e as? StoreError
            XCTAssertEqual(e?.code, .storage)
            XCTAssertTrue(e?.message.contains(path) ?? false, "\(String(describing: e))")
        }
        XCTAssertEqual(FileManager.default.contents(atPath: path), Data(junk))
    }

    func testOneStorePerDirectory() throws {
        let dir = tempDir()
        let store = try MovieStore.open(directory: dir)
        XCTAssertThrowsError(try MovieStore.open(directory: dir)) { e in
            XCTAssertTrue((e as? StoreError)?.message.contains("in use") ?? false, "\(e)")
        }
        store.close()
        let again = try MovieStore.open(directory: dir)
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
        let store = try MovieStore.open(directory: dir)
        defer { store.close() }
        // Fill the filesystem.
        let fd = open(base + "/filler", O_WRONLY | O_CREAT, 0o644)
        let chunk = [UInt8](repeating: 0, count: 4096)
        while chunk.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
        while chunk.withUnsafeBytes({ write(fd, $0.baseAddress, 1) }) > 0 {}
        close(fd)

        let before = store.state
        // The add, then a toggle of the new movie and one of seven: each handed to the writer at
        // once, so the toggles are in the add's transaction or queued behind it.
        XCTAssertEqual(store.submit(MovieCommand(.add(title: "Alien", image: nil)), token: 1), .pending)
        XCTAssertEqual(store.submit(MovieCommand(.toggleWatched(movie: "alien")), token: 2), .pending)
        XCTAssertEqual(store.submit(MovieCommand(.toggleWatched(movie: "seven")), token: 3), .pending)
        let c = settle(store, results: 3)
        let byToken = Dictionary(uniqueKeysWithValues: c.commands.map { ($0.token, $0.result) })
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
        XCTAssertEqual(store.state, before)
        XCTAssertEqual(try store.history(after: 0, limit: 100).count, 10, "reads stopped working")
        // Space returns: writing works again.
        XCTAssertEqual(unlink(base + "/filler"), 0)
        let ok = submitOK(store, MovieCommand(.add(title: "Alien", image: nil)))
        XCTAssertEqual(ok?.seq, 11)
        XCTAssertEqual(ok?.movie.id, "alien")
        XCTAssertEqual(store.state, try fullFold(dir))
    }

    /// Several batches in flight: the first commit fails; those behind it come back unwritten
    /// and are decided again against the committed state, in their order.
    func testCommandsBehindAFailedCommitAreDecidedAgain() throws {
        FaultInjection.install()
        defer { FaultInjection.uninstall() }
        let dir = tempDir()
        let store = try MovieStore.open(directory: dir)
        defer { store.close() }
        let before = store.state
        FaultInjection.holdNextWrite()
        XCTAssertEqual(store.submit(MovieCommand(.add(title: "Alien", image: nil)), token: 1), .pending)
        guard FaultInjection.waitForHeldWrite() else {
            FaultInjection.releaseHeldWrite(failing: false)
            return XCTFail("the add's commit never wrote")
        }
        // The writer is inside the add's transaction: these wait in its queue, two batches.
        XCTAssertEqual(store.submit(MovieCommand(.toggleWatched(movie: "alien")), token: 2), .pending)
        XCTAssertEqual(store.submit(MovieCommand(.toggleWatched(movie: "seven")), token: 3), .pending)
        XCTAssertEqual(
            store.submit(MovieCommand(.toggleWatched(movie: "seven"), key: "k-seven"), token: 4), .pending)
        XCTAssertEqual(
            store.submit(MovieCommand(.toggleWatched(movie: "seven"), key: "k-seven"), token: 5), .pending,
            "the same key while pending waits for the first")
        XCTAssertEqual(store.pendingCount, 4)
        FaultInjection.releaseHeldWrite(failing: true)
        let c = settle(store, results: 5)
        let byToken = Dictionary(uniqueKeysWithValues: c.commands.map { ($0.token, $0.result) })
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
        XCTAssertEqual(store.state, try fullFold(dir))
        XCTAssertEqual(store.latestSeq, 12)
    }

    func testIOErrorOnCommitIsFatal() throws {
        FaultInjection.install()
        defer { FaultInjection.uninstall() }
        let dir = tempDir()
        do {
            let store = try MovieStore.open(directory: dir)
            defer { store.close() }
            XCTAssertNotNil(submitOK(store, MovieCommand(.toggleWatched(movie: "seven"))))
            FaultInjection.failSyncs = true
            XCTAssertEqual(store.submit(MovieCommand(.toggleWatched(movie: "matrix")), token: 1), .pending)
            XCTAssertEqual(store.submit(MovieCommand(.remove(movie: "inception")), token: 2), .pending)
            let c = settle(store, results: 2)
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
            XCTAssertEqual(
                failure(store.submit(MovieCommand(.toggleWatched(movie: "godfather")), token: 3))?.fatal, true
            )
        }
        // A restart reads what is really on disk.
        let again = try MovieStore.open(directory: dir)
        defer { again.close() }
        XCTAssertEqual(again.state, try fullFold(dir))
        XCTAssertGreaterThanOrEqual(again.latestSeq, 11)
    }

    func testLongReplayIsSnapshottedForTheNextStart() throws {
        let dir = tempDir()
        try MovieStore.open(directory: dir).close()
        // 30,000 events written behind the store's back (as if it had crashed before any snapshot).
        let log = try EventLog(path: dir + "/events.sqlite3", durability: .normal)
        let ids = MovieState.seedCatalogue.map(\.movieID)
        _ = try log.append(
            (0..<30_000).map { i in
                let e = MovieEvent.watchedToggled(id: ids[i % ids.count])
                return NewEvent(stream: e.movieID, kind: e.kind, payload: e.payload)
            })
        log.close()
        do {
            let store = try MovieStore.open(directory: dir, snapshotEvery: 10_000)
            XCTAssertEqual(store.startup.snapshotSeq, 10)
            XCTAssertEqual(store.startup.replayed, 30_000)
            XCTAssertEqual(store.latestSeq, 30_010)
            store.close()
        }
        let store = try MovieStore.open(directory: dir, snapshotEvery: 10_000)
        defer { store.close() }
        XCTAssertEqual(store.startup.snapshotSeq, 30_010)
        XCTAssertEqual(store.startup.replayed, 0)
        XCTAssertEqual(store.state, try fullFold(dir))
        XCTAssertEqual(store.state.movie("godfather")?.watched, false)  // 3,000 toggles
        XCTAssertLessThan(store.startup.micros, 1_000_000)
    }
}

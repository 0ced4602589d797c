import EventLog
import Foundation
import StoreTestSupport
import TestSupport
import XCTest

final class EventLogTests: XCTestCase {
    private func ev(_ stream: String, _ kind: String = "k", key: String? = nil, payload: [UInt8] = [1, 2])
        -> NewEvent
    {
        NewEvent(stream: stream, kind: kind, payload: payload, key: key)
    }

    func testAppendReadAndReopen() throws {
        let path = makeTempDir(self) + "/events.sqlite3"
        do {
            let log = try EventLog(path: path)
            XCTAssertEqual(try log.latestSeq(), 0)
            let a = try log.append([ev("a", key: "k1"), ev("b", payload: [])])
            XCTAssertEqual(a.map(\.seq), [1, 2])
            XCTAssertEqual(a[1].payload, [])
            let b = try log.append([ev("a", "other")])
            XCTAssertEqual(b.map(\.seq), [3])
            XCTAssertGreaterThanOrEqual(b[0].at, a[0].at)
            XCTAssertEqual(try log.latestSeq(), 3)
            XCTAssertEqual(try log.events(after: 0, limit: 10), a + b)
            XCTAssertEqual(try log.events(after: 1, limit: 1).map(\.seq), [2])
            XCTAssertEqual(try log.event(forKey: "k1"), a[0])
            XCTAssertNil(try log.event(forKey: "nope"))
            XCTAssertEqual(try log.events(stream: "a", upTo: 3).map(\.seq), [1, 3])
            XCTAssertEqual(try log.events(stream: "a", upTo: 2).map(\.seq), [1])
            var seen: [UInt64] = []
            try log.forEachEvent(after: 1) {
                seen.append($0.seq); return true
            }
            XCTAssertEqual(seen, [2, 3])
            seen = []
            try log.forEachEvent(after: 0) {
                seen.append($0.seq); return false
            }
            XCTAssertEqual(seen, [1])
            log.close()
        }
        let again = try EventLog(path: path)
        XCTAssertEqual(try again.latestSeq(), 3)
        XCTAssertEqual(try again.events(after: 0, limit: 10).map(\.kind), ["k", "k", "other"])
    }

    /// The INSERT binds text and blob where they are, without a copy: zero-length values stay
    /// zero-length (not NULL), and text that is not a native Swift string (bridged from
    /// Foundation, or a substring's copy) is written byte for byte too.
    func testAppendWritesEveryTextAndBlobExactly() throws {
        let log = try EventLog(path: makeTempDir(self) + "/events.sqlite3")
        let bridged = String(NSString(string: "Amélie 🎬"))
        let long = String(repeating: "ü", count: 5000)
        let events = [
            ev("", "", key: "", payload: []),
            ev(
                bridged, String("kind-of-a-substring".dropFirst(5)), key: bridged,
                payload: Array(repeating: 0, count: 3)),
            ev(long, long, key: nil, payload: Array(0...255)),
        ]
        let stored = try log.append(events)
        let read = try log.events(after: 0, limit: 10)
        XCTAssertEqual(read, stored)
        XCTAssertEqual(read.map(\.stream), ["", "Amélie 🎬", long])
        XCTAssertEqual(read.map(\.kind), ["", "of-a-substring", long])
        XCTAssertEqual(read.map(\.key), ["", "Amélie 🎬", nil])
        XCTAssertEqual(read.map(\.payload), [[], [0, 0, 0], Array(0...255)])
        XCTAssertEqual(try log.event(forKey: "")?.seq, 1)
        XCTAssertEqual(try log.event(forKey: bridged)?.seq, 2)
    }

    func testKeyConflictWritesNothingAndSeqStaysGapless() throws {
        let log = try EventLog(path: makeTempDir(self) + "/events.sqlite3")
        _ = try log.append([ev("a", key: "k")])
        XCTAssertThrowsError(try log.append([ev("b"), ev("c", key: "k")])) { e in
            guard case .keyConflict = e as? LogError else { return XCTFail("\(e)") }
        }
        XCTAssertEqual(try log.latestSeq(), 1)
        let r = log.appendBatches([[ev("x")], [ev("y", key: "k")], [ev("z")]])
        XCTAssertEqual(try r[0].get().map(\.seq), [2])
        guard case .failure(.keyConflict) = r[1], case .failure(.aborted) = r[2] else {
            return XCTFail("\(r)")
        }
        XCTAssertEqual(try log.append([ev("w")]).map(\.seq), [3])
        XCTAssertEqual(try log.events(after: 0, limit: 10).map(\.stream), ["a", "x", "w"])
    }

    /// Unkeyed batches are inserted together, `rowsPerInsert` events to a statement, and a keyed
    /// batch on its own: groups of every shape (runs shorter and longer than a statement,
    /// keyed batches between them, a key conflict part-way) must write exactly what one INSERT
    /// per event wrote, in order, and read back as `appendBatches` returned them.
    func testGroupsOfEveryShapeWriteEveryEventInOrder() throws {
        let log = try EventLog(path: makeTempDir(self) + "/events.sqlite3")
        var rng = SplitMix64(seed: 7)
        var written: [NewEvent] = []
        var keys = 0
        for group in 0..<60 {
            var batches: [[NewEvent]] = []
            for _ in 0..<Int(rng.next() % 40) + 1 {
                let keyed = rng.next() % 5 == 0
                var batch: [NewEvent] = []
                for e in 0..<Int(rng.next() % (keyed ? 3 : 20)) + 1 {
                    let n = Int(rng.next() % 300)
                    let stream = ["", "seven", "Amélie 🎬", String(repeating: "x", count: n)][
                        Int(rng.next() % 4)]
                    var key: String?
                    if keyed && e == 0 {
                        keys += 1
                        key = "key-\(keys)"
                    }
                    batch.append(
                        ev(
                            stream, "kind-\(n)", key: key,
                            payload: (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 31) }))
                }
                batches.append(batch)
            }
            // Every tenth group: a batch part-way repeats a key of the log.
            var conflictAt: Int?
            if group % 10 == 9, keys > 0 {
                let at = batches.count / 2
                batches[at] = [ev("again"), ev("again", key: "key-1")]
                conflictAt = at
            }
            let results = log.appendBatches(batches)
            XCTAssertEqual(results.count, batches.count)
            for (i, batch) in batches.enumerated() {
                switch (results[i], conflictAt.map { i < $0 }) {
                case (.success(let stored), nil), (.success(let stored), true?):
                    XCTAssertEqual(
                        stored.map(\.seq), (0..<batch.count).map { UInt64(written.count + $0 + 1) })
                    XCTAssertEqual(stored.map(\.payload), batch.map(\.payload))
                    written += batch
                case (.failure(.keyConflict), false?) where i == conflictAt:
                    break
                case (.failure(.aborted), false?) where i > conflictAt!:
                    break
                default:
                    XCTFail("group \(group), batch \(i): \(results[i])")
                }
            }
        }
        XCTAssertGreaterThan(written.count, 5000)
        let read = try log.events(after: 0, limit: written.count + 10)
        XCTAssertEqual(read.map(\.seq), (1...UInt64(written.count)).map { $0 })
        XCTAssertEqual(read.map(\.stream), written.map(\.stream))
        XCTAssertEqual(read.map(\.kind), written.map(\.kind))
        XCTAssertEqual(read.map(\.payload), written.map(\.payload))
        XCTAssertEqual(read.map(\.key), written.map(\.key))
        let lastKeyed = try XCTUnwrap(written.lastIndex { $0.key != nil })
        XCTAssertEqual(try log.event(forKey: written[lastKeyed].key!)?.seq, UInt64(lastKeyed + 1))
    }

    func testInternedStringsGiveEachValueBackWhateverIsKept() {
        var interned = InternedStrings(limit: 2)
        let values = [
            "watched-toggled", "removed", "", "watched", "added", "watched-toggled", "é", "removed", "",
        ]
        for _ in 0..<3 {
            for v in values {
                XCTAssertEqual(Array(v.utf8).withUnsafeBytes { interned.string($0) }, v)
            }
        }
        XCTAssertEqual(interned.string(UnsafeRawBufferPointer(start: nil, count: 0)), "")
    }

    func testSnapshots() throws {
        let log = try EventLog(path: makeTempDir(self) + "/events.sqlite3")
        XCTAssertNil(try log.latestSnapshot())
        try log.saveSnapshot(seq: 5, data: [5])
        try log.saveSnapshot(seq: 9, data: [9, 9])
        try log.saveSnapshot(seq: 12, data: [])
        XCTAssertEqual(try log.latestSnapshot()?.seq, 12)
        XCTAssertEqual(try log.latestSnapshot()?.data, [])
    }

    // MARK: - Damaged and foreign files

    private func assertRefused(
        _ path: String, _ check: (LogError) -> Bool, file: StaticString = #filePath, line: UInt = #line
    ) {
        let before = fileBytes(path)
        XCTAssertThrowsError(try EventLog(path: path), file: file, line: line) { e in
            guard let e = e as? LogError else { return XCTFail("untyped \(e)", file: file, line: line) }
            XCTAssertTrue(check(e), "\(e)", file: file, line: line)
            XCTAssertTrue(
                e.message.contains(path), "message does not name the file: \(e)", file: file, line: line)
        }
        XCTAssertEqual(fileBytes(path), before, "the file was modified", file: file, line: line)
    }

    func testDamagedFileIsRefusedAndUntouched() throws {
        let path = makeTempDir(self) + "/events.sqlite3"
        var rng = SystemRandomNumberGenerator()
        let junk = (0..<8192).map { _ in UInt8.random(in: 0...255, using: &rng) }
        _ = FileManager.default.createFile(atPath: path, contents: Data(junk))
        assertRefused(path) { if case .corrupt = $0 { return true } else { return false } }
        // A text file.
        _ = FileManager.default.createFile(atPath: path, contents: Data("hello, not a database\n".utf8))
        assertRefused(path) { if case .corrupt = $0 { return true } else { return false } }
    }

    func testForeignSQLiteFileIsRefusedAndUntouched() throws {
        let dir = makeTempDir(self)
        let other = dir + "/other.sqlite3"
        // Another application's database: tables but no application id.
        do {
            let log = try EventLog(path: dir + "/tmp.sqlite3")
            log.close()
        }
        try runSQL(
            other, "CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT); INSERT INTO users VALUES(1, 'x');")
        assertRefused(other) { e in
            if case .foreign = e { return e.message.contains("users") }
            return false
        }
        // Another application id.
        let withID = dir + "/appid.sqlite3"
        try runSQL(withID, "PRAGMA application_id = 1234; CREATE TABLE t(x);")
        assertRefused(withID) {
            if case .foreign = $0 { return $0.message.contains("0x4d2") } else { return false }
        }
        // Our application id with a newer schema.
        let newer = dir + "/newer.sqlite3"
        try runSQL(
            newer,
            "PRAGMA application_id = \(EventLog.applicationID); PRAGMA user_version = 99; CREATE TABLE events(x);"
        )
        assertRefused(newer) {
            if case .foreign = $0 { return $0.message.contains("99") } else { return false }
        }
        // Ours, but a table is missing.
        let broken = dir + "/broken.sqlite3"
        try runSQL(
            broken,
            "PRAGMA application_id = \(EventLog.applicationID); PRAGMA user_version = 1; CREATE TABLE events(x);"
        )
        assertRefused(broken) {
            if case .corrupt = $0 { return $0.message.contains("snapshots") } else { return false }
        }
        // An empty SQLite database may be initialised.
        let empty = dir + "/empty.sqlite3"
        try runSQL(empty, "PRAGMA user_version = 0;")
        XCTAssertEqual(try EventLog(path: empty).latestSeq(), 0)
        // A directory.
        assertRefused(dir) { if case .foreign = $0 { return true } else { return false } }
    }

    func testCorruptPagesAreReportedAsCorrupt() throws {
        let path = makeTempDir(self) + "/events.sqlite3"
        do {
            let log = try EventLog(path: path, durability: .normal)
            for i in 0..<200 { _ = try log.append([ev("s\(i)", payload: [UInt8](repeating: 7, count: 500))]) }
            log.close()  // last connection: checkpoints the WAL into the file
        }
        var bytes = fileBytes(path)!
        // Pages 10 to 14: rows of `events`, past the pages of the schema that opening reads.
        XCTAssertGreaterThan(bytes.count, 16 * 4096)
        for i in (9 * 4096)..<(14 * 4096) { bytes[i] = 0xA5 }
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        let log = try EventLog(path: path)
        XCTAssertThrowsError(try log.events(after: 0, limit: 1000)) { e in
            guard case .corrupt(let m) = e as? LogError else { return XCTFail("\(e)") }
            XCTAssertTrue(m.contains(path))
        }
    }

    // MARK: - Group commit

    func testGroupCommitterCommitsGroupsAndReportsInOrder() throws {
        let path = makeTempDir(self) + "/events.sqlite3"
        let c = try GroupCommitter(path: path)
        for t in 1...100 as ClosedRange<UInt64> {
            c.submit([ev("s\(t)", key: "k\(t)"), ev("s\(t)")], token: t)
        }
        var got: [GroupCommitter.Completion] = []
        while got.count < 100 {
            c.wait()
            got += c.drain()
        }
        XCTAssertEqual(got.map(\.token), Array(1...100))
        let seqs = try got.flatMap { try $0.result.get().map(\.seq) }
        XCTAssertEqual(seqs, Array(1...200))
        XCTAssertLessThan(c.stats.transactions, 100, "batches were not grouped")
        XCTAssertEqual(c.stats.events, 200)
        c.saveSnapshot(seq: 200, data: [42], token: 999)
        c.close()
        got = c.drain()
        XCTAssertEqual(got.map(\.token), [999])
        XCTAssertEqual(try got[0].result.get(), [])
        let log = try EventLog(path: path)
        XCTAssertEqual(try log.latestSeq(), 200)
        XCTAssertEqual(try log.latestSnapshot()?.data, [42])
        // After close, submissions fail at once.
        c.submit([ev("late")], token: 1000)
        guard case .failure(.closed) = c.drain().first?.result else { return XCTFail() }
    }

    /// The writer thread asks for SCHED_BATCH (no privilege needed) and says whether it got it.
    func testWriterThreadRunsInSchedBatch() throws {
        let committer = try GroupCommitter(path: makeTempDir(self) + "/events.sqlite3")
        defer { committer.close() }
        if let note = committer.schedulingNote {
            throw XCTSkip("this sandbox refuses SCHED_BATCH: \(note)")
        }
        var writers: [Int] = []
        for tid in try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") {
            guard let stat = try? String(contentsOfFile: "/proc/self/task/\(tid)/stat", encoding: .utf8),
                stat.contains("(swiped-log-wr)"), let close = stat.lastIndex(of: ")")
            else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            writers.append(Int(fields[41 - 3]) ?? -1)
        }
        XCTAssertTrue(writers.contains(3), "no writer thread in SCHED_BATCH: \(writers)")
    }

    func testFailureHaltsUntilResume() throws {
        let path = makeTempDir(self) + "/events.sqlite3"
        let c = try GroupCommitter(path: path)
        defer { c.close() }
        c.submit([ev("a", key: "dup")], token: 1)
        c.wait()
        XCTAssertEqual(try c.drain().first?.result.get().map(\.seq), [1])
        c.submit([ev("b", key: "dup")], token: 2)
        c.wait()
        guard case .failure(.keyConflict) = c.drain().first?.result else { return XCTFail() }
        XCTAssertNotNil(c.haltedBy)
        c.submit([ev("c")], token: 3)
        c.wait()
        guard case .failure(.aborted) = c.drain().first?.result else { return XCTFail() }
        c.resume()
        c.submit([ev("d")], token: 4)
        c.wait()
        XCTAssertEqual(try c.drain().first?.result.get().map(\.seq), [2])
    }

    func testDiskFullRollsBackAndRecovers() throws {
        let (dir, reason) = mountSmallTmpfs(self, sizeKB: 1024)
        if let reason { throw XCTSkip(reason) }
        let path = dir + "/events.sqlite3"
        let c = try GroupCommitter(path: path)
        defer { c.close() }
        let reader = try EventLog(path: path)
        c.submit([ev("a")], token: 1)
        c.wait()
        XCTAssertEqual(try c.drain()[0].result.get().map(\.seq), [1])
        fillDisk(dir + "/filler")
        let big = [UInt8](repeating: 9, count: 256 * 1024)
        c.submit([ev("b"), ev("c", payload: big)], token: 2)
        c.wait()
        guard case .failure(.full(let m)) = c.drain()[0].result else { return XCTFail("expected .full") }
        XCTAssertTrue(m.contains(path), m)
        XCTAssertEqual(try reader.latestSeq(), 1, "half a batch is visible")
        XCTAssertEqual(try reader.events(after: 0, limit: 10).map(\.stream), ["a"])
        c.submit([ev("d")], token: 3)
        c.wait()
        guard case .failure(.aborted) = c.drain()[0].result else { return XCTFail("expected .aborted") }
        XCTAssertEqual(unlink(dir + "/filler"), 0)
        c.resume()
        c.submit([ev("b"), ev("c", payload: big)], token: 4)
        c.wait()
        XCTAssertEqual(try c.drain()[0].result.get().map(\.seq), [2, 3])
        XCTAssertEqual(try reader.events(after: 0, limit: 10).map(\.stream), ["a", "b", "c"])
    }

    func testFailedFsyncIsFatalAndSticky() throws {
        FaultInjection.install()
        defer { FaultInjection.uninstall() }
        let path = makeTempDir(self) + "/events.sqlite3"
        let c = try GroupCommitter(path: path)
        defer { c.close() }
        c.submit([ev("a")], token: 1)
        c.wait()
        XCTAssertEqual(try c.drain()[0].result.get().map(\.seq), [1])
        FaultInjection.failSyncs = true
        c.submit([ev("b")], token: 2)
        c.wait()
        guard case .failure(let e) = c.drain()[0].result, case .io(let m) = e else {
            return XCTFail("expected .io")
        }
        XCTAssertTrue(e.isFatal)
        XCTAssertTrue(m.contains(path), m)
        // Fatal: resume() does not help, even once fsync works again.
        FaultInjection.failSyncs = false
        c.resume()
        c.submit([ev("c")], token: 3)
        c.wait()
        guard case .failure(.io) = c.drain()[0].result else { return XCTFail("expected .io to stick") }
        XCTAssertEqual(c.haltedBy?.isFatal, true)
    }

    func testInjectedWriteFailureIsFull() throws {
        FaultInjection.install()
        defer { FaultInjection.uninstall() }
        let log = try EventLog(path: makeTempDir(self) + "/events.sqlite3")
        _ = try log.append([ev("a")])
        FaultInjection.failWrites = true
        XCTAssertThrowsError(try log.append([ev("b")])) { e in
            guard case .full = e as? LogError else { return XCTFail("\(e)") }
        }
        FaultInjection.failWrites = false
        XCTAssertEqual(try log.append([ev("c")]).map(\.seq), [2])
        XCTAssertEqual(try log.events(after: 0, limit: 10).map(\.stream), ["a", "c"])
    }
}

/// Runs SQL on a database through the sqlite3 library directly (for foreign files).
func runSQL(_ path: String, _ sql: String) throws {
    try SQLiteScript.run(path: path, sql: sql)
}

// export, verify, import and backup on SQLite logs made here (issue 32), in process: the moves
// keep everything, and every refusal leaves nothing behind and the source untouched.
import EventLog
import Foundation
import Glibc
import Movies
import TestSupport
import XCTest

@testable import DataTools

/// A SQLite log written through EventLog: the seed, then `changes` random adds, keyed toggles,
/// removes and restores (a few marked as undos), each with the payload the daemon writes; the
/// changes are made by `authors` in turn (issue 46; nil: nobody known), the seed by nobody.
/// `reorder`: moves too (issue 48), each decided as the daemon decides it, so the log's order
/// is no longer the order of the adds.
func makeLog(
    directory: String, changes: Int, seed: UInt64 = 32, authors: [String?] = [nil], reorder: Bool = false
) throws -> MovieState {
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let log = try EventLog(path: directory + "/events.sqlite3", durability: .normal)
    defer { log.close() }
    var state = MovieState()
    var rng = SplitMix64(seed: seed)
    var made = 0
    func append(_ e: MovieEvent, key: String? = nil, undoes: UInt64? = nil, seeding: Bool = false) throws {
        var probe = state
        guard let after = probe.apply(e, seq: state.lastSeq + 1) else { return }
        let payload = e.kind == MovieEvent.Kind.added ? e.payload : e.payload(after: after, undoes: undoes)
        let author = seeding ? nil : authors[made % authors.count]
        let stored = try log.append([
            NewEvent(stream: e.movieID, kind: e.kind.rawValue, payload: payload, key: key, author: author)
        ])
        if !seeding { made += 1 }
        state.apply(e, seq: stored[0].seq)
    }
    for e in MovieState.seedCatalogue { try append(e, seeding: true) }
    for i in 0..<changes {
        let movies = state.movies
        let roll = Int.random(in: 0..<(reorder ? 13 : 10), using: &rng)
        switch roll {
        case 0...1:
            let title = "Film \(i) ünïcode \"quoted\""
            try append(.added(id: state.freshID(for: title), title: title, image: "img\(i)"))
        case 2...5 where !movies.isEmpty:
            let m = movies.randomElement(using: &rng)!
            try append(.watchedToggled(id: m.id), key: "toggle-\(i)", undoes: i % 7 == 0 ? m.version : nil)
        case 6 where !movies.isEmpty:
            try append(.watchedWithFriendsToggled(id: movies.randomElement(using: &rng)!.id))
        case 7 where movies.count > 3:
            try append(.removed(id: movies.randomElement(using: &rng)!.id), key: "remove-\(i)")
        case 8...9 where !state.removed.isEmpty:
            let id = state.removed.keys.sorted().randomElement(using: &rng)!
            try append(state.decide(MovieCommand(.restore(movie: id))))
        case 10...12 where movies.count > 1:
            let m = movies.randomElement(using: &rng)!
            let other = movies.randomElement(using: &rng)!
            let to: ListPlace = other.id == m.id ? .first : .after(other.id)
            try append(
                state.decide(MovieCommand(.move(movie: m.id, to: to))), undoes: i % 5 == 0 ? m.version : nil)
        default:
            break
        }
    }
    return state
}

final class MovesTests: XCTestCase {
    var dir = ""

    override func setUpWithError() throws {
        var template = Array("/tmp/swiped-moves.XXXXXX".utf8CString)
        XCTAssertNotNil(template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) })
        dir = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: dir)
    }

    func ls(_ path: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
    }

    func bytes(_ path: String) -> [UInt8] { Array(FileManager.default.contents(atPath: path) ?? Data()) }

    func export(_ state: String, to file: String) throws -> Verified {
        try Moves.export(.state(state), toFile: file, replace: false, now: 1_000_000)
    }

    func testExportImportKeepsSeqsTimesKeysAndRemovedMovies() throws {
        let state = try makeLog(directory: dir + "/a", changes: 600)
        let source = try Moves.verify(.state(dir + "/a"))
        XCTAssertEqual(source.seq, state.lastSeq)
        let exported = try export(dir + "/a", to: dir + "/a.jsonl")
        XCTAssertEqual(exported.digest, source.digest)
        var st = stat()
        XCTAssertEqual(stat(dir + "/a.jsonl", &st), 0)
        XCTAssertEqual(st.st_mode & 0o777, 0o600)
        XCTAssertEqual(try Moves.readExport(try LineInput.open(dir + "/a.jsonl")).digest, source.digest)

        let imported = try Moves.importLog(from: .export(dir + "/a.jsonl"), into: .state(dir + "/b"))
        XCTAssertEqual(imported.digest, source.digest)
        XCTAssertEqual(ls(dir + "/b"), ["events.sqlite3", "lock"])
        XCTAssertEqual(stat(dir + "/b", &st), 0)
        XCTAssertEqual(st.st_mode & 0o777, 0o700)

        // Row for row the same events: seq, time, key; the movie each records is the fold's.
        let a = try EventLog(path: dir + "/a/events.sqlite3", create: false)
        let b = try EventLog(path: dir + "/b/events.sqlite3", create: false)
        defer {
            a.close()
            b.close()
        }
        let ea = try a.events(after: 0, limit: 100_000)
        let eb = try b.events(after: 0, limit: 100_000)
        XCTAssertEqual(ea.map(\.seq), eb.map(\.seq))
        XCTAssertEqual(ea.map(\.at), eb.map(\.at))
        XCTAssertEqual(ea.map(\.key), eb.map(\.key))
        XCTAssertEqual(ea.map(\.payload), eb.map(\.payload))
        let keyed = ea.filter { $0.key != nil }
        XCTAssertGreaterThan(keyed.count, 100)
        for e in keyed { XCTAssertEqual(try b.event(forKey: e.key!)?.seq, e.seq) }
        let snapshot = try XCTUnwrap(try b.latestSnapshot())
        XCTAssertEqual(try MovieState(snapshot: snapshot.data), state)
        XCTAssertFalse(state.removed.isEmpty, "the log has removed movies")
        // The same events, another log: a client of the old one must start over.
        XCTAssertNotEqual(try b.logID(), try a.logID())

        // And back through a SQLite file (a backup) as the source.
        let backup = try Moves.backup(.state(dir + "/b"), to: dir + "/b.sqlite3", replace: false, now: 0)
        XCTAssertEqual(backup.0.digest, source.digest)
        XCTAssertTrue(LineInput.isSQLite(dir + "/b.sqlite3"))
        XCTAssertEqual(stat(dir + "/b.sqlite3", &st), 0)
        XCTAssertEqual(st.st_mode & 0o777, 0o600)
        // What an import killed midway left behind goes.
        try FileManager.default.createDirectory(atPath: dir + "/c", withIntermediateDirectories: false)
        for stale in [".events.sqlite3.tmp-1", ".events.sqlite3.tmp-1-wal"] {
            XCTAssertTrue(
                FileManager.default.createFile(atPath: dir + "/c/" + stale, contents: Data([1, 2])))
        }
        XCTAssertEqual(
            try Moves.importLog(from: .sqlite(dir + "/b.sqlite3"), into: .state(dir + "/c")).digest,
            source.digest)
        XCTAssertEqual(ls(dir + "/c"), ["events.sqlite3", "lock"])
        // The backup is a copy of b, its id included; restored from it, c is a log of its own.
        let copy = try EventLog(path: dir + "/b.sqlite3", create: false)
        let c = try EventLog(path: dir + "/c/events.sqlite3", create: false)
        XCTAssertEqual(try copy.logID(), try b.logID())
        XCTAssertNotEqual(try c.logID(), try b.logID())
        copy.close()
        c.close()
        XCTAssertEqual(ls(dir), ["a", "a.jsonl", "b", "b.sqlite3", "c"], "no temporary file left")
    }

    /// The digest is the state's and the keys': another state, or the same state with other
    /// keys, has another.
    func testDigestNamesTheStateAndTheKeys() throws {
        var one = LogChecker()
        var two = LogChecker()
        for (i, e) in MovieState.seedCatalogue.enumerated() {
            let row = StoredEvent(
                seq: UInt64(i + 1), stream: e.movieID, kind: e.kind.rawValue, payload: e.payload, key: nil,
                at: 5)
            _ = try one.fold(row)
            _ = try two.fold(
                StoredEvent(
                    seq: row.seq, stream: row.stream, kind: row.kind, payload: row.payload,
                    key: i == 3 ? "k" : nil, at: 9))
        }
        XCTAssertNotEqual(one.digest, two.digest)
        var three = LogChecker()
        for (i, e) in MovieState.seedCatalogue.enumerated() {
            _ = try three.fold(
                StoredEvent(
                    seq: UInt64(i + 1), stream: e.movieID, kind: e.kind.rawValue, payload: e.payload,
                    key: nil, at: 7))
        }
        XCTAssertEqual(one.digest, three.digest, "times are not part of the state")
    }

    /// Every refusal of a bad export: the line number and the cause; no log, no temporary
    /// file, no directory made for it; the export itself untouched.
    func testBadExportsAreRefusedLeavingNothing() throws {
        _ = try makeLog(directory: dir + "/a", changes: 300)
        _ = try export(dir + "/a", to: dir + "/a.jsonl")
        let good = bytes(dir + "/a.jsonl")
        var lines = good.split(separator: 0x0A, omittingEmptySubsequences: false).map(Array.init)
        XCTAssertEqual(lines.removeLast(), [])
        func joined(_ ls: [[UInt8]]) -> [UInt8] { ls.flatMap { $0 + [0x0A] } }
        func key(_ line: [UInt8]) -> String? {
            String(decoding: line, as: UTF8.self).range(of: #""key":"[^"]*""#, options: .regularExpression)
                .map { String(String(decoding: line, as: UTF8.self)[$0]) }
        }
        let keyed = lines.indices.filter { key(lines[$0]) != nil }
        var duplicate = lines
        duplicate[keyed[3]] = Array(
            String(decoding: lines[keyed[3]], as: UTF8.self).replacingOccurrences(
                of: key(lines[keyed[3]])!, with: key(lines[keyed[1]])!
            ).utf8)
        var flipped = good
        flipped[good.count / 2] ^= 0x04
        var newer = lines
        newer[0] = Array(
            String(decoding: lines[0], as: UTF8.self).replacingOccurrences(
                of: #""version":3"#, with: #""version":4"#
            ).utf8)
        var notJSON = lines
        notJSON[40] = Array("{\"seq\":".utf8)
        var unknownKind = lines
        unknownKind[40] = Array(
            String(decoding: lines[40], as: UTF8.self).replacingOccurrences(
                of: #""kind":"[^"]*""#, with: #""kind":"adopted""#, options: .regularExpression
            ).utf8)
        let outOfOrder = Array(lines[...50] + [lines[50]] + lines[51...])
        let cases: [(String, [UInt8], String)] = [
            ("truncated in a line", Array(good[..<(good.count * 2 / 3)]), "the file was cut"),
            ("truncated at a line's end", joined(Array(lines[..<200])), "without its trailer"),
            ("a flipped byte", flipped, "line "),
            ("a newer format", joined(newer), "newer than this swiped reads"),
            ("a gap", joined(Array(lines[..<100] + lines[101...])), "gap: seq 101 follows seq 99"),
            ("out of order", joined(outOfOrder), "line 52: seq 50 out of order"),
            ("a duplicate key", joined(duplicate), "repeats the idempotency key"),
            ("not JSON", joined(notJSON), "line 41: not JSON"),
            ("an unknown kind", joined(unknownKind), "line 41: unknown event kind"),
            ("empty", [], "empty: not a swiped export"),
        ]
        for (name, content, expected) in cases {
            let file = dir + "/bad.jsonl"
            XCTAssertTrue(FileManager.default.createFile(atPath: file, contents: Data(content)))
            XCTAssertThrowsError(try Moves.readExport(try LineInput.open(file)), name) { error in
                XCTAssertTrue("\(error)".contains(expected), "\(name): \(error)")
            }
            XCTAssertThrowsError(try Moves.importLog(from: .export(file), into: .state(dir + "/t")), name) {
                error in
                XCTAssertTrue("\(error)".contains(expected), "\(name): \(error)")
            }
            XCTAssertFalse(Files.exists(dir + "/t"), "\(name): the import left \(ls(dir + "/t"))")
            // Into an existing, empty directory: it stays as it was (the lock file aside).
            try FileManager.default.createDirectory(atPath: dir + "/u", withIntermediateDirectories: false)
            XCTAssertThrowsError(try Moves.importLog(from: .export(file), into: .state(dir + "/u")), name)
            XCTAssertEqual(ls(dir + "/u"), ["lock"], name)
            try FileManager.default.removeItem(atPath: dir + "/u")
        }
        XCTAssertEqual(bytes(dir + "/a.jsonl"), good, "the source is untouched")
    }

    func testANonEmptyTargetIsRefusedAndKept() throws {
        _ = try makeLog(directory: dir + "/a", changes: 50)
        _ = try makeLog(directory: dir + "/b", changes: 20, seed: 7)
        _ = try export(dir + "/a", to: dir + "/a.jsonl")
        let before = bytes(dir + "/b/events.sqlite3")
        XCTAssertThrowsError(try Moves.importLog(from: .export(dir + "/a.jsonl"), into: .state(dir + "/b"))) {
            error in
            XCTAssertTrue("\(error)".contains("is not empty"), "\(error)")
        }
        XCTAssertEqual(bytes(dir + "/b/events.sqlite3"), before)
        XCTAssertEqual(ls(dir + "/b"), ["events.sqlite3", "lock"])
        // An existing export or backup is not replaced either.
        XCTAssertThrowsError(
            try Moves.backup(.state(dir + "/a"), to: dir + "/a.jsonl", replace: false, now: 0))
        XCTAssertThrowsError(try export(dir + "/a", to: dir + "/a.jsonl"))
        XCTAssertEqual(ls(dir), ["a", "a.jsonl", "b"])
    }

    /// A state directory another process holds (a daemon's lock) is refused.
    func testAnImportWaitsForNoDaemon() throws {
        _ = try makeLog(directory: dir + "/a", changes: 10)
        _ = try export(dir + "/a", to: dir + "/a.jsonl")
        try FileManager.default.createDirectory(atPath: dir + "/b", withIntermediateDirectories: false)
        let fd = open(dir + "/b/lock", O_RDWR | O_CREAT, 0o600)
        defer { close(fd) }
        // flock locks belong to the open file description: a second open one conflicts.
        XCTAssertEqual(flock(fd, LOCK_EX | LOCK_NB), 0)
        XCTAssertThrowsError(try Moves.importLog(from: .export(dir + "/a.jsonl"), into: .state(dir + "/b"))) {
            error in
            XCTAssertTrue("\(error)".contains("in use by another process"), "\(error)")
        }
        XCTAssertEqual(ls(dir + "/b"), ["lock"])
    }

    /// verify finds a snapshot that is not the fold at its seq, and damage to the file.
    func testVerifyFindsABadSnapshotAndDamage() throws {
        let state = try makeLog(directory: dir + "/a", changes: 100)
        let log = try EventLog(path: dir + "/a/events.sqlite3", create: false)
        var wrong = state
        _ = wrong.apply(.watchedToggled(id: state.movies[0].id), seq: state.lastSeq + 1)
        var other = MovieState()
        for (i, e) in MovieState.seedCatalogue.enumerated() { _ = other.apply(e, seq: UInt64(i + 1)) }
        try log.saveSnapshot(seq: 10, data: other.snapshotBytes())
        log.close()
        XCTAssertNoThrow(try Moves.verify(.state(dir + "/a")))
        let log2 = try EventLog(path: dir + "/a/events.sqlite3", create: false)
        var skewed = other
        _ = skewed.apply(.removed(id: "seven"), seq: 11)
        try log2.saveSnapshot(seq: 11, data: skewed.snapshotBytes())
        log2.close()
        XCTAssertThrowsError(try Moves.verify(.state(dir + "/a"))) { error in
            XCTAssertTrue("\(error)".contains("snapshot at seq 11"), "\(error)")
        }
        // A page of the file overwritten: integrity_check or the fold says so.
        let b = dir + "/b"
        _ = try makeLog(directory: b, changes: 2000)
        let fd = open(b + "/events.sqlite3", O_WRONLY)
        let junk = [UInt8](repeating: 0x5A, count: 4096)
        XCTAssertEqual(pwrite(fd, junk, junk.count, 4096 * 3), 4096)
        close(fd)
        XCTAssertThrowsError(try Moves.verify(.state(b)))
    }
}

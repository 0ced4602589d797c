// Who made each event moves with the log (issue 46): export format version 2 writes `by` on the
// event lines that have one, import writes it into either store, backup and verify keep it, and
// the digest covers it in a way that leaves a log without authors the digest it always had, so
// that backups and exports made before still verify equal to an export made now.
import EventLog
import Foundation
import Glibc
import JSONCodec
import Movies
import StorePostgres
import StoreTestSupport
import TestSupport
import XCTest

@testable import DataTools

final class AuthorMovesTests: XCTestCase {
    var dir = ""
    nonisolated(unsafe) private static var shared: PostgresCluster?
    nonisolated(unsafe) private static var databases = 0

    /// One cluster for the class, a database per call.
    private func database() throws -> (cluster: PostgresCluster, conninfo: String, name: String) {
        if AuthorMovesTests.shared == nil {
            AuthorMovesTests.shared = try PostgresCluster(database: nil, prefix: "swiped-author-moves")
        }
        let cluster = AuthorMovesTests.shared!
        AuthorMovesTests.databases += 1
        let name = "moves_\(AuthorMovesTests.databases)"
        try cluster.createDatabase(name)
        return (cluster, cluster.conninfo(database: name), name)
    }

    override class func tearDown() {
        shared?.destroy()
        shared = nil
        super.tearDown()
    }

    override func setUpWithError() throws {
        var template = Array("/tmp/swiped-author-moves.XXXXXX".utf8CString)
        XCTAssertNotNil(template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) })
        dir = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: dir)
    }

    private static let people: [String?] = ["alice", nil, "zoë@example.org", "bob", nil]

    private func lines(_ path: String) -> [Substring] {
        String(decoding: FileManager.default.contents(atPath: path) ?? Data(), as: UTF8.self)
            .split(separator: "\n")
    }

    /// An export's event lines and its trailer's digest: what two exports of one log share
    /// (the header says where and when, and the checksum covers the header).
    private func events(ofExport path: String) -> (lines: [Substring], digest: String) {
        let all = lines(path)
        let trailer = all.last ?? ""
        let digest = trailer.split(separator: ",").first { $0.hasPrefix(#""digest":"#) } ?? ""
        return (Array(all.dropFirst().dropLast()), String(digest))
    }

    /// Every event of the SQLite log in `directory`, as stored.
    private func stored(_ directory: String) throws -> [StoredEvent] {
        let log = try EventLog(path: directory + "/events.sqlite3", create: false)
        defer { log.close() }
        return try log.events(after: 0, limit: 1_000_000)
    }

    /// The digest of a log whose events have no author as it was computed before authors were
    /// kept (docs/export-format.md): SHA-256 of the state's snapshot bytes and of the keys.
    private func digestWithoutAuthors(_ state: MovieState, _ events: [StoredEvent]) -> String {
        var keys = SHA256()
        for e in events where e.key != nil {
            let k = Array(e.key!.utf8)
            keys.update(bigEndian(e.seq, bytes: 8) + bigEndian(UInt64(k.count), bytes: 4) + k)
        }
        var h = SHA256()
        h.update(state.snapshotBytes())
        h.update(keys.finish())
        return "sha256:" + SHA256.hex(digest: h.finish())
    }

    /// The digest of a log with authors by the rule of docs/export-format.md: the one before,
    /// then the SHA-256 of the authors (each event's seq, its author's length and bytes).
    private func digestWithAuthors(_ state: MovieState, _ events: [StoredEvent]) -> String {
        var keys = SHA256()
        var authors = SHA256()
        for e in events {
            if let key = e.key {
                let k = Array(key.utf8)
                keys.update(bigEndian(e.seq, bytes: 8) + bigEndian(UInt64(k.count), bytes: 4) + k)
            }
            if let by = e.author {
                let b = Array(by.utf8)
                authors.update(bigEndian(e.seq, bytes: 8) + bigEndian(UInt64(b.count), bytes: 4) + b)
            }
        }
        var h = SHA256()
        h.update(state.snapshotBytes())
        h.update(keys.finish())
        h.update(authors.finish())
        return "sha256:" + SHA256.hex(digest: h.finish())
    }

    private func bigEndian(_ v: UInt64, bytes: Int) -> [UInt8] {
        (0..<bytes).map { UInt8(truncatingIfNeeded: v >> UInt64(8 * (bytes - 1 - $0))) }
    }

    // MARK: -

    func testAuthorsGoFromSQLiteToPostgreSQLAndBack() throws {
        let state = try makeLog(directory: dir + "/a", changes: 300, authors: AuthorMovesTests.people)
        let rows = try stored(dir + "/a")
        XCTAssertEqual(rows.prefix(10).compactMap(\.author), [], "the seed is nobody's")
        XCTAssertEqual(Set(rows.compactMap(\.author)), ["alice", "zoë@example.org", "bob"])
        let source = try Moves.verify(.state(dir + "/a"))
        XCTAssertEqual(source.digest, digestWithAuthors(state, rows))
        XCTAssertNotEqual(source.digest, digestWithoutAuthors(state, rows))

        // The export: `by` on the lines of events that have one, after `undoes`, before `key`.
        let exported = try Moves.export(.state(dir + "/a"), toFile: dir + "/a.jsonl", replace: false, now: 1)
        XCTAssertEqual(exported.digest, source.digest)
        let a = events(ofExport: dir + "/a.jsonl")
        XCTAssertEqual(a.lines.count, rows.count)
        for (line, row) in zip(a.lines, rows) {
            guard case .event(let x) = try ExportFormat.parse(Array(line.utf8)[...], first: false) else {
                return XCTFail(String(line))
            }
            XCTAssertEqual(x.event.by, row.author, String(line))
            XCTAssertEqual(line.contains(#""by":"#), row.author != nil, String(line))
        }
        let keyed = try XCTUnwrap(
            a.lines.first { $0.contains(#""by":"zoë@example.org""#) && $0.contains("key") })
        XCTAssertTrue(
            keyed.hasSuffix(
                #","by":"zoë@example.org","key":"\#(rows.first { $0.author == "zoë@example.org" && $0.key != nil }!.key!)"}"#
            ), String(keyed))

        // Into PostgreSQL, out again: the same event lines, the same digest.
        let db = try database()
        let imported = try Moves.importLog(from: .export(dir + "/a.jsonl"), into: .postgres(db.conninfo))
        XCTAssertEqual(imported.digest, source.digest)
        let counts = try db.cluster.psql(
            "SELECT author, count(*) FROM swiped_events GROUP BY author", database: db.name)
        XCTAssertEqual(
            Set(counts.split(separator: "\n").map(String.init)),
            Set(Dictionary(grouping: rows, by: \.author).map { "\($0.key ?? "")|\($0.value.count)" }))
        _ = try Moves.export(.postgres(db.conninfo), toFile: dir + "/b.jsonl", replace: false, now: 2)
        let b = events(ofExport: dir + "/b.jsonl")
        XCTAssertEqual(b.lines, a.lines)
        XCTAssertEqual(b.digest, a.digest)
        XCTAssertEqual(try Moves.verify(.postgres(db.conninfo)).digest, source.digest)

        // Back into SQLite, row for row.
        XCTAssertEqual(
            try Moves.importLog(from: .export(dir + "/b.jsonl"), into: .state(dir + "/c")).digest,
            source.digest)
        XCTAssertEqual(try stored(dir + "/c").map(\.author), rows.map(\.author))

        // Backups keep them: a SQLite file, and PostgreSQL's export; a SQLite backup imports
        // into PostgreSQL with them.
        let sqliteBackup = try Moves.backup(
            .state(dir + "/c"), to: dir + "/c.sqlite3", replace: false, now: 3)
        XCTAssertEqual(sqliteBackup.0.digest, source.digest)
        let other = try database()
        XCTAssertEqual(
            try Moves.importLog(from: .sqlite(dir + "/c.sqlite3"), into: .postgres(other.conninfo)).digest,
            source.digest)
        let pgBackup = try Moves.backup(
            .postgres(other.conninfo), to: dir + "/d.jsonl", replace: false, now: 4)
        XCTAssertEqual(pgBackup.0.digest, source.digest)
        XCTAssertEqual(events(ofExport: dir + "/d.jsonl").lines, a.lines)
    }

    func testALogWithoutAuthorsMovesAndKeepsTheDigestItHadBefore() throws {
        let state = try makeLog(directory: dir + "/a", changes: 300)
        let rows = try stored(dir + "/a")
        XCTAssertEqual(rows.compactMap(\.author), [])
        let source = try Moves.verify(.state(dir + "/a"))
        XCTAssertEqual(source.digest, digestWithoutAuthors(state, rows))
        _ = try Moves.export(.state(dir + "/a"), toFile: dir + "/a.jsonl", replace: false, now: 1)
        let a = events(ofExport: dir + "/a.jsonl")
        XCTAssertFalse(a.lines.contains { $0.contains(#""by""#) })
        let db = try database()
        XCTAssertEqual(
            try Moves.importLog(from: .export(dir + "/a.jsonl"), into: .postgres(db.conninfo)).digest,
            source.digest)
        _ = try Moves.export(.postgres(db.conninfo), toFile: dir + "/b.jsonl", replace: false, now: 2)
        XCTAssertEqual(events(ofExport: dir + "/b.jsonl").lines, a.lines)
        XCTAssertEqual(events(ofExport: dir + "/b.jsonl").digest, a.digest)
        // The same events, some signed: another digest; another signer: another again.
        let signed = try makeLog(directory: dir + "/s", changes: 300, authors: ["alice"])
        XCTAssertEqual(signed, state)
        let resigned = try makeLog(directory: dir + "/r", changes: 300, authors: ["bob"])
        let digests = try [dir + "/a", dir + "/s", dir + "/r"].map { try Moves.verify(.state($0)).digest }
        XCTAssertEqual(Set(digests).count, 3, "\(digests)")
        _ = resigned
    }

    /// A log of schema 2 (from before authors were kept) verifies with the digest it had, read
    /// as it is, and keeps it once a store of this build has migrated it: SQLite and PostgreSQL.
    func testAnOldLogKeepsItsDigestThroughItsMigration() throws {
        let state = try makeLog(directory: dir + "/a", changes: 300)
        let path = dir + "/a/events.sqlite3"
        let rows = try stored(dir + "/a")
        let before = digestWithoutAuthors(state, rows)
        _ = try Moves.export(.state(dir + "/a"), toFile: dir + "/new.jsonl", replace: false, now: 1)
        try LegacyLogs.downgradeToSchema2(path)
        // A backup of the old log, as it would have been made then.
        let oldBackup = try Moves.backup(.state(dir + "/a"), to: dir + "/old.sqlite3", replace: false, now: 2)
        XCTAssertEqual(oldBackup.0.digest, before)
        XCTAssertEqual(try Moves.verify(.state(dir + "/a")).digest, before)
        _ = try Moves.export(.state(dir + "/a"), toFile: dir + "/old.jsonl", replace: false, now: 3)
        XCTAssertEqual(events(ofExport: dir + "/old.jsonl").lines, events(ofExport: dir + "/new.jsonl").lines)
        // Neither a read nor a backup migrated it.
        XCTAssertEqual(try userVersion(path), 2)
        XCTAssertEqual(try userVersion(dir + "/old.sqlite3"), 2)
        // A store of this build opens it: schema 3, its events nobody's, its digest as it was.
        try EventLog(path: path).close()
        XCTAssertEqual(try userVersion(path), 3)
        XCTAssertEqual(try stored(dir + "/a").map(\.author), rows.map { _ in nil })
        XCTAssertEqual(try Moves.verify(.state(dir + "/a")).digest, before)
        XCTAssertEqual(try Moves.verify(.sqliteFile(dir + "/old.sqlite3")).digest, before)
        XCTAssertEqual(try Moves.readExport(try LineInput.open(dir + "/old.jsonl")).digest, before)

        // PostgreSQL: a database of schema 2, verified as it is, then migrated by a store.
        let db = try database()
        _ = try Moves.importLog(from: .sqlite(dir + "/old.sqlite3"), into: .postgres(db.conninfo))
        _ = try db.cluster.psql(LegacyLogs.postgresSchema2, database: db.name)
        XCTAssertEqual(try Moves.verify(.postgres(db.conninfo)).digest, before)
        _ = try Moves.export(.postgres(db.conninfo), toFile: dir + "/pg-old.jsonl", replace: false, now: 4)
        XCTAssertEqual(
            events(ofExport: dir + "/pg-old.jsonl").lines, events(ofExport: dir + "/new.jsonl").lines)
        XCTAssertEqual(try db.cluster.psql("SELECT version FROM swiped_schema", database: db.name), "2")
        try PostgresStore.open(conninfo: db.conninfo).close()
        XCTAssertEqual(try db.cluster.psql("SELECT version FROM swiped_schema", database: db.name), "3")
        XCTAssertEqual(try Moves.verify(.postgres(db.conninfo)).digest, before)
    }

    private func userVersion(_ path: String) throws -> Int {
        let reader = try LogFileReader(path: path)
        defer { reader.close() }
        return reader.schemaVersion
    }

    // MARK: - What a reader refuses

    /// `by` is a person's name, in version 2 only; the fast path leaves anything else to the
    /// parser, which says what is wrong.
    func testAnAuthorIsCheckedWhenRead() throws {
        let line =
            #"{"seq":11,"kind":"watched-toggled","movie":{"id":"seven","title":"Se7en","image":"seven","watched":true,"watchedWithFriends":false,"version":11},"at":"2026-12-03T09:44:39.497882Z","by":"alice","key":"k"}"#
        guard case .event(let x) = try ExportFormat.parse(Array(line.utf8)[...], first: false) else {
            return XCTFail(line)
        }
        XCTAssertEqual(x.event.by, "alice")
        XCTAssertEqual(ExportFormat.fastEvent(Array(line.utf8)[...]), x)
        XCTAssertThrowsError(try ExportFormat.parse(Array(line.utf8)[...], first: false, version: 1)) {
            XCTAssertEqual("\($0)", #"an event with "by" in a version 1 export"#)
        }
        for (by, why) in [
            (#""""#, "a name is 1 to 64 bytes; this one is empty"),
            (#""a b""#, "a name has no spaces or control characters (U+20)"),
            (#""\u0007""#, "a name has no spaces or control characters (U+7)"),
            ("\"\(String(repeating: "x", count: 65))\"", "a name is 1 to 64 bytes; this one is 65"),
        ] {
            let bad = Array(line.replacingOccurrences(of: #""alice""#, with: by).utf8)[...]
            XCTAssertNil(ExportFormat.fastEvent(bad), by)
            XCTAssertThrowsError(try ExportFormat.parse(bad, first: false), by) {
                XCTAssertEqual("\($0)", #""by" is not a person's name: \#(why)"#)
            }
        }
        let number = Array(line.replacingOccurrences(of: #""alice""#, with: "5").utf8)[...]
        XCTAssertNil(ExportFormat.fastEvent(number))
        XCTAssertThrowsError(try ExportFormat.parse(number, first: false)) {
            XCTAssertEqual("\($0)", #""by" must be a string"#)
        }

        // A file of version 1 with a `by`: refused at its line, whichever path reads it.
        _ = try makeLog(directory: dir + "/a", changes: 0)
        _ = try Moves.export(.state(dir + "/a"), toFile: dir + "/a.jsonl", replace: false, now: 1)
        var all = lines(dir + "/a.jsonl").map(String.init)
        all[0] = all[0].replacingOccurrences(of: #""version":3"#, with: #""version":1"#)
        all[3] = all[3].replacingOccurrences(of: #""}"#, with: #"","by":"alice"}"#)
        XCTAssertTrue(all[3].hasSuffix(#","by":"alice"}"#), all[3])
        _ = FileManager.default.createFile(
            atPath: dir + "/v1.jsonl", contents: Data((all.joined(separator: "\n") + "\n").utf8))
        XCTAssertThrowsError(try Moves.readExport(try LineInput.open(dir + "/v1.jsonl"))) {
            XCTAssertTrue(
                "\($0)".hasSuffix(#"v1.jsonl: line 4: an event with "by" in a version 1 export"#), "\($0)")
        }
    }
}

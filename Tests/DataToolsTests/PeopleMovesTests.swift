// The people tables move with the log (issue 45): export format version 2 carries the tokens
// (their hashes) and role grants as lines of their own, import writes them into either store,
// backup keeps them, verify counts them, and the digest stays the events' alone, so that a
// version 1 export still imports and says the digest it said.
import EventLog
import Foundation
import Glibc
import Movies
import People
import TestSupport
import XCTest

@testable import DataTools

final class PeopleMovesTests: XCTestCase {
    var dir = ""
    nonisolated(unsafe) private static var shared: PostgresCluster?
    nonisolated(unsafe) private static var databases = 0

    /// One cluster for the class, a database per call.
    private func database() throws -> (cluster: PostgresCluster, conninfo: String, name: String) {
        if PeopleMovesTests.shared == nil {
            PeopleMovesTests.shared = try PostgresCluster(database: nil, prefix: "swiped-people-moves")
        }
        let cluster = PeopleMovesTests.shared!
        PeopleMovesTests.databases += 1
        let name = "moves_\(PeopleMovesTests.databases)"
        try cluster.createDatabase(name)
        return (cluster, cluster.conninfo(database: name), name)
    }

    override class func tearDown() {
        shared?.destroy()
        shared = nil
        super.tearDown()
    }

    override func setUpWithError() throws {
        var template = Array("/tmp/swiped-people-moves.XXXXXX".utf8CString)
        XCTAssertNotNil(template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) })
        dir = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: dir)
    }

    private func text(_ path: String) -> String {
        String(decoding: FileManager.default.contents(atPath: path) ?? Data(), as: UTF8.self)
    }

    /// Two tokens, one of them used and expiring, a third revoked, and three grants.
    private static let changes: [PeopleChange] = [
        .createToken(
            TokenRecord(
                id: "a1a1a1a1a1a1", name: "alice", role: .writer, hash: Array(repeating: 0xA1, count: 32),
                created: 1_764_000_000_000_001, expires: 1_800_000_000_000_000,
                lastUsed: 1_764_000_123_000_000)),
        .createToken(
            TokenRecord(
                id: "b2b2b2b2b2b2", name: "zoë@example.org", role: .admin, hash: (0..<32).map { UInt8($0) },
                created: 1_764_000_000_000_002)),
        .createToken(
            TokenRecord(
                id: "c3c3c3c3c3c3", name: "carol", role: .reader, hash: Array(repeating: 0xC3, count: 32),
                created: 3)),
        .revokeTokens(name: "carol", id: nil),
        .setRole(name: "alice", role: .reader),
        .setRole(name: "carol", role: AccessRole.none),
        .setRole(name: "dave", role: .admin),
    ]

    /// A log of `events` random changes whose people tables hold `changes`; its tables.
    private func logWithPeople(_ directory: String, changes events: Int = 200) throws -> PeopleTables {
        _ = try makeLog(directory: directory, changes: events)
        let log = try EventLog(path: directory + "/events.sqlite3", create: false)
        defer { log.close() }
        for c in PeopleMovesTests.changes { _ = try log.apply(c) }
        return try log.readPeople().tables
    }

    private func people(ofState directory: String) throws -> PeopleTables {
        let log = try EventLog(path: directory + "/events.sqlite3", create: false)
        defer { log.close() }
        return try log.readPeople().tables
    }

    /// The people lines of an export, in order.
    private func peopleLines(_ path: String) -> [Substring] {
        text(path).split(separator: "\n").filter {
            $0.hasPrefix(#"{"token":"#) || $0.hasPrefix(#"{"grant":"#)
        }
    }

    func testTokensAndGrantsGoFromSQLiteToPostgreSQLAndBack() throws {
        let tables = try logWithPeople(dir + "/a")
        XCTAssertEqual(tables.tokens.map(\.id), ["a1a1a1a1a1a1", "b2b2b2b2b2b2"])
        XCTAssertEqual(tables.grants, ["alice": .reader, "carol": AccessRole.none, "dave": .admin])
        let source = try Moves.verify(.state(dir + "/a"))
        XCTAssertEqual([source.tokens, source.grants], [2, 3])
        let exported = try Moves.export(.state(dir + "/a"), toFile: dir + "/a.jsonl", replace: false, now: 1)
        XCTAssertEqual(
            exported,
            Verified(
                source: source.source, seq: source.seq, events: source.events, digest: source.digest,
                tokens: 2, grants: 3))
        let lines = text(dir + "/a.jsonl").split(separator: "\n")
        XCTAssertTrue(lines[0].contains(#""version":3"#), String(lines[0]))
        XCTAssertEqual(
            peopleLines(dir + "/a.jsonl"),
            [
                #"{"token":"a1a1a1a1a1a1","name":"alice","role":"writer","hash":"\#(String(repeating: "a1", count: 32))","created":1764000000000001,"expires":1800000000000000,"lastUsed":1764000123000000}"#,
                #"{"token":"b2b2b2b2b2b2","name":"zoë@example.org","role":"admin","hash":"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f","created":1764000000000002}"#,
                #"{"grant":"alice","role":"reader"}"#, #"{"grant":"carol","role":"none"}"#,
                #"{"grant":"dave","role":"admin"}"#,
            ])
        XCTAssertTrue(lines[lines.count - 7].hasPrefix(#"{"seq":"#), "the people lines follow the events")
        XCTAssertTrue(lines.last!.contains(#""events":\#(source.events),"tokens":2,"grants":3,"digest":"#))

        // Into PostgreSQL, and out again: the same lines.
        let pg = try database()
        let imported = try Moves.importLog(from: .export(dir + "/a.jsonl"), into: .postgres(pg.conninfo))
        XCTAssertEqual([imported.tokens, imported.grants], [2, 3])
        XCTAssertEqual(imported.digest, source.digest)
        XCTAssertEqual(
            try pg.cluster.psql(
                "SELECT id, name, role, created FROM swiped_tokens ORDER BY n", database: pg.name),
            "a1a1a1a1a1a1|alice|writer|1764000000000001\nb2b2b2b2b2b2|zoë@example.org|admin|1764000000000002")
        XCTAssertEqual(
            try pg.cluster.psql("SELECT version FROM swiped_people_version", database: pg.name), "1")
        let back = try Moves.export(.postgres(pg.conninfo), toFile: dir + "/b.jsonl", replace: false, now: 2)
        XCTAssertEqual(back.digest, source.digest)
        XCTAssertEqual(peopleLines(dir + "/b.jsonl"), peopleLines(dir + "/a.jsonl"))
        XCTAssertEqual(try Moves.verify(.postgres(pg.conninfo)).tokens, 2)

        // And into SQLite again: the tables as they were, bit for bit.
        let again = try Moves.importLog(from: .export(dir + "/b.jsonl"), into: .state(dir + "/c"))
        XCTAssertEqual([again.tokens, again.grants], [2, 3])
        XCTAssertEqual(try people(ofState: dir + "/c"), tables)
        XCTAssertEqual(again.digest, source.digest)
    }

    /// The digest stays over the events: a version 1 export (from before the people tables)
    /// imports, its log has empty people tables, and its version 2 export says the same digest.
    func testAVersion1ExportStillImportsWithItsDigest() throws {
        let folder = try XCTUnwrap(Bundle.module.url(forResource: "Fixtures", withExtension: nil))
        let v1 = folder.appendingPathComponent("export-before-libcrypto.jsonl").path
        XCTAssertTrue(text(v1).hasPrefix(#"{"format":"swiped-export","version":1,"#))
        let digest = "sha256:4905b32bda3c4682b22cda3513687553ef403a88e262f484b75b16c3d9891e11"
        let imported = try Moves.importLog(from: .export(v1), into: .state(dir + "/a"))
        XCTAssertEqual(imported.digest, digest)
        XCTAssertEqual([imported.tokens, imported.grants], [0, 0])
        XCTAssertEqual(try people(ofState: dir + "/a"), PeopleTables())
        let v2 = try Moves.export(.state(dir + "/a"), toFile: dir + "/a.jsonl", replace: false, now: 1)
        XCTAssertEqual(v2.digest, digest)
        XCTAssertTrue(text(dir + "/a.jsonl").contains(#""tokens":0,"grants":0,"digest":"\#(digest)""#))
        // People added later leave the digest as it was.
        let log = try EventLog(path: dir + "/a/events.sqlite3", create: false)
        _ = try log.apply(PeopleMovesTests.changes[0])
        log.close()
        XCTAssertEqual(try Moves.verify(.state(dir + "/a")).digest, digest)
        let pg = try database()
        XCTAssertEqual(try Moves.importLog(from: .export(v1), into: .postgres(pg.conninfo)).digest, digest)
        XCTAssertEqual(try pg.cluster.psql("SELECT count(*) FROM swiped_tokens", database: pg.name), "0")
    }

    func testABackupKeepsThem() throws {
        let tables = try logWithPeople(dir + "/a", changes: 50)
        let (copy, _) = try Moves.backup(.state(dir + "/a"), to: dir + "/a.sqlite3", replace: false, now: 1)
        XCTAssertEqual([copy.tokens, copy.grants], [2, 3])
        XCTAssertTrue(copy.peopleSummary == ", 2 tokens, 3 role grants", copy.peopleSummary)
        XCTAssertEqual(try Moves.verify(.sqliteFile(dir + "/a.sqlite3")).tokens, 2)
        let restored = try Moves.importLog(from: .sqlite(dir + "/a.sqlite3"), into: .state(dir + "/b"))
        XCTAssertEqual([restored.tokens, restored.grants], [2, 3])
        XCTAssertEqual(try people(ofState: dir + "/b"), tables)
        // PostgreSQL's backup is an export: it has them too, and a restore from it.
        let pg = try database()
        _ = try Moves.importLog(from: .sqlite(dir + "/a.sqlite3"), into: .postgres(pg.conninfo))
        let (pgCopy, _) = try Moves.backup(
            .postgres(pg.conninfo), to: dir + "/pg.jsonl", replace: false, now: 2)
        XCTAssertEqual([pgCopy.tokens, pgCopy.grants], [2, 3])
        XCTAssertEqual(try Moves.readExport(try LineInput.open(dir + "/pg.jsonl")).grants, 3)
        _ = try Moves.importLog(from: .export(dir + "/pg.jsonl"), into: .state(dir + "/c"))
        XCTAssertEqual(try people(ofState: dir + "/c"), tables)
    }

    /// Each wrong people line is refused with its number and cause, and an import leaves
    /// nothing. The files are rewritten with a trailer checksum of their own, so that what is
    /// refused is the line, not the checksum.
    func testBadPeopleLinesAreRefused() throws {
        _ = try logWithPeople(dir + "/a", changes: 20)
        _ = try Moves.export(.state(dir + "/a"), toFile: dir + "/a.jsonl", replace: false, now: 1)
        let lines = text(dir + "/a.jsonl").split(separator: "\n").map(String.init)
        let first = lines.firstIndex { $0.hasPrefix(#"{"token":"#) }!
        let grant = lines.firstIndex { $0.hasPrefix(#"{"grant":"#) }!
        func edit(_ i: Int, _ of: String, _ with: String) -> [String] {
            var l = lines
            l[i] = l[i].replacingOccurrences(of: of, with: with)
            return l
        }
        var eventAfter = lines
        eventAfter.swapAt(first - 1, first)
        var tokenAfterGrant = lines
        tokenAfterGrant.swapAt(grant - 1, grant)
        var duplicate = lines
        duplicate.insert(lines[first], at: first + 1)
        // Version 1 without what version 3 added (a restore's place): only the token is wrong.
        let v1 = edit(0, #""version":3"#, #""version":1"#).map {
            $0.replacingOccurrences(of: #","after":(null|"[^"]*")"#, with: "", options: .regularExpression)
        }
        let cases: [(String, [String], String)] = [
            ("a token in version 1", v1, "line \(first + 1): a token line in a version 1 export"),
            ("an event after them", eventAfter, "line \(first + 1): an event after the people lines"),
            (
                "a token after a grant", tokenAfterGrant,
                "line \(grant + 1): a token line after the role grants"
            ),
            ("a token twice", duplicate, "line \(first + 2): a second token with the id a1a1a1a1a1a1"),
            (
                "a role not known", edit(grant, #""role":"reader""#, #""role":"root""#),
                "\"role\" must be one of"
            ),
            ("a short hash", edit(first, #""hash":"a1a1"#, #""hash":""#), "must be 64 hex digits"),
            ("a bad name", edit(grant, #""grant":"alice""#, #""grant":"al ice""#), "not a person's name"),
            ("counts", edit(lines.count - 1, #""tokens":2"#, #""tokens":3"#), "the trailer says 3 tokens"),
            ("no counts", edit(lines.count - 1, #""tokens":2,"#, ""), "\"tokens\" must be a whole number"),
            ("a secret", edit(first, #""created""#, #""secret":"x","created""#), "unknown field \"secret\""),
        ]
        for (name, content, expected) in cases {
            let file = dir + "/bad.jsonl"
            XCTAssertTrue(
                FileManager.default.createFile(atPath: file, contents: Data(resealed(content).utf8)))
            XCTAssertThrowsError(try Moves.readExport(try LineInput.open(file)), name) { error in
                XCTAssertTrue("\(error)".contains(expected), "\(name): \(error)")
            }
            XCTAssertThrowsError(try Moves.importLog(from: .export(file), into: .state(dir + "/t")), name)
            XCTAssertFalse(Files.exists(dir + "/t"), name)
        }
        // Resealed as it was, the file is fine: what the cases refuse is their change.
        let file = dir + "/good.jsonl"
        XCTAssertTrue(FileManager.default.createFile(atPath: file, contents: Data(resealed(lines).utf8)))
        XCTAssertEqual(try Moves.readExport(try LineInput.open(file)).tokens, 2)
    }

    /// `lines` with the trailer's checksum made again over the lines before it.
    private func resealed(_ lines: [String]) -> String {
        let body = lines.dropLast().map { $0 + "\n" }.joined()
        let sum = SHA256.hex(Array(body.utf8))
        let trailer = lines.last!.replacingOccurrences(
            of: #""sha256":"[0-9a-f]{64}""#, with: #""sha256":"\#(sum)""#, options: .regularExpression)
        return body + trailer + "\n"
    }

    /// A time past what a JSON whole number holds here cannot be exported (no reader could
    /// take it), and the export says which token.
    func testATokenTimePastTheFormatsRangeIsRefusedNamed() throws {
        _ = try makeLog(directory: dir + "/a", changes: 5)
        let log = try EventLog(path: dir + "/a/events.sqlite3", create: false)
        _ = try log.apply(
            .createToken(
                TokenRecord(
                    id: "e0e0e0e0e0e0", name: "erin", role: .reader, hash: Array(repeating: 1, count: 32),
                    created: 1, expires: UInt64.max)))
        log.close()
        XCTAssertEqual(try Moves.verify(.state(dir + "/a")).tokens, 1)
        XCTAssertThrowsError(
            try Moves.export(.state(dir + "/a"), toFile: dir + "/a.jsonl", replace: false, now: 1)
        ) {
            XCTAssertTrue("\($0)".contains(#"token "e0e0e0e0e0e0" of "erin": its expires time"#), "\($0)")
        }
        XCTAssertFalse(Files.exists(dir + "/a.jsonl"))
    }
}

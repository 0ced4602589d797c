// The log's identity (issue 32): made with the file, kept by every reopening, given to a file
// from before ids, and new for an imported log.
import Foundation
import XCTest

@testable import EventLog

final class LogIdentityTests: XCTestCase {
    func testANewLogHasAnIdThatReopeningKeeps() throws {
        let dir = makeTempDir(self)
        let log = try EventLog(path: dir + "/events.sqlite3")
        let id = try log.logID()
        XCTAssertEqual(id.count, 32)
        XCTAssertTrue(id.allSatisfy { "0123456789abcdef".contains($0) }, id)
        _ = try log.append([NewEvent(stream: "a", kind: "k")])
        log.close()
        let again = try EventLog(path: dir + "/events.sqlite3")
        defer { again.close() }
        XCTAssertEqual(try again.logID(), id)
        // Another file, another log.
        let other = try EventLog(path: dir + "/other.sqlite3")
        defer { other.close() }
        XCTAssertNotEqual(try other.logID(), id)
    }

    /// A file written before ids gets one at its first open, and keeps it.
    func testALogFromBeforeIdsGetsOneOnce() throws {
        let path = makeTempDir(self) + "/events.sqlite3"
        let log = try EventLog(path: path)
        _ = try log.append([NewEvent(stream: "a", kind: "k")])
        log.close()
        _ = try SQLiteScript.rows(path: path, sql: "DROP TABLE identity")
        let old = try EventLog(path: path)
        let id = try old.logID()
        XCTAssertEqual(try old.logID(), id)
        old.close()
        XCTAssertEqual(try SQLiteScript.rows(path: path, sql: "SELECT log FROM identity"), [id])
        XCTAssertEqual(try SQLiteScript.rows(path: path, sql: "PRAGMA user_version"), ["3"])
    }

    /// An import writes a new file: a new log, whatever the source's id.
    func testAnImportedLogHasANewId() throws {
        let dir = makeTempDir(self)
        let source = try EventLog(path: dir + "/a.sqlite3")
        let stored = try source.append([NewEvent(stream: "a", kind: "k", key: "x")])
        let sourceID = try source.logID()
        source.close()
        XCTAssertTrue(FileManager.default.createFile(atPath: dir + "/b.sqlite3", contents: nil))
        let importer = try LogImporter(path: dir + "/b.sqlite3")
        try importer.append(stored[0])
        try importer.finish(snapshot: nil)
        let imported = try EventLog(path: dir + "/b.sqlite3", create: false)
        defer { imported.close() }
        XCTAssertEqual(try imported.event(forKey: "x")?.seq, 1)
        XCTAssertNotEqual(try imported.logID(), sourceID)
    }
}

import CSQLite
import Foundation
import Glibc
import XCTest

/// A fresh directory on the real disk, removed at the end of the test.
func makeTempDir(_ test: XCTestCase, _ name: String = #function) -> String {
    let base = FileManager.default.temporaryDirectory.path
    var template = Array("\(base)/eventlog-\(name.filter(\.isLetter))-XXXXXX".utf8CString)
    let dir = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
    test.addTeardownBlock { try? FileManager.default.removeItem(atPath: dir) }
    return dir
}

func fileBytes(_ path: String) -> [UInt8]? {
    FileManager.default.contents(atPath: path).map { Array($0) }
}

/// Mounts a size-limited tmpfs on a fresh directory (root only); nil with the reason otherwise.
func mountSmallTmpfs(_ test: XCTestCase, sizeKB: Int) -> (String, String?) {
    let dir = makeTempDir(test, "tmpfs")
    let rc = mount("tmpfs", dir, "tmpfs", 0, "size=\(sizeKB)k")
    if rc != 0 {
        return (
            dir, "mount -t tmpfs failed: \(String(cString: strerror(errno))) (needs root / CAP_SYS_ADMIN)"
        )
    }
    test.addTeardownBlock { _ = umount2(dir, Int32(MNT_DETACH)) }
    return (dir, nil)
}

/// Writes zeros to `path` until the filesystem is full (ENOSPC).
func fillDisk(_ path: String) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    precondition(fd >= 0)
    let chunk = [UInt8](repeating: 0, count: 4096)
    while chunk.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
    // Fill the last partial page too.
    while [UInt8](repeating: 0, count: 1).withUnsafeBytes({ write(fd, $0.baseAddress, 1) }) > 0 {}
    close(fd)
}

enum SQLiteScript {
    struct Failure: Error { var message: String }
    static func run(path: String, sql: String) throws {
        var db: OpaquePointer?
        guard sqlite3_open(path, &db) == SQLITE_OK else { throw Failure(message: "open \(path)") }
        defer { sqlite3_close(db) }
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else {
            throw Failure(message: String(cString: sqlite3_errmsg(db)))
        }
    }

    /// The rows of one query, each row's columns joined with "|" (NULL as "NULL").
    static func rows(path: String, sql: String) throws -> [String] {
        var db: OpaquePointer?
        guard sqlite3_open(path, &db) == SQLITE_OK else { throw Failure(message: "open \(path)") }
        defer { sqlite3_close(db) }
        var s: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &s, nil) == SQLITE_OK else {
            throw Failure(message: String(cString: sqlite3_errmsg(db)))
        }
        defer { sqlite3_finalize(s) }
        var out: [String] = []
        while sqlite3_step(s) == SQLITE_ROW {
            out.append(
                (0..<sqlite3_column_count(s)).map { i in
                    sqlite3_column_text(s, i).map { String(cString: $0) } ?? "NULL"
                }.joined(separator: "|"))
        }
        return out
    }
}

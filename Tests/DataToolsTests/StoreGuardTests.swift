// What keeps the subcommands off the store they read (issue 40), in process: no output of
// `backup` or `export` lands on the store's files or in its state directory, however the path is
// spelled, with or without --force; `import` refuses what a log left behind.
import EventLog
import Foundation
import Glibc
import Movies
import StoreSQLite
import XCTest

@testable import DataTools

final class StoreGuardTests: XCTestCase {
    var dir = ""

    override func setUpWithError() throws {
        var template = Array("/tmp/swiped-guard.XXXXXX".utf8CString)
        XCTAssertNotNil(template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) })
        dir = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    override func tearDownWithError() throws {
        try FileManager.default.removeItem(atPath: dir)
    }

    func ls(_ path: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
    }

    func bytes(_ path: String) -> [UInt8] { Array(FileManager.default.contents(atPath: path) ?? Data()) }

    /// `path` spelled from the working directory up: `../../tmp/swiped-guard.X/…`.
    func relative(_ path: String) -> String {
        let cwd = FileManager.default.currentDirectoryPath.split(separator: "/")
        return String(repeating: "../", count: cwd.count) + path.dropFirst()
    }

    /// Every spelling of the store's own files, and of new names in its state directory, is
    /// refused by both backup and export, with and without --force, while the log is open (its
    /// -wal and -shm there); nothing of the store changes, nothing is left beside it.
    func testBackupAndExportNeverWriteIntoTheStoreTheyRead() throws {
        let st = dir + "/st"
        _ = try makeLog(directory: st, changes: 200)
        let open = try EventLog(path: st + "/events.sqlite3", durability: .normal)
        defer { open.close() }
        _ = try open.latestSeq()
        XCTAssertEqual(ls(st), ["events.sqlite3", "events.sqlite3-shm", "events.sqlite3-wal"])
        XCTAssertTrue(FileManager.default.createFile(atPath: st + "/lock", contents: nil))
        XCTAssertEqual(mkdir(st + "/sub", 0o700), 0)
        XCTAssertEqual(symlink(st + "/events.sqlite3", dir + "/to-log"), 0)
        XCTAssertEqual(symlink("st/events.sqlite3-wal", dir + "/to-wal"), 0)
        XCTAssertEqual(symlink(st, dir + "/to-state"), 0)
        XCTAssertEqual(link(st + "/events.sqlite3", dir + "/hard-log"), 0)
        XCTAssertEqual(link(st + "/events.sqlite3-wal", dir + "/hard-wal"), 0)
        XCTAssertEqual(link(st + "/lock", dir + "/hard-lock"), 0)
        let names = ls(st)
        let files = ["events.sqlite3", "events.sqlite3-wal", "events.sqlite3-shm", "lock"]
        let before = files.map { bytes(st + "/" + $0) }

        let targets: [(String, String)] = [
            (st + "/events.sqlite3", "is the store's events.sqlite3"),
            (st + "/events.sqlite3-wal", "is the store's events.sqlite3-wal"),
            (st + "/events.sqlite3-shm", "is the store's events.sqlite3-shm"),
            (st + "/lock", "is the store's lock"),
            (st + "/../st/./events.sqlite3", "is the store's events.sqlite3"),
            (relative(st + "/events.sqlite3"), "is the store's events.sqlite3"),
            (dir + "/to-log", "is the store's events.sqlite3"),
            (dir + "/to-wal", "is the store's events.sqlite3-wal"),
            (dir + "/hard-log", "is the store's events.sqlite3"),
            (dir + "/hard-wal", "is the store's events.sqlite3-wal"),
            (dir + "/hard-lock", "is the store's lock"),
            (dir + "/to-state/events.sqlite3", "is the store's events.sqlite3"),
            (dir + "/to-state/backup.sqlite3", "is inside the state directory"),
            (st + "/events.sqlite3-journal", "is inside the state directory"),
            (st + "/backup.sqlite3", "is inside the state directory"),
            (relative(st + "/new.jsonl"), "is inside the state directory"),
            (st + "/sub/backup.sqlite3", "is inside the state directory"),
            (st, "is the state directory"),
            (st + "/", "is the state directory"),
        ]
        for (target, expected) in targets {
            for force in [false, true] {
                let what = "\(target)\(force ? " --force" : "")"
                XCTAssertThrowsError(try Moves.backup(.state(st), to: target, replace: force, now: 0), what) {
                    XCTAssertTrue("\($0)".contains(expected), "backup \(what): \($0)")
                    XCTAssertTrue("\($0)".contains("never writes into the store it reads"), "\($0)")
                }
                XCTAssertThrowsError(
                    try Moves.export(.state(st), toFile: target, replace: force, now: 0), what
                ) {
                    XCTAssertTrue("\($0)".contains(expected), "export \(what): \($0)")
                }
            }
        }
        XCTAssertEqual(ls(st), names, "nothing made in the state directory")
        XCTAssertEqual(ls(st + "/sub"), [])
        XCTAssertEqual(files.map { bytes(st + "/" + $0) }, before, "the store's files are untouched")
        var a = stat()
        var b = stat()
        XCTAssertEqual(lstat(dir + "/to-log", &a), 0)
        XCTAssertEqual(a.st_mode & S_IFMT, S_IFLNK, "the symlink is still one")
        XCTAssertEqual(stat(dir + "/hard-log", &a), 0)
        XCTAssertEqual(stat(st + "/events.sqlite3", &b), 0)
        XCTAssertEqual(a.st_ino, b.st_ino, "the hard link is still the log")

        // Beside the state directory, and in one whose name starts like it: written.
        XCTAssertEqual(mkdir(dir + "/st2", 0o700), 0)
        for target in [dir + "/b.sqlite3", dir + "/st2/b.sqlite3", relative(dir + "/b2.sqlite3")] {
            XCTAssertNoThrow(try Moves.backup(.state(st), to: target, replace: false, now: 0), target)
        }
        XCTAssertNoThrow(try Moves.export(.state(st), toFile: dir + "/st2/e.jsonl", replace: true, now: 0))
    }

    /// A -wal, -shm or -journal without its log (a crash, the log moved away) is refused by
    /// import, named, and left as it was; without it, what import prints is what verify finds.
    func testImportRefusesWhatALogLeftBehind() throws {
        let state = try makeLog(directory: dir + "/a", changes: 300)
        _ = try Moves.export(.state(dir + "/a"), toFile: dir + "/a.jsonl", replace: false, now: 0)
        let t = dir + "/t"
        XCTAssertEqual(mkdir(t, 0o700), 0)
        for leftover in ["events.sqlite3-wal", "events.sqlite3-shm", "events.sqlite3-journal"] {
            let junk = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7) })
            XCTAssertTrue(FileManager.default.createFile(atPath: t + "/" + leftover, contents: junk))
            for source in [Moves.ImportSource.export(dir + "/a.jsonl"), .sqlite(dir + "/a/events.sqlite3")] {
                XCTAssertThrowsError(try Moves.importLog(from: source, into: .state(t)), leftover) {
                    XCTAssertTrue("\($0)".contains("holds what a log left behind (\(leftover))"), "\($0)")
                    XCTAssertTrue("\($0)".contains("Move these files out of the state directory"), "\($0)")
                }
                XCTAssertEqual(ls(t), [leftover, "lock"], leftover)
                XCTAssertEqual(bytes(t + "/" + leftover), Array(junk), "the leftover is untouched")
            }
            XCTAssertEqual(unlink(t + "/" + leftover), 0)
        }
        let imported = try Moves.importLog(from: .export(dir + "/a.jsonl"), into: .state(t))
        XCTAssertEqual(imported.seq, state.lastSeq)
        let verified = try Moves.verify(.state(t))
        XCTAssertEqual(
            [verified.seq, verified.events], [imported.seq, imported.events],
            "verify finds what import printed")
        XCTAssertEqual(verified.digest, imported.digest)
    }
}

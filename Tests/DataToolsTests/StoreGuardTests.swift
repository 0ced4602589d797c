// What keeps the subcommands off the store they read (issue 40), in process: no output of
// `backup` or `export` lands on the store's files or in its state directory, however the path is
// spelled, with or without --force; `import` refuses what a log left behind; a line longer than
// any export's is refused with its number, holding little of it.
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

    /// Lines up to the cap pass; a longer one is refused with its number, however it ends
    /// (a newline in the same read, one far past it, none at all), and the input never holds
    /// much more than the cap.
    func testALineLongerThanAnyExportsIsRefusedWithItsNumber() throws {
        let cap = ExportFormat.maxLineBytes
        let bound = cap + LineInput.chunk
        func lines(_ content: [UInt8]) -> (lines: [Int], fault: String?, held: Int) {
            let file = dir + "/lines"
            XCTAssertTrue(FileManager.default.createFile(atPath: file, contents: Data(content)))
            let input: LineInput
            do { input = try LineInput.open(file) } catch { return ([], "\(error)", 0) }
            var counts: [Int] = []
            do {
                while let line = try input.next() { counts.append(line.count) }
                return (counts, nil, input.buffered)
            } catch {
                return (counts, "\(error)", input.buffered)
            }
        }
        let x = UInt8(ascii: "x")
        let nl: [UInt8] = [0x0A]
        let atCap = [UInt8](repeating: x, count: cap)
        let ok = lines(nl + atCap + nl + atCap)
        XCTAssertEqual(ok.lines, [0, cap, cap])
        XCTAssertNil(ok.fault)
        let cases: [(String, [UInt8], Int)] = [
            ("newline in the same read", Array("a\nb\n".utf8) + atCap + [x] + nl + Array("c\n".utf8), 3),
            ("long past a read", nl + [UInt8](repeating: x, count: 5 * LineInput.chunk) + nl, 2),
            ("unterminated", [UInt8](repeating: x, count: cap + 1), 1),
            ("a long first line", [UInt8](repeating: x, count: 12 << 20), 1),
        ]
        for (name, content, number) in cases {
            let r = lines(content)
            XCTAssertEqual(r.lines.count, number - 1, name)
            XCTAssertEqual(
                r.fault,
                "\(dir)/lines: line \(number) is longer than \(cap) bytes, which no line of a swiped export is: not an export, or a damaged one",
                name)
            XCTAssertLessThanOrEqual(r.held, bound + (64 << 10), "\(name): the input held \(r.held) bytes")
        }
        // Through an import: refused at its line, nothing written.
        _ = try makeLog(directory: dir + "/a", changes: 20)
        _ = try Moves.export(.state(dir + "/a"), toFile: dir + "/a.jsonl", replace: false, now: 0)
        let export = bytes(dir + "/a.jsonl")
        let firstNewline = try XCTUnwrap(export.firstIndex(of: 0x0A))
        let long =
            Array(export[...firstNewline]) + [UInt8](repeating: x, count: 3 << 20) + export[firstNewline...]
        XCTAssertTrue(FileManager.default.createFile(atPath: dir + "/long.jsonl", contents: Data(long)))
        XCTAssertThrowsError(
            try Moves.importLog(from: .export(dir + "/long.jsonl"), into: .state(dir + "/t"))
        ) {
            XCTAssertTrue("\($0)".contains("line 2 is longer than \(cap) bytes"), "\($0)")
        }
        XCTAssertFalse(Files.exists(dir + "/t"))
    }

    /// A line that goes on through a pipe is refused after about the cap, not read to its end.
    func testAnEndlessLineOnAPipeIsRefusedEarly() throws {
        var fds: [Int32] = [-1, -1]
        XCTAssertEqual(pipe(&fds), 0)
        let (readEnd, writeEnd) = (fds[0], fds[1])
        // Reads of a megabyte, as from a file (a reader that rescans its buffer at every read,
        // as the one before issue 40, would take minutes in 64 KiB pieces).
        _ = fcntl(writeEnd, 1031 /* F_SETPIPE_SZ, not in Glibc's module */, Int32(1 << 20))
        let written = SharedCount()
        let writer = Thread {
            let chunk = [UInt8](repeating: UInt8(ascii: "y"), count: 1 << 16)
            // Until the reader closes its end (EPIPE; SIGPIPE is ignored below), at most 16 MiB.
            while written.value < 16 << 20 {
                let n = chunk.withUnsafeBytes { Glibc.write(writeEnd, $0.baseAddress, $0.count) }
                if n <= 0 { break }
                written.add(n)
            }
            close(writeEnd)
        }
        let previous = signal(SIGPIPE, SIG_IGN)
        defer { signal(SIGPIPE, previous) }
        writer.start()
        do {
            // It closes the pipe's end when it goes, which stops the writer.
            let input = LineInput(fd: readEnd, name: "standard input")
            XCTAssertThrowsError(try input.next()) {
                XCTAssertTrue("\($0)".contains("standard input: line 1 is longer than"), "\($0)")
            }
        }
        while !writer.isFinished { usleep(1000) }
        XCTAssertLessThan(written.value, 8 << 20, "the reader stopped early")
    }
}

/// A counter two threads share.
final class SharedCount: @unchecked Sendable {
    private var count = 0
    private let lock = NSLock()
    var value: Int { lock.withLock { count } }
    func add(_ n: Int) { lock.withLock { count += n } }
}

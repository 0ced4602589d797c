// Moving a log between stores with the real binaries (issue 32): a SQLite daemon with 10,000
// changes (adds, keyed toggles, removes, restores) moved to PostgreSQL and served by two daemons
// there, `list` and every `history` page the same, a keyed retry answered with its original seq;
// and back to SQLite. The PostgreSQL cluster is the test's own (TestSupport's PostgresCluster).

import Foundation
import Glibc
import TestSupport
import XCTest

final class DataMoveTests: XCTestCase {
    /// `swiped <arguments>`, its exit status and output.
    func swiped(_ arguments: [String], input: String? = nil) throws -> Subprocess.Result {
        try Subprocess.run(try Binaries.swiped, arguments, input: input, timeout: .seconds(120))
    }

    /// What a client sees of the log: `list`, and every `history` page of 1000, as JSON.
    func view(_ daemon: SwipedDaemon) throws -> (list: NSArray, pages: [NSArray], seq: Int) {
        let client = try daemon.connect()
        defer { client.close() }
        let list = try client.request(["op": "list"])
        var pages: [NSArray] = []
        var from = 0
        while true {
            let page = try client.request(["op": "history", "from": from, "limit": 1000])
            let events = page["events"] as? [[String: Any]] ?? []
            if events.isEmpty { break }
            pages.append(events as NSArray)
            from = events.last?["seq"] as? Int ?? 0
        }
        return (list["movies"] as? NSArray ?? [], pages, list["seq"] as? Int ?? -1)
    }

    /// 10,000 changes, pipelined 250 at a time; returns the seq of every keyed toggle by key,
    /// with its movie.
    func makeChanges(_ daemon: SwipedDaemon, count: Int) throws -> [String: (seq: Int, movie: String)] {
        let client = try daemon.connect()
        defer { client.close() }
        var rng = SplitMix64(seed: 32)
        var live = (try client.request(["op": "list"])["movies"] as? [[String: Any]] ?? []).compactMap {
            $0["id"] as? String
        }
        var removed: [String] = []
        var keyed: [String: (seq: Int, movie: String)] = [:]
        var made = 0
        while made < count {
            var requests: [[String: Any]] = []
            var used = Set<String>()
            for i in 0..<min(250, count - made) {
                let n = made + i
                let roll = Int.random(in: 0..<20, using: &rng)
                if roll < 5 || live.count < 20 {
                    requests.append(["op": "add", "title": "Film \(n) ünï \"q\""])
                } else if roll < 13, let m = live.randomElement(using: &rng), used.insert(m).inserted {
                    requests.append(["op": "toggle-watched", "movie": m, "key": "toggle-\(n)"])
                } else if roll < 16, let m = live.randomElement(using: &rng), used.insert(m).inserted {
                    requests.append(["op": "remove", "movie": m])
                } else if let m = removed.randomElement(using: &rng), used.insert(m).inserted {
                    requests.append(["op": "restore", "movie": m])
                } else if let m = live.first(where: { !used.contains($0) }) {
                    used.insert(m)
                    requests.append(["op": "toggle-watched-with-friends", "movie": m])
                } else {
                    requests.append(["op": "add", "title": "Film \(n)"])
                }
            }
            for r in requests { try client.send(json: r) }
            for r in requests {
                let reply = try client.readReply(timeout: .seconds(30))
                XCTAssertEqual(reply["ok"] as? Bool, true, "\(r): \(reply)")
                let id = (reply["movie"] as? [String: Any])?["id"] as? String ?? ""
                switch r["op"] as? String {
                case "add": live.append(id)
                case "remove":
                    live.removeAll { $0 == id }
                    removed.append(id)
                case "restore":
                    removed.removeAll { $0 == id }
                    live.append(id)
                case "toggle-watched": keyed[r["key"] as! String] = (reply["seq"] as? Int ?? -1, id)
                default: break
                }
            }
            made += requests.count
        }
        return keyed
    }

    func testSQLiteToPostgresAndBack() throws {
        let work = try TemporaryDirectory("swiped-move")
        let sqlite = try SwipedDaemon(arguments: ["--durability", "normal"], prefix: "swiped-move")
        let started = monotonicSeconds()
        func note(_ what: String) {
            print("DataMoveTests: \(what) at \(String(format: "%.1f", monotonicSeconds() - started)) s")
        }
        let keyed = try makeChanges(sqlite, count: 10_000)
        note("10,000 changes made")
        let before = try view(sqlite)
        XCTAssertEqual(before.seq, 10_010)
        func logID(_ daemon: SwipedDaemon) throws -> String? {
            let (client, hello) = try daemon.connectWithHello()
            client.close()
            return hello["log"] as? String
        }
        let sqliteLog = try XCTUnwrap(try logID(sqlite))
        XCTAssertEqual(try sqlite.stop(), .exited(0))

        // The cut-over: export, import, verify, then daemons on PostgreSQL.
        let export = work.file("log.jsonl")
        let exported = try swiped(["export", "--state", sqlite.stateDirectory, "--to", export])
        XCTAssertEqual(exported.status, .exited(0), exported.standardError)
        let sourceCheck = try swiped(["verify", "--state", sqlite.stateDirectory])
        XCTAssertEqual(sourceCheck.status, .exited(0), sourceCheck.standardError)
        let found = try XCTUnwrap(
            sourceCheck.standardOutput.range(of: "sha256:[0-9a-f]{64}", options: .regularExpression))
        let digest = String(sourceCheck.standardOutput[found])

        note("exported and verified")
        let cluster = try PostgresCluster(prefix: "swiped-move-pg")
        note("cluster up")
        let imported = try swiped(["import", "--postgres", cluster.conninfo, export])
        XCTAssertEqual(imported.status, .exited(0), imported.standardError)
        XCTAssertTrue(
            imported.standardOutput.contains("seq 10010, 10010 events, digest \(digest)"),
            imported.standardOutput)
        let verified = try swiped(["verify", "--postgres", cluster.conninfo])
        XCTAssertTrue(
            verified.standardOutput.contains(digest), verified.standardOutput + verified.standardError)

        // A second import into the same database is refused, and changes nothing.
        let again = try swiped(["import", "--postgres", cluster.conninfo, export])
        XCTAssertEqual(again.status, .exited(1))
        XCTAssertTrue(again.standardError.contains("is not empty"), again.standardError)

        note("imported")
        // A cut export into another, empty database: refused at its last line, nothing left; and
        // the whole export through standard input into it.
        try cluster.createDatabase("other")
        let whole = try String(contentsOfFile: export, encoding: .utf8)
        let cut = work.file("cut.jsonl")
        try String(whole.prefix(whole.count - 200)).write(toFile: cut, atomically: false, encoding: .utf8)
        let refused = try swiped(["import", "--postgres", cluster.conninfo(database: "other"), cut])
        XCTAssertEqual(refused.status, .exited(1))
        XCTAssertTrue(refused.standardError.contains("the file was cut"), refused.standardError)
        XCTAssertEqual(
            try cluster.psql(
                "SELECT count(*) FROM pg_tables WHERE tablename LIKE 'swiped%'", database: "other"), "0")
        let piped = try Subprocess.run(
            try Binaries.swiped, ["import", "--postgres", cluster.conninfo(database: "other"), "-"],
            input: whole,
            timeout: .seconds(120))
        XCTAssertEqual(piped.status, .exited(0), piped.standardError)
        XCTAssertTrue(piped.standardOutput.contains(digest), piped.standardOutput)

        let pg = try (0..<2).map { _ in
            try SwipedDaemon(
                arguments: ["--postgres", cluster.conninfo], prefix: "swiped-move-pgd", timeout: .seconds(30))
        }
        for daemon in pg {
            let after = try view(daemon)
            XCTAssertEqual(after.seq, before.seq)
            XCTAssertEqual(after.list, before.list, "list")
            XCTAssertEqual(after.pages.count, before.pages.count)
            for (i, (a, b)) in zip(after.pages, before.pages).enumerated() {
                XCTAssertEqual(a, b, "history page \(i)")
            }
        }
        note("compared")
        // The same events, another log (an import makes a new one): the two daemons say it alike.
        let pgLog = try XCTUnwrap(try logID(pg[0]))
        XCTAssertEqual(try logID(pg[1]), pgLog)
        XCTAssertNotEqual(pgLog, sqliteLog)
        // A client retrying a keyed toggle after the move gets its original seq, not a new event.
        let retried = keyed.sorted { $0.key < $1.key }.prefix(5)
        let client = try pg[1].connect()
        for (key, original) in retried {
            let reply = try client.request(["op": "toggle-watched", "movie": original.movie, "key": key])
            XCTAssertEqual(reply["seq"] as? Int, original.seq, "\(key): \(reply)")
        }
        XCTAssertEqual(try view(pg[0]).seq, before.seq, "the retries wrote nothing")
        client.close()

        // A backup of the database while the daemons serve it: an export, verified, the same digest.
        let pgBackup = work.file("pg-backup.jsonl")
        let backedUp = try swiped(["backup", "--postgres", cluster.conninfo, pgBackup])
        XCTAssertEqual(backedUp.status, .exited(0), backedUp.standardError)
        XCTAssertTrue(backedUp.standardOutput.contains("seq 10010, 10010 events"), backedUp.standardOutput)
        let checked = try swiped(["verify", "--backup", pgBackup])
        XCTAssertTrue(checked.standardOutput.contains(digest), checked.standardOutput + checked.standardError)

        // And back: PostgreSQL (served meanwhile) to a new state directory.
        let back = work.file("back.jsonl")
        let out = try swiped(["export", "--postgres", cluster.conninfo, "--to", back])
        XCTAssertEqual(out.status, .exited(0), out.standardError)
        for daemon in pg { XCTAssertEqual(try daemon.stop(grace: .seconds(10)), .exited(0)) }
        let state = work.file("state-back")
        let into = try swiped(["import", "--state", state, back])
        XCTAssertEqual(into.status, .exited(0), into.standardError)
        XCTAssertTrue(into.standardOutput.contains(digest), into.standardOutput)
        let returned = try SwipedDaemon(stateDirectory: state, prefix: "swiped-move-back")
        let view2 = try view(returned)
        XCTAssertNotEqual(try logID(returned), pgLog)
        XCTAssertEqual(view2.list, before.list)
        XCTAssertEqual(view2.pages, before.pages)
        XCTAssertEqual(try returned.stop(), .exited(0))
        cluster.destroy()
    }
}

/// The disk refuses an import or a backup (a small tmpfs filling up; a read-only one): the
/// command fails saying why, nothing is left in the target, the source is untouched.
final class DataMoveDiskTests: XCTestCase {
    func mount(_ options: String, on target: String) throws {
        guard getuid() == 0 else { throw XCTSkip("needs root to mount a small filesystem") }
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: false)
        let result = try Subprocess.run("mount", ["-t", "tmpfs", "-o", options, "tmpfs", target])
        guard result.status.isSuccess else { throw XCTSkip("cannot mount tmpfs: \(result.standardError)") }
    }

    func unmount(_ target: String) { _ = try? Subprocess.run("umount", ["-l", target]) }

    func swiped(_ arguments: [String]) throws -> Subprocess.Result {
        try Subprocess.run(try Binaries.swiped, arguments, timeout: .seconds(120))
    }

    func ls(_ path: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
    }

    /// A log of a few thousand events, exported.
    func makeExport(_ dir: TemporaryDirectory) throws -> (state: String, export: String) {
        let daemon = try SwipedDaemon(arguments: ["--durability", "normal"], directory: dir)
        let client = try daemon.connect()
        for i in 0..<3000 {
            try client.send(json: [
                "op": "add", "title": "A rather long title, number \(i)", "key": "add-\(i)",
            ])
        }
        for _ in 0..<3000 { XCTAssertEqual(try client.readReply(timeout: .seconds(30))["ok"] as? Bool, true) }
        client.close()
        XCTAssertEqual(try daemon.stop(), .exited(0))
        let export = dir.file("log.jsonl")
        XCTAssertEqual(
            try swiped(["export", "--state", daemon.stateDirectory, "--to", export]).status, .exited(0))
        return (daemon.stateDirectory, export)
    }

    func testENOSPCDuringImportLeavesNothing() throws {
        let dir = try TemporaryDirectory("swiped-move-full")
        let small = dir.file("small")
        try mount("size=512k,mode=0700", on: small)
        defer { unmount(small) }
        let (state, export) = try makeExport(dir)
        let before = FileManager.default.contents(atPath: export)
        let source = try Data(contentsOf: URL(fileURLWithPath: state + "/events.sqlite3"))

        let result = try swiped(["import", "--state", small + "/state", export])
        XCTAssertEqual(result.status, .exited(1), result.standardOutput)
        XCTAssertTrue(result.standardError.lowercased().contains("full"), result.standardError)
        XCTAssertEqual(ls(small), [], "the import left something behind")
        let backup = try swiped(["backup", "--state", state, small + "/b.sqlite3"])
        XCTAssertEqual(backup.status, .exited(1), backup.standardOutput)
        XCTAssertEqual(ls(small), [], "the backup left something behind")
        let exported = try swiped(["export", "--state", state, "--to", small + "/e.jsonl"])
        XCTAssertEqual(exported.status, .exited(1), exported.standardOutput)
        XCTAssertEqual(ls(small), [], "the export left something behind")
        XCTAssertEqual(FileManager.default.contents(atPath: export), before)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: state + "/events.sqlite3")), source)
    }

    func testAnUnwritableTargetIsRefused() throws {
        let dir = try TemporaryDirectory("swiped-move-ro")
        let (state, export) = try makeExport(dir)
        let readOnly = dir.file("ro")
        try mount("ro,size=1m", on: readOnly)
        defer { unmount(readOnly) }
        for arguments in [
            ["import", "--state", readOnly + "/state", export],
            ["backup", "--state", state, readOnly + "/b.sqlite3"],
            ["export", "--state", state, "--to", readOnly + "/e.jsonl"],
        ] {
            let result = try swiped(arguments)
            XCTAssertEqual(result.status, .exited(1), "\(arguments): \(result.standardOutput)")
            XCTAssertTrue(
                result.standardError.contains("Read-only file system"),
                "\(arguments): \(result.standardError)")
        }
        XCTAssertEqual(ls(readOnly), [])
    }
}

/// The subcommands on the command line: `--help` of swiped and of each, the man page, usage
/// errors (exit 2), and `swiped` without one still serving (every other daemon test).
final class DataMoveOnlineTests: XCTestCase {
    /// Backups and exports of a log a daemon is writing: each is whole and verified, taken
    /// without the daemon's lock, and the writes go on.
    func testBackupWhileTheDaemonWrites() throws {
        let dir = try TemporaryDirectory("swiped-move-online")
        let daemon = try SwipedDaemon(directory: dir)
        let stop = Locked(false)
        let written = Locked(0)
        let socket = daemon.socketPath
        let writer = Thread {
            guard let client = try? LineClient(path: socket, timeout: .seconds(5)) else { return }
            _ = try? client.readJSON(timeout: .seconds(5))
            var i = 0
            while !stop.with({ $0 }) {
                guard
                    (try? client.request(["op": "toggle-watched", "movie": "seven", "key": "w-\(i)"]))?["ok"]
                        as? Bool == true
                else { break }
                i += 1
                written.with { $0 = i }
            }
            client.close()
        }
        writer.start()
        defer { stop.with { $0 = true } }
        var seqs: [Int] = []
        for n in 0..<5 {
            let file = dir.file("b\(n).sqlite3")
            let result = try Subprocess.run(
                try Binaries.swiped, ["backup", "--state", daemon.stateDirectory, file])
            XCTAssertEqual(result.status, .exited(0), result.standardError)
            let seq = try XCTUnwrap(
                result.standardOutput.range(of: #"seq [0-9]+"#, options: .regularExpression))
            seqs.append(Int(result.standardOutput[seq].dropFirst(4)) ?? -1)
            let verified = try Subprocess.run(try Binaries.swiped, ["verify", "--backup", file])
            XCTAssertEqual(verified.status, .exited(0), verified.standardError)
        }
        stop.with { $0 = true }
        while !writer.isFinished { usleep(10_000) }
        XCTAssertGreaterThan(written.with { $0 }, 0, "the writes went on")
        XCTAssertEqual(seqs, seqs.sorted(), "each backup is of the log at its moment")
        XCTAssertGreaterThan(seqs.last ?? 0, seqs.first ?? 0, "the log grew between the backups: \(seqs)")
        XCTAssertEqual(try daemon.stop(), .exited(0))
    }
}

final class DataMoveCommandLineTests: XCTestCase {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    func testHelpManPageAndUsageErrors() throws {
        let help = try SwipedDaemon.run(["--help"])
        let man = try String(contentsOfFile: "\(Self.root)/man/swiped.1", encoding: .utf8)
            .replacingOccurrences(of: "\\-", with: "-")
        for command in ["backup", "export", "import", "verify"] {
            XCTAssertTrue(help.standardOutput.contains("  \(command) ("), "swiped --help: \(command)")
            XCTAssertTrue(man.contains(".B swiped \(command)"), "swiped.1: \(command)")
            let own = try SwipedDaemon.run([command, "--help"])
            XCTAssertEqual(own.status, .exited(0))
            XCTAssertTrue(own.standardOutput.contains("swiped \(command) ("), own.standardOutput)
            let bad = try SwipedDaemon.run([command, "--bogus"])
            XCTAssertEqual(bad.status, .exited(2), bad.standardError)
            XCTAssertTrue(bad.standardError.contains("unknown option '--bogus'"), bad.standardError)
        }
        for option in ["--from-sqlite", "--backup", "--force", "--to"] {
            XCTAssertTrue(man.contains(option), "swiped.1 does not mention \(option)")
        }
        // Two stores named, or none: refused before anything is read.
        let two = try SwipedDaemon.run(["verify", "--state", "/nonexistent", "--backup", "/nonexistent"])
        XCTAssertEqual(two.status, .exited(2), two.standardError)
        let none = try SwipedDaemon.run(["export"])
        XCTAssertEqual(none.status, .exited(2), none.standardError)
        XCTAssertTrue(none.standardError.contains("name the store"), none.standardError)
    }
}

// Reliability: the disk at the daemon level. A full disk (a small tmpfs): mutations get
// `storage`, nothing half-written shows, reads go on, writes work again once there is space,
// and a restart shows exactly the acknowledged events. An I/O error on commit (a loop device
// whose capacity is cut under the filesystem): the daemon stops taking writes, logs at `crit`
// and exits 1. Both need root (mount, losetup); they skip with the reason otherwise.

import Foundation
import Glibc
import XCTest

final class ReliabilityDiskTests: XCTestCase {
    private func requireRoot() throws {
        guard getuid() == 0 else { throw XCTSkip("needs root to mount a small filesystem") }
    }

    /// Mounts `source` (of `type`, with `options`) on `target`, or skips with mount's reason.
    private func mount(_ type: String, _ source: String, on target: String, options: String? = nil) throws {
        var arguments = ["-t", type]
        if let options { arguments += ["-o", options] }
        let result = try Subprocess.run("mount", arguments + [source, target])
        guard result.status.isSuccess else {
            throw XCTSkip("cannot mount \(type) on \(target): \(result.standardError)")
        }
    }

    private func unmount(_ target: String) {
        _ = try? Subprocess.run("umount", ["-l", target])
    }

    /// Writes zeros to `path` until the filesystem is full; returns the bytes written.
    @discardableResult
    private func fill(_ path: String) -> Int {
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        let chunk = [UInt8](repeating: 0, count: 4096)
        var total = 0
        while true {
            let n = chunk.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            total += n
        }
        return total
    }

    func testDiskFullGivesStorageKeepsReadsAndRecovers() throws {
        try requireRoot()
        let dir = try TemporaryDirectory("swiped-full")
        defer { withExtendedLifetime(dir) {} }
        let mountPoint = dir.file("small")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: false)
        try mount("tmpfs", "tmpfs", on: mountPoint, options: "size=2m,mode=0700")
        defer { unmount(mountPoint) }

        let daemon = try AbuseDaemon(state: mountPoint + "/state", socket: dir.file("s.sock"))
        defer {
            if daemon.isRunning { daemon.kill(SIGKILL) }
            _ = try? daemon.wait()
        }
        let client = try daemon.connect()
        var acked: [(key: String, seq: Int)] = []
        // Some writes while there is space.
        for i in 0..<5 {
            let reply = try client.request(["op": "toggle-watched", "movie": "seven", "key": "before-\(i)"])
            XCTAssertEqual(reply["ok"] as? Bool, true, "\(reply)")
            acked.append(("before-\(i)", reply["seq"] as? Int ?? -1))
        }

        // Fill the filesystem, then write until the disk refuses (the WAL may still have room
        // for a few commits in space it already holds).
        let filler = mountPoint + "/filler"
        fill(filler)
        let title = String(repeating: "Long title ", count: 18)
        var refused: [String] = []
        var storageMessage = ""
        for i in 0..<2000 {
            let key = "full-\(i)"
            let reply = try client.request(["op": "add", "title": "\(title)\(i)", "key": key, "id": i])
            XCTAssertEqual(reply["id"] as? Int, i)
            if reply["ok"] as? Bool == true {
                XCTAssertTrue(refused.isEmpty, "a write succeeded between refusals: \(reply)")
                acked.append((key, reply["seq"] as? Int ?? -1))
                continue
            }
            let error = reply["error"] as? [String: Any]
            XCTAssertEqual(error?["code"] as? String, "storage", "\(reply)")
            storageMessage = error?["message"] as? String ?? ""
            refused.append(key)
            if refused.count == 20 { break }
            fill(filler)  // whatever SQLite freed (a rolled-back WAL tail) is taken again
        }
        XCTAssertEqual(refused.count, 20, "the full disk never refused a write")
        print("disk full: \(acked.count) acknowledged, then storage: \(storageMessage)")
        XCTAssertTrue(
            daemon.isRunning, "the daemon stopped on a full disk:\n\(daemon.standardError.suffix(2000))")

        // Reads go on, and show exactly the acknowledged events: nothing of the refused ones.
        XCTAssertEqual(try client.request(["op": "ping"])["ok"] as? Bool, true)
        let history = try client.wholeHistory()
        let list = try client.listMovies()
        XCTAssertEqual(list.seq, history.count)
        XCTAssertEqual(list.movies, foldHistory(history))
        XCTAssertEqual(history.count, 10 + acked.count, "refused writes are visible")
        XCTAssertEqual(acked.map(\.seq), Array(11...(10 + acked.count)))

        // Free space: the refused writes go through when retried with the same keys.
        XCTAssertEqual(unlink(filler), 0)
        for key in refused {
            let i = Int(key.dropFirst("full-".count))!
            let reply = try client.request(["op": "add", "title": "\(title)\(i)", "key": key])
            XCTAssertEqual(reply["ok"] as? Bool, true, "after freeing space: \(reply)")
            acked.append((key, reply["seq"] as? Int ?? -1))
        }

        // A restart shows exactly the acknowledged events.
        daemon.kill(SIGTERM)
        XCTAssertEqual(try daemon.wait(), .exited(0))
        try daemon.start()
        let again = try daemon.connect()
        let after = try again.wholeHistory()
        XCTAssertEqual(after.count, 10 + acked.count)
        XCTAssertEqual(try again.listMovies().movies, foldHistory(after))
        for (key, seq) in acked where key.hasPrefix("full-") {
            let i = Int(key.dropFirst("full-".count))!
            let reply = try again.request(["op": "add", "title": "\(title)\(i)", "key": key])
            XCTAssertEqual(reply["seq"] as? Int, seq, "key \(key) after the restart")
        }
        XCTAssertEqual(try again.listMovies().seq, 10 + acked.count, "replayed keys wrote events")
        daemon.kill(SIGTERM)
        XCTAssertEqual(try daemon.wait(), .exited(0))
    }

    func testIOErrorOnCommitStopsTheDaemonWithStatus1() throws {
        try requireRoot()
        guard Binaries.hasSystem("losetup"), Binaries.hasSystem("mkfs.ext4") else {
            throw XCTSkip("needs losetup and mkfs.ext4 (util-linux, e2fsprogs)")
        }
        // device-mapper (dmsetup's error or flakey targets) is not available in this container,
        // so the I/O error comes from a loop device whose capacity is cut below the filesystem.
        let dir = try TemporaryDirectory("swiped-eio")
        defer { withExtendedLifetime(dir) {} }
        let image = dir.file("disk.img")
        XCTAssertTrue(FileManager.default.createFile(atPath: image, contents: nil))
        XCTAssertEqual(truncate(image, 64 << 20), 0)
        let mkfs = try Subprocess.run("mkfs.ext4", ["-q", "-F", "-E", "nodiscard", image])
        guard mkfs.status.isSuccess else { throw XCTSkip("mkfs.ext4 failed: \(mkfs.standardError)") }
        let attach = try Subprocess.run("losetup", ["--find", "--show", image])
        guard attach.status.isSuccess else { throw XCTSkip("no loop device: \(attach.standardError)") }
        let device = attach.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
        defer { _ = try? Subprocess.run("losetup", ["-d", device]) }
        let mountPoint = dir.file("disk")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: false)
        try mount("ext4", device, on: mountPoint)
        defer { unmount(mountPoint) }

        let daemon = try AbuseDaemon(state: mountPoint + "/state", socket: dir.file("s.sock"))
        defer {
            if daemon.isRunning { daemon.kill(SIGKILL) }
            _ = try? daemon.wait()
        }
        let client = try daemon.connect()
        let first = try client.request(["op": "toggle-watched", "movie": "seven", "key": "ok-1"])
        XCTAssertEqual(first["ok"] as? Bool, true, "\(first)")

        // Cut the device to 1 MiB: every write (and the journal's) past it fails with EIO.
        XCTAssertEqual(truncate(image, 1 << 20), 0)
        let resize = try Subprocess.run("losetup", ["--set-capacity", device])
        guard resize.status.isSuccess else {
            throw XCTSkip("losetup --set-capacity failed: \(resize.standardError)")
        }

        // The next commits fail in fsync: no reply for them; the daemon exits 1 and says why.
        var replies: [[String: Any]] = []
        for i in 0..<50 {
            guard
                (try? client.send(json: ["op": "toggle-watched", "movie": "seven", "key": "eio-\(i)"]))
                    != nil,
                let reply = try? client.readReply(timeout: .seconds(10))
            else { break }
            replies.append(reply)
            if !daemon.isRunning { break }
        }
        let status = try daemon.wait(timeout: .seconds(10))
        XCTAssertEqual(status, .exited(1), "after an I/O error on commit")
        let log = daemon.standardError
        XCTAssertTrue(log.contains("storage I/O error"), "no crit line:\n\(log.suffix(2000))")
        // Replies that did arrive before the failure are successes (durable before the cut) or
        // `storage`; none claims a write the disk refused.
        for reply in replies where reply["ok"] as? Bool != true {
            XCTAssertEqual((reply["error"] as? [String: Any])?["code"] as? String, "storage", "\(reply)")
        }
        print("I/O error: \(replies.count) replies before the daemon stopped with \(status)")
    }
}

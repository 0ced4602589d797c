// A list of 100,000 movies (issue 33): `list` stays one reply, the daemon's memory stays bounded
// whatever clients ask and do not read, and pages find what they are asked for.
import Foundation
import Glibc
import XCTest

final class DaemonBigListTests: XCTestCase {
    /// The daemon's VmRSS with 100,000 movies and 1,000 clients that each asked for the whole
    /// list ten times and read nothing: 200 MB. Before issue 33 each such client cost the whole
    /// reply, about 11 MB (11 GB in all); now each holds at most a chunk of its reply (16 KB,
    /// and the buffer's growth) and they share the movies at one seq.
    static let rssBoundKB = 200 * 1024

    static let movies = 100_000

    /// A daemon on a log of the seed and 100,000 movies, written directly (`loadgen --fill`):
    /// adding them through a debug daemon would take a minute.
    private func bigDaemon(_ dir: TemporaryDirectory) throws -> AbuseDaemon {
        let fill = try Subprocess(
            try Binaries.product("loadgen"), ["--fill", dir.file("state"), "--movies", "\(Self.movies)"])
        XCTAssertEqual(try fill.wait(timeout: .seconds(60)), .exited(0), fill.standardError)
        return try AbuseDaemon(state: dir.file("state"), socket: dir.file("s.sock"))
    }

    /// Reads one whole line from `fd` (a raw read: a line of megabytes, scanned once).
    private func readWholeLine(_ fd: Int32, timeout: Duration) throws -> [UInt8] {
        var line: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        let deadline = Deadline(timeout)
        while true {
            guard try waitReadable(fd, until: deadline) else { throw TimeoutError("no whole line") }
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { throw LineClientError("end of file after \(line.count) bytes") }
            if let newline = chunk[..<n].firstIndex(of: 0x0A) {
                line += chunk[..<newline]
                return line
            }
            line += chunk[..<n]
        }
    }

    func testAThousandClientsAskingForTheWholeListWithoutReadingLeaveMemoryBounded() throws {
        let dir = try TemporaryDirectory()
        let daemon = try bigDaemon(dir)
        let other = try daemon.connect()
        let before = try daemon.rssKB()
        var hogs: [LineClient] = []
        let tenLists = Array(String(repeating: #"{"op":"list"}"# + "\n", count: 10).utf8)
        for _ in 0..<1000 {
            let hog = try LineClient(path: daemon.socket)
            try hog.sendRaw(tenLists)
            hogs.append(hog)
            if hogs.count % 100 == 0 {
                XCTAssertNotNil(try other.ok(["op": "ping"], timeout: .seconds(10)))
            }
        }
        // Every hog was answered as far as its socket takes (its hello and ≈ 200 KB of its first
        // reply) once a ping sent after them all is answered: the daemon reads in turn.
        var slowest = Duration.zero
        for n in 0..<20 {
            let start = ContinuousClock.now
            XCTAssertEqual(int(try other.ok(["op": "ping", "id": n], timeout: .seconds(10))["id"]), n)
            slowest = max(slowest, ContinuousClock.now - start)
        }
        XCTAssertLessThan(slowest, .seconds(1), "pings answered while 1,000 clients do not read")
        let rss = try daemon.rssKB()
        XCTAssertLessThan(rss, Self.rssBoundKB, "VmRSS in kB (\(before) kB before the hogs)")
        print("VmRSS: \(before) kB with 100,010 movies, \(rss) kB with 1,000 clients owed 10 lists each")

        // The whole list is still one line, for a client that reads it.
        let reader = try daemon.connect()
        try reader.send(#"{"op":"list","id":1}"#)
        let line = try readWholeLine(reader.fileDescriptor, timeout: .seconds(60))
        let list = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
        XCTAssertEqual((list["movies"] as? [Any])?.count, Self.movies + 10)
        XCTAssertTrue(list["next"] is NSNull)
        hogs.removeAll()
        XCTAssertNotNil(try other.ok(["op": "ping"], timeout: .seconds(10)))
    }

    func testPagesAndMatchFindOneMovieAmong100000() throws {
        let dir = try TemporaryDirectory()
        let daemon = try bigDaemon(dir)
        let client = try daemon.connect()
        let found = try client.ok(["op": "list", "match": "MOVIE 99999"])
        XCTAssertEqual(((found["movies"] as? [[String: Any]])?.map { $0["id"] as? String }), ["movie_99999"])
        XCTAssertTrue(found["next"] is NSNull)
        let page = try client.ok(["op": "list", "after": "movie_50000", "limit": 1000])
        let ids = (page["movies"] as? [[String: Any]])?.compactMap { $0["id"] as? String }
        XCTAssertEqual(ids?.first, "movie_50001")
        XCTAssertEqual(ids?.count, 1000)
        XCTAssertEqual(page["next"] as? String, "movie_51000")
        let last = try client.ok(["op": "list", "after": "movie_99990", "limit": 1000])
        XCTAssertEqual((last["movies"] as? [Any])?.count, 10)
        XCTAssertTrue(last["next"] is NSNull)
    }
}

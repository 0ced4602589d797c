// A reordered log moves with everything (issue 48): export format 3 writes `after` and `from`,
// import writes them into either store, verify and backup keep them, and the digest covers the
// order (MVS4 once a key has digits after the point) while a log without moves keeps the digest
// it had. A file of version 2 with a place is refused.
import EventLog
import Foundation
import Glibc
import Movies
import StorePostgres
import StoreTestSupport
import TestSupport
import XCTest

@testable import DataTools

final class ReorderMovesTests: XCTestCase {
    var dir = ""
    nonisolated(unsafe) private static var shared: PostgresCluster?

    override class func tearDown() {
        shared?.destroy()
        shared = nil
        super.tearDown()
    }

    override func setUpWithError() throws {
        var template = Array("/tmp/swiped-reorder-moves.XXXXXX".utf8CString)
        XCTAssertNotNil(template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) })
        dir = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: dir)
    }

    private func lines(_ path: String) -> [String] {
        String(decoding: FileManager.default.contents(atPath: path) ?? Data(), as: UTF8.self)
            .split(separator: "\n").map(String.init)
    }

    func testAReorderedLogGoesFromSQLiteToPostgreSQLAndBackInItsOrder() throws {
        let state = try makeLog(directory: dir + "/a", changes: 800, reorder: true)
        XCTAssertNotEqual(
            state.movies.map(\.id),
            state.movies.map(\.id).sorted { state.movie($0)!.version < state.movie($1)!.version },
            "moves changed the order")
        XCTAssertTrue(state.snapshotBytes().starts(with: Array("MVS4".utf8)), "some key has a tail")
        let source = try Moves.verify(.state(dir + "/a"))
        let exported = try Moves.export(.state(dir + "/a"), toFile: dir + "/a.jsonl", replace: false, now: 1)
        XCTAssertEqual(exported.digest, source.digest)
        let a = lines(dir + "/a.jsonl")
        XCTAssertTrue(a[0].contains(#""version":3"#), a[0])
        let moved = a.filter { $0.contains(#""kind":"moved""#) }
        XCTAssertGreaterThan(moved.count, 100)
        for line in moved { XCTAssertTrue(line.contains(#","after":"#) && line.contains(#","from":"#), line) }
        XCTAssertTrue(a.contains { $0.contains(#""kind":"restored""#) && $0.contains(#","after":"#) })

        // Into PostgreSQL and out again: the same lines, digest and order; back into SQLite.
        if ReorderMovesTests.shared == nil {
            ReorderMovesTests.shared = try PostgresCluster(database: nil, prefix: "swiped-reorder-moves")
        }
        let cluster = ReorderMovesTests.shared!
        try cluster.createDatabase("reorder")
        let conninfo = cluster.conninfo(database: "reorder")
        XCTAssertEqual(
            try Moves.importLog(from: .export(dir + "/a.jsonl"), into: .postgres(conninfo)).digest,
            source.digest)
        _ = try Moves.export(.postgres(conninfo), toFile: dir + "/b.jsonl", replace: false, now: 2)
        XCTAssertEqual(Array(lines(dir + "/b.jsonl").dropFirst().dropLast()), Array(a.dropFirst().dropLast()))
        XCTAssertEqual(
            try Moves.importLog(from: .export(dir + "/b.jsonl"), into: .state(dir + "/c")).digest,
            source.digest)
        let c = try MovieState(
            snapshot: try XCTUnwrap(
                try EventLog(path: dir + "/c/events.sqlite3", create: false).latestSnapshot()
            ).data)
        XCTAssertEqual(c.movies.map(\.id), state.movies.map(\.id))
        XCTAssertEqual(c, state)
    }

    func testAnotherOrderIsAnotherDigestAndALogWithoutMovesKeepsItsDigest() throws {
        _ = try makeLog(directory: dir + "/plain", changes: 300)
        let plain = try Moves.verify(.state(dir + "/plain"))
        // The same log, appended to by one move and by its undo: the order is the same as before
        // the move, the keys are not (the movie came back between its neighbours), so the digest
        // is not the plain log's. Two logs with the same events but one move's places differ
        // cannot both verify: the fold checks every place.
        var state = try makeLog(directory: dir + "/moved", changes: 300)
        let log = try EventLog(path: dir + "/moved/events.sqlite3", durability: .normal)
        let first = state.movies[0].id
        let second = state.movies[1].id
        for command in [
            MovieCommand(.move(movie: first, to: .after(second))),
            MovieCommand(.move(movie: first, to: .first)),
        ] {
            let (event, movie) = try state.decideAndApply(command)
            _ = try log.append([
                NewEvent(
                    stream: event.movieID, kind: event.kind.rawValue, payload: event.payload(after: movie!),
                    key: nil,
                    author: nil)
            ])
        }
        log.close()
        let moved = try Moves.verify(.state(dir + "/moved"))
        XCTAssertNotEqual(moved.digest, plain.digest)
        XCTAssertEqual(state.movies.map(\.id).prefix(2), [first, second])
    }

    func testAPlaceInAVersion2FileIsRefused() throws {
        _ = try makeLog(directory: dir + "/a", changes: 200, reorder: true)
        _ = try Moves.export(.state(dir + "/a"), toFile: dir + "/a.jsonl", replace: false, now: 1)
        var all = lines(dir + "/a.jsonl")
        all[0] = all[0].replacingOccurrences(of: #""version":3"#, with: #""version":2"#)
        let n = try XCTUnwrap(all.firstIndex { $0.contains(#""kind":"moved""#) })
        _ = FileManager.default.createFile(
            atPath: dir + "/v2.jsonl", contents: Data((all.joined(separator: "\n") + "\n").utf8))
        XCTAssertThrowsError(try Moves.readExport(try LineInput.open(dir + "/v2.jsonl"))) {
            XCTAssertTrue(
                "\($0)".hasSuffix(#"v2.jsonl: line \#(n + 1): an event with "after" in a version 2 export"#),
                "\($0)")
        }
    }
}

import Foundation
import JSONCodec
import XCTest

@testable import swipectl

/// `swipectl status`'s screen and exit status, from the golden reply the Wire encoder made
/// (Tests/metrics/status.json, StatusReplyTests).
final class StatusScreenTests: XCTestCase {
    func golden() throws -> String {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../metrics/status.json").standardized
        return try String(contentsOf: url, encoding: .utf8)
    }

    func render(_ text: String) throws -> StatusScreen {
        StatusScreen.render(
            reply: try XCTUnwrap(try JSONParser.parse(text).objectValue), socket: "/run/swiped/swiped.sock")
    }

    func testAHealthyDaemonsScreen() throws {
        let screen = try render(try golden())
        XCTAssertEqual(screen.exitCode, 0)
        XCTAssertEqual(
            screen.text,
            """
            ● swiped 0.1.0 (protocol 1), pid 4242: healthy
              Up:       1m 1s, since 2025-12-03 09:00:00 UTC
              Store:    sqlite, ok since 2025-12-03 09:00:00 UTC
                        seq 30, 30 events, snapshot at seq 0
                        /var/lib/private/swiped/events.sqlite3 (96.0 KiB)
              Clients:  5 connected (3 unix, 2 websocket; peak 6): 2 subscribed, 1 sharing, 1 watching, 0 recording, 5 writers
                        0 refused (too-many-clients), 1 dropped (slow-consumer) since start
              Web:      refused 3 since start: origin 2, not-found 1
                        close frames 4 since start: 1000 3, 1001 1
              Requests: 124 since start (2.0/s): drag 100, toggle-watched 20, ping 3, list 1
              Errors:   1 since start: conflict 1
              Latency:              count       p50       p99     p99.9
                        drag          100 ≤ 16.4 µs ≤ 16.4 µs ≤ 16.4 µs
                        read            4 ≤ 16.4 µs   40.6 µs   40.9 µs
                        mutation       20   1.44 ms   1.57 ms   1.57 ms
                        fanout          1   30.7 µs   32.7 µs   32.8 µs
                        commit         20   1.18 ms   1.31 ms   1.31 ms
              Commits:  20 transactions, 20 events, 1.0 per transaction
              Process:  11.8 MiB resident, 17 open files
              Limits:   65472 clients, 1.0 MiB queue, 64.0 KiB line, 65536 files

            """)
    }

    func testADegradedStoreExitsOne() throws {
        let text = try golden().replacingOccurrences(of: #""state":"ok""#, with: #""state":"reconnecting""#)
        let screen = try render(text)
        XCTAssertEqual(screen.exitCode, 1)
        XCTAssertTrue(
            screen.text.hasPrefix(
                "× swiped 0.1.0 (protocol 1), pid 4242: degraded, the store is reconnecting\n"), screen.text)
    }

    func testWhatANonWriterSeesHasNoPidNorPathNorLimits() throws {
        var text = try golden()
        for cut in [#""pid":4242,"#, #","path":"/var/lib/private/swiped/events.sqlite3""#] {
            text = text.replacingOccurrences(of: cut, with: "")
        }
        text = text.replacingOccurrences(
            of: #","maxClients":65472,"maxQueue":1048576,"maxLine":65536,"fileLimit":65536"#, with: "")
        let screen = try render(text)
        XCTAssertEqual(screen.exitCode, 0, screen.text)
        XCTAssertTrue(screen.text.hasPrefix("● swiped 0.1.0 (protocol 1): healthy\n"), screen.text)
        XCTAssertTrue(screen.text.contains("\n            96.0 KiB\n"), screen.text)
        XCTAssertFalse(screen.text.contains("Limits"))
    }

    func testPostgresShowsItsServerAndLastRead() throws {
        let text = try golden().replacingOccurrences(
            of: #""path":"/var/lib/private/swiped/events.sqlite3","bytes":98304"#,
            with: #""host":"db.example","port":5432,"database":"movies","lastRead":0.25"#
        ).replacingOccurrences(of: #""kind":"sqlite""#, with: #""kind":"postgres""#)
        let screen = try render(text)
        XCTAssertTrue(screen.text.contains("  Store:    postgres, ok since"), screen.text)
        XCTAssertTrue(screen.text.contains("\n            db.example:5432, database movies\n"), screen.text)
        XCTAssertTrue(
            screen.text.contains("\n            last read of other daemons' events: 250 ms ago\n"),
            screen.text)
    }

    func testAnOlderDaemonWithoutTheOpIsSaidSoNotDegraded() throws {
        let screen = try render(#"{"ok":false,"error":{"code":"unknown-op","message":"no op named status"}}"#)
        XCTAssertEqual(screen.exitCode, 4)
        XCTAssertEqual(
            screen.text,
            "swiped at /run/swiped/swiped.sock has no status op: it is older than this swipectl (its reply: unknown-op)\n"
        )
    }

    func testAReplyItCannotReadIsNotTakenForHealthy() throws {
        let screen = try render(#"{"ok":true,"status":{"server":{"version":"9"}}}"#)
        XCTAssertEqual(screen.exitCode, 4)
        XCTAssertTrue(screen.text.contains("cannot read"), screen.text)
    }

    func testFormats() {
        XCTAssertEqual(Format.seconds(0.0000081920), "8.19 µs")
        XCTAssertEqual(Format.seconds(0.00131), "1.31 ms")
        XCTAssertEqual(Format.seconds(17.179869184), "17.2 s")
        XCTAssertEqual(Format.seconds(250), "250 s")
        XCTAssertEqual(Format.duration(90_061), "1d 1h 1m")
        XCTAssertEqual(Format.bytes(512), "512 B")
        XCTAssertEqual(Format.bytes(1_572_864), "1.5 MiB")
    }
}

import Foundation
import SwipeEngine
import XCTest

/// Recorded inputs replay to identical states and effects: the fixtures in Fixtures/*.swipe, and
/// random sessions written out as text and read back.
final class ReplayTests: XCTestCase {
    func fixtures() throws -> [URL] {
        let folder = try XCTUnwrap(Bundle.module.url(forResource: "Fixtures", withExtension: nil))
        return try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "swipe" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    func testEveryFixtureReplays() throws {
        let urls = try fixtures()
        XCTAssertGreaterThanOrEqual(urls.count, 5)
        for url in urls {
            let recording = try Recording(parsing: String(contentsOf: url, encoding: .utf8))
            XCTAssertFalse(recording.steps.isEmpty, url.lastPathComponent)
            let first = try Replayer.replay(recording)
            XCTAssertEqual(first.failures, [], url.lastPathComponent)
            // Replaying again gives the identical states and effects.
            XCTAssertEqual(try Replayer.replay(recording).outcomes, first.outcomes, url.lastPathComponent)
        }
    }

    /// A random session, written as a fixture's text and parsed back, replays to the same outcomes.
    func testRandomSessionsRoundTripThroughText() throws {
        for seed: UInt64 in 1...100 {
            var session = RandomSession(seed: seed)
            var outcomes: [Replayer.Outcome] = []
            session.observe = { _, _, result, after in
                switch result {
                case let .success(effects):
                    outcomes.append(.init(rows: after.trackedRows, effects: effects, error: nil))
                case let .failure(error):
                    outcomes.append(.init(rows: after.trackedRows, effects: [], error: error))
                }
            }
            for _ in 0..<200 { session.step() }
            var parsed = try Recording(parsing: session.recording.text)
            for i in parsed.steps.indices { parsed.steps[i].line = 0 }
            XCTAssertEqual(parsed, session.recording, "seed \(seed)")
            let replay = try Replayer.replay(parsed)
            XCTAssertEqual(replay.failures, [], "seed \(seed)")
            XCTAssertEqual(replay.outcomes, outcomes, "seed \(seed)")
            if !replay.failures.isEmpty { return }
        }
    }

    // MARK: The replayer itself catches wrong recordings.

    func failures(_ text: String) throws -> [String] {
        try Replayer.replay(Recording(parsing: text)).failures
    }

    func testAnUnassertedStateChangeFails() throws {
        XCTAssertEqual(
            try failures("0 drag g -60\n"), ["line 1: row g changed to row g dragging -60 without a row line"]
        )
    }

    func testAMissingOrWrongEffectFails() throws {
        XCTAssertEqual(
            try failures("0 release g dx=-300\n=> row g fired -390\n=> effect fire g delete\n"),
            [
                "line 1: effects: expected [\"effect fire g delete\"], got [\"effect fire g delete\", \"effect schedule close g 0.5\"]"
            ])
    }

    func testAWrongRowOrRenderFails() throws {
        XCTAssertEqual(
            try failures("0 drag g -60\n=> row g dragging -61\n=> render g trailing delete@320+70\n"),
            [
                "line 1: row g: expected row g dragging -61, got row g dragging -60",
                "line 1: expected render g trailing delete@320+70, got render g trailing delete@330+60",
            ])
    }

    func testTimersMustBeReplayedWhenDue() throws {
        let fired =
            "0 release g dx=-300\n=> row g fired -390\n=> effect fire g delete\n=> effect schedule close g 0.5\n"
        XCTAssertEqual(
            try failures(fired + "0.4 timer g\n"),
            ["line 5: no close timer of g due at 0.4 (pending: [\"g\": 0.5])"])
        XCTAssertEqual(
            try failures(
                fired + "0.6 close *\n=> row g closed\n=> effect closed g\n=> effect cancel close g\n"),
            ["line 5: the close timer of g, due at 0.5, was not replayed before this input"])
        XCTAssertEqual(try failures(fired + "0.5 timer g\n=> row g closed\n"), [])
        XCTAssertEqual(
            try failures(fired + "0.5 remove g\n=> row g closed\n=> effect cancel close g\n").count, 1)
    }

    func testAnUnexpectedErrorFails() throws {
        XCTAssertEqual(
            try failures("0 tap g delete\n"),
            ["line 1: error: expected [], got notRevealed(row: \"g\", action: \"delete\")"])
    }

    func testBadTextIsRefusedWithItsLine() {
        for (text, line) in [
            ("0 fly g\n", 1), ("layout nope\n", 1), ("\n=> row g open 1\n", 2),
            ("1 drag g 1\n0 drag g 1\n", 2),
        ] {
            XCTAssertThrowsError(try Recording(parsing: text), text) { error in
                XCTAssertEqual((error as? ParseError)?.line, line, text)
            }
        }
    }
}

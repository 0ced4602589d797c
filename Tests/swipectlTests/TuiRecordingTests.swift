import Foundation
import JSONCodec
import XCTest

@testable import swipectl

/// Where `swipectl tui`'s r key saves a recording, and `--record-dir`.
final class TuiRecordingTests: XCTestCase {
    func testRecordDirIsATuiOption() throws {
        XCTAssertEqual(
            try Arguments.parse(["tui", "--record-dir", "/tmp/r"]),
            .run(Invocation(command: .tui(ascii: false, rtl: false, recordDirectory: "/tmp/r"))))
        XCTAssertEqual(
            try Arguments.parse(["tui", "--ascii"]),
            .run(Invocation(command: .tui(ascii: true, rtl: false, recordDirectory: nil))))
        XCTAssertEqual(
            try Arguments.parse(["tui", "--confirm-delete"]),
            .run(
                Invocation(command: .tui(ascii: false, rtl: false, recordDirectory: nil, confirmDelete: true))
            ))
        for arguments in [
            ["tui", "--record-dir="], ["list", "--record-dir", "/tmp"], ["tui", "--record-dir"],
            ["tui", "--confirm-delete=yes"], ["list", "--confirm-delete"],
        ] {
            XCTAssertThrowsError(try Arguments.parse(arguments), "\(arguments)") { error in
                XCTAssertEqual((error as? Failure)?.status, .usage)
            }
        }
    }

    func testEachRecordingGetsANewFileNamedAfterTheTimeWithItsRows() throws {
        let directory = NSTemporaryDirectory() + "swipectl-tui-recording-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let recording = JSON.object(["recording": 1])
        let first = try TuiRecording.save(
            recording: recording, rows: ["{\"row\":1}", "{\"row\":2}"], in: directory)
        let second = try TuiRecording.save(recording: recording, rows: [], in: directory + "/")
        XCTAssertNotNil(
            first.range(of: #"^swiped-recording-\d{8}-\d{6}\.json$"#, options: .regularExpression))
        XCTAssertNotEqual(first, second)
        if first.dropLast(5) == second.dropLast(7) {
            XCTAssertEqual(second, first.dropLast(5) + "-2.json", "the same second: -2")
        }
        XCTAssertEqual(
            try String(contentsOfFile: directory + "/" + first, encoding: .utf8), "{\"recording\":1}\n")
        XCTAssertEqual(
            try String(contentsOfFile: directory + "/" + first + ".rows", encoding: .utf8),
            "{\"row\":1}\n{\"row\":2}\n")
        XCTAssertEqual(try String(contentsOfFile: directory + "/" + second + ".rows", encoding: .utf8), "")
        XCTAssertNil(TuiRecording.unwritable(directory))
        XCTAssertEqual(TuiRecording.unwritable(directory + "/" + first), "not a directory")
        XCTAssertEqual(TuiRecording.unwritable(directory + "/none"), "No such file or directory")
    }
}

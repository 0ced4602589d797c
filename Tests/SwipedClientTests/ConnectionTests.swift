// The blocking line connection (Connection.swift): a line is what comes up to a newline,
// however the bytes are split across reads; a timeout, the end of the stream and a socket that
// cannot be reached are each said apart.
import Foundation
import Glibc
import XCTest

@testable import SwipedClient

final class ConnectionTests: XCTestCase {
    /// A line longer than a read (64 KiB), written in pieces, is one line; the next follows.
    func testALongLineSplitAcrossReadsIsOneLine() throws {
        let daemon = try FakeDaemon()
        let long = String(repeating: "x", count: 150_000)
        let half = long.index(long.startIndex, offsetBy: 70_000)
        daemon.serve([
            .write(String(long[..<half])), .pause, .write(String(long[half...])), .pause,
            .write("\nshort\nla"), .pause, .write("st\n"), .close,
        ])
        let connection = try LineConnection(path: daemon.path)
        XCTAssertEqual(try connection.readLine(timeout: 5).map { String(decoding: $0, as: UTF8.self) }, long)
        XCTAssertEqual(try connection.readLine(timeout: 5), Array("short".utf8))
        XCTAssertEqual(try connection.readLine(timeout: 5), Array("last".utf8))
        XCTAssertNil(try connection.readLine(timeout: 5), "the end of the stream")
        _ = daemon.finish()
    }

    /// A reply as long as a `list` of 100,000 movies (about 18 MB: no limit on a line's length)
    /// arriving in small writes is read whole, each byte scanned once.
    func testAnEighteenMegabyteLineInSmallWritesIsReadWholeAndScannedOnce() throws {
        let daemon = try FakeDaemon()
        let piece = String(repeating: "y", count: 4096)
        daemon.serve(Array(repeating: .write(piece), count: 4500) + [.write("\nend\n"), .close])
        let connection = try LineConnection(path: daemon.path)
        let line = try connection.readLine(timeout: 10)
        XCTAssertEqual(line?.count, 4096 * 4500)
        XCTAssertEqual(line?.allSatisfy { $0 == UInt8(ascii: "y") }, true)
        XCTAssertEqual(connection.lines.bytesScanned, 4096 * 4500 + 1)
        XCTAssertEqual(try connection.readLine(timeout: 5), Array("end".utf8))
        XCTAssertNil(try connection.readLine(timeout: 5))
        _ = daemon.finish()
    }

    func testNothingInTimeIsATimeout() throws {
        let daemon = try FakeDaemon()
        let connection = try LineConnection(path: daemon.path)
        let served = daemon.accept()
        defer { close(served) }
        FakeDaemon.write("no newline yet", to: served)
        XCTAssertThrowsError(try connection.readLine(timeout: 0.05)) {
            XCTAssertEqual(($0 as? ClientError)?.kind, .timeout)
        }
        FakeDaemon.write("\n", to: served)
        XCTAssertEqual(try connection.readLine(timeout: 1), Array("no newline yet".utf8))
    }

    func testASocketThatCannotBeReachedSaysWhy() throws {
        let daemon = try FakeDaemon()
        let missing = daemon.directory + "/none.sock"
        XCTAssertThrowsError(try LineConnection(path: missing)) {
            XCTAssertEqual(
                $0 as? ClientError,
                ClientError(.connect, "cannot connect to \(missing): No such file or directory"))
        }
        for path in ["", "/" + String(repeating: "d", count: 120)] {
            XCTAssertThrowsError(try LineConnection(path: path)) {
                XCTAssertEqual(
                    $0 as? ClientError,
                    ClientError(
                        .connect, "cannot connect to \(path): the path is empty or longer than 107 bytes"))
            }
        }
    }
}

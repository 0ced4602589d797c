// Running the real swipectl against a TestDaemon (SwipectlTests.swift), for the swipectl tests
// that live in files of their own.

import Foundation
import XCTest

extension TestDaemon {
    /// Runs swipectl with `--socket` first (and no $SWIPED_SOCKET) and returns what it did.
    func swipectl(_ arguments: [String], timeout: Duration = .seconds(20)) throws -> Subprocess.Result {
        try Subprocess.run(
            try Binaries.swipectl, ["--socket", socket] + arguments, environment: ["SWIPED_SOCKET": nil],
            timeout: timeout)
    }

    /// Like `swipectl`, but fails the test unless it exits 0 with nothing on stderr.
    @discardableResult
    func ok(_ arguments: String..., file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let result = try swipectl(arguments)
        XCTAssertEqual(
            result.status, .exited(0), "swipectl \(arguments): \(result.standardError)", file: file,
            line: line)
        XCTAssertEqual(result.standardError, "", "swipectl \(arguments)", file: file, line: line)
        return result.standardOutput
    }

    /// The daemon's movies in list order, from `--json list`.
    func movies() throws -> [[String: Any]] {
        let reply = try JSONSerialization.jsonObject(with: Data(try ok("--json", "list").utf8))
        return try XCTUnwrap((reply as? [String: Any])?["movies"] as? [[String: Any]])
    }

    /// The ids of `movies()`.
    func ids() throws -> [String] { try movies().compactMap { $0["id"] as? String } }
}

/// Each line of `text` as a JSON object.
func jsonLines(_ text: String, file: StaticString = #filePath, line: UInt = #line) throws -> [[String: Any]] {
    try text.split(separator: "\n").map { item in
        let value = try JSONSerialization.jsonObject(with: Data(item.utf8))
        return try XCTUnwrap(value as? [String: Any], "not a JSON object: \(item)", file: file, line: line)
    }
}

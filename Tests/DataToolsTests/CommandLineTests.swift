import XCTest

@testable import DataTools

/// The subcommands' command line (DataTools.parse and check), on the shared scanner.
final class CommandLineTests: XCTestCase {
    private func usage(_ command: String, _ arguments: [String]) -> String? {
        do throws(DataTools.Usage) {
            try DataTools.check(command, try DataTools.parse(arguments))
            return nil
        } catch {
            return error.message
        }
    }

    func testWhatParses() throws {
        let p = try DataTools.parse(["--state=/var/lib/swiped", "--to", "out.jsonl", "--force"])
        XCTAssertEqual(p.store, .state("/var/lib/swiped"))
        XCTAssertEqual(p.to, "out.jsonl")
        XCTAssertTrue(p.force)
        XCTAssertFalse(p.help)
        let i = try DataTools.parse(["--postgres", "dbname=x", "-", "--", "-file"])
        XCTAssertEqual(i.store, .postgres("dbname=x"))
        XCTAssertEqual(i.positional, ["-", "-file"])
        XCTAssertTrue(try DataTools.parse(["-h"]).help)
        // A backup named twice is the last one named, as before.
        XCTAssertEqual(try DataTools.parse(["--backup", "a", "--backup", "b"]).backup, "b")
    }

    func testUsageErrorsSayWhy() {
        let cases: [(String, [String], String?)] = [
            ("export", ["--state", "d"], nil),
            ("export", ["--bogus"], "unknown option '--bogus'"),
            ("export", ["--force=yes", "--state", "d"], "--force takes no value"),
            ("export", ["--state"], "--state needs a value"),
            ("export", ["--state", ""], "--state needs a value"),
            ("export", ["--to="], "--to needs a value"),
            ("export", ["--state", "a", "--state", "b"], "name one store: --state, --postgres or --backup"),
            (
                "export", ["--state", "a", "--postgres", "b"],
                "name one store: --state, --postgres or --backup"
            ),
            ("verify", ["--backup", "f", "--state", "a"], "name one store: --state, --postgres or --backup"),
            ("verify", ["--backup", "f"], nil),
            ("export", [], "name the store: --state DIR or --postgres CONNINFO"),
            ("export", ["--state", "d", "x"], "unexpected argument 'x'"),
            ("import", ["--state", "d"], "name what to import: FILE, - or --from-sqlite FILE"),
            ("import", ["--state", "d", "--", "-"], nil),
            ("backup", ["--state", "d", "--force", "f"], nil),
            ("import", ["--state", "d", "--force", "f"], "--force is for backup and export"),
            ("backup", ["--state", "d"], "name the backup file"),
        ]
        for (command, arguments, message) in cases {
            XCTAssertEqual(usage(command, arguments), message, "\(command) \(arguments)")
        }
    }
}

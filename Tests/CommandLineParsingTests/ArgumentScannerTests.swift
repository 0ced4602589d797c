import CommandLineParsing
import XCTest

/// Every rule of the scanner, table-driven: a command line and what it scans to, or the message
/// of its mistake.
final class ArgumentScannerTests: XCTestCase {
    private let options: [OptionSpec] = [
        .flag("--help", aliases: ["-h"], stops: true), .flag("--force"), .flag("--verbose"),
        .value("--socket", needs: "a path"), .value("--state", needs: "a directory", emptyIsMissing: true),
        .value("--limit", once: true), .value("--origin"),
    ]

    private func scan(_ arguments: [String]) -> Result<[Argument], ArgumentError> {
        var scanner = ArgumentScanner(arguments, options: options)
        var out: [Argument] = []
        do throws(ArgumentError) {
            while let a = try scanner.next() { out.append(a) }
            return .success(out)
        } catch {
            return .failure(error)
        }
    }

    func testWhatEachArgumentScansTo() {
        let cases: [([String], [Argument])] = [
            ([], []),
            // Values: as the next argument, or after `=`, whatever they look like.
            (["--socket", "/run/s"], [.option("--socket", "/run/s")]),
            (["--socket=/run/s"], [.option("--socket", "/run/s")]),
            (["--socket=a=b"], [.option("--socket", "a=b")]),
            (["--socket", "-300"], [.option("--socket", "-300")]),
            (["--socket", "--force"], [.option("--socket", "--force")]),
            (["--socket", "--"], [.option("--socket", "--")]),
            (["--socket="], [.option("--socket", "")]),
            (["--socket", ""], [.option("--socket", "")]),
            // Flags, and an alias told by its name.
            (["--force"], [.flag("--force")]),
            (["-h"], [.flag("--help")]),
            (["--force", "--force"], [.flag("--force"), .flag("--force")]),
            // Repeated values, in order (a once-only option is refused by ScannedArguments).
            (["--origin", "a", "--origin=b"], [.option("--origin", "a"), .option("--origin", "b")]),
            (["--limit", "1", "--limit", "2"], [.option("--limit", "1"), .option("--limit", "2")]),
            // Positionals: words, `-` (standard input), anything after `--`, in place.
            (["a", "--force", "b"], [.positional("a"), .flag("--force"), .positional("b")]),
            (["-"], [.positional("-")]),
            (["--", "--force", "-x", "--"], [.positional("--force"), .positional("-x"), .positional("--")]),
            (["a", "--", "b"], [.positional("a"), .positional("b")]),
            (["--"], []),
            // A stopping flag: what follows is not read (a mistake there included).
            (["--force", "--help", "--bogus", "x"], [.flag("--force"), .flag("--help")]),
            (["-h", "--socket"], [.flag("--help")]),
        ]
        for (arguments, expected) in cases {
            XCTAssertEqual(scan(arguments), .success(expected), "\(arguments)")
        }
    }

    func testEachMistakeSaysWhatAndWhere() {
        let cases: [([String], ArgumentError, String)] = [
            (["--bogus"], .unknownOption("--bogus"), "unknown option '--bogus'"),
            (["--bogus=1"], .unknownOption("--bogus=1"), "unknown option '--bogus=1'"),
            (["-x"], .unknownOption("-x"), "unknown option '-x'"),
            // Only a long option takes `=`: `-h=x` names no option.
            (["-h=x"], .unknownOption("-h=x"), "unknown option '-h=x'"),
            (["--Force"], .unknownOption("--Force"), "unknown option '--Force'"),
            (["--forc"], .unknownOption("--forc"), "unknown option '--forc'"),
            (["--socket"], .missingValue("--socket", needs: "a path"), "--socket needs a path"),
            (["a", "--limit"], .missingValue("--limit", needs: "a value"), "--limit needs a value"),
            (["--state", ""], .missingValue("--state", needs: "a directory"), "--state needs a directory"),
            (["--state="], .missingValue("--state", needs: "a directory"), "--state needs a directory"),
            (["--force=yes"], .unexpectedValue("--force"), "--force takes no value"),
            (["--force="], .unexpectedValue("--force"), "--force takes no value"),
            (["--help=1"], .unexpectedValue("--help"), "--help takes no value"),
            // The first mistake is the one told.
            (["--bogus", "--socket"], .unknownOption("--bogus"), "unknown option '--bogus'"),
            (["--force=1", "--bogus"], .unexpectedValue("--force"), "--force takes no value"),
        ]
        for (arguments, error, message) in cases {
            XCTAssertEqual(scan(arguments), .failure(error), "\(arguments)")
            XCTAssertEqual(error.description, message)
        }
        XCTAssertEqual(ArgumentError.givenTwice("--limit").description, "--limit given twice")
        XCTAssertEqual(ArgumentError.unexpectedArgument("x").description, "unexpected argument 'x'")
        XCTAssertEqual(ArgumentError.invalid("--x must be 1").description, "--x must be 1")
    }

    func testAWholeCommandLineByName() throws {
        let s = try ScannedArguments(
            ["x", "--origin", "a", "--force", "--limit=5", "-", "--origin", "b", "--force", "--", "--y"],
            options: options)
        XCTAssertEqual(s.positionals, ["x", "-", "--y"])
        XCTAssertTrue(s.has("--force"))
        XCTAssertFalse(s.has("--verbose"))
        XCTAssertEqual(s.values("--force"), ["", ""])
        XCTAssertEqual(s.value("--limit"), "5")
        XCTAssertEqual(s.value("--origin"), "b", "the last one")
        XCTAssertEqual(s.values("--origin"), ["a", "b"])
        XCTAssertEqual(s.values("--socket"), [])
        XCTAssertNil(s.value("--socket"))
        XCTAssertNil(s.stoppedBy)
        XCTAssertEqual(Set(s.given.keys), ["--origin", "--force", "--limit"])

        let help = try ScannedArguments(["a", "-h", "--bogus"], options: options)
        XCTAssertEqual(help.stoppedBy, "--help")
        XCTAssertEqual(help.positionals, ["a"])

        let cases: [([String], ArgumentError)] = [
            (["--limit", "1", "--limit", "1"], .givenTwice("--limit")),
            (["--limit=1", "--bogus", "--limit=2"], .unknownOption("--bogus")),
            (["--limit=1", "--limit=2", "--bogus"], .givenTwice("--limit")),
            (["--bogus", "-h"], .unknownOption("--bogus")),
            (["--socket"], .missingValue("--socket", needs: "a path")),
        ]
        for (arguments, error) in cases {
            XCTAssertThrowsError(try ScannedArguments(arguments, options: options), "\(arguments)") {
                XCTAssertEqual($0 as? ArgumentError, error, "\(arguments)")
            }
        }
    }
}

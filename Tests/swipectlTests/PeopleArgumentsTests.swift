import People
import XCTest

@testable import swipectl

/// The command line of the people commands and of the token (issue 45): each parses to the
/// command it names, and what the daemon would refuse is a usage error that says why, before
/// anything is sent.
final class PeopleArgumentsTests: XCTestCase {
    private func invocation(_ arguments: String...) throws -> Invocation {
        guard case .run(let invocation) = try Arguments.parse(arguments) else {
            XCTFail("\(arguments) is no command")
            throw Failure(.usage, "no command")
        }
        return invocation
    }

    func testTokenCreateTakesANameARoleAndAnExpiry() throws {
        XCTAssertEqual(
            try invocation("token", "create", "alice", "--role", "writer").command,
            .tokenCreate(name: "alice", role: .writer, expiresIn: nil))
        XCTAssertEqual(
            try invocation("--role=admin", "token", "create", "bob@example.org", "--expires", "2w").command,
            .tokenCreate(name: "bob@example.org", role: .admin, expiresIn: 14 * 86_400))
        let durations: [(String, Int64)] = [
            ("30d", 2_592_000), ("12h", 43_200), ("90m", 5400), ("3600s", 3600), ("1", 1),
            ("3660d", 316_224_000),
        ]
        for (text, seconds) in durations {
            XCTAssertEqual(
                try invocation("token", "create", "a", "--role", "reader", "--expires", text).command,
                .tokenCreate(name: "a", role: .reader, expiresIn: seconds), text)
        }
    }

    func testTokenListRevokeRoleDenialsAndWhoami() throws {
        XCTAssertEqual(try invocation("token", "list").command, .tokenList)
        XCTAssertEqual(
            try invocation("token", "revoke", "alice").command, .tokenRevoke(name: "alice", id: nil))
        XCTAssertEqual(
            try invocation("token", "revoke", "alice", "--id", "44577059b7ee").command,
            .tokenRevoke(name: "alice", id: "44577059b7ee"))
        XCTAssertEqual(try invocation("role", "alice").command, .role(name: "alice", .ask))
        for role in AccessRole.allCases {
            XCTAssertEqual(
                try invocation("role", "alice", role.rawValue).command, .role(name: "alice", .give(role)))
        }
        XCTAssertEqual(try invocation("role", "--clear", "alice").command, .role(name: "alice", .clear))
        XCTAssertEqual(try invocation("denials").command, .denials)
        XCTAssertEqual(try invocation("whoami").command, .whoami)
    }

    func testTheTokenComesFromTheCommandLineOnceAnywhereInIt() throws {
        XCTAssertEqual(try invocation("--token", "swp_x", "whoami").token, .given("swp_x"))
        XCTAssertEqual(try invocation("list", "--token=swp_y").token, .given("swp_y"))
        XCTAssertEqual(try invocation("--token-file", "alice.token", "tui").token, .file("alice.token"))
        XCTAssertEqual(try invocation("whoami", "--token-file=-").token, .file("-"))
        XCTAssertNil(try invocation("whoami").token)
    }

    func testBadPeopleCommandLinesAreUsageErrorsThatSayWhy() {
        let cases: [([String], String)] = [
            (["token"], "'token' needs create, list or revoke"),
            (
                ["token", "make", "alice"],
                "unknown command 'token make' ('token' takes create, list or revoke)"
            ),
            (["token", "create", "alice"], "'token create' needs --role reader|writer|admin"),
            (["token", "create", "--role", "writer"], "'token create' takes NAME, not 0 arguments"),
            (
                ["token", "create", "alice", "bob", "--role", "writer"],
                "'token create' takes NAME, not 2 arguments"
            ),
            (
                ["token", "create", "alice", "--role", "none"],
                "--role must be reader, writer or admin, not 'none'"
            ),
            (
                ["token", "create", "alice", "--role", "Writer"],
                "--role must be reader, writer or admin, not 'Writer'"
            ),
            (
                ["token", "create", "a b", "--role", "reader"],
                "NAME: a name has no spaces or control characters (U+20)"
            ),
            (
                ["token", "create", String(repeating: "a", count: 65), "--role", "reader"],
                "NAME: a name is 1 to 64 bytes; this one is 65"
            ),
            (["token", "create", "", "--role", "reader"], "NAME must not be empty"),
            (["token", "create", "a", "--role", "reader", "--role", "admin"], "--role given twice"),
            (["token", "create", "a", "--role"], "--role needs a value"),
            (["token", "list", "alice"], "'token list' takes no arguments, not 1 argument"),
            (["token", "list", "--id", "x"], "--id does not apply to 'token list'"),
            (["token", "revoke"], "'token revoke' takes NAME, not 0 arguments"),
            (["token", "revoke", "alice", "--role", "reader"], "--role does not apply to 'token revoke'"),
            (["token", "revoke", "alice", "--id", ""], "--id must be 1 to 1024 bytes long, not 0"),
            (["role"], "'role' takes NAME [ROLE], not 0 arguments"),
            (["role", "alice", "writer", "now"], "'role' takes NAME [ROLE], not 3 arguments"),
            (["role", "alice", "god"], "ROLE must be none, reader, writer or admin, not 'god'"),
            (["role", "alice", "writer", "--clear"], "give ROLE or --clear, not both"),
            (["role", "alice", "--clear=yes"], "--clear takes no value"),
            (["list", "--clear"], "--clear does not apply to 'list'"),
            (["denials", "now"], "'denials' takes no arguments, not 1 argument"),
            (["whoami", "--role", "admin"], "--role does not apply to 'whoami'"),
            (["--token", "", "whoami"], "--token needs a token"),
            (
                ["--token", String(repeating: "t", count: 257), "whoami"],
                "--token must be 1 to 256 bytes long, not 257"
            ),
            (["--token-file", "", "whoami"], "--token-file needs a file (- for standard input)"),
            (["--token", "a", "--token-file", "f", "whoami"], "give one --token or --token-file"),
            (["--token", "a", "--token", "b", "whoami"], "give one --token or --token-file"),
            (["--token"], "--token needs a value"),
            (
                ["tui", "--token-file", "-"],
                "tui reads its keys from standard input: give --token-file a file, not -"
            ),
        ]
        for (arguments, message) in cases {
            XCTAssertEqual(usage(arguments), message, "\(arguments)")
        }
    }

    func testExpiresTakesWholeNumbersWithAUnitWithinTheOpsBounds() {
        let format =
            "--expires must be a duration such as 30d, 12h, 90m, 3600s or 2w (a number alone is seconds), not"
        for bad in ["", "d", "1y", "1.5d", "-1d", "+3h", "1 d", "1D", "3h30m", "٣d", "1e3"] {
            XCTAssertEqual(
                usage(["token", "create", "a", "--role", "reader", "--expires", bad]), "\(format) '\(bad)'",
                bad)
        }
        let bounds = "--expires must be from 1 second to 3660 days (316224000 s), not"
        for out in ["0", "0d", "3661d", "316224001", "99999999999999999999", "9999999999999999w"] {
            XCTAssertEqual(
                usage(["token", "create", "a", "--role", "reader", "--expires", out]), "\(bounds) '\(out)'",
                out)
        }
    }
}

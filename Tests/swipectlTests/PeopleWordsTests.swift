import JSONCodec
import People
import SwipedClient
import XCTest

@testable import swipectl

/// What the people commands print (PeopleCommands' words) and where the token comes from
/// (SignInToken), without a daemon: the integration tests run them against a real one.
final class PeopleWordsTests: XCTestCase {
    private func object(_ text: String) throws -> JSONObject {
        try XCTUnwrap(try JSONParser.parse(Array(text.utf8)).objectValue, text)
    }

    func testTokenListIsATableOfEveryTokenSayingNeverAndExpired() throws {
        let tokens = try [
            #"{"tokenId":"44577059b7ee","name":"alice","role":"writer","created":"2026-12-06T08:01:18.305551Z","expires":"2027-01-05T08:01:18.305551Z","lastUsed":"2026-12-06T08:02:40.118201Z"}"#,
            #"{"tokenId":"827a9a488762","name":"bob","role":"reader","created":"2026-12-06T08:14:46.623516Z","expires":null,"lastUsed":null}"#,
            #"{"tokenId":"0123456789ab","name":"carol","role":"admin","created":"2026-12-01T00:00:00Z","expires":"2026-12-02T00:00:00Z","lastUsed":null}"#,
        ].map(object)
        let now = try XCTUnwrap(RFC3339.parse("2026-12-06T09:00:00Z"))
        XCTAssertEqual(
            PeopleCommands.tokensText(tokens, now: now, terminal: false),
            """
            NAME   ROLE    TOKEN-ID      CREATED               EXPIRES                         LAST-USED
            alice  writer  44577059b7ee  2026-12-06T08:01:18Z  2027-01-05T08:01:18Z            2026-12-06T08:02:40Z
            bob    reader  827a9a488762  2026-12-06T08:14:46Z  never                           never
            carol  admin   0123456789ab  2026-12-01T00:00:00Z  2026-12-02T00:00:00Z (expired)  never

            """)
        // At its expiry, a token has expired (the daemon's rule: now >= expires).
        let atExpiry = try XCTUnwrap(RFC3339.parse("2027-01-05T08:01:18.305551Z"))
        XCTAssertTrue(
            PeopleCommands.tokensText([tokens[0]], now: atExpiry, terminal: false).contains("(expired)"))
        XCTAssertFalse(
            PeopleCommands.tokensText([tokens[0]], now: atExpiry - 1, terminal: false).contains("(expired)"))
        // None: a person is told so and how to make one; a pipe gets the header, as `list` does.
        XCTAssertEqual(
            PeopleCommands.tokensText([], now: now, terminal: true),
            "No tokens. `swipectl token create NAME --role ROLE` makes one.\n")
        XCTAssertEqual(
            PeopleCommands.tokensText([], now: now, terminal: false),
            "NAME  ROLE  TOKEN-ID  CREATED  EXPIRES  LAST-USED\n")
    }

    func testDenialsAreATableOldestFirstWithDashesForWhatIsNotSaid() throws {
        let denials = try [
            #"{"at":"2026-12-06T08:03:01.2Z","user":null,"client":12,"transport":"web","address":"203.0.113.7","op":"remove","reason":"forbidden"}"#,
            #"{"at":"2026-12-06T08:04:00.000001Z","user":"bob","client":3,"transport":"unix","address":"pid 812","op":"","reason":"no-rights"}"#,
        ].map(object)
        XCTAssertEqual(
            PeopleCommands.denialsText(denials, terminal: false),
            """
            AT                    USER  CLIENT  TRANSPORT  ADDRESS      OP      REASON
            2026-12-06T08:03:01Z  -     12      web        203.0.113.7  remove  forbidden
            2026-12-06T08:04:00Z  bob   3       unix       pid 812      -       no-rights

            """)
        XCTAssertEqual(
            PeopleCommands.denialsText([], terminal: true),
            "No refusals since the daemon started (it keeps the latest 100).\n")
        XCTAssertEqual(
            PeopleCommands.denialsText([], terminal: false),
            "AT  USER  CLIENT  TRANSPORT  ADDRESS  OP  REASON\n")
    }

    func testTokenCreateSaysForWhomTheRoleTheIdAndTheExpiryOnStderr() throws {
        let reply = try object(
            #"{"ok":true,"token":"swp_3q2x","tokenId":"44577059b7ee","name":"alice","role":"writer","created":"2026-12-06T08:01:18.305551Z","expires":"2027-01-05T08:01:18.305551Z"}"#
        )
        XCTAssertEqual(
            PeopleCommands.created(reply, expiresIn: 30 * 86_400, terminal: true),
            """
            a token for alice, role writer, tokenId 44577059b7ee, expires 2027-01-05T08:01:18Z (in 30 days).
            it is shown this once (the daemon keeps only its hash); it is the next line:
            """)
        let never = try object(
            #"{"ok":true,"token":"swp_3q2x","tokenId":"44577059b7ee","name":"alice","role":"writer","created":"2026-12-06T08:01:18.305551Z","expires":null}"#
        )
        XCTAssertEqual(
            PeopleCommands.created(never, expiresIn: nil, terminal: false),
            """
            a token for alice, role writer, tokenId 44577059b7ee, never expires.
            the token went to standard output, this once (the daemon keeps only its hash).
            """)
        XCTAssertFalse(PeopleCommands.created(reply, expiresIn: 60, terminal: true).contains("swp_"))
        let spans: [(Int64, String)] = [
            (1, "1 second"), (59, "59 seconds"), (60, "1 minute"), (5400, "90 minutes"), (3600, "1 hour"),
            (43_200, "12 hours"), (86_400, "1 day"), (14 * 86_400, "14 days"), (90_061, "90061 seconds"),
        ]
        for (seconds, words) in spans { XCTAssertEqual(PeopleCommands.span(seconds), words) }
    }

    func testRoleRevokeAndWhoamiSentences() {
        XCTAssertEqual(
            PeopleCommands.roleText(name: "bob", .reader, .give(.reader)),
            "Gave bob the role reader, on every door: may read and swipe.\n")
        XCTAssertEqual(
            PeopleCommands.roleText(name: "bob", AccessRole.none, .give(AccessRole.none)),
            "Gave bob the role none, on every door: may do nothing but ping, help and sign in.\n")
        XCTAssertEqual(
            PeopleCommands.roleText(name: "bob", .admin, .ask),
            "bob has the role admin, given by an admin, on every door: may read, swipe, change the list, and manage tokens and roles.\n"
        )
        XCTAssertEqual(
            PeopleCommands.roleText(name: "root", AccessRole.none, .give(AccessRole.none)),
            "Gave root the role none, on every door (uid 0 stays an admin over the Unix socket): may do nothing but ping, help and sign in.\n"
        )
        let door = "the door decides (the Unix groups, the token's role, the proxy's)"
        XCTAssertEqual(PeopleCommands.roleText(name: "bob", nil, .ask), "bob has no role given: \(door).\n")
        XCTAssertEqual(
            PeopleCommands.roleText(name: "bob", nil, .clear), "Took back the role given to bob: \(door).\n")
        XCTAssertEqual(
            PeopleCommands.revokedText(name: "alice", id: nil, count: 2),
            "Revoked 2 tokens of alice: connections signed in with them lose their rights within a second.\n")
        XCTAssertEqual(
            PeopleCommands.revokedText(name: "alice", id: "44577059b7ee", count: 1),
            "Revoked token 44577059b7ee of alice: connections signed in with it lose their rights within a second.\n"
        )
        XCTAssertEqual(
            PeopleCommands.whoamiText(user: "alice", role: "writer", by: "a token ($SWIPED_TOKEN)"),
            """
            user  alice
            role  writer: may read, swipe and change the list
            by    a token ($SWIPED_TOKEN)

            """)
        XCTAssertEqual(PeopleCommands.who(nil, "reader"), "anonymous (reader)")
        XCTAssertEqual(PeopleCommands.who("e\u{202E}vil", "writer"), "e\\u{202E}vil (writer)")
    }

    // MARK: - The token's sources

    private func file(_ content: String) throws -> String {
        let path = NSTemporaryDirectory() + "swipectl-token-\(UInt64.random(in: 0...UInt64.max))"
        try content.write(toFile: path, atomically: true, encoding: .utf8)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
        return path
    }

    private func failure(_ source: TokenSource?, _ environment: [String: String] = [:]) -> Failure? {
        do {
            _ = try SignInToken.resolve(source, environment: environment)
            return nil
        } catch {
            return error
        }
    }

    func testTheTokenIsTheOptionsElseTheFilesElseTheEnvironments() throws {
        let environment = ["SWIPED_TOKEN": "swp_env"]
        XCTAssertEqual(
            try SignInToken.resolve(.given("swp_opt-\(#line)"), environment: environment),
            SignInToken(value: "swp_opt-\(#line - 1)", origin: "--token"))
        let path = try file("  swp_file\r\n\n")
        XCTAssertEqual(
            try SignInToken.resolve(.file(path), environment: environment),
            SignInToken(value: "swp_file", origin: "--token-file \(path)"))
        XCTAssertEqual(
            try SignInToken.resolve(nil, environment: environment),
            SignInToken(value: "swp_env", origin: "$SWIPED_TOKEN"))
        // An empty variable is no token, as an empty $SWIPED_SOCKET is no socket.
        XCTAssertNil(try SignInToken.resolve(nil, environment: ["SWIPED_TOKEN": ""]))
        XCTAssertNil(try SignInToken.resolve(nil, environment: [:]))
    }

    func testATokenFileHoldsOneLineTheTokenAlone() throws {
        let empty = try file("\n \n")
        XCTAssertEqual(failure(.file(empty))?.message, "--token-file \(empty) is empty")
        let two = try file("a token for alice, role writer\nswp_x\n")
        XCTAssertEqual(
            failure(.file(two))?.message,
            "--token-file \(two) holds more than a token: it must hold one line, the token alone")
        let long = try file(String(repeating: "x", count: SignInToken.maxFileBytes + 1))
        XCTAssertEqual(
            failure(.file(long))?.message,
            "--token-file \(long) is too long to hold a token (over 4096 bytes)")
        let missing = NSTemporaryDirectory() + "swipectl-no-such-token"
        XCTAssertEqual(
            failure(.file(missing))?.message, "cannot read --token-file \(missing): No such file or directory"
        )
        XCTAssertEqual(failure(.file(missing))?.status, .usage)
    }
}

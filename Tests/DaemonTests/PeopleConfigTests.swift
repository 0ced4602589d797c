// The command line of people and their rights, the trusted proxies and the sign-in cookie.
import People
import XCTest

@testable import Daemon

final class PeopleConfigTests: XCTestCase {
    func parse(_ arguments: [String], _ environment: [String: String] = [:]) -> Config.ParseOutcome {
        Config.parse(arguments, environment: environment)
    }

    func config(_ arguments: [String], _ environment: [String: String] = [:]) -> Config? {
        if case .run(let c) = parse(arguments, environment) { return c }
        return nil
    }

    func testTheDefaults() throws {
        let c = try XCTUnwrap(config([]))
        XCTAssertNil(c.adminsGroup)
        XCTAssertEqual(c.webAnonymous, .reader)
        XCTAssertEqual(c.webProxyRole, .reader)
        XCTAssertNil(c.webTrustHeader)
        XCTAssertEqual(c.webTrustedProxies, [])
        XCTAssertEqual(c.webRateLimit, RateLimiter.Limit(perSecond: 20, burst: 60))
        XCTAssertNil(c.unixRateLimit)
    }

    func testEveryOptionIsRead() throws {
        let c = try XCTUnwrap(
            config(
                [
                    "--admins", "wheel", "--web-anonymous", "none", "--web-proxy-role=writer",
                    "--web-trust-header", "Remote-User", "--web-trusted-proxy", "10.0.0.0/8",
                    "--web-trusted-proxy", "::1", "--rate-limit", "5/s,10", "--rate-limit-unix", "100/s",
                ]))
        XCTAssertEqual(c.adminsGroup, "wheel")
        XCTAssertEqual(c.webAnonymous, AccessRole.none)
        XCTAssertEqual(c.webProxyRole, .writer)
        XCTAssertEqual(c.webTrustHeader, "Remote-User")
        XCTAssertEqual(c.webTrustedProxies, ["10.0.0.0/8", "::1"])
        XCTAssertEqual(c.webRateLimit, RateLimiter.Limit(perSecond: 5, burst: 10))
        XCTAssertEqual(c.unixRateLimit, RateLimiter.Limit(perSecond: 100, burst: 100))
        XCTAssertNil(try XCTUnwrap(config(["--rate-limit", "off"])).webRateLimit)
        XCTAssertEqual(try XCTUnwrap(config([], ["SWIPED_ADMINS": "ops"])).adminsGroup, "ops")
    }

    func testBadValuesAreUsageErrorsThatSayWhatIsWanted() {
        for (arguments, words) in [
            (["--web-anonymous", "admin"], "none, reader, writer"),
            (["--web-proxy-role", "none"], "reader, writer, admin"),
            (["--web-trust-header", "Remote User"], "header name"),
            (["--web-trusted-proxy", "example.org"], "IP address"),
            (["--web-trusted-proxy", "10.0.0.0/33"], "prefix is 0 to 32"),
            (["--rate-limit", "fast"], "N/s[,BURST]"),
            (["--rate-limit-unix"], "needs"),
        ] {
            guard case .usageError(let message) = parse(arguments) else {
                return XCTFail("\(arguments) accepted")
            }
            XCTAssertTrue(message.contains(words), "\(arguments): \(message)")
        }
    }

    func testTrustedProxiesMatchAddressesAndPrefixes() throws {
        let loopback = TrustedProxies.loopback
        XCTAssertTrue(loopback.contains("127.0.0.1"))
        XCTAssertTrue(loopback.contains("127.255.0.9"))
        XCTAssertTrue(loopback.contains("::1"))
        XCTAssertTrue(loopback.contains("::ffff:127.0.0.1"), "an IPv4-mapped address is its IPv4 one")
        XCTAssertFalse(loopback.contains("128.0.0.1"))
        XCTAssertFalse(loopback.contains("::2"))
        XCTAssertFalse(loopback.contains("not an address"))
        let lan = try TrustedProxies(["192.168.1.0/24", "fd00::/8"])
        XCTAssertTrue(lan.contains("192.168.1.200"))
        XCTAssertFalse(lan.contains("192.168.2.1"))
        XCTAssertTrue(lan.contains("fd12::1"))
        XCTAssertFalse(lan.contains("fe80::1"))
        XCTAssertTrue(try TrustedProxies(["0.0.0.0/0"]).contains("8.8.8.8"))
    }

    func testTheHostOfAPeerAndTheForwardedAddress() {
        XCTAssertEqual(TrustedProxies.host(of: "127.0.0.1:5000"), "127.0.0.1")
        XCTAssertEqual(TrustedProxies.host(of: "[::1]:5000"), "::1")
        // The proxy appends the browser's address: the last one is the proxy's word.
        XCTAssertEqual(TrustedProxies.forwarded(["1.2.3.4, 10.0.0.9"]), "10.0.0.9")
        XCTAssertEqual(TrustedProxies.forwarded(["6.6.6.6", "10.0.0.9 "]), "10.0.0.9")
        XCTAssertNil(TrustedProxies.forwarded(["garbage"]))
        XCTAssertNil(TrustedProxies.forwarded([]))
    }

    func testTheSignInCookieIsFoundAmongOthers() {
        XCTAssertEqual(SignInCookie.value(in: ["a=1; swiped_token=swp_x; b=2"]), "swp_x")
        XCTAssertEqual(SignInCookie.value(in: ["a=1", "swiped_token=swp_y"]), "swp_y")
        XCTAssertNil(SignInCookie.value(in: ["xswiped_token=swp_x"]))
        XCTAssertNil(SignInCookie.value(in: ["swiped_token="]))
        XCTAssertNil(SignInCookie.value(in: []))
    }

    func testTokensAreRandomPrefixedAndKeptAsTheirHash() {
        let (a, ra) = Tokens.make(name: "alice", role: .writer, now: 1_000_000, expiresIn: 60)
        let (b, rb) = Tokens.make(name: "alice", role: .writer, now: 1_000_000, expiresIn: nil)
        XCTAssertNotEqual(a, b)
        XCTAssertTrue(a.hasPrefix("swp_"))
        XCTAssertEqual(a.count, 4 + 32, "24 random bytes in unpadded base64url")
        XCTAssertTrue(a.dropFirst(4).allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
        XCTAssertEqual(ra.hash, Tokens.hash(a))
        XCTAssertEqual(ra.hash.count, 32)
        XCTAssertEqual(ra.id, Tokens.hex(ra.hash.prefix(6)))
        XCTAssertEqual(ra.expires, 61_000_000)
        XCTAssertNil(rb.expires)
        XCTAssertNotEqual(ra.id, rb.id)
    }
}

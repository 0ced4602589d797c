// People and their rights (issue 45), against the real daemon over both transports: the
// adversarial suite. A reader trying every change and every bound-action gesture; admin-only
// ops refused to writers; a token's sign-in, its revocation and expiry reaching a live
// connection within a second; a forged trusted-proxy header; `auth` guessing slowed, behind a
// proxy too; catch-up and history rights equal to live ones; roles given to names; the rate
// limit; denials listed, counted and journaled.

import Foundation
import Glibc
import XCTest

final class PeopleRightsTests: XCTestCase {
    func startDaemon(_ arguments: [String] = [], prefix: String = "swiped-pp") throws -> (
        SwipedDaemon, UInt16
    ) {
        let port = try freeTCPPort()
        let daemon = try SwipedDaemon(arguments: ["--web", "127.0.0.1:\(port)"] + arguments, prefix: prefix)
        return (daemon, port)
    }

    func open(_ port: UInt16, extra: [String] = []) throws -> WebSocketClient {
        let (status, ws) = try WebSocketClient.open(port: port, extra: extra)
        XCTAssertEqual(status, 101)
        return try XCTUnwrap(ws)
    }

    /// A token made by root (an admin over the Unix socket).
    func token(_ daemon: SwipedDaemon, _ name: String, _ role: String, expiresIn: Int? = nil) throws -> String
    {
        let admin = try daemon.connectWithHello().client
        var request: [String: Any] = ["op": "token-create", "name": name, "role": role]
        if let expiresIn { request["expiresIn"] = expiresIn }
        let reply = try admin.request(request)
        XCTAssertEqual(reply["name"] as? String, name, "\(reply)")
        return try XCTUnwrap(reply["token"] as? String, "\(reply)")
    }

    static var changes: [[String: Any]] {
        [
            ["op": "add", "title": "Heat"], ["op": "toggle-watched", "movie": "matrix"],
            ["op": "toggle-watched-with-friends", "movie": "matrix"], ["op": "remove", "movie": "matrix"],
            ["op": "restore", "movie": "matrix"], ["op": "undo"], ["op": "undo", "seq": 3],
        ]
    }
    static var adminOps: [[String: Any]] {
        [
            ["op": "token-create", "name": "eve", "role": "admin"], ["op": "token-list"],
            ["op": "token-revoke", "name": "alice"], ["op": "role", "name": "eve", "role": "admin"],
            ["op": "role", "name": "eve"], ["op": "denials"],
        ]
    }

    /// Every change and every bound-action gesture, refused to `session`; nothing written.
    func assertReadOnly(_ session: JSONLineSession, _ what: String) throws {
        for request in Self.changes {
            let reply = try session.request(request)
            XCTAssertEqual(LineClient.errorCode(of: reply), "forbidden", "\(what) \(request): \(reply)")
        }
        // A full swipe, a tap on a revealed bound button, a perform: all would fire.
        try session.request(["op": "drag", "movie": "seven", "dx": 300])
        XCTAssertEqual(
            LineClient.errorCode(of: try session.request(["op": "release", "movie": "seven"])), "forbidden",
            what)
        try session.request(["op": "close"])
        try session.request(["op": "drag", "movie": "seven", "dx": -80])
        try session.request(["op": "release", "movie": "seven"])
        XCTAssertEqual(
            LineClient.errorCode(
                of: try session.request(["op": "tap", "movie": "seven", "action": "delete"])),
            "forbidden", what)
        XCTAssertEqual(
            LineClient.errorCode(
                of: try session.request(["op": "perform", "movie": "inception", "action": "watched"])),
            "forbidden", what)
    }

    func testAnAnonymousReaderTriesEveryChangeOverTheWebAndAUnixReaderToo() throws {
        let users = try TestUsers.ensure()
        let metricsPort = try freeTCPPort()
        let (daemon, port) = try startDaemon([
            "--writers", TestUsers.writersGroup, "--metrics", "127.0.0.1:\(metricsPort)",
        ])
        try daemon.directory.allowOthers()
        try retryingEINTR("chmod", daemon.socketPath) { chmod(daemon.socketPath, 0o666) }
        let ws = try open(port)
        XCTAssertEqual(ws.hello["role"] as? String, "reader")
        try assertReadOnly(ws, "an anonymous WebSocket")
        let unix = try ProcessLineSession(
            "setpriv",
            TestUsers.setpriv(users.reader) + [
                try Binaries.system("socat"), "-", "UNIX-CONNECT:\(daemon.socketPath)",
            ])
        let hello = try unix.readJSON(timeout: .seconds(5))
        XCTAssertEqual(hello["user"] as? String, TestUsers.readerName)
        XCTAssertEqual(hello["role"] as? String, "reader")
        try assertReadOnly(unix, "a Unix reader")
        // Neither may do an admin's work; nor may a writer.
        let writer = try ProcessLineSession(
            "setpriv",
            TestUsers.setpriv(users.writer) + [
                try Binaries.system("socat"), "-", "UNIX-CONNECT:\(daemon.socketPath)",
            ])
        XCTAssertEqual(try writer.readJSON(timeout: .seconds(5))["role"] as? String, "writer")
        for session in [ws, unix, writer] as [JSONLineSession] {
            for request in Self.adminOps {
                XCTAssertEqual(
                    LineClient.errorCode(of: try session.request(request)), "forbidden", "\(request)")
            }
        }
        // Nothing was written.
        let root = try daemon.connectWithHello()
        XCTAssertEqual(root.hello["role"] as? String, "admin", "root is an admin")
        XCTAssertEqual(int(try root.client.request(["op": "list"])["seq"]), 10)
        // Every refusal is listed, with who and how.
        let denials = try XCTUnwrap(try root.client.request(["op": "denials"])["denials"] as? [[String: Any]])
        XCTAssertEqual(denials.count, 2 * (7 + 3) + 3 * 6, "every refusal, under the 100 kept")
        XCTAssertTrue(denials.allSatisfy { $0["reason"] as? String == "forbidden" })
        XCTAssertTrue(
            denials.contains {
                $0["user"] as? String == TestUsers.writerName && $0["op"] as? String == "denials"
            })
        XCTAssertTrue(denials.contains { $0["transport"] as? String == "web" && $0["user"] is NSNull })
        let status = try XCTUnwrap(try root.client.request(["op": "status"])["status"] as? [String: Any])
        XCTAssertGreaterThan(int((status["denials"] as? [String: Any])?["forbidden"]) ?? 0, 30)
        let connections = try XCTUnwrap(
            status["connections"] as? [[String: Any]], "an admin sees every client")
        XCTAssertEqual(Set(connections.compactMap { $0["role"] as? String }), ["reader", "writer", "admin"])
        XCTAssertTrue(
            connections.contains {
                $0["transport"] as? String == "websocket" && $0["door"] as? String == "anonymous"
            })
        let metrics = try HTTPProbe.get(port: metricsPort, "/metrics").body
        XCTAssertTrue(metrics.contains(#"swiped_denials_total{reason="forbidden"}"#), metrics)
        XCTAssertEqual(try daemon.stop(), .exited(0))
        XCTAssertTrue(daemon.process.standardError.contains("request refused"), daemon.process.standardError)
    }

    /// Catch-up and history are a reader's, live events too; with `--web-anonymous none` all of
    /// them are refused alike, and only ping, help and auth are answered.
    func testCatchUpHistoryAndLiveEventsHaveTheSameRights() throws {
        let (daemon, port) = try startDaemon(["--web-anonymous", "none"])
        let writer = try daemon.connectWithHello().client
        try writer.request(["op": "toggle-watched", "movie": "matrix"])
        let ws = try open(port)
        XCTAssertEqual(ws.hello["role"] as? String, "none")
        for request: [String: Any] in [
            ["op": "subscribe", "from": 0], ["op": "subscribe"], ["op": "history"], ["op": "list"],
            ["op": "status"], ["op": "drag", "movie": "matrix", "dx": 10],
        ] {
            XCTAssertEqual(LineClient.errorCode(of: try ws.request(request)), "forbidden", "\(request)")
        }
        for op in ["ping", "help"] { XCTAssertEqual(try ws.request(["op": op])["ok"] as? Bool, true) }
        try writer.request(["op": "toggle-watched", "movie": "matrix"])
        usleep(200_000)
        XCTAssertEqual(try ws.request(["op": "ping"])["ok"] as? Bool, true)
        XCTAssertTrue(ws.events.isEmpty, "no live event without a subscription: \(ws.events)")

        // A reader token: the same catch-up as a subscriber who was there, then live events.
        let t = try token(daemon, "bob", "reader")
        let signedIn = try ws.request(["op": "auth", "token": t])
        XCTAssertEqual(signedIn["user"] as? String, "bob")
        XCTAssertEqual(signedIn["role"] as? String, "reader")
        XCTAssertEqual(int(try ws.request(["op": "subscribe", "from": 10])["seq"]), 12)
        XCTAssertEqual(int(try ws.readEvent()["seq"]), 11)
        XCTAssertEqual(int(try ws.readEvent()["seq"]), 12)
        let history = try XCTUnwrap(
            try ws.request(["op": "history", "from": 10])["events"] as? [[String: Any]])
        XCTAssertEqual(history.count, 2)
        try writer.request(["op": "toggle-watched", "movie": "matrix"])
        XCTAssertEqual(int(try ws.readEvent()["seq"]), 13)
        XCTAssertEqual(try daemon.stop(), .exited(0))
    }

    /// A token signs a WebSocket in; its revocation reaches the live connection within a
    /// second: the role events, then its next change is refused.
    func testARevokedTokensLiveConnectionIsToldWithinASecond() throws {
        let (daemon, port) = try startDaemon()
        let t = try token(daemon, "alice", "writer")
        let ws = try open(port)
        XCTAssertEqual(
            LineClient.errorCode(of: try ws.request(["op": "remove", "movie": "matrix"])), "forbidden")
        XCTAssertEqual(try ws.request(["op": "auth", "token": t])["role"] as? String, "writer")
        XCTAssertEqual(try ws.request(["op": "toggle-watched", "movie": "matrix"])["ok"] as? Bool, true)
        let admin = try daemon.connectWithHello().client
        let tokens = try XCTUnwrap(try admin.request(["op": "token-list"])["tokens"] as? [[String: Any]])
        XCTAssertEqual(tokens.map { $0["name"] as? String }, ["alice"])
        XCTAssertNotNil(tokens[0]["lastUsed"] as? String, "the sign-in was recorded")
        XCTAssertNil(tokens[0]["token"], "never the token")
        let start = ContinuousClock.now
        XCTAssertEqual(int(try admin.request(["op": "token-revoke", "name": "alice"])["revoked"]), 1)
        let lost = try ws.readEvent(timeout: .seconds(1))
        XCTAssertEqual(lost["event"] as? String, "role")
        XCTAssertEqual(lost["user"] as? String, "alice")
        XCTAssertEqual(lost["role"] as? String, "none")
        let now = try ws.readEvent(timeout: .seconds(1))
        XCTAssertTrue(now["user"] is NSNull, "\(now)")
        XCTAssertEqual(now["role"] as? String, "reader")
        XCTAssertLessThan(ContinuousClock.now - start, .seconds(1))
        XCTAssertEqual(
            LineClient.errorCode(of: try ws.request(["op": "toggle-watched", "movie": "matrix"])), "forbidden"
        )
        // The token no longer signs anyone in.
        XCTAssertEqual(LineClient.errorCode(of: try ws.request(["op": "auth", "token": t])), "forbidden")
        XCTAssertEqual(
            LineClient.errorCode(of: try admin.request(["op": "token-revoke", "name": "alice"])), "not-found")
        XCTAssertEqual(try daemon.stop(), .exited(0))
    }

    func testAnExpiredTokenStopsWorkingOnItsLiveConnectionAndAtSignIn() throws {
        let (daemon, port) = try startDaemon(["--web-anonymous", "none"])
        let t = try token(daemon, "carol", "writer", expiresIn: 2)
        let ws = try open(port)
        XCTAssertEqual(try ws.request(["op": "auth", "token": t])["role"] as? String, "writer")
        let signedIn = ContinuousClock.now
        // Anonymous connections may do nothing here: the expiry ends the connection.
        let event = try ws.readEvent(timeout: .seconds(4))
        XCTAssertEqual(event["role"] as? String, "none")
        XCTAssertLessThan(ContinuousClock.now - signedIn, .milliseconds(3_000))
        XCTAssertEqual(try ws.readClose(timeout: .seconds(2))?.code, 1008)
        let again = try open(port)
        let reply = try again.request(["op": "auth", "token": t])
        XCTAssertEqual(LineClient.errorCode(of: reply), "forbidden")
        XCTAssertTrue(LineClient.errorMessage(of: reply).contains("expired"), "\(reply)")
        let admin = try daemon.connectWithHello().client
        let denials = try XCTUnwrap(try admin.request(["op": "denials"])["denials"] as? [[String: Any]])
        XCTAssertTrue(denials.contains { $0["reason"] as? String == "expired-token" })
        XCTAssertTrue(
            denials.contains { $0["reason"] as? String == "no-rights" && $0["transport"] as? String == "web" }
        )
        XCTAssertEqual(try daemon.stop(), .exited(0))
    }

    /// A trusted proxy's header names the user; the same header from anywhere else is ignored
    /// and logged. Loopback is the only trusted proxy by default: here it is not.
    func testAForgedTrustedHeaderFromAnUntrustedAddressIsIgnored() throws {
        let (untrusting, port) = try startDaemon([
            "--web-trust-header", "Remote-User", "--web-trusted-proxy", "10.9.9.9", "--web-proxy-role",
            "writer",
        ])
        let forged = try open(port, extra: ["Remote-User: root", "X-Forwarded-For: 10.1.1.1"])
        XCTAssertTrue(forged.hello["user"] is NSNull, "\(forged.hello)")
        XCTAssertEqual(forged.hello["role"] as? String, "reader")
        let admin = try untrusting.connectWithHello().client
        let denials = try XCTUnwrap(try admin.request(["op": "denials"])["denials"] as? [[String: Any]])
        XCTAssertEqual(denials.last?["reason"] as? String, "untrusted-header")
        XCTAssertEqual(denials.last?["address"] as? String, "127.0.0.1", "not the forwarded one: untrusted")
        XCTAssertEqual(try untrusting.stop(), .exited(0))

        let (trusting, port2) = try startDaemon(["--web-trust-header", "Remote-User"])
        let viaProxy = try open(port2, extra: ["Remote-User: alice", "X-Forwarded-For: 203.0.113.7"])
        XCTAssertEqual(viaProxy.hello["user"] as? String, "alice")
        XCTAssertEqual(viaProxy.hello["role"] as? String, "reader", "--web-proxy-role's default")
        // A role given to the name wins, at once, on the live connection.
        let root = try trusting.connectWithHello().client
        try root.request(["op": "role", "name": "alice", "role": "writer"])
        XCTAssertEqual(try viaProxy.readEvent(timeout: .seconds(1))["role"] as? String, "writer")
        XCTAssertEqual(
            try viaProxy.request(["op": "toggle-watched", "movie": "matrix"])["ok"] as? Bool, true)
        let status = try XCTUnwrap(try root.request(["op": "status"])["status"] as? [String: Any])
        let proxied = (status["connections"] as? [[String: Any]])?.first { $0["door"] as? String == "proxy" }
        XCTAssertEqual(proxied?["address"] as? String, "203.0.113.7", "the address the proxy forwarded")
        XCTAssertEqual(try trusting.stop(), .exited(0))
    }

    /// Failed sign-ins are slowed per address (not locked out): behind a trusted proxy, per the
    /// address it forwards, so one guesser does not slow everyone else.
    func testGuessingIsSlowedPerAddressBehindAProxyToo() throws {
        let (daemon, port) = try startDaemon()
        let good = try token(daemon, "dave", "reader")
        let guesser = try open(port, extra: ["X-Forwarded-For: 198.51.100.1"])
        let start = ContinuousClock.now
        for i in 0..<4 {
            XCTAssertEqual(
                LineClient.errorCode(of: try guesser.request(["op": "auth", "token": "swp_guess\(i)"])),
                "forbidden")
        }
        // 0 + 100 + 200 + 400 ms of waits.
        XCTAssertGreaterThanOrEqual(ContinuousClock.now - start, .milliseconds(700))
        let other = try open(port, extra: ["X-Forwarded-For: 198.51.100.2"])
        let otherStart = ContinuousClock.now
        XCTAssertEqual(try other.request(["op": "auth", "token": good])["user"] as? String, "dave")
        XCTAssertLessThan(
            ContinuousClock.now - otherStart, .milliseconds(100), "another address is not slowed")
        // The guesser's address waits even with the right token (800 ms), and is then forgotten.
        let slowed = ContinuousClock.now
        XCTAssertEqual(try guesser.request(["op": "auth", "token": good])["user"] as? String, "dave")
        XCTAssertGreaterThanOrEqual(ContinuousClock.now - slowed, .milliseconds(700))
        let admin = try daemon.connectWithHello().client
        let denials = try XCTUnwrap(try admin.request(["op": "denials"])["denials"] as? [[String: Any]])
        XCTAssertEqual(denials.filter { $0["reason"] as? String == "bad-token" }.count, 4)
        XCTAssertTrue(denials.allSatisfy { $0["address"] as? String == "198.51.100.1" })
        XCTAssertEqual(try daemon.stop(), .exited(0))
    }

    func testARoleOfNoneTakesAPersonsAccessEverywhereAtOnce() throws {
        let users = try TestUsers.ensure()
        let (daemon, port) = try startDaemon()
        try daemon.directory.allowOthers()
        try retryingEINTR("chmod", daemon.socketPath) { chmod(daemon.socketPath, 0o666) }
        let t = try token(daemon, TestUsers.writerName, "writer")
        let ws = try open(port)
        XCTAssertEqual(try ws.request(["op": "auth", "token": t])["user"] as? String, TestUsers.writerName)
        let unix = try ProcessLineSession(
            "setpriv",
            TestUsers.setpriv(users.writer) + [
                try Binaries.system("socat"), "-", "UNIX-CONNECT:\(daemon.socketPath)",
            ])
        XCTAssertEqual(try unix.readJSON(timeout: .seconds(5))["role"] as? String, "writer")
        let root = try daemon.connectWithHello().client
        try root.request(["op": "role", "name": TestUsers.writerName, "role": "none"])
        // Both doors of the one person: told, then closed.
        XCTAssertEqual(try ws.readEvent(timeout: .seconds(1))["role"] as? String, "none")
        XCTAssertEqual(try ws.readClose(timeout: .seconds(2))?.code, 1008)
        XCTAssertEqual(try unix.readJSON(timeout: .seconds(1))["role"] as? String, "none")
        XCTAssertEqual(try unix.readJSON(timeout: .seconds(1))["reason"] as? String, "revoked")
        // A new connection is not let in, and root cannot be locked out.
        let again = try ProcessLineSession(
            "setpriv",
            TestUsers.setpriv(users.writer) + [
                try Binaries.system("socat"), "-", "UNIX-CONNECT:\(daemon.socketPath)",
            ])
        XCTAssertEqual(try again.readJSON(timeout: .seconds(5))["reason"] as? String, "revoked")
        try root.request(["op": "role", "name": "root", "role": "none"])
        XCTAssertEqual(try daemon.connectWithHello().hello["role"] as? String, "admin")
        // Taking the role back lets the group decide again.
        XCTAssertTrue(
            try root.request(["op": "role", "name": TestUsers.writerName, "role": NSNull()])["role"] is NSNull
        )
        let back = try ProcessLineSession(
            "setpriv",
            TestUsers.setpriv(users.writer) + [
                try Binaries.system("socat"), "-", "UNIX-CONNECT:\(daemon.socketPath)",
            ])
        XCTAssertEqual(try back.readJSON(timeout: .seconds(5))["role"] as? String, "writer")
        XCTAssertEqual(try daemon.stop(), .exited(0))
    }

    /// `--admins GROUP`, and SIGHUP re-reading the groups: a group that is gone makes nobody an
    /// admin any more, on the live connections too.
    func testAdminsAndSIGHUPReJudgeLiveConnections() throws {
        let users = try TestUsers.ensure()
        let (daemon, _) = try startDaemon(["--admins", TestUsers.writersGroup])
        try daemon.directory.allowOthers()
        try retryingEINTR("chmod", daemon.socketPath) { chmod(daemon.socketPath, 0o666) }
        let writer = try ProcessLineSession(
            "setpriv",
            TestUsers.setpriv(users.writer) + [
                try Binaries.system("socat"), "-", "UNIX-CONNECT:\(daemon.socketPath)",
            ])
        XCTAssertEqual(try writer.readJSON(timeout: .seconds(5))["role"] as? String, "admin")
        XCTAssertNotNil(try writer.request(["op": "token-list"])["tokens"])
        // The group's members are its members by gid: rename the group away and reload.
        _ = try Subprocess.run("groupmod", ["-n", "swiped-it-gone", TestUsers.writersGroup])
        defer { _ = try? Subprocess.run("groupmod", ["-n", TestUsers.writersGroup, "swiped-it-gone"]) }
        kill(daemon.process.pid, SIGHUP)
        let event = try writer.readEvent(timeout: .seconds(2))
        XCTAssertEqual(event["role"] as? String, "writer", "\(event)")
        XCTAssertEqual(LineClient.errorCode(of: try writer.request(["op": "token-list"])), "forbidden")
        XCTAssertEqual(try daemon.stop(), .exited(0))
    }

    /// Changes through the web listener are limited per person (`retryAfter` says how long to
    /// wait); Unix peers are not, by default.
    func testTheRateLimitPerPerson() throws {
        let (daemon, port) = try startDaemon(["--web-anonymous", "writer", "--rate-limit", "2/s,3"])
        let ws = try open(port)
        for _ in 0..<3 {
            XCTAssertEqual(try ws.request(["op": "toggle-watched", "movie": "matrix"])["ok"] as? Bool, true)
        }
        let limited = try ws.request(["op": "toggle-watched", "movie": "matrix"])
        XCTAssertEqual(LineClient.errorCode(of: limited), "overloaded")
        let retry = try XCTUnwrap(int((limited["error"] as? [String: Any])?["retryAfter"]))
        XCTAssertTrue((1...500).contains(retry), "\(limited)")
        // Every anonymous page behind one address is one person; a Unix peer is not limited.
        let unix = try daemon.connectWithHello().client
        for _ in 0..<20 {
            XCTAssertEqual(
                try unix.request(["op": "toggle-watched", "movie": "inception"])["ok"] as? Bool, true)
        }
        usleep(UInt32(retry) * 1000 + 20_000)
        XCTAssertEqual(try ws.request(["op": "toggle-watched", "movie": "matrix"])["ok"] as? Bool, true)
        XCTAssertEqual(try daemon.stop(), .exited(0))
    }
}

/// Signing in from the page (issue 45): `POST /login` sets an HttpOnly, SameSite=Strict cookie
/// holding the token; the WebSocket's handshake carries it; `POST /logout` clears it.
final class PageSignInTests: XCTestCase {
    static func post(_ port: UInt16, _ path: String, body: String, lines: [String] = []) throws -> (
        status: Int, head: String, body: String
    ) {
        let all = ["Content-Type: text/plain", "Content-Length: \(body.utf8.count)"] + lines
        let tcp = try TCPClient(port: port)
        try tcp.send(
            Array(
                "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\(all.map { $0 + "\r\n" }.joined())\r\n\(body)"
                    .utf8))
        let (status, head) = try tcp.readHead()
        return (status, head, String(decoding: try tcp.readAll(), as: UTF8.self))
    }

    func testLoginSetsTheCookieTheHandshakeCarriesAndLogoutClearsIt() throws {
        let port = try freeTCPPort()
        let daemon = try SwipedDaemon(arguments: ["--web", "127.0.0.1:\(port)"], prefix: "swiped-si")
        let admin = try daemon.connectWithHello().client
        let token = try XCTUnwrap(
            try admin.request(["op": "token-create", "name": "alice", "role": "writer", "expiresIn": 3600])[
                "token"]
                as? String)
        let origin = "Origin: http://127.0.0.1:\(port)"
        let login = try Self.post(port, "/login", body: token + "\n", lines: [origin])
        XCTAssertEqual(login.status, 200, login.head)
        XCTAssertEqual(try LineClient.parse(login.body)["user"] as? String, "alice")
        let cookie = try XCTUnwrap(login.head.split(separator: "\r\n").first { $0.hasPrefix("Set-Cookie: ") })
        XCTAssertTrue(cookie.hasPrefix("Set-Cookie: swiped_token=\(token); "), String(cookie))
        XCTAssertTrue(cookie.contains("; HttpOnly"), String(cookie))
        XCTAssertTrue(cookie.contains("; SameSite=Strict"), String(cookie))
        XCTAssertFalse(cookie.contains("Path="), "the login's own directory: the page's, behind a prefix too")
        XCTAssertFalse(cookie.contains("Secure"), "plain HTTP, no proxy said https")
        let maxAge = try XCTUnwrap(Int(cookie.split(separator: "Max-Age=")[1].prefix { $0.isNumber }))
        XCTAssertTrue((3590...3600).contains(maxAge), "until the token expires: \(maxAge)")

        let (status, ws) = try WebSocketClient.open(
            port: port, extra: ["Cookie: theme=dark; swiped_token=\(token)"])
        XCTAssertEqual(status, 101)
        XCTAssertEqual(ws?.hello["user"] as? String, "alice")
        XCTAssertEqual(ws?.hello["role"] as? String, "writer")
        XCTAssertEqual(try ws?.request(["op": "toggle-watched", "movie": "matrix"])["ok"] as? Bool, true)

        let logout = try Self.post(port, "/logout", body: "", lines: [origin])
        XCTAssertEqual(logout.status, 200)
        XCTAssertTrue(
            logout.head.contains("Set-Cookie: swiped_token=; Max-Age=0; HttpOnly; SameSite=Strict"),
            logout.head)

        // Behind a trusted proxy that says https, the cookie is Secure.
        let viaTLS = try Self.post(port, "/login", body: token, lines: [origin, "X-Forwarded-Proto: https"])
        XCTAssertTrue(viaTLS.head.contains("; Secure"), viaTLS.head)
        XCTAssertEqual(try daemon.stop(), .exited(0))
    }

    func testBadTokensOtherSitesAndOtherPathsAreRefused() throws {
        let port = try freeTCPPort()
        let daemon = try SwipedDaemon(arguments: ["--web", "127.0.0.1:\(port)"], prefix: "swiped-si")
        // Another site's page may not sign a browser in (login CSRF), nor out.
        XCTAssertEqual(
            try Self.post(port, "/login", body: "swp_x", lines: ["Origin: https://evil.example"]).status, 403)
        XCTAssertEqual(
            try Self.post(port, "/logout", body: "", lines: ["Origin: https://evil.example"]).status, 403)
        XCTAssertEqual(try Self.post(port, "/index.html", body: "x").status, 405)
        let bad = try Self.post(port, "/login", body: "swp_guess")
        XCTAssertEqual(bad.status, 403)
        XCTAssertFalse(bad.head.contains("Set-Cookie"), bad.head)
        XCTAssertTrue(bad.body.contains("no such token"), bad.body)
        // The next try from that address waits: 429 with Retry-After, the token not looked at.
        let slowed = try Self.post(port, "/login", body: "swp_guess2")
        XCTAssertEqual(slowed.status, 429, slowed.head)
        XCTAssertTrue(slowed.head.contains("Retry-After: 1\r\n"), slowed.head)
        // A bad cookie on the handshake: anonymous, the denial says so, and the 101 clears the
        // cookie (the browser stops presenting it).
        usleep(150_000)
        let tcp = try TCPClient(port: port)
        try tcp.send(
            Array(WebSocketClient.handshake(port: port, extra: ["Cookie: swiped_token=swp_nothing"]).utf8))
        let (status, head) = try tcp.readHead()
        XCTAssertEqual(status, 101)
        XCTAssertTrue(
            head.contains("Set-Cookie: swiped_token=; Max-Age=0; HttpOnly; SameSite=Strict\r\n"), head)
        XCTAssertTrue(try WebSocketClient(tcp).readJSON(timeout: .seconds(5))["user"] is NSNull)
        let admin = try daemon.connectWithHello().client
        let denials = try XCTUnwrap(try admin.request(["op": "denials"])["denials"] as? [[String: Any]])
        XCTAssertEqual(denials.filter { $0["reason"] as? String == "bad-token" }.count, 2, "\(denials)")
        XCTAssertEqual(denials.first?["op"] as? String, "login")
        XCTAssertEqual(try daemon.stop(), .exited(0))
    }
}

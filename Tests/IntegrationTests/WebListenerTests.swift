// The web listener's HTTP side (issue 43): the page's files from --web-root (types, ETag,
// Cache-Control, 304, HEAD, one request per connection), nothing outside the root, both address
// families on one port, and the socket systemd passes as `web`.

import Foundation
import Glibc
import XCTest

final class WebListenerTests: XCTestCase {
    /// A GET (or another request head) on a connection of its own: the status, the head, the body.
    static func get(
        _ port: UInt16, _ path: String, method: String = "GET", lines: [String] = [], ipv6: Bool = false
    ) throws -> (status: Int, head: String, body: String) {
        let tcp = try TCPClient(port: port, ipv6: ipv6)
        let host = ipv6 ? "[::1]:\(port)" : "127.0.0.1:\(port)"
        try tcp.send(
            Array(
                "\(method) \(path) HTTP/1.1\r\nHost: \(host)\r\n\(lines.map { $0 + "\r\n" }.joined())\r\n"
                    .utf8))
        let (status, head) = try tcp.readHead()
        let body = String(decoding: try tcp.readAll(), as: UTF8.self)
        return (status, head, body)
    }

    /// A web root with the page's own files, a file in a folder, a hidden one, and symlinks in
    /// and out of it.
    func webRoot() throws -> TemporaryDirectory {
        let root = try TemporaryDirectory("swiped-webroot")
        try "<!doctype html><p>page</p>".write(
            toFile: root.file("index.html"), atomically: true, encoding: .utf8)
        try "body{}".write(toFile: root.file("style.css"), atomically: true, encoding: .utf8)
        try "export const x = 1;".write(toFile: root.file("app.js"), atomically: true, encoding: .utf8)
        mkdir(root.file("sub"), 0o755)
        try "b{}".write(toFile: root.file("sub/b.css"), atomically: true, encoding: .utf8)
        try "secret".write(toFile: root.file(".hidden"), atomically: true, encoding: .utf8)
        symlink("/etc/passwd", root.file("passwd"))
        symlink("app.js", root.file("alias.js"))
        return root
    }

    func testThePagesFilesWithTypesETagsAndRevalidation() throws {
        let root = try webRoot()
        let port = try freeTCPPort()
        let daemon = try SwipedDaemon(
            arguments: ["--web", "127.0.0.1:\(port)", "--web-root", root.path], prefix: "swiped-web")
        let page = try Self.get(port, "/")
        XCTAssertEqual(page.status, 200)
        XCTAssertEqual(page.body, "<!doctype html><p>page</p>")
        XCTAssertTrue(page.head.contains("Content-Type: text/html; charset=utf-8\r\n"), page.head)
        XCTAssertTrue(page.head.contains("Cache-Control: no-cache\r\n"), page.head)
        XCTAssertTrue(page.head.contains("Connection: close\r\n"), page.head)
        let etag = try XCTUnwrap(
            page.head.split(separator: "\r\n").first { $0.hasPrefix("ETag: ") }?.dropFirst(6))
        XCTAssertEqual(try Self.get(port, "/", lines: ["If-None-Match: \(etag)"]).status, 304)
        XCTAssertEqual(try Self.get(port, "/", lines: ["If-None-Match: \"other\""]).status, 200)
        let head = try Self.get(port, "/app.js", method: "HEAD")
        XCTAssertEqual(head.status, 200)
        XCTAssertEqual(head.body, "")
        XCTAssertTrue(head.head.contains("Content-Type: text/javascript; charset=utf-8\r\n"), head.head)
        XCTAssertTrue(head.head.contains("Content-Length: 19\r\n"), head.head)
        XCTAssertEqual(try Self.get(port, "/style.css").head.contains("text/css"), true)
        XCTAssertEqual(try Self.get(port, "/sub/b.css").body, "b{}")
        XCTAssertEqual(
            try Self.get(port, "/alias.js").body, "export const x = 1;", "a symlink inside the root")
        XCTAssertEqual(try Self.get(port, "/index.html", method: "POST").status, 405)
        XCTAssertEqual(try daemon.stop(), .exited(0))
        XCTAssertTrue(
            daemon.process.standardError.contains("a symlink out of the web root"),
            daemon.process.standardError)
    }

    /// Nothing outside the root, whatever the spelling; no directory listing; no hidden files.
    func testNothingOutsideTheRoot() throws {
        let root = try webRoot()
        let port = try freeTCPPort()
        let daemon = try SwipedDaemon(
            arguments: ["--web", "127.0.0.1:\(port)", "--web-root", root.path], prefix: "swiped-web")
        for path in [
            "/../../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/sub/..%2F..%2Fetc%2Fpasswd", "/passwd",
            "/app.js%00.css", "/.hidden", "/sub", "/sub/", "//etc/passwd", "/sub/%2e%2e/app.js",
            "http://127.0.0.1/../etc/passwd",
        ] {
            let r = try Self.get(port, path)
            XCTAssertEqual(r.status, 404, path)
            XCTAssertFalse(r.body.contains("root:"), path)
        }
        XCTAssertEqual(try daemon.stop(), .exited(0))
    }

    /// `0.0.0.0:P` and `[::]:P` both bind (IPV6_V6ONLY), and both serve.
    func testBothAddressFamiliesOnOnePort() throws {
        let port = try freeTCPPort()
        let daemon = try SwipedDaemon(
            arguments: ["--web", "0.0.0.0:\(port)", "--web", "[::]:\(port)", "--web-root", "web"],
            prefix: "swiped-web")
        XCTAssertEqual(try WebSocketClient.open(port: port).status, 101)
        XCTAssertEqual(
            try WebSocketClient.open(
                port: port, origin: "http://[::1]:\(port)", host: "[::1]:\(port)", ipv6: true
            ).status, 101)
        XCTAssertEqual(
            try Self.get(port, "/", ipv6: true).status, 200, "the checkout's web/ (the tests run at the top)")
        XCTAssertEqual(try daemon.stop(), .exited(0))
    }

    /// A socket systemd passes named `web` (swiped-web.socket) is served, next to the protocol's.
    func testThePassedWebSocketIsServed() throws {
        let state = try TemporaryDirectory("swiped-names")
        let root = try webRoot()
        let port = try freeTCPPort()
        let activation = try SocketActivation(
            try Binaries.swiped, ["--state", state.file("state"), "--web-root", root.path],
            fdName: "protocol:web", after: ["127.0.0.1:\(port)"])
        let client = try activation.start()
        XCTAssertEqual(try client.readJSON()["event"] as? String, "hello", activation.process.standardError)
        XCTAssertEqual(try Self.get(port, "/").body, "<!doctype html><p>page</p>")
        guard let ws = try WebSocketClient.open(port: port).client else { return XCTFail("not upgraded") }
        XCTAssertEqual(try ws.request(["op": "ping", "id": 7])["id"] as? Int, 7)
        XCTAssertEqual(try activation.stop(), .exited(0), activation.process.standardError)
    }
}

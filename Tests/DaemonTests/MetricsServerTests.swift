// The metrics listener's I/O (MetricsServer.swift) on a real loopback socket and a real event
// loop, without the manager: responses, refusals, the 4-at-once rule and the deadlines, with
// the loop never waiting on a scraper.
import Foundation
import HTTPScrape
import Synchronization
import XCTest

@testable import Daemon

#if canImport(Glibc)
    import Glibc
#endif

final class MetricsServerTests: XCTestCase {
    /// A listening, non-blocking TCP socket on 127.0.0.1 and its port.
    func listen() throws -> (Int32, UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let r = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { p in
                bind(fd, p, length) == 0 && Glibc.listen(fd, 16) == 0 ? getsockname(fd, p, &length) : -1
            }
        }
        XCTAssertEqual(r, 0)
        return (fd, UInt16(bigEndian: address.sin_port))
    }

    /// Runs the loop with a MetricsServer until `client` (on another thread) returns; then the
    /// connections the server still holds.
    func serve(limits: ScrapeLimits, _ client: @escaping @Sendable (UInt16) -> Void) throws -> Int {
        let (fd, port) = try listen()
        let loop = try EventLoop()
        let server = try MetricsServer(
            loop: loop, fd: fd, journal: Journal(maxPriority: .notice), limits: limits
        ) {
            request in
            switch request.route {
            case .metrics:
                Response.make(.ok, contentType: "text/plain", body: "swiped_clients 0\n", head: request.head)
            case .health: Response.health(problem: nil, head: request.head)
            }
        }
        let done = Atomic(false)
        let thread = Thread {
            client(port)
            done.store(true, ordering: .releasing)
        }
        // The loop looks every 10 ms whether the client is done (the loop is not Sendable: the
        // client thread cannot stop it itself).
        var tick: EventLoop.Timer?
        tick = try loop.makeTimer(description: "done?") {
            if done.load(ordering: .acquiring) { loop.exit() } else { tick?.arm(afterMicroseconds: 10_000) }
        }
        tick?.arm(afterMicroseconds: 10_000)
        thread.start()
        try loop.run()
        tick?.cancel()
        tick = nil
        let active = server.active
        server.close()
        close(fd)
        return active
    }

    static func connect(_ port: UInt16) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let r = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        precondition(r == 0, "connect: \(errno)")
        return fd
    }

    static func send(_ fd: Int32, _ text: String) {
        _ = text.utf8CString.withUnsafeBytes {
            Glibc.send(fd, $0.baseAddress, $0.count - 1, Int32(MSG_NOSIGNAL))
        }
    }

    /// Everything until the server closes (or 5 s).
    static func readAll(_ fd: Int32) -> String {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            bytes += buffer[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func exchange(_ port: UInt16, _ request: String) -> String {
        let fd = connect(port)
        defer { close(fd) }
        send(fd, request)
        return readAll(fd)
    }

    func testAnswersThenCloses() throws {
        let answers = Mutex<[String]>([])
        let active = try serve(limits: ScrapeLimits()) { port in
            let replies = [
                Self.exchange(port, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"),
                Self.exchange(port, "HEAD /health HTTP/1.1\r\nHost: x\r\n\r\n"),
                Self.exchange(port, "POST /metrics HTTP/1.1\r\nHost: x\r\n\r\n"),
            ]
            answers.withLock { $0 = replies }
        }
        let replies = answers.withLock { $0 }
        XCTAssertTrue(replies[0].hasPrefix("HTTP/1.1 200 OK\r\n"), replies[0])
        XCTAssertTrue(replies[0].hasSuffix("\r\n\r\nswiped_clients 0\n"), replies[0])
        XCTAssertTrue(
            replies[1].hasPrefix("HTTP/1.1 200 OK\r\n") && replies[1].hasSuffix("\r\n\r\n"), replies[1])
        XCTAssertTrue(replies[2].hasPrefix("HTTP/1.1 405 "), replies[2])
        XCTAssertEqual(active, 0, "a connection answered and closed by the peer is still held")
    }

    /// Four stuck heads hold every place: a fifth takes the place of the stalest (408 at once)
    /// and is served; the others get 408 at their deadline (issue 40: four slow sockets had
    /// made 22 of 24 scrapes a 503).
    func testAFifthTakesTheStalestPlaceAndStuckOnesGet408AtTheirDeadline() throws {
        var limits = ScrapeLimits()
        limits.headTimeout = 300_000_000
        let answers = Mutex<[String]>([])
        _ = try serve(limits: limits) { port in
            // Four that stop: two after half a head, two before sending anything.
            let stuck = (0..<4).map { _ in Self.connect(port) }
            for fd in stuck.prefix(2) { Self.send(fd, "GET /metr") }
            usleep(50_000)  // accepted by now
            let fifth = Self.exchange(port, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            let start = Date()
            var replies = [fifth] + stuck.map(Self.readAll)
            let waited = Date().timeIntervalSince(start)
            for fd in stuck { close(fd) }
            // Once they are gone, the listener serves again.
            replies.append(Self.exchange(port, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n"))
            replies.append("\(waited)")
            answers.withLock { $0 = replies }
        }
        let replies = answers.withLock { $0 }
        XCTAssertTrue(replies[0].hasPrefix("HTTP/1.1 200 "), replies[0])
        for reply in replies[1...4] { XCTAssertTrue(reply.hasPrefix("HTTP/1.1 408 "), reply) }
        XCTAssertTrue(replies[5].hasSuffix("\r\n\r\nok\n"), replies[5])
        XCTAssertLessThan(Double(replies[6])!, 2, "the deadline is 0.3 s")
    }
}

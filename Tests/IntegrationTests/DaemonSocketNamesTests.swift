// The sockets systemd passes are chosen by name (FileDescriptorName=, Listener.swift and
// PassedSockets.swift): the protocol on the AF_UNIX socket named `protocol`, whatever the order,
// /metrics and /health on the one named `metrics`; an unnamed TCP socket is never the protocol's.

import Foundation
import Glibc
import XCTest

final class DaemonSocketNamesTests: XCTestCase {
    /// Whether something listens on 127.0.0.1:`port` (a connect completes in its backlog even
    /// when nobody accepts).
    func listening(_ port: UInt16) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    /// `privateNetwork`: the daemon runs in a network namespace of its own (`unshare --net`, as
    /// PrivateNetwork=yes does), where 127.0.0.1 is another loopback: the passed socket still
    /// takes connections from the host's, since a socket stays in the namespace it was made in.
    func serveWithMetrics(metricsFirst: Bool, privateNetwork: Bool = false) throws {
        let state = try TemporaryDirectory("swiped-names")
        let port = try freeTCPPort()
        let metrics = "127.0.0.1:\(port)"
        let swiped = try Binaries.swiped
        let (program, arguments) =
            privateNetwork
            ? ("unshare", ["--net", "--", swiped, "--state", state.file("state")])
            : (swiped, ["--state", state.file("state")])
        let activation = try SocketActivation(
            program, arguments,
            fdName: metricsFirst ? "metrics:protocol" : "protocol:metrics",
            before: metricsFirst ? [metrics] : [], after: metricsFirst ? [] : [metrics])
        let client = try activation.start()
        XCTAssertEqual(try client.readJSON()["event"] as? String, "hello", activation.process.standardError)
        XCTAssertEqual(try client.ok(["op": "ping", "id": 1])["id"] as? Int, 1)
        XCTAssertTrue(listening(port), "the metrics socket was closed")
        // Served on it: /health, and /metrics with this one client.
        let health = try HTTPProbe.get(port: port, "/health")
        XCTAssertEqual(health.status, 200, activation.process.standardError)
        XCTAssertEqual(health.body, "ok\n")
        let (code, text) = try HTTPProbe.get(port: port, "/metrics")
        XCTAssertEqual(code, 200)
        XCTAssertEqual(sample(text, "swiped_clients"), 1, text)
        XCTAssertEqual(try activation.stop(), .exited(0), activation.process.standardError)
    }

    func testTheProtocolIsServedOnItsSocketWithMetricsPassedFirst() throws {
        try serveWithMetrics(metricsFirst: true)
    }

    func testTheProtocolIsServedOnItsSocketWithMetricsPassedAfter() throws {
        try serveWithMetrics(metricsFirst: false)
    }

    func testThePassedMetricsSocketWorksInAPrivateNetworkNamespace() throws {
        try XCTSkipUnless(getuid() == 0, "unshare --net needs root")
        try serveWithMetrics(metricsFirst: true, privateNetwork: true)
    }

    /// Without names (an older unit, or no LISTEN_FDNAMES), a TCP socket passed first is not
    /// taken for the protocol: it is closed with a warning, and the AF_UNIX one is served.
    func testAnUnnamedTCPSocketIsClosedNotServed() throws {
        let state = try TemporaryDirectory("swiped-names")
        let port = try freeTCPPort()
        let activation = try SocketActivation(
            try Binaries.swiped, ["--state", state.file("state")], before: ["127.0.0.1:\(port)"])
        let client = try activation.start()
        XCTAssertEqual(try client.readJSON()["event"] as? String, "hello", activation.process.standardError)
        XCTAssertFalse(listening(port), "an unused socket was kept")
        XCTAssertEqual(try activation.stop(), .exited(0))
        XCTAssertTrue(
            activation.process.standardError.contains(
                "closing a socket systemd passed that swiped does not use"),
            activation.process.standardError)
    }

    /// The metrics socket is served, and the journal says so at info with its address.
    func testTheServedMetricsSocketIsLoggedAtInfo() throws {
        let port = try freeTCPPort()
        let journal = try PrivateJournal(
            script:
                #"exec systemd-socket-activate --listen="$TEST_DIR/s.sock" --listen=127.0.0.1:\#(port) --fdname=protocol:metrics "$SWIPED" --state "$TEST_DIR/state""#,
            environment: ["SWIPED": try Binaries.swiped])
        let client = try poll(until: .seconds(5), "the socket") { () -> LineClient? in
            try? LineClient(path: journal.directory.file("s.sock"))
        }
        XCTAssertEqual(try client.readJSON()["event"] as? String, "hello")
        let run = try journal.stop()
        XCTAssertEqual(run.status, .exited(0))
        let served = run.entries(identifier: "swiped").filter { $0["MESSAGE"] == "serving metrics over HTTP" }
        XCTAssertEqual(served.count, 1, "\(run.entries(identifier: "swiped"))")
        XCTAssertEqual(served.first?["PRIORITY"], "6")
        XCTAssertEqual(served.first?["ADDRESS"], "127.0.0.1:\(port)")
        XCTAssertEqual(served.first?["ORIGIN"], "systemd (socket activation)")
    }
}

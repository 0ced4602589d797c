import XCTest

/// A fresh daemon for each test (tmp/s.sock, its state in tmp/state), stopped after it, which
/// must then exit 0: what the swipectl test classes share.
class DaemonTestCase: XCTestCase {
    var daemon: TestDaemon!

    override func setUpWithError() throws {
        daemon = try TestDaemon()
    }

    override func tearDownWithError() throws {
        defer { daemon = nil }
        XCTAssertEqual(try daemon.stop(), .exited(0), daemon.process.standardError)
    }
}

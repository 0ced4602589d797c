import XCTest

/// A fresh daemon for each test, with one client connected (its hello read), stopped after the
/// test, which must then exit 0; and the lookups into replies those tests share. Subclasses name
/// their temporary directories with `prefix`.
class DaemonClientTestCase: XCTestCase {
    var daemon: SwipedDaemon!
    var client: LineClient!

    /// A few letters to find a test's directory under /tmp.
    class var prefix: String { "swiped-d" }

    override func setUpWithError() throws {
        daemon = try SwipedDaemon(prefix: Self.prefix)
        client = try daemon.connect()
    }

    override func tearDownWithError() throws {
        client = nil
        if let daemon { XCTAssertEqual(try daemon.stop(), .exited(0), daemon.process.standardError) }
        daemon = nil
    }

    func movie(_ reply: [String: Any]) -> [String: Any] { reply["movie"] as? [String: Any] ?? [:] }
    func row(_ reply: [String: Any]) -> [String: Any] { reply["row"] as? [String: Any] ?? [:] }
    func buttons(_ row: [String: Any]) -> [[String: Any]] { row["buttons"] as? [[String: Any]] ?? [] }
    func code(_ reply: [String: Any]) -> String? { (reply["error"] as? [String: Any])?["code"] as? String }
    func reason(_ reply: [String: Any]) -> String? {
        (reply["error"] as? [String: Any])?["reason"] as? String
    }
}

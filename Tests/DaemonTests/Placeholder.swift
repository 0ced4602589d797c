import XCTest
final class DaemonTestsPlaceholder: XCTestCase { func testBuilds() { XCTAssertTrue(true) } }

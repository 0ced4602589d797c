import XCTest
final class WireTestsPlaceholder: XCTestCase { func testBuilds() { XCTAssertTrue(true) } }

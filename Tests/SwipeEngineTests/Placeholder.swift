import XCTest
final class SwipeEngineTestsPlaceholder: XCTestCase { func testBuilds() { XCTAssertTrue(true) } }

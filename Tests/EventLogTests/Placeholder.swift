import XCTest
final class EventLogTestsPlaceholder: XCTestCase { func testBuilds() { XCTAssertTrue(true) } }

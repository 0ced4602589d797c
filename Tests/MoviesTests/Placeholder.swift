import XCTest
final class MoviesTestsPlaceholder: XCTestCase { func testBuilds() { XCTAssertTrue(true) } }

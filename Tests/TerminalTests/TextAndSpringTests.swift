import Terminal
import XCTest

final class TextAndSpringTests: XCTestCase {
    func testDisplayWidths() {
        XCTAssertEqual(TextWidth.width("abc"), 3)
        XCTAssertEqual(TextWidth.width("日本語"), 6)
        XCTAssertEqual(TextWidth.width("한국"), 4)
        XCTAssertEqual(TextWidth.width("🎬"), 2)
        XCTAssertEqual(TextWidth.width("👨‍👩‍👧"), 2)  // a ZWJ sequence is one emoji
        XCTAssertEqual(TextWidth.width("❤️"), 2)  // U+2764 U+FE0F: emoji presentation
        XCTAssertEqual(TextWidth.width("e\u{301}"), 1)  // a combining mark takes no column
        XCTAssertEqual(TextWidth.width("\u{200B}"), 0)
        XCTAssertEqual(TextWidth.width("ｗ"), 2)  // fullwidth
        XCTAssertEqual(TextWidth.truncated("日本語の映画", to: 7), "日本語…")
        XCTAssertEqual(TextWidth.truncated("short", to: 7), "short")
    }

    func testTitlesWithControlOrBidiCharactersAreEscaped() {
        XCTAssertEqual(SafeText.escaped("Evil\u{202E}txt.exe"), "Evil\\u{202E}txt.exe")
        XCTAssertEqual(SafeText.escaped("Line\nbreak\u{1B}[31m"), "Line\\u{A}break\\u{1B}[31m")
        XCTAssertEqual(SafeText.escaped("Amélie 東京物語 👨‍👩‍👧"), "Amélie 東京物語 👨‍👩‍👧")
        XCTAssertEqual(SafeText.plain("a\u{7}b\u{2066}c"), "a\\u{7}b\\u{2066}c")
    }

    func testTheSpringStartsWhereItIsAndEndsAtItsTarget() {
        for damping in [0.5, 0.85, 1, 1.5] {
            let spring = Spring(response: 0.5, dampingFraction: damping)
            let start = spring.state(from: -100, velocity: 40, target: -70, at: 0)
            XCTAssertEqual(start.position, -100)
            XCTAssertEqual(start.velocity, 40)
            let soon = spring.state(from: -100, velocity: 40, target: -70, at: 0.001)
            XCTAssertEqual(soon.position, -100 + 40 * 0.001, accuracy: 0.01, "damping \(damping)")
            let late = spring.state(from: -100, velocity: 40, target: -70, at: 5)
            XCTAssertEqual(late.position, -70, accuracy: 0.01, "damping \(damping)")
        }
        // Under-damped springs overshoot; critically damped ones do not.
        let bouncy = Spring(response: 0.5, dampingFraction: 0.5)
        let samples = stride(from: 0.0, to: 2, by: 0.01).map {
            bouncy.state(from: 0, velocity: 0, target: 100, at: $0).position
        }
        XCTAssertGreaterThan(samples.max()!, 100.5)
        let critical = Spring(response: 0.5, dampingFraction: 1)
        XCTAssertLessThanOrEqual(
            stride(from: 0.0, to: 2, by: 0.01).map {
                critical.state(from: 0, velocity: 0, target: 100, at: $0).position
            }.max()!,
            100)
    }

    func testAMotionSettlesAndKeepsItsVelocityWhenRetargeted() {
        var motion = Motion(at: 0)
        XCTAssertFalse(motion.isMoving(at: 0))
        motion.retarget(-70, spring: Spring(response: 0.5, dampingFraction: 0.85), at: 10)
        XCTAssertTrue(motion.isMoving(at: 10.1))
        let mid = motion.state(at: 10.1)
        XCTAssertLessThan(mid.position, 0)
        XCTAssertGreaterThan(mid.position, -70 - 10)
        motion.retarget(0, spring: Spring(response: 0.5, dampingFraction: 0.85), at: 10.1)
        XCTAssertEqual(motion.state(at: 10.1).position, mid.position, accuracy: 1e-9)
        XCTAssertEqual(motion.state(at: 10.1).velocity, mid.velocity, accuracy: 1e-9)
        XCTAssertFalse(motion.isMoving(at: 13))
        XCTAssertEqual(motion.state(at: 13).position, 0)
        // Response 0 jumps.
        var jump = Motion(at: 5)
        jump.retarget(9, spring: Spring(response: 0, dampingFraction: 1), at: 1)
        XCTAssertEqual(jump.state(at: 1).position, 9)
    }
}

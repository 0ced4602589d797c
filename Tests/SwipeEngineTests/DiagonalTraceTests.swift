import Movies
import SwipeEngine
import TestSupport
import XCTest

/// Rule 13 on finger-like diagonal traces (seeded: a failure names its trace): each a run of
/// drags with dx and dy from touch-down, as a front end sends them, then the release, with the
/// uneven steps, a slight curve and the jitter of a finger. Mostly vertical traces (60° to 90°
/// from the horizontal) open no row, whatever their length; mostly horizontal ones (0° to 30°)
/// give, drag by drag, the very states and effects the same trace gives without dy: they swipe
/// as before issue 47.
final class DiagonalTraceTests: XCTestCase {
    struct Trace {
        var points: [(dx: Double, dy: Double)]
        var description: String
    }

    /// A trace at `degrees` from the horizontal (0: right, 90: down), `length` points long.
    static func trace(_ rng: inout SplitMix64, degrees: Double, length: Double) -> Trace {
        let steps = Int.random(in: 8...25, using: &rng)
        let curve = Double.random(in: -5...5, using: &rng)  // degrees turned by the end
        var (x, y) = (0.0, 0.0)
        var points: [(dx: Double, dy: Double)] = []
        for i in 1...steps {
            let t = Double(i) / Double(steps)
            // A finger starts slowly, goes fast, slows down: the step's share of the length.
            let step = length * (sin(.pi * (t - 0.5 / Double(steps))) * .pi / 2) / Double(steps)
            let angle = (degrees + curve * t) * .pi / 180
            x += step * cos(angle)
            y += step * sin(angle)
            let jx = (Double.random(in: -0.75...0.75, using: &rng) * 4).rounded() / 4
            let jy = (Double.random(in: -0.75...0.75, using: &rng) * 4).rounded() / 4
            points.append((((x * 4).rounded() / 4) + jx, ((y * 4).rounded() / 4) + jy))
        }
        return Trace(
            points: points, description: "\(degrees)° \(length) pt curving \(curve)° in \(steps) steps")
    }

    /// The traces: mostly vertical when `vertical`, else mostly horizontal, in every quadrant.
    static func traces(vertical: Bool, count: Int) -> [Trace] {
        var rng = SplitMix64(seed: vertical ? 47 : 74)
        return (0..<count).map { _ in
            let base =
                vertical ? Double.random(in: 60...90, using: &rng) : Double.random(in: 0...30, using: &rng)
            let quadrant = [0.0, 180.0].randomElement(using: &rng)!
            let sign: Double = Bool.random(using: &rng) ? 1 : -1
            return trace(
                &rng, degrees: quadrant + sign * base, length: Double.random(in: 60...400, using: &rng))
        }
    }

    /// A list in `direction`, with `open` open on its leading edge when given.
    func list(_ direction: Direction, open: RowID?) -> SwipeList {
        var list = SwipeList(
            layout: MovieLayout.standard, viewport: Viewport(width: 390, direction: direction))
        list.reportsCrossings = true
        if let open { _ = try? list.send(.open(row: open, edge: .leading)) }
        return list
    }

    func testMostlyVerticalTracesOpenNoRow() throws {
        for trace in Self.traces(vertical: true, count: 400) {
            for direction in Direction.allCases {
                for open in [nil, "godfather", "heat"] as [RowID?] {
                    var list = list(direction, open: open)
                    var scrolling = false
                    for point in trace.points {
                        let effects = try list.send(
                            .dragChanged(row: "godfather", dx: point.dx, dy: point.dy))
                        XCTAssertFalse(effects.contains { if case .crossed = $0 { true } else { false } })
                        scrolling = scrolling || effects.contains(.scroll(row: "godfather"))
                        // Undecided (under 10 points), an open row rests; decided, it is closed.
                        if scrolling {
                            XCTAssertEqual(list.state(of: "godfather"), .closed, trace.description)
                        }
                        XCTAssertNotEqual(list.state(of: "godfather").phase, .dragging, trace.description)
                    }
                    XCTAssertTrue(scrolling, "no scroll: \(trace.description)")
                    let last = trace.points.last!
                    XCTAssertEqual(
                        try list.send(.released(row: "godfather", dx: last.dx, vx: last.dx * 10)),
                        [.scroll(row: "godfather")], trace.description)
                    // Every row is closed: the touched one never opened, an open one closed.
                    XCTAssertFalse(list.hasOpenRows, trace.description)
                    XCTAssertNil(list.scrolling)
                }
            }
        }
    }

    func testMostlyHorizontalTracesSwipeAsWithoutDy() throws {
        var opened = 0
        var fired = 0
        for trace in Self.traces(vertical: false, count: 400) {
            for direction in Direction.allCases {
                for open in [nil, "godfather", "heat"] as [RowID?] {
                    var now = list(direction, open: open)
                    var before = list(direction, open: open)
                    for point in trace.points {
                        let with = try now.send(.dragChanged(row: "godfather", dx: point.dx, dy: point.dy))
                        let without = try before.send(.dragChanged(row: "godfather", dx: point.dx))
                        XCTAssertEqual(with, without, trace.description)
                        XCTAssertEqual(now.trackedRows, before.trackedRows, trace.description)
                    }
                    let last = trace.points.last!
                    let release = Input.released(row: "godfather", dx: last.dx, vx: nil)
                    let effects = try now.send(release)
                    XCTAssertEqual(effects, try before.send(release), trace.description)
                    XCTAssertEqual(now, before, trace.description)
                    if now.state(of: "godfather").phase == .open { opened += 1 }
                    if effects.contains(where: { if case .fire = $0 { true } else { false } }) { fired += 1 }
                }
            }
        }
        XCTAssertGreaterThan(opened, 300, "traces that open")
        XCTAssertGreaterThan(fired, 300, "traces that fire")
    }
}

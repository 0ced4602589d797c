import Movies
import SwipeEngine
import TestSupport
import XCTest

@testable import Wire

/// A row encoded from a connection's template is byte for byte the row encoded afresh, whatever
/// the gesture, the layout, the width, the direction or the row's data did in between.
final class RowTemplateTests: XCTestCase {
    private func fresh(_ render: RowRender) -> [UInt8] {
        var out = JSONWriter()
        Encode.row(&out, id: Array("7".utf8), row: render, fired: nil)
        return out.bytes
    }

    private func templated(_ template: RowTemplate, _ geometry: RowGeometry) -> [UInt8] {
        var out = JSONWriter()
        Encode.row(&out, id: Array("7".utf8), template: template, geometry: geometry)
        return out.bytes
    }

    func testTemplatedRowsAreIdenticalToFreshOnes() throws {
        let templates = RowTemplates()
        var rng = SplitMix64(seed: 11)
        let layouts = [MovieLayout.standard, MovieLayout.demo000]
        let flags: [RowFlags] = [[], ["watched"], ["watched", "watched-with-friends"]]
        let rows = ["matrix", "seven", "a-row-with-a-long-id-\u{e9}"]
        var list = SwipeList(layout: MovieLayout.standard)
        var shapes = Set<String>()
        var made = 0
        var data = 0
        for step in 0..<6000 {
            if step % 50 == 0 { data = Int(rng.next() % 3) }
            if step % 300 == 0 {
                _ = list.reconfigure(
                    layout: layouts[Int(rng.next() % 2)],
                    viewport: Viewport(
                        width: Double(100 + rng.next() % 500), direction: rng.next() % 2 == 0 ? .ltr : .rtl))
            }
            let row = rows[Int(rng.next() % UInt64(rows.count))]
            let dx = Double(Int(rng.next() % 801) - 400) + [0, 0.5, 0.125, 1.0 / 3][Int(rng.next() % 4)]
            let input: Input =
                rng.next() % 5 == 0
                ? .released(row: row, dx: nil, vx: nil) : .dragChanged(row: row, dx: dx)
            _ = try? list.send(input)
            if list.state(of: row).phase == .fired { _ = try? list.send(.timerFired(row: row)) }
            let geometry = list.geometry(row)
            let render = list.render(row, flags: flags[data])
            let template = templates.template(
                row, shape: geometry.shape, dataKey: UInt64(data), in: list,
                flags: {
                    made += 1
                    return flags[data]
                })
            XCTAssertEqual(templated(template, geometry), fresh(render), "step \(step)")
            shapes.insert("\(geometry.shape)")
        }
        // Templates were reused, and many shapes were seen (edges, full swipe, phases, sides).
        XCTAssertLessThan(made, 3000)
        XCTAssertGreaterThan(shapes.count, 10)
        // The bytes are still one valid JSON line.
        let geometry = list.geometry("matrix")
        var line = templated(
            templates.template(
                "matrix", shape: geometry.shape, dataKey: 1, in: list, flags: { ["watched"] }), geometry)
        XCTAssertEqual(line.removeLast(), 0x0A)
        XCTAssertNoThrow(try JSONParser.parse(line))
    }

    /// A template is found by everything its bytes depend on: another row, shape, data key,
    /// direction or layout makes another.
    func testATemplateIsNotReusedAcrossWhatItDependsOn() {
        let templates = RowTemplates()
        var list = SwipeList(layout: MovieLayout.standard)
        _ = try? list.send(.dragChanged(row: "matrix", dx: -60))
        var made = 0
        func get(_ row: RowID, _ key: UInt64) {
            let g = list.geometry(row)
            _ = templates.template(
                row, shape: g.shape, dataKey: key, in: list,
                flags: {
                    made += 1
                    return []
                })
        }
        get("matrix", 0)
        get("matrix", 0)
        XCTAssertEqual(made, 1)
        get("matrix", 1)
        XCTAssertEqual(made, 2)
        _ = try? list.send(.dragChanged(row: "matrix", dx: 60))  // the other edge
        get("matrix", 0)
        XCTAssertEqual(made, 3)
        _ = try? list.send(.dragChanged(row: "seven", dx: -60))
        get("seven", 0)
        XCTAssertEqual(made, 4)
        _ = list.reconfigure(layout: MovieLayout.demo000, viewport: list.viewport)
        _ = try? list.send(.dragChanged(row: "seven", dx: -60))
        get("seven", 0)
        XCTAssertEqual(made, 5)
        _ = list.reconfigure(layout: list.layout, viewport: Viewport(width: 390, direction: .rtl))
        _ = try? list.send(.dragChanged(row: "seven", dx: 60))
        get("seven", 0)
        XCTAssertEqual(made, 6)
    }
}

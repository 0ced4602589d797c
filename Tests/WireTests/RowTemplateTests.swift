import JSONCodec
import Movies
import TestSupport
import XCTest

@testable import SwipeEngine
@testable import Wire

/// A row encoded from a connection's template is byte for byte the row encoded afresh, in either
/// form, whatever the gesture, the layout, the width, the direction, the row's data or the
/// connection's form did in between.
final class RowTemplateTests: XCTestCase {
    private func fresh(_ render: RowRender, _ form: RowForm) -> [UInt8] {
        var out = JSONWriter()
        Encode.row(&out, id: Array("7".utf8), row: render, form: form, fired: nil)
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
        var form = RowForm.full
        var forms = Set<String>()
        for step in 0..<6000 {
            if step % 50 == 0 { data = Int(rng.next() % 3) }
            // A connection switches forms now and then (options), with templates of both kept.
            if step % 40 == 0 { form = rng.next() % 2 == 0 ? .full : .compact }
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
                row, shape: geometry.shape, dataKey: UInt64(data), form: form, in: list,
                flags: {
                    made += 1
                    return flags[data]
                })
            XCTAssertEqual(templated(template, geometry), fresh(render, form), "step \(step), \(form)")
            shapes.insert("\(geometry.shape)")
            forms.insert("\(form)")
        }
        XCTAssertEqual(forms.count, 2)
        // Templates were reused, and many shapes were seen (edges, full swipe, phases, sides).
        XCTAssertLessThan(made, 3000)
        XCTAssertGreaterThan(shapes.count, 10)
        // The bytes are still one valid JSON line, in either form.
        let geometry = list.geometry("matrix")
        for form in RowForm.allCases {
            var line = templated(
                templates.template(
                    "matrix", shape: geometry.shape, dataKey: 1, form: form, in: list, flags: { ["watched"] }),
                geometry)
            XCTAssertEqual(line.removeLast(), 0x0A)
            XCTAssertNoThrow(try JSONParser.parse(line))
        }
    }

    /// The longest numbers `NumberText` writes, a long id and several buttons: the templated
    /// reply is still the fresh one byte for byte, and a reply fits the memory a template reserves
    /// even with the longest number in every hole.
    func testTheLongestNumbersFitTheReservation() {
        for form in RowForm.allCases { longestNumbersFit(form) }
    }

    private func longestNumbersFit(_ form: RowForm) {
        var list = SwipeList(layout: MovieLayout.demo000)
        _ = try? list.send(.dragChanged(row: "matrix", dx: 120))
        let shown = list.render("matrix", flags: [])
        XCTAssertGreaterThan(shown.buttons.count, 1)
        let template = RowTemplate(shown, form: form)
        let shape = list.geometry("matrix").shape
        let id = Array(String(repeating: "9", count: 64).utf8)
        let extremes = [
            -1.7976931348623157e308, 2.2250738585072014e-308, -Double.leastNonzeroMagnitude, 1.0 / 3,
            -123456.789, 0,
        ]
        for x in extremes {
            // Every hole holding x: the bound the reservation must cover.
            var everywhere = shown
            everywhere.offset = x
            everywhere.spring.target = x
            for i in everywhere.buttons.indices {
                everywhere.buttons[i].x = x
                everywhere.buttons[i].width = x
            }
            var longest = JSONWriter()
            Encode.row(&longest, id: id, row: everywhere, form: form, fired: nil)
            XCTAssertLessThanOrEqual(
                longest.bytes.count, template.maxReplyBytes + id.count, "x \(x), \(form)")
            // The template with a geometry of x: the same bytes as a render of that geometry.
            let geometry = RowGeometry(offset: x, shape: shape, start: x, width: x)
            var expected = shown
            expected.offset = x
            expected.spring.target = x
            for i in expected.buttons.indices {
                expected.buttons[i].x = geometry.x(i)
                expected.buttons[i].width = geometry.width
            }
            var fresh = JSONWriter()
            Encode.row(&fresh, id: id, row: expected, form: form, fired: nil)
            var templated = JSONWriter()
            Encode.row(&templated, id: id, template: template, geometry: geometry)
            XCTAssertEqual(templated.bytes, fresh.bytes, "x \(x), \(form)")
        }
    }

    /// A template is found by everything its bytes depend on: another row, shape, data key,
    /// form, direction or layout makes another.
    func testATemplateIsNotReusedAcrossWhatItDependsOn() {
        let templates = RowTemplates()
        var list = SwipeList(layout: MovieLayout.standard)
        _ = try? list.send(.dragChanged(row: "matrix", dx: -60))
        var made = 0
        func get(_ row: RowID, _ key: UInt64, _ form: RowForm = .full) {
            let g = list.geometry(row)
            _ = templates.template(
                row, shape: g.shape, dataKey: key, form: form, in: list,
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
        get("matrix", 1, .compact)
        XCTAssertEqual(made, 3)
        get("matrix", 1, .compact)
        get("matrix", 1)
        XCTAssertEqual(made, 3)
        _ = try? list.send(.dragChanged(row: "matrix", dx: 60))  // the other edge
        get("matrix", 0)
        XCTAssertEqual(made, 4)
        _ = try? list.send(.dragChanged(row: "seven", dx: -60))
        get("seven", 0)
        XCTAssertEqual(made, 5)
        _ = list.reconfigure(layout: MovieLayout.demo000, viewport: list.viewport)
        _ = try? list.send(.dragChanged(row: "seven", dx: -60))
        get("seven", 0)
        XCTAssertEqual(made, 6)
        _ = list.reconfigure(layout: list.layout, viewport: Viewport(width: 390, direction: .rtl))
        _ = try? list.send(.dragChanged(row: "seven", dx: 60))
        get("seven", 0)
        XCTAssertEqual(made, 7)
    }
}

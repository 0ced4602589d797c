import Movies
import SwipeEngine
import TestSupport
import XCTest

@testable import Wire

/// A row encoded through a connection's cache is byte for byte the row encoded afresh, whatever
/// the gesture, the layout, the direction or the row's data did in between.
final class RowEncodingCacheTests: XCTestCase {
    private func encoded(_ render: RowRender, cache: RowEncodingCache?) -> [UInt8] {
        var out = JSONWriter()
        Encode.row(&out, id: Array("7".utf8), row: render, fired: nil, cache: cache)
        return out.bytes
    }

    func testCachedRowsAreIdenticalToFreshOnes() throws {
        let cache = RowEncodingCache()
        var rng = SplitMix64(seed: 11)
        let layouts = [MovieLayout.standard, MovieLayout.demo000]
        let flags: [RowFlags] = [[], ["watched"], ["watched", "watched-with-friends"]]
        var list = SwipeList(layout: MovieLayout.standard)
        var rendered = 0
        for step in 0..<3000 {
            if step % 300 == 0 {
                _ = list.reconfigure(
                    layout: layouts[Int(rng.next() % 2)],
                    viewport: Viewport(
                        width: Double(100 + rng.next() % 500), direction: rng.next() % 2 == 0 ? .ltr : .rtl))
            }
            let dx = Double(Int(rng.next() % 801) - 400) + (rng.next() % 2 == 0 ? 0.5 : 0)
            let input: Input =
                rng.next() % 5 == 0
                ? .released(row: "matrix", dx: nil, vx: nil) : .dragChanged(row: "matrix", dx: dx)
            _ = try? list.send(input)
            if list.state(of: "matrix").phase == .fired { _ = try? list.send(.timerFired(row: "matrix")) }
            let render = list.render("matrix", flags: flags[Int(rng.next() % 3)])
            XCTAssertEqual(encoded(render, cache: cache), encoded(render, cache: nil), "step \(step)")
            rendered += 1
        }
        XCTAssertEqual(rendered, 3000)
        // The bytes are still one valid JSON line.
        let render = list.render("matrix", flags: ["watched"])
        var line = encoded(render, cache: cache)
        XCTAssertEqual(line.removeLast(), 0x0A)
        XCTAssertNoThrow(try JSONParser.parse(line))
    }
}

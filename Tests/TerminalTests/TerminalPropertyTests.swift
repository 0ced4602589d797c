import Movies
import SwipeEngine
import Terminal
import TestSupport
import XCTest

/// Random inputs: the parser gives the same events however its bytes are split, the layout
/// never draws half a wide character whatever the model and size, and a diff applied to a
/// screen showing the old frame leaves it showing the new one.
final class TerminalPropertyTests: XCTestCase {
    static let pieces: [String] = [
        "a", "Z", " ", "\r", "\u{7F}", "\u{03}", "é", "日", "🎬", "\u{1B}", "\u{1B}[A", "\u{1B}OB", "\u{1B}[5~",
        "\u{1B}[<0;12;5M", "\u{1B}[<32;9;5M", "\u{1B}[<0;9;5m", "\u{1B}[<64;1;1M", "\u{1B}[1;5C",
        "\u{1B}[?1;2c",
        "\u{1B}[<", "\u{1B}[12", "\u{1B}x", "\u{1B}\u{1B}",
    ]

    func testTheParserGivesTheSameEventsHoweverTheBytesAreSplit() {
        var rng = SplitMix64(seed: 15)
        for _ in 0..<500 {
            var bytes: [UInt8] = []
            for _ in 0..<Int.random(in: 1...12, using: &rng) {
                if Int.random(in: 0..<5, using: &rng) == 0 {
                    bytes.append(UInt8.random(in: 0...255, using: &rng))
                } else {
                    bytes += Array(Self.pieces.randomElement(using: &rng)!.utf8)
                }
            }
            var whole = InputParser()
            let expected = whole.feed(bytes) + whole.flush()
            var split = InputParser()
            var events: [InputEvent] = []
            var start = 0
            while start < bytes.count {
                let end = min(bytes.count, start + Int.random(in: 1...4, using: &rng))
                events += split.feed(bytes[start..<end])
                start = end
            }
            events += split.flush()
            XCTAssertEqual(events, expected, "\(bytes)")
        }
    }

    static let titles = [
        "The Godfather", "東京物語 🎬", "Amélie", "👨‍👩‍👧 family", "ＷＩＤＥ", "Evil\u{202E}txt", "Tab\there",
        String(repeating: "長", count: 60), "",
    ]

    func randomModel(width: Int, using rng: inout SplitMix64) throws -> ScreenModel {
        var list = SwipeList(
            layout: MovieLayout.standard,
            viewport: Viewport(
                width: ScreenLayout.viewportWidth(columns: width),
                direction: Bool.random(using: &rng) ? .ltr : .rtl))
        var m = ScreenModel(daemon: Bool.random(using: &rng) ? "./swiped.sock" : "/run/日本/swiped.sock")
        m.ascii = Bool.random(using: &rng)
        m.trueColor = Bool.random(using: &rng)
        m.help = Int.random(in: 0..<4, using: &rng) == 0
        m.prompt = Int.random(in: 0..<4, using: &rng) == 0 ? Self.titles.randomElement(using: &rng) : nil
        m.status = Bool.random(using: &rng) ? Self.titles.randomElement(using: &rng) : nil
        for i in 0..<Int.random(in: 0...12, using: &rng) {
            let id = "m\(i)"
            _ = try? list.send(.dragChanged(row: id, dx: Double.random(in: -500...500, using: &rng)))
            let r = list.render(id, flags: [])
            m.rows.append(
                RowView(
                    id: id, title: Self.titles.randomElement(using: &rng)!, watched: Bool.random(using: &rng),
                    watchedWithFriends: Bool.random(using: &rng),
                    offset: r.offset * Double.random(in: -0.2...1.3, using: &rng), buttons: r.buttons,
                    buttonsOffset: r.offset, phase: r.phase, height: Double.random(in: 0...1, using: &rng),
                    ghosts: (0..<Int.random(in: 0...2, using: &rng)).map { client in
                        Ghost(
                            client: client, offset: r.offset * Double.random(in: -1.3...1.3, using: &rng),
                            buttons: r.buttons)
                    }))
        }
        m.selected = m.rows.isEmpty ? nil : Int.random(in: 0..<m.rows.count, using: &rng)
        m.scroll = Int.random(in: 0...max(0, m.rows.count), using: &rng)
        return m
    }

    func checkWideCharacters(_ grid: Grid, _ context: String) {
        for y in 0..<grid.height {
            for x in 0..<grid.width {
                let cell = grid[x, y]
                if cell.isContinuation {
                    XCTAssertTrue(
                        x > 0 && TextWidth.width(Character(grid[x - 1, y].text)) == 2, "\(x),\(y) \(context)")
                } else if TextWidth.width(Character(cell.text)) == 2 {
                    XCTAssertTrue(x + 1 < grid.width && grid[x + 1, y].isContinuation, "\(x),\(y) \(context)")
                } else {
                    XCTAssertEqual(TextWidth.width(Character(cell.text)), 1, "\(x),\(y) \(context)")
                }
            }
        }
    }

    func testLayoutsNeverDrawHalfAWideCharacterAndDiffsReproduceTheFrame() throws {
        var rng = SplitMix64(seed: 1515)
        for round in 0..<300 {
            let width = Int.random(in: 1...130, using: &rng)
            let height = Int.random(in: 1...40, using: &rng)
            let first = ScreenLayout.render(
                try randomModel(width: width, using: &rng), width: width, height: height)
            let second = ScreenLayout.render(
                try randomModel(width: width, using: &rng), width: width, height: height)
            checkWideCharacters(first, "round \(round), \(width)×\(height)")
            checkWideCharacters(second, "round \(round), \(width)×\(height)")
            var screen = FakeTerminal(width: width, height: height)
            screen.apply(FrameWriter.diff(from: nil, to: first, synchronized: true))
            XCTAssertTrue(
                screen.grid == first, "round \(round): a full frame; the screen:\n\(screen.grid.text)")
            screen.apply(FrameWriter.diff(from: first, to: second, synchronized: Bool.random(using: &rng)))
            XCTAssertTrue(screen.grid == second, "round \(round): a diff; the screen:\n\(screen.grid.text)")
            XCTAssertEqual(FrameWriter.diff(from: second, to: second), [])
        }
    }
}

/// Just enough of a terminal to replay what FrameWriter writes: cursor positions, SGR, clear,
/// private modes (ignored), and text, a character per cell (two for wide ones).
struct FakeTerminal {
    var grid: Grid
    var x = 0
    var y = 0
    var style = Style.plain

    init(width: Int, height: Int) { grid = Grid(width: width, height: height) }

    mutating func apply(_ bytes: [UInt8]) {
        var i = 0
        var text: [UInt8] = []
        func flushText(_ t: inout FakeTerminal) {
            for character in String(decoding: text, as: UTF8.self) {
                let w = TextWidth.width(character)
                guard t.x + w <= t.grid.width else { continue }
                t.grid[t.x, t.y] = Cell(String(character), t.style)
                if w == 2 { t.grid[t.x + 1, t.y] = Cell("", t.style) }
                t.x += w
            }
            text.removeAll()
        }
        while i < bytes.count {
            if bytes[i] == 0x1B {
                flushText(&self)
                var j = i + 2
                while !(0x40...0x7E).contains(bytes[j]) { j += 1 }
                let parameters = String(decoding: bytes[(i + 2)..<j], as: UTF8.self)
                switch bytes[j] {
                case UInt8(ascii: "H"):
                    let n = parameters.split(separator: ";").map { Int($0)! }
                    (y, x) = (n[0] - 1, n[1] - 1)
                case UInt8(ascii: "J"): grid = Grid(width: grid.width, height: grid.height)
                case UInt8(ascii: "m"): style = Self.style(parameters)
                default: break  // ?2026h, ?2026l
                }
                i = j + 1
            } else {
                text.append(bytes[i])
                i += 1
            }
        }
        flushText(&self)
    }

    static func style(_ parameters: String) -> Style {
        var codes = parameters.split(separator: ";").map { Int($0)! }[...]
        var s = Style.plain
        func color() -> Color {
            if codes.popFirst() == 5 { return .indexed(UInt8(codes.popFirst()!)) }
            return .rgb(UInt8(codes.popFirst()!), UInt8(codes.popFirst()!), UInt8(codes.popFirst()!))
        }
        while let code = codes.popFirst() {
            switch code {
            case 0: s = .plain
            case 1: s.bold = true
            case 2: s.faint = true
            case 4: s.underline = true
            case 7: s.inverse = true
            case 38: s.foreground = color()
            case 48: s.background = color()
            default: XCTFail("unexpected SGR \(code)")
            }
        }
        return s
    }
}

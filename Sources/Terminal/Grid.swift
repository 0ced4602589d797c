// A screen as cells, each one character (or the right half of a wide one) with its style.

public enum Color: Equatable, Hashable, Sendable {
    /// One of the 256 palette colours.
    case indexed(UInt8)
    /// True colour (the terminal said it has it: COLORTERM=truecolor or 24bit).
    case rgb(UInt8, UInt8, UInt8)
}

public struct Style: Equatable, Hashable, Sendable {
    public var foreground: Color?
    public var background: Color?
    public var bold = false
    public var faint = false
    public var inverse = false
    public var underline = false

    public init(
        foreground: Color? = nil, background: Color? = nil, bold: Bool = false, faint: Bool = false,
        inverse: Bool = false, underline: Bool = false
    ) {
        self.foreground = foreground
        self.background = background
        self.bold = bold
        self.faint = faint
        self.inverse = inverse
        self.underline = underline
    }

    public static let plain = Style()
}

public struct Cell: Equatable, Sendable {
    /// One character; "" for the right half of a wide character to its left.
    public var text: String
    public var style: Style

    public init(_ text: String, _ style: Style = .plain) {
        self.text = text
        self.style = style
    }

    public static let blank = Cell(" ")
    public var isContinuation: Bool { text.isEmpty }
}

public struct Grid: Equatable, Sendable {
    public let width: Int
    public let height: Int
    public private(set) var cells: [Cell]

    public init(width: Int, height: Int) {
        self.width = max(0, width)
        self.height = max(0, height)
        cells = Array(repeating: .blank, count: self.width * self.height)
    }

    public subscript(x: Int, y: Int) -> Cell {
        get { cells[y * width + x] }
        set { cells[y * width + x] = newValue }
    }

    /// Fills columns `from..<to` of line `y` (clipped to the grid) with `style`d spaces.
    public mutating func fill(line y: Int, from: Int = 0, to: Int? = nil, _ style: Style) {
        guard y >= 0, y < height else { return }
        let end = min(to ?? width, width)
        var x = max(0, from)
        while x < end {
            self[x, y] = Cell(" ", style)
            x += 1
        }
        fixWideEdges(line: y, max(0, from), end)
    }

    /// Writes `text` from column `x` of line `y`, clipped to columns `clip` (default: the whole
    /// line); a wide character that would straddle the clip's edge is replaced by a space.
    /// Returns the column after the text (even where clipped).
    @discardableResult
    public mutating func put(
        _ text: String, x: Int, y: Int, _ style: Style = .plain, clip: Range<Int>? = nil
    ) -> Int {
        guard y >= 0, y < height else { return x }
        let bounds = (clip ?? 0..<width).clamped(to: 0..<width)
        var column = x
        for character in text {
            let w = TextWidth.width(character)
            if w == 0 { continue }
            if column >= bounds.lowerBound && column + w <= bounds.upperBound {
                self[column, y] = Cell(String(character), style)
                if w == 2 { self[column + 1, y] = Cell("", style) }
            } else {
                for c in column..<(column + w) where bounds.contains(c) { self[c, y] = Cell(" ", style) }
            }
            column += w
        }
        fixWideEdges(line: y, max(bounds.lowerBound, x), min(bounds.upperBound, column))
        return column
    }

    /// After writing columns `from..<to`: a wide character cut in half at either edge becomes
    /// a space, so that no continuation is without its lead and no wide lead without its half.
    private mutating func fixWideEdges(line y: Int, _ from: Int, _ to: Int) {
        for x in [from - 1, from, to - 1, to] where x >= 0 && x < width {
            let cell = self[x, y]
            if cell.isContinuation {
                if x == 0 || self[x - 1, y].isContinuation
                    || TextWidth.width(Character(self[x - 1, y].text)) != 2
                {
                    self[x, y] = Cell(" ", cell.style)
                }
            } else if TextWidth.width(Character(cell.text)) == 2 {
                if x + 1 >= width || !self[x + 1, y].isContinuation { self[x, y] = Cell(" ", cell.style) }
            }
        }
    }

    /// The grid as plain text, one line per line, trailing spaces kept (for tests).
    public var text: String {
        var lines: [String] = []
        for y in 0..<height {
            var line = ""
            for x in 0..<width { line += self[x, y].text }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }
}

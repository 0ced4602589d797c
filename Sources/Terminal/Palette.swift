// Tints and icons: SwiftUI's named colours as terminal colours, SF Symbol names as characters.

public enum Palette {
    /// SwiftUI's system colours (light appearance), by the names the protocol sends; an unknown
    /// name is gray.
    public static func rgb(_ tint: String) -> (UInt8, UInt8, UInt8) {
        switch tint {
        case "red": return (255, 59, 48)
        case "orange": return (255, 149, 0)
        case "yellow": return (255, 204, 0)
        case "green": return (52, 199, 89)
        case "mint": return (0, 199, 190)
        case "teal": return (48, 176, 199)
        case "cyan": return (50, 173, 230)
        case "blue": return (0, 122, 255)
        case "indigo": return (88, 86, 214)
        case "purple": return (175, 82, 222)
        case "pink": return (255, 45, 85)
        case "brown": return (162, 132, 94)
        case "black": return (0, 0, 0)
        case "white": return (255, 255, 255)
        default: return (142, 142, 147)
        }
    }

    /// The tint as a terminal colour: true colour, or the nearest of the 256 palette's colour
    /// cube and gray ramp.
    public static func color(_ tint: String, trueColor: Bool) -> Color {
        let (r, g, b) = rgb(tint)
        return trueColor ? .rgb(r, g, b) : .indexed(nearest256(r, g, b))
    }

    /// The nearest colour of xterm's 6×6×6 cube (16–231) or, unless `grays` is false (a colour
    /// that must keep its hue), of its gray ramp (232–255).
    public static func nearest256(_ r: UInt8, _ g: UInt8, _ b: UInt8, grays: Bool = true) -> UInt8 {
        let levels = [0, 95, 135, 175, 215, 255]
        func nearestLevel(_ v: Int) -> Int {
            var best = 0
            for (i, l) in levels.enumerated() where abs(l - v) < abs(levels[best] - v) { best = i }
            return best
        }
        let (ri, gi, bi) = (nearestLevel(Int(r)), nearestLevel(Int(g)), nearestLevel(Int(b)))
        let cube = (levels[ri], levels[gi], levels[bi])
        func distance(_ c: (Int, Int, Int)) -> Int {
            let dr = c.0 - Int(r)
            let dg = c.1 - Int(g)
            let db = c.2 - Int(b)
            return dr * dr + dg * dg + db * db
        }
        let average = (Int(r) + Int(g) + Int(b)) / 3
        let grayIndex = max(0, min(23, (average - 8 + 5) / 10))
        let gray = 8 + grayIndex * 10
        if grays && distance((gray, gray, gray)) < distance(cube) { return UInt8(232 + grayIndex) }
        return UInt8(16 + 36 * ri + 6 * gi + bi)
    }

    /// Text that reads well on `tint`: black on light tints, white on dark ones.
    public static func onTint(_ tint: String, trueColor: Bool) -> Color {
        let (r, g, b) = rgb(tint)
        let light = (299 * Int(r) + 587 * Int(g) + 114 * Int(b)) / 1000 > 150
        return light
            ? (trueColor ? .rgb(0, 0, 0) : .indexed(16)) : (trueColor ? .rgb(255, 255, 255) : .indexed(231))
    }

    /// An SF Symbol name as one character; `ascii`: plain ASCII for terminals without the fonts.
    public static func icon(_ name: String, ascii: Bool) -> String {
        switch name {
        case "trash": return ascii ? "x" : "✖"
        case "eye": return ascii ? "o" : "◉"
        case "eye.slash": return ascii ? "-" : "○"
        case "person.3", "person.2", "person": return ascii ? "&" : "👥"
        case "flag": return ascii ? "F" : "⚑"
        case "envelope.open", "envelope": return ascii ? "@" : "✉"
        case "star": return ascii ? "*" : "★"
        case "bell": return ascii ? "!" : "♪"
        case "checkmark": return ascii ? "v" : "✓"
        default: return ascii ? "*" : "•"
        }
    }
}

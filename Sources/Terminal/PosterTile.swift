// A movie's image as a poster tile: no poster files ship, so the image's name stands for it, as
// a letter on a colour. The definition is shared with the web page (web/, the same function in
// JavaScript) and written down in docs/tui.md and docs/web.md, so that a movie looks the same in both:
//
// - letter: the first Unicode scalar of the image name whose general category is a letter (L*)
//   or a decimal digit (Nd), uppercased (kept as it is when uppercasing gives more than one
//   scalar, as ß does); "#" when there is none (an `add` without `--image` stores "").
// - colour: palette[FNV-1a-32(the name's UTF-8 bytes) % 8], FNV-1a-32 with offset basis
//   2166136261 and prime 16777619; white text on each.

public struct PosterTile: Equatable, Sendable {
    /// The eight colours (sRGB), darker than the button tints so that white text reads on each.
    public static let palette: [(red: UInt8, green: UInt8, blue: UInt8)] = [
        (0xA4, 0x26, 0x2C), (0x9A, 0x4A, 0x00), (0x6B, 0x6B, 0x00), (0x2E, 0x7D, 0x32),
        (0x00, 0x69, 0x5C), (0x15, 0x65, 0xC0), (0x5E, 0x35, 0xB1), (0xAD, 0x14, 0x57),
    ]

    /// The letter drawn (one Unicode scalar: a letter or a digit, never a control character).
    public var letter: Unicode.Scalar
    /// Index into `palette`.
    public var colorIndex: Int

    public init(letter: Unicode.Scalar, colorIndex: Int) {
        self.letter = letter
        self.colorIndex = colorIndex
    }

    public init(image: String) {
        letter = Self.letter(image)
        colorIndex = Int(Self.fnv1a32(Array(image.utf8)) % UInt32(Self.palette.count))
    }

    public static func letter(_ image: String) -> Unicode.Scalar {
        for scalar in image.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
                .decimalNumber:
                let upper = scalar.properties.uppercaseMapping.unicodeScalars
                return upper.count == 1 ? upper.first! : scalar
            default:
                continue
            }
        }
        return "#"
    }

    /// FNV-1a, 32 bits.
    public static func fnv1a32(_ bytes: [UInt8]) -> UInt32 {
        var hash: UInt32 = 2_166_136_261
        for byte in bytes {
            hash ^= UInt32(byte)
            hash = hash &* 16_777_619
        }
        return hash
    }

    /// The tile's two cells: the letter, then a blank when it is one cell wide. A letter a
    /// terminal draws on its neighbour (one of no width) shows as "?".
    public var text: String {
        switch TextWidth.width(letter) {
        case 2: String(letter)
        case 1: String(letter) + " "
        default: "? "
        }
    }

    /// Its colour as a terminal colour, and the white of its letter: true colour, or the nearest
    /// of the 256's colour cube (the gray ramp would take #2E7D32's green for a gray).
    public func style(trueColor: Bool) -> Style {
        let (r, g, b) = Self.palette[colorIndex]
        return Style(
            foreground: trueColor ? .rgb(255, 255, 255) : .indexed(231),
            background: trueColor ? .rgb(r, g, b) : .indexed(Palette.nearest256(r, g, b, grays: false)),
            bold: true)
    }
}

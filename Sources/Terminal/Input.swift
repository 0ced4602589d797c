// Bytes from a terminal to key and mouse events. Pure: the front end feeds whatever each read
// returned; a sequence split across reads is kept until its end arrives. A lone ESC cannot be
// told from the start of a sequence until more bytes come or a short time passes: the front end
// calls `flush()` when nothing followed it within its timeout (`hasPending` says when to).

/// A key, after the terminal's encoding is undone.
public enum Key: Equatable, Sendable {
    /// A printable character (one Unicode scalar).
    case character(Unicode.Scalar)
    case up, down, left, right, home, end, pageUp, pageDown, insert, delete
    case enter, tab, backspace, escape
    /// Ctrl with a letter: `control("c")` is Ctrl-C (byte 0x03).
    case control(Character)
    /// A function key, F1 to F12.
    case function(Int)
}

/// A mouse report in xterm's SGR encoding (mode 1006): `ESC [ < b ; x ; y M` or `… m`.
public struct MouseEvent: Equatable, Sendable {
    public enum Kind: Equatable, Sendable {
        /// A button went down (0 left, 1 middle, 2 right).
        case press(button: Int)
        /// Motion with a button held (mode 1002), or without one (mode 1003: button 3).
        case motion(button: Int)
        /// A button went up.
        case release(button: Int)
        case wheelUp, wheelDown
    }

    public var kind: Kind
    /// Zero-based column and line (the terminal counts from 1).
    public var column: Int
    public var line: Int
    public var shift: Bool
    public var alt: Bool
    public var control: Bool

    public init(
        _ kind: Kind, column: Int, line: Int, shift: Bool = false, alt: Bool = false, control: Bool = false
    ) {
        self.kind = kind
        self.column = column
        self.line = line
        self.shift = shift
        self.alt = alt
        self.control = control
    }
}

public enum InputEvent: Equatable, Sendable {
    case key(Key)
    case mouse(MouseEvent)
    /// Alt (Meta) with a key: ESC followed by it.
    case alt(Key)
    /// Shift with a cursor key (xterm's `ESC [ 1 ; 2 A` for Shift+↑): the keys with a character
    /// of their own come shifted as that character (K, not k). With other modifiers (Ctrl,
    /// Alt), a cursor key is read as itself, as before.
    case shift(Key)
    /// The terminal's answer to DECRQM (`ESC [ ? mode $ p`): `ESC [ ? mode ; value $ y`, value 1
    /// or 2 when it knows the mode (set, reset), 3 or 4 when it is fixed, 0 when it does not.
    case modeReport(mode: Int, value: Int)
    /// A well-formed escape sequence this parser does not interpret, as it came.
    case unknown([UInt8])
}

public struct InputParser: Sendable {
    private var pending: [UInt8] = []

    public init() {}

    /// Whether bytes are held back waiting for the rest of a sequence (or for `flush`).
    public var hasPending: Bool { !pending.isEmpty }

    /// The events that `bytes` completes, in order.
    public mutating func feed<S: Sequence<UInt8>>(_ bytes: S) -> [InputEvent] {
        pending.append(contentsOf: bytes)
        var events: [InputEvent] = []
        var start = 0
        while start < pending.count {
            switch Self.parse(pending, from: start) {
            case .event(let event, let end):
                events.append(event)
                start = end
            case .skip(let end):
                start = end
            case .incomplete:
                pending.removeFirst(start)
                return events
            }
        }
        pending.removeAll(keepingCapacity: true)
        return events
    }

    /// What is held back, taken as it stands: a lone ESC is the Escape key, ESC and a partial
    /// sequence is Escape then the bytes after it, an incomplete UTF-8 character is dropped.
    public mutating func flush() -> [InputEvent] {
        guard !pending.isEmpty else { return [] }
        let held = pending
        pending.removeAll()
        if held[0] == 0x1B {
            var events: [InputEvent] = [.key(.escape)]
            var rest = InputParser()
            events += rest.feed(held.dropFirst())
            if rest.hasPending { events += rest.flush() }
            return events
        }
        return []  // the start of a UTF-8 character whose end never came
    }

    private enum Step {
        case event(InputEvent, end: Int)
        case skip(end: Int)
        case incomplete
    }

    private static func parse(_ b: [UInt8], from i: Int) -> Step {
        let byte = b[i]
        switch byte {
        case 0x1B:
            guard i + 1 < b.count else { return .incomplete }
            let next = b[i + 1]
            if next == UInt8(ascii: "[") { return csi(b, from: i) }
            if next == UInt8(ascii: "O") {
                guard i + 2 < b.count else { return .incomplete }
                let key: Key? =
                    switch b[i + 2] {
                    case UInt8(ascii: "A"): .up
                    case UInt8(ascii: "B"): .down
                    case UInt8(ascii: "C"): .right
                    case UInt8(ascii: "D"): .left
                    case UInt8(ascii: "H"): .home
                    case UInt8(ascii: "F"): .end
                    case UInt8(ascii: "P"): .function(1)
                    case UInt8(ascii: "Q"): .function(2)
                    case UInt8(ascii: "R"): .function(3)
                    case UInt8(ascii: "S"): .function(4)
                    default: nil
                    }
                return .event(key.map(InputEvent.key) ?? .unknown(Array(b[i...i + 2])), end: i + 3)
            }
            if next == 0x1B { return .event(.key(.escape), end: i + 1) }
            // Alt with a key: parse what follows ESC as one key.
            switch parse(b, from: i + 1) {
            case .event(.key(let key), let end): return .event(.alt(key), end: end)
            case .event(let other, let end): return .event(other, end: end)
            case .skip(let end): return .skip(end: end)
            case .incomplete: return .incomplete
            }
        case 0x0D, 0x0A: return .event(.key(.enter), end: i + 1)
        case 0x09: return .event(.key(.tab), end: i + 1)
        case 0x7F, 0x08: return .event(.key(.backspace), end: i + 1)
        case 0x00: return .event(.key(.control(" ")), end: i + 1)
        case 0x01...0x1A:
            return .event(.key(.control(Character(Unicode.Scalar(byte + 0x60)))), end: i + 1)
        case 0x1C...0x1F: return .skip(end: i + 1)
        case 0x20...0x7E: return .event(.key(.character(Unicode.Scalar(byte))), end: i + 1)
        default: return utf8(b, from: i)
        }
    }

    /// One UTF-8 character; an invalid byte is skipped (a terminal sends valid UTF-8 or nothing).
    private static func utf8(_ b: [UInt8], from i: Int) -> Step {
        let lead = b[i]
        let length: Int
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0...0xEF: length = 3
        case 0xF0...0xF4: length = 4
        default: return .skip(end: i + 1)
        }
        var value = UInt32(lead) & (length == 2 ? 0x1F : length == 3 ? 0x0F : 0x07)
        for k in 1..<length {
            guard i + k < b.count else { return .incomplete }
            let c = b[i + k]
            guard c & 0xC0 == 0x80 else { return .skip(end: i + k) }
            value = value << 6 | UInt32(c & 0x3F)
        }
        guard let scalar = Unicode.Scalar(value), value >= [0, 0, 0x80, 0x800, 0x10000][length] else {
            return .skip(end: i + length)
        }
        return .event(.key(.character(scalar)), end: i + length)
    }

    /// `ESC [` parameters, intermediates, final byte (ECMA-48), then what it means.
    private static func csi(_ b: [UInt8], from i: Int) -> Step {
        var j = i + 2
        while j < b.count, (0x30...0x3F).contains(b[j]) { j += 1 }
        while j < b.count, (0x20...0x2F).contains(b[j]) { j += 1 }
        guard j < b.count else { return .incomplete }
        let final = b[j]
        let sequence = Array(b[i...j])
        guard (0x40...0x7E).contains(final) else {
            // Not a sequence after all: ESC [ as Alt-[, the rest parsed again.
            return .event(.alt(.character("[")), end: i + 2)
        }
        let parameters = Array(b[(i + 2)..<j])
        if parameters.first == UInt8(ascii: "<"), final == UInt8(ascii: "M") || final == UInt8(ascii: "m") {
            guard let mouse = sgrMouse(parameters.dropFirst(), release: final == UInt8(ascii: "m")) else {
                return .event(.unknown(sequence), end: j + 1)
            }
            return .event(.mouse(mouse), end: j + 1)
        }
        if parameters.first == UInt8(ascii: "?"), final == UInt8(ascii: "y"),
            parameters.last == UInt8(ascii: "$")
        {
            let fields = parameters.dropFirst().dropLast().split(separator: UInt8(ascii: ";")).map {
                Int(String(decoding: $0, as: UTF8.self))
            }
            if fields.count == 2, let mode = fields[0], let value = fields[1] {
                return .event(.modeReport(mode: mode, value: value), end: j + 1)
            }
        }
        let numbers = parameters.split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: false).map {
            Int(String(decoding: $0, as: UTF8.self))
        }
        let key: Key?
        switch final {
        case UInt8(ascii: "A"): key = .up
        case UInt8(ascii: "B"): key = .down
        case UInt8(ascii: "C"): key = .right
        case UInt8(ascii: "D"): key = .left
        case UInt8(ascii: "H"): key = .home
        case UInt8(ascii: "F"): key = .end
        case UInt8(ascii: "Z"): key = .tab
        case UInt8(ascii: "~"):
            switch numbers.first ?? nil {
            case 1, 7: key = .home
            case 2: key = .insert
            case 3: key = .delete
            case 4, 8: key = .end
            case 5: key = .pageUp
            case 6: key = .pageDown
            case 11, 12, 13, 14, 15: key = .function((numbers[0] ?? 11) - 10)
            case 17, 18, 19, 20, 21: key = .function((numbers[0] ?? 17) - 11)
            case 23, 24: key = .function((numbers[0] ?? 23) - 12)
            default: key = nil
            }
        default: key = nil
        }
        // A modifier is the second parameter: 2 is Shift alone (xterm, and tmux after it).
        if let key, numbers.count == 2, numbers[1] == 2, (0x41...0x48).contains(final) {
            return .event(.shift(key), end: j + 1)
        }
        return .event(key.map(InputEvent.key) ?? .unknown(sequence), end: j + 1)
    }

    private static func sgrMouse(_ parameters: ArraySlice<UInt8>, release: Bool) -> MouseEvent? {
        let fields = parameters.split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: false)
        guard fields.count == 3, let code = Int(String(decoding: fields[0], as: UTF8.self)),
            let x = Int(String(decoding: fields[1], as: UTF8.self)),
            let y = Int(String(decoding: fields[2], as: UTF8.self)), x >= 1, y >= 1
        else { return nil }
        let button = code & 3
        let kind: MouseEvent.Kind
        if code & 64 != 0 {
            guard !release else { return nil }
            kind = button == 0 ? .wheelUp : button == 1 ? .wheelDown : .motion(button: 3)
            if button > 1 { return nil }
        } else if release {
            kind = .release(button: button)
        } else if code & 32 != 0 {
            kind = .motion(button: button)
        } else {
            kind = .press(button: button)
        }
        return MouseEvent(
            kind, column: x - 1, line: y - 1, shift: code & 4 != 0, alt: code & 8 != 0,
            control: code & 16 != 0)
    }
}

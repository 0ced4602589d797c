// Errors of the JSON parser: the byte offset for programs, a sentence for people.

/// A JSON syntax error. `offset` is the 0-based byte offset in the input where the problem was
/// found; `message` says what it was and where ("trailing comma at byte 40"), as protocol.md
/// promises for every `bad-json` reply. The daemon sends `message` back in its `bad-json` reply.
public struct JSONError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Lets the request layer tell bad JSON (`bad-json`) from good JSON that is not a request
    /// object (`bad-request`) without reading the message.
    public enum Code: Equatable, Sendable {
        case syntax
        /// Valid JSON, but `parseObjectMembers` wanted an object at the top level.
        case notAnObject
    }

    public var code: Code
    public var offset: Int
    public var message: String

    public init(_ code: Code = .syntax, offset: Int, message: String) {
        self.code = code
        self.offset = offset
        self.message = message
    }

    public var description: String { message }

    // The messages, in one place.
    @usableFromInline
    static func endOfInput(_ offset: Int) -> JSONError {
        JSONError(offset: offset, message: "unexpected end of input at byte \(offset)")
    }
    @usableFromInline
    static func at(_ offset: Int, _ what: String) -> JSONError {
        JSONError(offset: offset, message: "\(what) at byte \(offset)")
    }
    static func unexpected(_ byte: UInt8, at offset: Int) -> JSONError {
        at(offset, "unexpected \(describe(byte))")
    }

    /// `'x'` for printable ASCII, else `byte 0xNN`, so a message never carries a raw control
    /// character or half a UTF-8 sequence.
    static func describe(_ byte: UInt8) -> String {
        if byte >= 0x21 && byte < 0x7F { return "character '\(Character(Unicode.Scalar(byte)))'" }
        return "byte 0x" + hex(UInt32(byte), digits: 2)
    }

    static func hex(_ value: UInt32, digits: Int) -> String {
        let s = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, digits - s.count)) + s
    }
}

// The protocol's error codes (protocol.md, "Errors"). A program switches on the code; a person
// reads the message, which always says what was wrong in plain words.

public enum ErrorCode: String, Sendable, CaseIterable {
    case badJSON = "bad-json"
    case badRequest = "bad-request"
    case unknownOp = "unknown-op"
    case notFound = "not-found"
    case conflict = "conflict"
    case notRevealed = "not-revealed"
    case tooLarge = "too-large"
    case storage = "storage"
    case forbidden = "forbidden"
    case overloaded = "overloaded"
    case `internal` = "internal"
}

public struct WireError: Error, Equatable, Sendable {
    public var code: ErrorCode
    public var message: String

    public init(_ code: ErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }

    public static func badRequest(_ message: String) -> WireError { WireError(.badRequest, message) }
}

// A request line decoded into a typed request. Decoding is strict and says exactly what is
// wrong: unknown arguments and wrong types are named, numbers are range-checked here, so the
// daemon only ever sees well-formed requests. Domain rules (a title's length, whether a movie
// exists) stay with the domain.
import JSONCodec
import SwipeEngine

public struct MutationOptions: Equatable, Sendable {
    public var expect: UInt64?
    public var key: String?
    public init(expect: UInt64? = nil, key: String? = nil) {
        self.expect = expect
        self.key = key
    }
}

public struct LayoutChange: Equatable, Sendable {
    public var leading: [ActionSpec]?
    public var trailing: [ActionSpec]?
    public var allowsFullSwipeLeading: Bool?
    public var allowsFullSwipeTrailing: Bool?
    public var buttonWidth: Double?

    /// No argument at all: back to the movie layout.
    public var isEmpty: Bool {
        leading == nil && trailing == nil && allowsFullSwipeLeading == nil
            && allowsFullSwipeTrailing == nil && buttonWidth == nil
    }
}

public enum Request: Equatable, Sendable {
    case ping
    case help
    case list
    case add(title: String, image: String?, options: MutationOptions)
    case toggleWatched(movie: String, options: MutationOptions)
    case toggleWatchedWithFriends(movie: String, options: MutationOptions)
    case remove(movie: String, options: MutationOptions)
    case subscribe(from: UInt64?)
    case unsubscribe
    case history(from: UInt64, limit: Int)
    case viewport(width: Double?, direction: Direction?)
    case configure(LayoutChange)
    case drag(movie: String, dx: Double)
    case release(movie: String, dx: Double?, vx: Double?)
    case tap(movie: String, action: String)
    case close(movie: String?)
    case rows
}

/// One decoded line: the raw bytes of its `id` (echoed verbatim in the reply), the op's name
/// when there was one (for logs), and the request or the error to answer with.
public struct DecodedRequest: Sendable {
    public var id: [UInt8]?
    public var op: String?
    public var result: Result<Request, WireError>
}

public enum RequestDecoder {
    public static let maxStringBytes = 1024
    public static let maxActionsPerEdge = 8

    /// Decodes one line: the fast path for the flat requests clients send most, else the full
    /// decoder. Both give the same answer wherever the fast path answers at all.
    public static func decode(_ line: UnsafeRawBufferPointer) -> DecodedRequest {
        decodeFast(line) ?? decodeFull(line)
    }

    /// Decodes any line, saying exactly what is wrong with it.
    public static func decodeFull(_ line: UnsafeRawBufferPointer) -> DecodedRequest {
        let members: [JSONRawMember]
        do {
            members = try JSONParser.parseObjectMembers(line)
        } catch {
            return DecodedRequest(id: nil, op: nil, result: .failure(WireError(.badJSON, error.description)))
        }
        var id: [UInt8]?
        var op: String?
        // The first key that repeats an earlier one. Requests have a handful of keys: a scan of
        // the earlier ones beats hashing each into a Set (an allocation per request); long
        // objects still get the Set.
        var duplicate: String?
        if members.count <= 16 {
            for i in members.indices where duplicate == nil {
                let key = members[i].key
                if members[..<i].contains(where: { $0.key == key }) { duplicate = key }
            }
        } else {
            var seen = Set<String>()
            for member in members where !seen.insert(member.key).inserted && duplicate == nil {
                duplicate = member.key
            }
        }
        for member in members {
            if member.key == "id" {
                id = RequestDecoder.compact(UnsafeRawBufferPointer(rebasing: line[member.range]))
            }
            if member.key == "op", case .string(let name) = member.value { op = name }
        }
        func fail(_ code: ErrorCode, _ message: String) -> DecodedRequest {
            DecodedRequest(id: id, op: op, result: .failure(WireError(code, message)))
        }
        if let duplicate { return fail(.badRequest, "key \"\(duplicate)\" appears more than once") }
        guard let opMember = members.first(where: { $0.key == "op" }) else {
            return fail(.badRequest, "missing \"op\"; send {\"op\":\"help\"} for the list of ops")
        }
        guard let name = op else {
            return fail(.badRequest, "\"op\" must be a string, not \(opMember.value.typeName)")
        }
        guard let spec = Ops.named(name) else {
            return fail(
                .unknownOp, "unknown op \"\(truncated(name))\"; send {\"op\":\"help\"} for the list of ops")
        }
        var args = Arguments(op: spec)
        for member in members where member.key != "op" && member.key != "id" {
            guard let index = spec.args.firstIndex(where: { $0.name == member.key }) else {
                let known = spec.args.map(\.name)
                let hint = known.isEmpty ? "it takes none" : "it takes " + known.joined(separator: ", ")
                return fail(
                    .badRequest, "unknown argument \"\(truncated(member.key))\" for op \"\(name)\"; \(hint)")
            }
            args.values[index] = member.value
        }
        do {
            let request = try args.build()
            return DecodedRequest(id: id, op: name, result: .success(request))
        } catch {
            return DecodedRequest(id: id, op: name, result: .failure(error))
        }
    }

    /// The `id`'s bytes as sent, less the whitespace between its tokens: numbers and strings stay
    /// exactly as written (`1.50`, `"\u00e9"`), and a reply line stays compact, with no tab or
    /// carriage return from the request in it. `raw` is one valid JSON value.
    static func compact(_ raw: UnsafeRawBufferPointer) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(raw.count)
        var inString = false
        var escaped = false
        for byte in raw {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
            } else if byte == UInt8(ascii: "\"") {
                inString = true
            } else if byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D {
                continue
            }
            out.append(byte)
        }
        return out
    }

    /// Echoes of client text in messages stay short.
    public static func truncated(_ text: String) -> String {
        text.utf8.count <= 64 ? text : String(text.prefix(60)) + "…"
    }
}

/// The arguments of one request, checked against its op's table entry: `values[i]` is the
/// value given for `op.args[i]` (an array, not a dictionary: an op takes at most five).
struct Arguments {
    /// The longest idempotency `key`, in bytes.
    static let maxKeyBytes = 128
    /// The largest |x| a number argument may have: bounds what the engine sees.
    static let maxMagnitude = 1e9

    let op: OpSpec
    var values: [JSON?]

    init(op: OpSpec) {
        self.op = op
        values = Array(repeating: nil, count: op.args.count)
    }

    subscript(name: String) -> JSON? {
        guard let index = op.args.firstIndex(where: { $0.name == name }) else { return nil }
        return values[index]
    }

    func build() throws(WireError) -> Request {
        for (index, arg) in op.args.enumerated() where arg.required && values[index] == nil {
            throw .badRequest("op \"\(op.name)\" needs \"\(arg.name)\" (\(arg.type.rawValue))")
        }
        switch op.kind {
        case .ping: return .ping
        case .help: return .help
        case .list: return .list
        case .add:
            return .add(
                title: try string("title", allowEmpty: true)!, image: try string("image"),
                options: MutationOptions(key: try key()))
        case .toggleWatched:
            return .toggleWatched(movie: try string("movie")!, options: try mutationOptions())
        case .toggleWatchedWithFriends:
            return .toggleWatchedWithFriends(movie: try string("movie")!, options: try mutationOptions())
        case .remove:
            return .remove(movie: try string("movie")!, options: try mutationOptions())
        case .subscribe: return .subscribe(from: try sequence("from"))
        case .unsubscribe: return .unsubscribe
        case .history:
            let limit = try integer("limit", 1...1000) ?? 100
            return .history(from: try sequence("from") ?? 0, limit: Int(limit))
        case .viewport:
            var direction: Direction?
            if let text = try string("direction") {
                guard let d = Direction(rawValue: text) else {
                    throw .badRequest(
                        "\"direction\" must be \"ltr\" or \"rtl\", not \"\(RequestDecoder.truncated(text))\"")
                }
                direction = d
            }
            return .viewport(width: try number("width", 100...4000), direction: direction)
        case .configure:
            return .configure(
                LayoutChange(
                    leading: try actions("leading"), trailing: try actions("trailing"),
                    allowsFullSwipeLeading: try boolean("allowsFullSwipeLeading"),
                    allowsFullSwipeTrailing: try boolean("allowsFullSwipeTrailing"),
                    buttonWidth: try number("buttonWidth", 20...400)))
        case .drag:
            return .drag(movie: try string("movie")!, dx: try number("dx")!)
        case .release:
            return .release(movie: try string("movie")!, dx: try number("dx"), vx: try number("vx"))
        case .tap:
            return .tap(movie: try string("movie")!, action: try string("action")!)
        case .close: return .close(movie: try string("movie"))
        case .rows: return .rows
        }
    }

    private func mutationOptions() throws(WireError) -> MutationOptions {
        MutationOptions(expect: try sequence("expect"), key: try key())
    }

    private func key() throws(WireError) -> String? {
        guard let key = try string("key") else { return nil }
        guard key.utf8.count <= Arguments.maxKeyBytes else {
            throw .badRequest("\"key\" must be at most \(Arguments.maxKeyBytes) bytes long")
        }
        return key
    }

    private func wrongType(_ name: String, _ expected: String, _ value: JSON) -> WireError {
        .badRequest("\"\(name)\" must be \(expected), not \(value.typeName)")
    }

    func string(_ name: String, allowEmpty: Bool = false) throws(WireError) -> String? {
        guard let value = self[name] else { return nil }
        guard case .string(let text) = value else { throw wrongType(name, "a string", value) }
        if !allowEmpty && text.isEmpty { throw .badRequest("\"\(name)\" must not be empty") }
        guard text.utf8.count <= RequestDecoder.maxStringBytes else {
            throw .badRequest("\"\(name)\" must be at most \(RequestDecoder.maxStringBytes) bytes long")
        }
        return text
    }

    func boolean(_ name: String) throws(WireError) -> Bool? {
        guard let value = self[name] else { return nil }
        guard case .bool(let flag) = value else { throw wrongType(name, "true or false", value) }
        return flag
    }

    func number(_ name: String, _ range: ClosedRange<Double>? = nil) throws(WireError) -> Double? {
        guard let value = self[name] else { return nil }
        guard case .number(let number) = value else { throw wrongType(name, "a number", value) }
        let x = number.double
        // The parser already refuses non-finite literals; this bounds what the engine sees.
        guard x.magnitude <= Arguments.maxMagnitude else {
            throw .badRequest("\"\(name)\" is out of range (|\(name)| ≤ 1e9)")
        }
        if let range, !range.contains(x) {
            throw .badRequest(
                "\"\(name)\" must be from \(format(range.lowerBound)) to \(format(range.upperBound))")
        }
        return x
    }

    func integer(_ name: String, _ range: ClosedRange<Int64>) throws(WireError) -> Int64? {
        guard let value = self[name] else { return nil }
        guard case .number(let number) = value else { throw wrongType(name, "a whole number", value) }
        guard let n = number.int else { throw .badRequest("\"\(name)\" must be a whole number") }
        guard range.contains(n) else {
            throw .badRequest("\"\(name)\" must be from \(range.lowerBound) to \(range.upperBound)")
        }
        return n
    }

    /// A sequence number: a whole number ≥ 0.
    func sequence(_ name: String) throws(WireError) -> UInt64? {
        try integer(name, 0...Int64.max).map { UInt64($0) }
    }

    func actions(_ name: String) throws(WireError) -> [ActionSpec]? {
        guard let value = self[name] else { return nil }
        guard case .array(let items) = value else { throw wrongType(name, "an array of actions", value) }
        guard items.count <= RequestDecoder.maxActionsPerEdge else {
            throw .badRequest(
                "\"\(name)\" has \(items.count) actions; at most \(RequestDecoder.maxActionsPerEdge)")
        }
        var result: [ActionSpec] = []
        for (index, item) in items.enumerated() {
            let path = "\(name)[\(index)]"
            guard case .object(let object) = item else { throw wrongType(path, "an action object", item) }
            result.append(try action(object, path: path))
        }
        return result
    }

    private static let actionKeys: Set<String> = [
        "action", "label", "icon", "tint", "role", "activeLabel", "activeIcon",
    ]

    private func action(_ object: JSONObject, path: String) throws(WireError) -> ActionSpec {
        var fields: [String: String] = [:]
        for (key, value) in object.members {
            guard Arguments.actionKeys.contains(key) else {
                throw .badRequest(
                    "unknown key \"\(RequestDecoder.truncated(key))\" in \(path); an action takes action, label, icon, tint, role, activeLabel, activeIcon"
                )
            }
            guard fields[key] == nil else {
                throw .badRequest("key \"\(key)\" appears more than once in \(path)")
            }
            guard case .string(let text) = value else { throw wrongType("\(path).\(key)", "a string", value) }
            guard !text.isEmpty, text.utf8.count <= 200 else {
                throw .badRequest("\(path).\(key) must be 1 to 200 bytes long")
            }
            fields[key] = text
        }
        guard let name = fields["action"] else { throw .badRequest("\(path) needs \"action\" (string)") }
        var role: Role?
        if let text = fields["role"] {
            guard let r = Role(rawValue: text) else {
                throw .badRequest(
                    "\(path).role must be \"destructive\", not \"\(RequestDecoder.truncated(text))\"")
            }
            role = r
        }
        return ActionSpec(
            action: name, label: fields["label"], icon: fields["icon"], tint: fields["tint"],
            role: role, activeLabel: fields["activeLabel"], activeIcon: fields["activeIcon"])
    }
}

func format(_ x: Double) -> String {
    x == x.rounded() && x.magnitude < 1e15 ? String(Int64(x)) : "\(x)"
}

extension JSON {
    /// How an error message names a value's type.
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

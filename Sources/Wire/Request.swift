// A request line decoded into a typed request. Decoding is strict and says exactly what is
// wrong: unknown arguments and wrong types are named, and every value is checked against its
// declaration in the op table (Ops.swift), so the daemon only ever sees well-formed requests.
// Domain rules (a title's length in characters, whether a movie exists) stay with the domain.
import JSONCodec
import Movies
import People
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
    public var fullSwipeStyleLeading: FullSwipeStyle? = nil
    public var fullSwipeStyleTrailing: FullSwipeStyle? = nil

    /// No argument at all: back to the movie layout.
    public var isEmpty: Bool {
        leading == nil && trailing == nil && allowsFullSwipeLeading == nil
            && allowsFullSwipeTrailing == nil && buttonWidth == nil && fullSwipeStyleLeading == nil
            && fullSwipeStyleTrailing == nil
    }

    /// The layout this change makes: what is left out takes its default.
    public var layout: Layout {
        Layout(
            leading: leading ?? [], trailing: trailing ?? [],
            allowsFullSwipeLeading: allowsFullSwipeLeading ?? true,
            allowsFullSwipeTrailing: allowsFullSwipeTrailing ?? true,
            buttonWidth: buttonWidth ?? Rules.defaultButtonWidth,
            fullSwipeStyleLeading: fullSwipeStyleLeading ?? .fill,
            fullSwipeStyleTrailing: fullSwipeStyleTrailing ?? .fill)
    }
}

/// `list`'s arguments: which part of the list, which titles. All left out: the whole list.
public struct ListQuery: Equatable, Sendable {
    /// A movie id: the movies after it in list order (a removed movie's place counts).
    public var after: String?
    /// The most movies in the reply; nil: every one.
    public var limit: Int?
    /// Only movies whose title contains this, ignoring case (Movies' TitleMatch).
    public var match: String?

    public init(after: String? = nil, limit: Int? = nil, match: String? = nil) {
        self.after = after
        self.limit = limit
        self.match = match
    }

    /// The whole list.
    public static let all = ListQuery()
}

/// What a `role` request asks.
public enum RoleChange: Equatable, Sendable {
    /// Only the role given to the name now, if any.
    case ask
    /// Give the name this role.
    case give(AccessRole)
    /// Take back the role given: the door decides again.
    case takeBack
}

public enum Request: Equatable, Sendable {
    case ping
    case help
    /// An argument left out: unchanged (the reply says what the options are).
    case options(rows: RowForm?, crossings: Bool? = nil)
    case list(ListQuery)
    case add(title: String, image: String?, options: MutationOptions)
    case toggleWatched(movie: String, options: MutationOptions)
    case toggleWatchedWithFriends(movie: String, options: MutationOptions)
    case remove(movie: String, options: MutationOptions)
    case restore(movie: String, options: MutationOptions)
    /// `to`: after a movie, or first (`"after":null`).
    case move(movie: String, to: ListPlace, options: MutationOptions)
    /// `options.key` only: an undo expects nothing the client names. `seq`: the change to
    /// undo, any connection's (nil: this connection's latest not yet undone).
    case undo(options: MutationOptions, seq: UInt64?)
    case subscribe(from: UInt64?)
    case unsubscribe
    /// `by`: only that person's changes (issue 46).
    case history(from: UInt64, limit: Int, by: String? = nil)
    case viewport(width: Double?, direction: Direction?)
    case configure(LayoutChange)
    case drag(movie: String, dx: Double, dy: Double? = nil)
    case release(movie: String, dx: Double?, vx: Double?)
    case tap(movie: String, action: String)
    case open(movie: String, edge: Edge)
    case perform(movie: String, action: String)
    case peek(movie: String, edge: Edge?)
    case close(movie: String?)
    case rows
    case record(on: Bool)
    case recording
    case share(on: Bool)
    case peers(watch: Bool)
    case status
    case auth(token: String)
    case tokenCreate(name: String, role: AccessRole, expiresIn: Int64?)
    case tokenList
    case tokenRevoke(name: String, id: String?)
    case role(name: String, RoleChange)
    case denials

    /// The op this request is of: ties each case to its `OpSpec.Kind` (a switch with no
    /// `default:`, so a case added here does not compile until it names its op).
    public var kind: OpSpec.Kind {
        switch self {
        case .ping: .ping
        case .help: .help
        case .options: .options
        case .list: .list
        case .add: .add
        case .toggleWatched: .toggleWatched
        case .toggleWatchedWithFriends: .toggleWatchedWithFriends
        case .remove: .remove
        case .restore: .restore
        case .move: .move
        case .undo: .undo
        case .subscribe: .subscribe
        case .unsubscribe: .unsubscribe
        case .history: .history
        case .viewport: .viewport
        case .configure: .configure
        case .drag: .drag
        case .release: .release
        case .tap: .tap
        case .open: .open
        case .perform: .perform
        case .peek: .peek
        case .close: .close
        case .rows: .rows
        case .record: .record
        case .recording: .recording
        case .share: .share
        case .peers: .peers
        case .status: .status
        case .auth: .auth
        case .tokenCreate: .tokenCreate
        case .tokenList: .tokenList
        case .tokenRevoke: .tokenRevoke
        case .role: .role
        case .denials: .denials
        }
    }
}

/// One decoded line: the raw bytes of its `id` (echoed verbatim in the reply), the op's name
/// when there was one (for logs), and the request or the error to answer with.
public struct DecodedRequest: Sendable {
    public var id: [UInt8]?
    public var op: String?
    public var result: Result<Request, WireError>
}

public enum RequestDecoder {
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
            return DecodedRequest(id: nil, op: nil, result: .failure(badJSON(error, in: line)))
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

    /// What a `bad-json` reply says. A line that is not a JSON object from its first byte (a
    /// person typing `hello` at socat) is told what a request looks like, not only where the
    /// parser stopped; for a line that starts as an object the parser's message is the help.
    static func badJSON(_ error: JSONError, in line: UnsafeRawBufferPointer) -> WireError {
        let first = line.firstIndex { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D } ?? line.count
        guard error.code == .notAnObject || error.offset <= first else {
            return WireError(.badJSON, error.message)
        }
        return WireError(
            .badJSON,
            "a request is one JSON object per line, such as {\"op\":\"ping\"} ({\"op\":\"help\"} lists the ops); this line is not one: \(error.message)"
        )
    }

    /// The `id`'s bytes as sent, less the whitespace between its tokens: numbers and strings stay
    /// exactly as written (`1.50`, `"\u00e9"`), and a reply line stays compact, with no tab or
    /// carriage return from the request in it. `raw` is one valid JSON value.
    static func compact(_ raw: UnsafeRawBufferPointer) -> [UInt8] {
        var out: [UInt8] = []
        compact(raw, into: &out)
        return out
    }

    /// `compact(raw)`, appended to `out`.
    static func compact(_ raw: UnsafeRawBufferPointer, into out: inout [UInt8]) {
        out.reserveCapacity(out.count + raw.count)
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
    }

    /// Echoes of client text in messages stay short (the one rule: Movies' MessageText).
    public static func truncated(_ text: String) -> String { MessageText.truncated(text) }
}

/// The arguments of one request, checked against its op's table entry: `values[i]` is the
/// value given for `op.args[i]` (an array, not a dictionary: an op takes at most five). Every
/// type, range and default comes from the table (Ops.swift); nothing is written here twice.
struct Arguments {
    let op: OpSpec
    var values: [JSON?]

    init(op: OpSpec) {
        self.op = op
        values = Array(repeating: nil, count: op.args.count)
    }

    /// The declaration of the argument `name`, and the value given for it.
    subscript(name: String) -> (spec: ArgSpec, value: JSON?) {
        guard let index = op.args.firstIndex(where: { $0.name == name }) else {
            preconditionFailure("op \(op.name) declares no argument \(name)")
        }
        return (op.args[index], values[index])
    }

    func build() throws(WireError) -> Request {
        for (index, arg) in op.args.enumerated() where arg.required && values[index] == nil {
            throw .badRequest(
                "op \"\(op.name)\" needs \"\(arg.name)\" (\(arg.type.name)\(arg.nullable ? " or null" : ""))")
        }
        switch op.kind {
        case .ping: return .ping
        case .help: return .help
        case .options:
            return .options(
                rows: try string("rows").map { RowForm(rawValue: $0)! }, crossings: try boolean("crossings"))
        case .list:
            return .list(
                ListQuery(
                    after: try string("after"), limit: try integer("limit").map { Int($0) },
                    match: try string("match")))
        case .add:
            return .add(
                title: try string("title")!, image: try string("image"),
                options: MutationOptions(key: try string("key")))
        case .toggleWatched:
            return .toggleWatched(movie: try string("movie")!, options: try mutationOptions())
        case .toggleWatchedWithFriends:
            return .toggleWatchedWithFriends(movie: try string("movie")!, options: try mutationOptions())
        case .remove:
            return .remove(movie: try string("movie")!, options: try mutationOptions())
        case .subscribe: return .subscribe(from: try integer("from").map { UInt64($0) })
        case .unsubscribe: return .unsubscribe
        case .history:
            let by = try string("by")
            if let by, let problem = PersonName.problem(by) { throw .badRequest("\"by\": \(problem)") }
            return .history(from: UInt64(try integer("from")!), limit: Int(try integer("limit")!), by: by)
        case .viewport:
            return .viewport(
                width: try number("width"),
                direction: try string("direction").map { Direction(rawValue: $0)! })
        case .configure:
            return .configure(
                LayoutChange(
                    leading: try actions("leading"), trailing: try actions("trailing"),
                    allowsFullSwipeLeading: try boolean("allowsFullSwipeLeading"),
                    allowsFullSwipeTrailing: try boolean("allowsFullSwipeTrailing"),
                    buttonWidth: try number("buttonWidth"),
                    fullSwipeStyleLeading: try string("fullSwipeStyleLeading").map {
                        FullSwipeStyle(rawValue: $0)!
                    },
                    fullSwipeStyleTrailing: try string("fullSwipeStyleTrailing").map {
                        FullSwipeStyle(rawValue: $0)!
                    }))
        case .drag:
            return .drag(movie: try string("movie")!, dx: try number("dx")!, dy: try number("dy"))
        case .release:
            return .release(movie: try string("movie")!, dx: try number("dx"), vx: try number("vx"))
        case .tap:
            return .tap(movie: try string("movie")!, action: try string("action")!)
        case .open:
            return .open(movie: try string("movie")!, edge: Edge(rawValue: try string("edge")!)!)
        case .perform:
            return .perform(movie: try string("movie")!, action: try string("action")!)
        case .peek:
            return .peek(movie: try string("movie")!, edge: try string("edge").map { Edge(rawValue: $0)! })
        case .close: return .close(movie: try string("movie"))
        case .rows: return .rows
        case .restore: return .restore(movie: try string("movie")!, options: try mutationOptions())
        case .move:
            // Required and nullable: null is the first place, not an argument left out.
            let after: String? = if case .null? = self["after"].value { nil } else { try string("after")! }
            return .move(
                movie: try string("movie")!, to: ListPlace(after: after), options: try mutationOptions())
        case .undo:
            return .undo(
                options: MutationOptions(key: try string("key")), seq: try integer("seq").map { UInt64($0) })
        case .record: return .record(on: try boolean("on")!)
        case .recording: return .recording
        case .share: return .share(on: try boolean("on")!)
        case .peers: return .peers(watch: try boolean("watch")!)
        case .status: return .status
        case .auth: return .auth(token: try string("token")!)
        case .tokenCreate:
            return .tokenCreate(
                name: try personName(), role: AccessRole(rawValue: try string("role")!)!,
                expiresIn: try integer("expiresIn"))
        case .tokenList: return .tokenList
        case .tokenRevoke: return .tokenRevoke(name: try personName(), id: try string("tokenId"))
        case .role:
            let name = try personName()
            let given = self["role"].value
            if given == nil { return .role(name: name, .ask) }
            if case .null? = given { return .role(name: name, .takeBack) }
            return .role(name: name, .give(AccessRole(rawValue: try string("role")!)!))
        case .denials: return .denials
        }
    }

    /// `name`, checked as a person's name (People's `PersonName`).
    private func personName() throws(WireError) -> String {
        let name = try string("name")!
        if let problem = PersonName.problem(name) { throw .badRequest("\"name\": \(problem)") }
        return name
    }

    private func mutationOptions() throws(WireError) -> MutationOptions {
        MutationOptions(expect: try integer("expect").map { UInt64($0) }, key: try string("key"))
    }

    private static func wrongType(_ name: String, _ expected: String, _ value: JSON) -> WireError {
        .badRequest("\"\(name)\" must be \(expected), not \(value.typeName)")
    }

    /// A string argument, or a string field of an action at `path`: its declared length and values.
    static func check(_ spec: ArgSpec, _ value: JSON, path: String) throws(WireError) -> String {
        guard case .string(let bytes, let values) = spec.type else {
            preconditionFailure("\(path) is not a string")
        }
        guard case .string(let text) = value else { throw wrongType(path, "a string", value) }
        if let bytes, !bytes.contains(text.utf8.count) {
            throw .badRequest(
                bytes.lowerBound == 0
                    ? "\"\(path)\" must be at most \(bytes.upperBound) bytes long"
                    : "\"\(path)\" must be \(bytes.lowerBound) to \(bytes.upperBound) bytes long")
        }
        if let values, !values.contains(text) {
            let allowed = values.map { "\"\($0)\"" }.joined(separator: " or ")
            throw .badRequest("\"\(path)\" must be \(allowed), not \"\(RequestDecoder.truncated(text))\"")
        }
        return text
    }

    func string(_ name: String) throws(WireError) -> String? {
        let (spec, value) = self[name]
        guard let value else { return nil }
        return try Arguments.check(spec, value, path: name)
    }

    func boolean(_ name: String) throws(WireError) -> Bool? {
        guard let value = self[name].value else { return nil }
        guard case .bool(let flag) = value else { throw Arguments.wrongType(name, "true or false", value) }
        return flag
    }

    func number(_ name: String) throws(WireError) -> Double? {
        let (spec, value) = self[name]
        guard let value else { return nil }
        guard case .number(let number) = value else { throw Arguments.wrongType(name, "a number", value) }
        let x = number.double
        if !spec.admits(x), let bounds = spec.numberBounds {
            throw .badRequest("\"\(name)\" must be \(bounds)")
        }
        return x
    }

    /// A whole number within its declared bounds; its declared default when left out.
    func integer(_ name: String) throws(WireError) -> Int64? {
        let (spec, given) = self[name]
        guard let value = given ?? spec.defaultValue else { return nil }
        guard case .number(let number) = value else {
            throw Arguments.wrongType(name, "a whole number", value)
        }
        guard let n = number.int, spec.admits(n) else {
            throw .badRequest("\"\(name)\" must be a whole number\(spec.integerBounds)")
        }
        return n
    }

    func actions(_ name: String) throws(WireError) -> [ActionSpec]? {
        let (spec, value) = self[name]
        guard case .actions(let maxItems) = spec.type else { preconditionFailure("\(name) is not actions") }
        guard let value else { return nil }
        guard case .array(let items) = value else {
            throw Arguments.wrongType(name, "an array of actions", value)
        }
        guard items.count <= maxItems else {
            throw .badRequest("\"\(name)\" has \(items.count) actions; at most \(maxItems)")
        }
        var result: [ActionSpec] = []
        for (index, item) in items.enumerated() {
            let path = "\(name)[\(index)]"
            guard case .object(let object) = item else {
                throw Arguments.wrongType(path, "an action object", item)
            }
            result.append(try Arguments.action(object, path: path))
        }
        return result
    }

    /// An action object, checked against `Schema.action`'s fields.
    private static func action(_ object: JSONObject, path: String) throws(WireError) -> ActionSpec {
        let declared = Schema.action.fields
        var fields: [String: String] = [:]
        var flags: [String: Bool] = [:]
        for (key, value) in object.members {
            guard let spec = declared.first(where: { $0.name == key }) else {
                let known = declared.map(\.name).joined(separator: ", ")
                throw .badRequest(
                    "unknown key \"\(RequestDecoder.truncated(key))\" in \(path); an action takes \(known)")
            }
            guard fields[key] == nil && flags[key] == nil else {
                throw .badRequest("key \"\(key)\" appears more than once in \(path)")
            }
            if case .boolean = spec.type {
                guard case .bool(let flag) = value else {
                    throw wrongType("\(path).\(key)", "true or false", value)
                }
                flags[key] = flag
            } else {
                fields[key] = try check(spec, value, path: "\(path).\(key)")
            }
        }
        for spec in declared where spec.required && fields[spec.name] == nil {
            throw .badRequest("\(path) needs \"\(spec.name)\" (\(spec.type.name))")
        }
        return ActionSpec(
            action: fields["action"]!, label: fields["label"], icon: fields["icon"], tint: fields["tint"],
            role: fields["role"].map { Role(rawValue: $0)! }, activeLabel: fields["activeLabel"],
            activeIcon: fields["activeIcon"], confirm: flags["confirm"] ?? false,
            confirmLabel: fields["confirmLabel"])
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

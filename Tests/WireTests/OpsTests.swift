// The op table is the one declaration of every argument (Ops.swift): the decoder's checks are
// made from it. For every argument with a bound, a value at the bound is accepted and a value
// just outside is refused with a message that quotes the declared bounds; wherever the fast
// path answers such a line, it answers as the full decoder does.
import JSONCodec
import XCTest

@testable import Wire

final class OpsTests: XCTestCase {
    /// A value `spec` accepts, as JSON text.
    static func valid(_ spec: ArgSpec) -> String {
        switch spec.type {
        case .string(_, let values?): "\"\(values[0])\""
        case .string: "\"m\""
        case .integer(let min, _): "\(min ?? 0)"
        case .number(let range): json(range?.lowerBound ?? 0)
        case .boolean: "true"
        case .actions: "[]"
        case .any, .object, .array: "null"
        }
    }

    static func json(_ x: Double) -> String {
        var out = JSONWriter()
        out.double(x)
        return String(decoding: out.bytes, as: UTF8.self)
    }

    /// `{"op":…}` with every required argument valid, and `name` set to `value`.
    static func line(_ op: OpSpec, _ name: String, _ value: String) -> String {
        var members = [#""op":"\#(op.name)""#]
        for arg in op.args where arg.required && arg.name != name {
            members.append(#""\#(arg.name)":\#(valid(arg))"#)
        }
        members.append(#""\#(name)":\#(value)"#)
        return "{" + members.joined(separator: ",") + "}"
    }

    /// Decodes `line` with the full decoder, checking that the fast path agrees where it answers.
    func decode(_ line: String, file: StaticString = #filePath, line number: UInt = #line) -> DecodedRequest {
        var text = line
        return text.withUTF8 { bytes in
            let raw = UnsafeRawBufferPointer(bytes)
            let full = RequestDecoder.decodeFull(raw)
            if let fast = RequestDecoder.decodeFast(raw) {
                XCTAssertEqual(fast.result, full.result, "fast path on \(line)", file: file, line: number)
            }
            return full
        }
    }

    func accepted(_ line: String, file: StaticString = #filePath, line number: UInt = #line) {
        if case .failure(let error) = decode(line).result {
            XCTFail("\(line) refused: \(error.message)", file: file, line: number)
        }
    }

    func refused(
        _ line: String, quoting words: [String], file: StaticString = #filePath, line number: UInt = #line
    ) {
        guard case .failure(let error) = decode(line).result else {
            return XCTFail("\(line) accepted", file: file, line: number)
        }
        XCTAssertEqual(error.code, .badRequest, line, file: file, line: number)
        for word in words {
            XCTAssertTrue(
                error.message.contains(word), "\(line): \"\(error.message)\" does not say \(word)",
                file: file,
                line: number)
        }
    }

    func testEveryDeclaredBoundIsTheDecodersBound() {
        var checked = 0
        for op in Ops.all {
            for arg in op.args {
                let line = { (value: String) in Self.line(op, arg.name, value) }
                switch arg.type {
                case .number(let range?):
                    accepted(line(Self.json(range.lowerBound)))
                    accepted(line(Self.json(range.upperBound)))
                    let bounds = [OpsTests.json(range.lowerBound), OpsTests.json(range.upperBound), arg.name]
                    refused(line(Self.json(range.lowerBound.nextDown)), quoting: bounds)
                    refused(line(Self.json(range.upperBound.nextUp)), quoting: bounds)
                    checked += 1
                case .integer(let min, let max):
                    if let min {
                        accepted(line("\(min)"))
                        refused(line("\(min - 1)"), quoting: ["\(min)", arg.name])
                    }
                    if let max {
                        accepted(line("\(max)"))
                        refused(line("\(max + 1)"), quoting: ["\(max)", arg.name])
                    }
                    checked += 1
                case .string(let bytes, let values):
                    if let bytes {
                        let text = { (count: Int) in "\"" + String(repeating: "s", count: count) + "\"" }
                        accepted(line(text(bytes.upperBound)))
                        refused(line(text(bytes.upperBound + 1)), quoting: ["\(bytes.upperBound)", arg.name])
                        if bytes.lowerBound > 0 {
                            accepted(line(text(bytes.lowerBound)))
                            refused(
                                line(text(bytes.lowerBound - 1)),
                                quoting: ["\(bytes.lowerBound) to \(bytes.upperBound)", arg.name])
                        }
                    }
                    for value in values ?? [] { accepted(line("\"\(value)\"")) }
                    if let values { refused(line(#""xyz""#), quoting: values.map { "\"\($0)\"" }) }
                    checked += 1
                case .actions(let maxItems):
                    let actions = { (count: Int) in
                        "[" + (0..<count).map { #"{"action":"a\#($0)"}"# }.joined(separator: ",") + "]"
                    }
                    accepted(line(actions(maxItems)))
                    refused(line(actions(maxItems + 1)), quoting: ["at most \(maxItems)", arg.name])
                    checked += 1
                case .boolean, .any, .object, .array, .number(nil):
                    continue
                }
            }
        }
        XCTAssertGreaterThanOrEqual(checked, 20)
    }

    /// The op list is `OpSpec.Kind`: the table declares every kind, in that order, under its
    /// name, and a request of each kind decodes (from its required arguments alone) to a
    /// `Request` of that kind, whichever decoder takes it.
    func testEveryKindIsDeclaredAndDecodesToARequestOfItsKind() {
        XCTAssertEqual(Ops.all.map(\.kind), OpSpec.Kind.allCases)
        for kind in OpSpec.Kind.allCases {
            let op = Ops.spec(kind)
            XCTAssertEqual(op.name, kind.rawValue)
            XCTAssertIdentical(Ops.named(kind.rawValue), op)
            let members =
                [#""op":"\#(op.name)""#]
                + op.args.filter(\.required).map { #""\#($0.name)":\#(Self.valid($0))"# }
            let line = "{" + members.joined(separator: ",") + "}"
            guard case .success(let request) = decode(line).result else {
                XCTFail("\(line) refused")
                continue
            }
            XCTAssertEqual(request.kind, kind, line)
        }
    }

    /// The fields of a configure action: lengths and values from `Schema.action`.
    func testEveryActionFieldBoundIsTheDecodersBound() {
        let configure = Ops.spec(.configure)
        for field in Schema.action.fields {
            if case .boolean = field.type {
                let line = Self.line(configure, "leading", #"[{"action":"a","\#(field.name)":true}]"#)
                accepted(line)
                refused(
                    Self.line(configure, "leading", #"[{"action":"a","\#(field.name)":"yes"}]"#),
                    quoting: ["leading[0].\(field.name)", "true or false"])
                continue
            }
            guard case .string(let bytes?, let values) = field.type else { return XCTFail("\(field.name)") }
            func line(_ value: String) -> String {
                let action = field.name == "action" ? "" : #""action":"a","#
                return Self.line(configure, "leading", #"[{\#(action)"\#(field.name)":\#(value)}]"#)
            }
            if let values {
                for value in values { accepted(line("\"\(value)\"")) }
                refused(line(#""xyz""#), quoting: values.map { "\"\($0)\"" })
            } else {
                accepted(line("\"" + String(repeating: "s", count: bytes.upperBound) + "\""))
            }
            refused(
                line("\"" + String(repeating: "s", count: bytes.upperBound + 1) + "\""),
                quoting: ["\(bytes.lowerBound) to \(bytes.upperBound)", field.name])
            refused(line(#""""#), quoting: ["\(bytes.lowerBound) to \(bytes.upperBound)", field.name])
        }
        let required = Schema.action.fields.filter(\.required).map(\.name)
        XCTAssertEqual(required, ["action"])
        refused(Self.line(configure, "leading", #"[{"label":"L"}]"#), quoting: ["needs \"action\""])
    }

    /// The fast path takes the same limits as the table, from the same constants.
    func testTheFastPathsLimitsAreTheTables() {
        for kind: OpSpec.Kind in [
            .drag, .release, .tap, .close, .toggleWatched, .toggleWatchedWithFriends, .remove,
        ] {
            for arg in Ops.spec(kind).args {
                switch (arg.name, arg.type) {
                case ("movie", .string(let bytes, nil)), ("action", .string(let bytes, nil)):
                    XCTAssertEqual(bytes, Limits.stringBytes, "\(kind).\(arg.name)")
                case ("key", .string(let bytes, nil)): XCTAssertEqual(bytes, Limits.keyBytes)
                case ("dx", .number(let range)), ("vx", .number(let range)), ("dy", .number(let range)):
                    XCTAssertEqual(range, Limits.number)
                case ("expect", .integer(let min, let max)): XCTAssertTrue(min == 0 && max == nil)
                default: XCTFail("\(kind).\(arg.name) is not an argument the fast path knows")
                }
            }
        }
    }

    /// Defaults the decoder applies are the declared ones.
    func testHistoryTakesItsDeclaredDefaults() {
        let history = Ops.spec(.history).args
        XCTAssertEqual(history.map(\.defaultValue), [0, 100, nil])
        guard case .success(.history(let from, let limit, let by)) = decode(#"{"op":"history"}"#).result
        else {
            return XCTFail("history refused")
        }
        XCTAssertEqual(from, 0)
        XCTAssertEqual(limit, 100)
        XCTAssertNil(by)
        guard case .success(.history(_, _, "alice")) = decode(#"{"op":"history","by":"alice"}"#).result else {
            return XCTFail("history by refused")
        }
        guard case .failure(let e) = decode(#"{"op":"history","by":"a b"}"#).result else {
            return XCTFail("a name with a space accepted")
        }
        XCTAssertTrue(e.message.contains("\"by\""), e.message)
    }
}

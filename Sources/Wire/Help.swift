// The `help` reply: protocol 1 as declared in the op table (Ops.swift) and the schema
// (Schema.swift), one JSON line a client can generate its bindings from. protocol.md ("help")
// documents its shape. The bytes are made once: the declaration does not change while the
// daemon runs.
import JSONCodec
import Movies

extension Encode {
    public static func help(_ out: inout JSONWriter, id: [UInt8]?) {
        begin(&out, id: id, ok: true)
        out.bytes.append(contentsOf: Help.body)
        end(&out)
    }
}

enum Help {
    /// `,"protocol":1,"ops":[…],"objects":[…],"errors":[…],"events":[…]`: the reply after `ok`.
    static let body: [UInt8] = {
        var out = JSONWriter(capacity: 16_384)
        out.literal(#","protocol":"#)
        out.int(protocolVersion)
        out.literal(#","ops":"#)
        list(&out, Ops.all) { out, op in
            out.field("op", op.name)
            out.field("scope", op.scope.rawValue)
            out.field("mutates", op.mutates)
            out.field("needs", op.needs.rawValue)
            out.field("summary", op.summary)
            out.key("args")
            list(&out, op.args, arg)
        }
        out.literal(#","objects":"#)
        list(&out, Schema.objects) { out, object in
            out.field("object", object.name)
            out.field("summary", object.summary)
            out.key("fields")
            list(&out, object.fields, arg)
        }
        out.literal(#","errors":"#)
        list(&out, ErrorCode.allCases) { out, code in
            out.field("code", code.rawValue)
            out.field("summary", code.summary)
            if code == .conflict {
                out.key("reasons")
                list(&out, ConflictReason.allCases) { out, reason in
                    out.field("reason", reason.name)
                    out.field("summary", reason.summary)
                }
            }
        }
        out.literal(#","events":"#)
        list(&out, Schema.events) { out, event in
            out.field("event", event.name)
            out.field("to", event.to)
            out.field("summary", event.summary)
            out.key("fields")
            list(&out, event.fields, arg)
            if !event.reasons.isEmpty {
                out.key("reasons")
                list(&out, event.reasons) { out, reason in
                    out.field("reason", reason.rawValue)
                    out.field("summary", reason.summary)
                }
            }
        }
        return out.bytes
    }()

    /// `[{…},{…}]`, each object's members written by `members`.
    static func list<T>(_ out: inout JSONWriter, _ items: [T], _ members: (inout JSONWriter, T) -> Void) {
        out.array { out in
            for item in items { out.object { members(&$0, item) } }
        }
    }

    /// An argument or a field: name, type (and items), required, nullable, bounds, values,
    /// default, summary; a member is left out when it says nothing.
    static func arg(_ out: inout JSONWriter, _ arg: ArgSpec) {
        out.field("name", arg.name)
        out.field("type", arg.type.name)
        switch arg.type {
        case .actions: out.field("items", Schema.action.name)
        case .array(let of): out.field("items", of)
        case .string, .integer, .number, .boolean, .any, .object: break
        }
        out.field("required", arg.required)
        if arg.nullable { out.field("nullable", true) }
        switch arg.type {
        case .string(let bytes, let values):
            if let bytes {
                out.field("minBytes", bytes.lowerBound)
                out.field("maxBytes", bytes.upperBound)
            }
            if let values {
                out.key("values")
                out.array { out in values.forEach { out.string($0) } }
            }
        case .integer(let min, let max):
            if let min { out.field("min", min) }
            if let max { out.field("max", max) }
        case .number(let range):
            if let range {
                out.field("min", range.lowerBound)
                out.field("max", range.upperBound)
            }
        case .actions(let maxItems): out.field("maxItems", maxItems)
        case .boolean, .any, .object, .array: break
        }
        if let value = arg.defaultValue { out.field("default", value) }
        out.field("summary", arg.summary)
    }
}

// help: the daemon's own description of protocol 1 (the `help` op, protocol.md "The help
// reply"), for a terminal: the ops grouped by scope with their arguments' types, ranges and
// defaults, then the error codes and the events.
import JSONCodec
import SwipedClient
import Wire

enum DaemonHelp {
    static func run(_ conversation: Conversation) throws(Failure) {
        let reply = try conversation.request("help")
        if conversation.json { return }
        guard case .array(let items)? = reply["ops"] else {
            throw conversation.lost(ClientError(.protocol, "help reply without ops"))
        }
        let ops = items.compactMap(\.objectValue)
        let objects = entries(reply, "objects")
        let hello = conversation.client.hello
        var text = "\(hello.server) at \(conversation.socket.path), protocol \(reply.uint("protocol") ?? 0)"
        text +=
            hello.writer
            ? "; this client may change the movies.\n" : "; this client may only read and swipe.\n"
        text += "Send any op with: swipectl call '{\"op\":\"NAME\", ARG: VALUE, ...}'\n"
        text += opsText(ops, objects: objects)
        text += "\nErrors (\"code\" of a failed reply):\n"
        let errors = entries(reply, "errors")
        let codeWidth = errors.map { ($0.string("code") ?? "").count }.max() ?? 0
        for error in errors {
            text +=
                "  " + pad(error.string("code") ?? "?", codeWidth) + "  " + (error.string("summary") ?? "")
                + "\n"
        }
        text += "\nEvents (sent by the daemon on its own):\n"
        for event in entries(reply, "events") {
            let reasons = (event["reasons"]?.arrayValue ?? []).compactMap { $0.objectValue?.string("reason") }
            let name =
                (event.string("event") ?? "?")
                + (reasons.isEmpty ? "" : " (\(reasons.joined(separator: ", ")))")
            text += "  \(name), to \(event.string("to") ?? "?"): \(event.string("summary") ?? "")\n"
        }
        Output.out(text)
    }

    /// The ops by scope, each with its arguments.
    private static func opsText(_ ops: [JSONObject], objects: [JSONObject]) -> String {
        var text = ""
        let opWidth = ops.map { ($0.string("op") ?? "").count }.max() ?? 0
        let arguments = ops.flatMap { $0["args"]?.arrayValue ?? [] }.compactMap(\.objectValue)
        let nameWidth = arguments.map { ($0.string("name") ?? "").count }.max() ?? 0
        let typeWidth = arguments.map { ($0.string("type") ?? "").count }.max() ?? 0
        let scopes = [
            ("session", "The connection"), ("state", "The shared movie list"),
            ("swipe", "This connection's swipe engine"),
        ]
        for (scope, heading) in scopes {
            let group = ops.filter { $0.string("scope") == scope }
            if group.isEmpty { continue }
            text += "\n\(heading):\n"
            for op in group {
                let name = op.string("op") ?? "?"
                // What the op does to the movies, and the role it needs when a reader's is not
                // enough (protocol.md, "Who may do what": the op table's `needs`).
                var notes: [String] = []
                if op.bool("mutates") == true { notes.append("changes the movies") }
                if let needs = op.string("needs"), needs == "writer" || needs == "admin" {
                    notes.append("needs the role \(needs)")
                }
                let said = notes.isEmpty ? "" : " (" + notes.joined(separator: "; ") + ")"
                text += "  " + pad(name, opWidth) + "  " + (op.string("summary") ?? "") + said + "\n"
                for argument in (op["args"]?.arrayValue ?? []).compactMap(\.objectValue) {
                    let required = argument.bool("required") == true ? "required" : "optional"
                    text +=
                        "      " + pad(argument.string("name") ?? "?", nameWidth) + "  "
                        + pad(argument.string("type") ?? "?", typeWidth) + "  " + required + "  "
                        + describe(argument) + "\n"
                    if let items = argument.string("items"),
                        let object = objects.first(where: { $0.string("object") == items })
                    {
                        let fields = (object["fields"]?.arrayValue ?? []).compactMap(\.objectValue)
                        text += "      " + pad("", nameWidth) + "  each \(items): "
                        text += fields.map(field).joined(separator: ", ") + "\n"
                    }
                }
            }
        }
        let known = Set(scopes.map(\.0))
        for op in ops where !known.contains(op.string("scope") ?? "") {
            text += "  \(op.string("op") ?? "?")  \(op.string("summary") ?? "")\n"
        }
        return text
    }

    /// An argument's summary, then its range, values and default.
    static func describe(_ argument: JSONObject) -> String {
        var notes: [String] = []
        if let range = bounds(argument) { notes.append(range) }
        if let values = argument["values"]?.arrayValue?.compactMap(\.stringValue) {
            notes.append(values.joined(separator: " or "))
        }
        if let value = argument["default"] { notes.append("default " + text(value)) }
        let summary = argument.string("summary") ?? ""
        return notes.isEmpty ? summary : summary + " [" + notes.joined(separator: "; ") + "]"
    }

    /// `from 1 to 1000`, `≥ 0`, `1 to 1024 bytes`, `at most 8`; nil when unbounded.
    static func bounds(_ argument: JSONObject) -> String? {
        let min = argument["min"].map(text)
        let max = argument["max"].map(text)
        if let min, let max { return "\(min) to \(max)" }
        if let min { return "≥ \(min)" }
        if let max { return "≤ \(max)" }
        if let low = argument.uint("minBytes"), let high = argument.uint("maxBytes") {
            return low == 0 ? "at most \(high) bytes" : "\(low) to \(high) bytes"
        }
        if let most = argument.uint("maxItems") { return "at most \(most)" }
        return nil
    }

    /// An object's field, short: `action (required)`, `role (destructive)`.
    static func field(_ field: JSONObject) -> String {
        var notes: [String] = []
        if field.bool("required") == true { notes.append("required") }
        if let values = field["values"]?.arrayValue?.compactMap(\.stringValue) {
            notes.append(values.joined(separator: " or "))
        } else if let range = bounds(field) {
            notes.append(range)
        }
        let name = field.string("name") ?? "?"
        return notes.isEmpty ? name : name + " (" + notes.joined(separator: "; ") + ")"
    }

    private static func text(_ value: JSON) -> String {
        var out = JSONWriter()
        out.value(value)
        return String(decoding: out.bytes, as: UTF8.self)
    }

    private static func entries(_ reply: JSONObject, _ key: String) -> [JSONObject] {
        (reply[key]?.arrayValue ?? []).compactMap(\.objectValue)
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - text.count))
    }
}

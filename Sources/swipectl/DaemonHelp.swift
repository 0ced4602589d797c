// help: the daemon's own table of ops (the `help` op), grouped by scope, for a terminal.
import JSONCodec
import SwipedClient
import Wire

enum DaemonHelp {
    static func run(_ session: Session) throws(Failure) {
        let reply = try session.request("help")
        if session.json { return }
        guard case .array(let items)? = reply["ops"] else {
            throw session.lost(ClientError(.protocol, "help reply without ops"))
        }
        let ops = items.compactMap(\.objectValue)
        let hello = session.client.hello
        var text = "\(hello.server) at \(session.socket.path), protocol \(reply.uint("protocol") ?? 0)"
        text +=
            hello.writer
            ? "; this client may change the movies.\n" : "; this client may only read and swipe.\n"
        text += "Send any op with: swipectl call '{\"op\":\"NAME\", ARG: VALUE, ...}'\n"

        let opWidth = ops.map { ($0.string("op") ?? "").count }.max() ?? 0
        let arguments = ops.flatMap { $0["args"]?.arrayValue ?? [] }.compactMap(\.objectValue)
        let nameWidth = arguments.map { ($0.string("name") ?? "").count }.max() ?? 0
        let typeWidth = arguments.map { ($0.string("type") ?? "").count }.max() ?? 0
        for (scope, heading) in [
            ("session", "The connection"), ("state", "The shared movie list"),
            ("swipe", "This connection's swipe engine"),
        ] {
            let group = ops.filter { $0.string("scope") == scope }
            if group.isEmpty { continue }
            text += "\n\(heading):\n"
            for op in group {
                let name = op.string("op") ?? "?"
                let writes = op.bool("mutates") == true ? " (changes the movies)" : ""
                text += "  " + pad(name, opWidth) + "  " + (op.string("summary") ?? "") + writes + "\n"
                for argument in (op["args"]?.arrayValue ?? []).compactMap(\.objectValue) {
                    let required = argument.bool("required") == true ? "required" : "optional"
                    text +=
                        "      " + pad(argument.string("name") ?? "?", nameWidth) + "  "
                        + pad(argument.string("type") ?? "?", typeWidth) + "  " + required + "  "
                        + (argument.string("summary") ?? "") + "\n"
                }
            }
        }
        let known = Set(["session", "state", "swipe"])
        for op in ops where !known.contains(op.string("scope") ?? "") {
            text += "  \(op.string("op") ?? "?")  \(op.string("summary") ?? "")\n"
        }
        Output.out(text)
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - text.count))
    }
}

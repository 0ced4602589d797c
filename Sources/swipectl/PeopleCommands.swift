// The commands on people (issue 45; protocol.md, "Who may do what"): tokens made, listed and
// revoked, roles given and taken back, the latest refusals, and who this connection is. Each is
// one op; what it prints is worded by the pure functions at the end, which its tests call.
import JSONCodec
import People
import SwipedClient

#if canImport(Glibc)
    import Glibc
#endif

enum PeopleCommands {
    /// `token create`: the token alone on stdout's last line (so that `| tail -1` or `> FILE`
    /// takes it), and for whom, its role, id and expiry on stderr above it, where a person sees
    /// them and a file or a pipe does not get them.
    static func tokenCreate(_ conversation: Conversation, name: String, role: AccessRole, expiresIn: Int64?)
        throws(Failure)
    {
        var arguments: [(String, JSON)] = [("name", .string(name)), ("role", .string(role.rawValue))]
        if let expiresIn { arguments.append(("expiresIn", .number(JSONNumber(expiresIn)))) }
        let reply = try conversation.request("token-create", arguments)
        if conversation.json { return }
        guard let token = reply.string("token") else {
            throw conversation.lost(ClientError(.protocol, "token-create reply without token"))
        }
        Output.error(created(reply, expiresIn: expiresIn, terminal: Output.isTerminal))
        Output.out(token + "\n")
    }

    static func tokenList(_ conversation: Conversation) throws(Failure) {
        let reply = try conversation.request("token-list")
        if conversation.json { return }
        Output.out(tokensText(objects(reply, "tokens"), now: now(), terminal: Output.isTerminal))
    }

    static func tokenRevoke(_ conversation: Conversation, name: String, id: String?) throws(Failure) {
        var arguments: [(String, JSON)] = [("name", .string(name))]
        if let id { arguments.append(("tokenId", .string(id))) }
        let reply = try conversation.request("token-revoke", arguments)
        if conversation.json { return }
        let count = reply.uint("revoked") ?? 0
        Output.out(revokedText(name: name, id: id, count: count))
    }

    static func role(_ conversation: Conversation, name: String, _ change: RoleChange) throws(Failure) {
        var arguments: [(String, JSON)] = [("name", .string(name))]
        switch change {
        case .ask: break
        case .give(let role): arguments.append(("role", .string(role.rawValue)))
        case .clear: arguments.append(("role", .null))
        }
        let reply = try conversation.request("role", arguments)
        if conversation.json { return }
        Output.out(roleText(name: name, reply.string("role").flatMap(AccessRole.init(rawValue:)), change))
    }

    static func denials(_ conversation: Conversation) throws(Failure) {
        let reply = try conversation.request("denials")
        if conversation.json { return }
        Output.out(denialsText(objects(reply, "denials"), terminal: Output.isTerminal))
    }

    /// Who the connection is: the sign-in's reply when there was one, else its hello. With
    /// --json, that line as it came: either has `user` and `role`.
    static func whoami(_ conversation: Conversation) throws(Failure) {
        let client = conversation.client
        if conversation.json {
            return Output.out((client.signInLine ?? client.helloLine) + "\n")
        }
        let hello = client.hello
        let role = hello.role ?? (hello.writer ? "writer" : "reader")
        let by =
            conversation.token.map { "a token (\($0.origin))" }
            ?? "the Unix socket \(conversation.socket.path), as uid \(getuid())"
        Output.out(whoamiText(user: hello.user, role: role, by: by))
    }

    // MARK: - Words

    /// Who a connection is, as messages say it: `alice (writer)`, `anonymous (reader)`.
    static func who(_ user: String?, _ role: String) -> String {
        "\(user.map(TerminalText.escaped) ?? "anonymous") (\(role))"
    }

    /// What a role may do, in words.
    static func rights(_ role: String) -> String {
        switch AccessRole(rawValue: role) {
        case .none?: "may do nothing but ping, help and sign in"
        case .reader?: "may read and swipe"
        case .writer?: "may read, swipe and change the list"
        case .admin?: "may read, swipe, change the list, and manage tokens and roles"
        case nil: "a role this swipectl does not know"
        }
    }

    /// `token create`'s lines for stderr: for whom, the role, the id and the expiry, and where
    /// the token went.
    static func created(_ reply: JSONObject, expiresIn: Int64?, terminal: Bool) -> String {
        let name = TerminalText.escaped(reply.string("name") ?? "?")
        let expires =
            reply.string("expires").map {
                "expires \(History.time($0))\(expiresIn.map { " (in \(span($0)))" } ?? "")"
            }
            ?? "never expires"
        let said =
            "a token for \(name), role \(reply.string("role") ?? "?"), tokenId \(reply.string("tokenId") ?? "?"), \(expires)."
        return said + "\n"
            + (terminal
                ? "it is shown this once (the daemon keeps only its hash); it is the next line:"
                : "the token went to standard output, this once (the daemon keeps only its hash).")
    }

    /// `seconds` in the largest unit that divides it: "30 days", "12 hours", "90 minutes".
    static func span(_ seconds: Int64) -> String {
        let units: [(Int64, String)] = [(86_400, "day"), (3600, "hour"), (60, "minute"), (1, "second")]
        let (size, unit) = units.first { seconds % $0.0 == 0 }!
        let n = seconds / size
        return "\(n) \(unit)\(n == 1 ? "" : "s")"
    }

    /// `token list`'s table, oldest first as the daemon lists them. A time the daemon does not
    /// give is "never"; an expiry before `now` (µs since the epoch) says "(expired)": such a
    /// token stays listed until revoked, and signs nobody in.
    static func tokensText(_ tokens: [JSONObject], now: Int64, terminal: Bool) -> String {
        if tokens.isEmpty && terminal {
            return "No tokens. `swipectl token create NAME --role ROLE` makes one.\n"
        }
        var table = Table("NAME", "ROLE", "TOKEN-ID", "CREATED", "EXPIRES", "LAST-USED")
        for token in tokens {
            var expires = token.string("expires").map(History.time) ?? "never"
            if let at = token.string("expires").flatMap(RFC3339.parse), at <= now { expires += " (expired)" }
            table.append(
                TerminalText.escaped(token.string("name") ?? "?"), token.string("role") ?? "?",
                token.string("tokenId") ?? "?", token.string("created").map(History.time) ?? "?", expires,
                token.string("lastUsed").map(History.time) ?? "never")
        }
        return table.text
    }

    /// `denials`' table, oldest first as the daemon lists them.
    static func denialsText(_ denials: [JSONObject], terminal: Bool) -> String {
        if denials.isEmpty && terminal {
            return "No refusals since the daemon started (it keeps the latest 100).\n"
        }
        var table = Table("AT", "USER", "CLIENT", "TRANSPORT", "ADDRESS", "OP", "REASON")
        func cell(_ text: String?) -> String {
            text.map(TerminalText.escaped).flatMap { $0.isEmpty ? nil : $0 } ?? "-"
        }
        for denial in denials {
            table.append(
                denial.string("at").map(History.time) ?? "?", cell(denial.string("user")),
                denial.uint("client").map(String.init) ?? "-", cell(denial.string("transport")),
                cell(denial.string("address")), cell(denial.string("op")), cell(denial.string("reason")))
        }
        return table.text
    }

    /// `token revoke`'s sentence.
    static func revokedText(name: String, id: String?, count: UInt64) -> String {
        let name = TerminalText.escaped(name)
        let what = id.map { "token \($0) of \(name)" } ?? "\(count) token\(count == 1 ? "" : "s") of \(name)"
        return
            "Revoked \(what): connections signed in with \(count == 1 ? "it" : "them") lose their rights within a second.\n"
    }

    /// `role`'s sentence, from the role given now (nil: none).
    static func roleText(name: String, _ given: AccessRole?, _ change: RoleChange) -> String {
        let name = TerminalText.escaped(name)
        let door = "the door decides (the Unix groups, the token's role, the proxy's)"
        switch (change, given) {
        case (.clear, _):
            return "Took back the role given to \(name): \(door).\n"
        case (_, let role?):
            let said =
                change == .ask
                ? "\(name) has the role \(role), given by an admin" : "Gave \(name) the role \(role)"
            // The daemon's rule: uid 0 is an admin whatever is given to "root", so that the
            // operator cannot lock themselves out; a token made for the name root is not uid 0.
            let root = name == "root" && role != .admin ? " (uid 0 stays an admin over the Unix socket)" : ""
            return "\(said), on every door\(root): \(rights(role.rawValue)).\n"
        case (_, nil):
            return "\(name) has no role given: \(door).\n"
        }
    }

    /// `whoami`'s lines.
    static func whoamiText(user: String?, role: String, by: String) -> String {
        var table = Table("user", user.map(TerminalText.escaped) ?? "anonymous")
        table.append("role", "\(role): \(rights(role))")
        table.append("by", by)
        return table.text
    }

    // MARK: - Helpers

    /// The objects of the reply's array `key`.
    private static func objects(_ reply: JSONObject, _ key: String) -> [JSONObject] {
        (reply[key]?.arrayValue ?? []).compactMap(\.objectValue)
    }

    /// Now, in µs since the epoch.
    private static func now() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
    }
}

// The replies and events of people and their rights (issue 45; protocol.md, "Who may do what").
import JSONCodec
import People

extension Encode {
    /// `"user":NAME|null,"role":ROLE` (after a `{` or a field).
    static func who(_ out: inout JSONWriter, user: String?, role: AccessRole) {
        key(&out, "user")
        if let user { out.string(user) } else { out.null() }
        key(&out, "role")
        out.string(role.rawValue)
    }

    /// `{"event":"role","user":…,"role":…}`: this connection's role changed (a role given or
    /// taken back, a token revoked or expired: then `none`, and the connection is anonymous).
    public static func roleEvent(_ out: inout JSONWriter, user: String?, role: AccessRole) {
        out.literal(#"{"event":"role""#)
        who(&out, user: user, role: role)
        end(&out)
    }

    /// `auth`'s reply.
    public static func signedIn(_ out: inout JSONWriter, id: [UInt8]?, user: String, role: AccessRole) {
        begin(&out, id: id, ok: true)
        who(&out, user: user, role: role)
        end(&out)
    }

    static func time(_ out: inout JSONWriter, _ us: UInt64?) {
        guard let us else { return out.null() }
        out.bytes.append(UInt8(ascii: "\""))
        RFC3339.append(microsecondsSinceEpoch: Int64(clamping: us), to: &out.bytes)
        out.bytes.append(UInt8(ascii: "\""))
    }

    static func tokenFields(_ out: inout JSONWriter, _ t: TokenRecord) {
        // `tokenId`, not `id`: a reply's `id` is its request's.
        out.literal(#""tokenId":"#)
        out.string(t.id)
        key(&out, "name")
        out.string(t.name)
        key(&out, "role")
        out.string(t.role.rawValue)
        key(&out, "created")
        time(&out, t.created)
        key(&out, "expires")
        time(&out, t.expires)
    }

    /// `token-create`'s reply: the token, this once.
    public static func tokenCreated(_ out: inout JSONWriter, id: [UInt8]?, token: String, record: TokenRecord)
    {
        begin(&out, id: id, ok: true)
        key(&out, "token")
        out.string(token)
        out.bytes.append(UInt8(ascii: ","))
        tokenFields(&out, record)
        end(&out)
    }

    /// `token-list`'s reply, in the order the tokens were made.
    public static func tokenList(_ out: inout JSONWriter, id: [UInt8]?, _ tokens: [TokenRecord]) {
        begin(&out, id: id, ok: true)
        key(&out, "tokens")
        out.bytes.append(UInt8(ascii: "["))
        for (i, t) in tokens.enumerated() {
            if i > 0 { out.bytes.append(UInt8(ascii: ",")) }
            out.bytes.append(UInt8(ascii: "{"))
            tokenFields(&out, t)
            key(&out, "lastUsed")
            time(&out, t.lastUsed)
            out.bytes.append(UInt8(ascii: "}"))
        }
        out.bytes.append(UInt8(ascii: "]"))
        end(&out)
    }

    /// `token-revoke`'s reply.
    public static func revoked(_ out: inout JSONWriter, id: [UInt8]?, count: Int) {
        begin(&out, id: id, ok: true)
        key(&out, "revoked")
        out.int(count)
        end(&out)
    }

    /// `role`'s reply: the role given to `name` now, null when none is.
    public static func roleGiven(_ out: inout JSONWriter, id: [UInt8]?, name: String, role: AccessRole?) {
        begin(&out, id: id, ok: true)
        key(&out, "name")
        out.string(name)
        key(&out, "role")
        if let role { out.string(role.rawValue) } else { out.null() }
        end(&out)
    }

    /// `denials`' reply: oldest first.
    public static func denials(_ out: inout JSONWriter, id: [UInt8]?, _ list: [Denial]) {
        begin(&out, id: id, ok: true)
        key(&out, "denials")
        out.bytes.append(UInt8(ascii: "["))
        for (i, d) in list.enumerated() {
            if i > 0 { out.bytes.append(UInt8(ascii: ",")) }
            out.literal(#"{"at":"#)
            time(&out, d.at)
            key(&out, "user")
            if let user = d.user { out.string(user) } else { out.null() }
            key(&out, "client")
            out.uint64(d.client)
            key(&out, "transport")
            out.string(d.transport)
            key(&out, "address")
            out.string(d.address)
            key(&out, "op")
            out.string(d.op)
            key(&out, "reason")
            out.string(d.reason.rawValue)
            out.bytes.append(UInt8(ascii: "}"))
        }
        out.bytes.append(UInt8(ascii: "]"))
        end(&out)
    }
}

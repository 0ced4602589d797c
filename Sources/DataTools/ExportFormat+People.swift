// The people lines of export format version 2 (issue 45; docs/export-format.md): one line per
// token of the people tables, with its hash and never a token, then one per role given to a
// name. Outside the digest, which stays over the events (an export of version 1 and one of
// version 2 of the same log say the same digest); inside the trailer's checksum and counts.
import JSONCodec
import People

extension ExportFormat {
    /// The largest time a line holds: JSON numbers are read as signed 64-bit integers here, so
    /// µs up to 2⁶³ − 1 (the year 294,247). Times are numbers, not RFC 3339 like the events'
    /// `at`, so that any expiry a store keeps round-trips exactly (RFC 3339 stops at 9999).
    static let maxTime = UInt64(Int64.max)

    /// `{"token":ID,"name":…,"role":…,"hash":HEX,"created":µs[,"expires":µs][,"lastUsed":µs]}`
    /// and a newline. A time past `maxTime` is refused: no reader could take it.
    public static func token(_ t: TokenRecord) throws(Fault) -> [UInt8] {
        for (name, time) in [("created", t.created), ("expires", t.expires), ("lastUsed", t.lastUsed)] {
            if let time, time > maxTime {
                throw Fault(
                    "token \(String(reflecting: t.id)) of \(String(reflecting: t.name)): its \(name) time \(time) is past what an export holds (\(maxTime) µs)"
                )
            }
        }
        var w = JSONWriter()
        w.literal(#"{"token":"#)
        w.string(t.id)
        w.literal(#","name":"#)
        w.string(t.name)
        w.literal(#","role":"#)
        w.string(t.role.rawValue)
        w.literal(#","hash":"#)
        w.string(SHA256.hex(digest: t.hash))
        w.literal(#","created":"#)
        w.uint64(t.created)
        if let expires = t.expires {
            w.literal(#","expires":"#)
            w.uint64(expires)
        }
        if let lastUsed = t.lastUsed {
            w.literal(#","lastUsed":"#)
            w.uint64(lastUsed)
        }
        w.literal("}\n")
        return w.bytes
    }

    /// `{"grant":NAME,"role":ROLE}` and a newline.
    public static func grant(name: String, role: AccessRole) -> [UInt8] {
        var w = JSONWriter()
        w.literal(#"{"grant":"#)
        w.string(name)
        w.literal(#","role":"#)
        w.string(role.rawValue)
        w.literal("}\n")
        return w.bytes
    }

    /// The lines of `tables`, in the order a reader expects: the tokens in the order they were
    /// made, then the grants by name.
    static func lines(_ tables: PeopleTables) throws(Fault) -> [[UInt8]] {
        var out: [[UInt8]] = []
        for t in tables.tokens { out.append(try token(t)) }
        for (name, role) in tables.grants.sorted(by: { $0.key < $1.key }) {
            out.append(grant(name: name, role: role))
        }
        return out
    }

    /// A token line's fields (its `token` member present).
    static func token(_ fields: inout Fields) throws(Fault) -> TokenRecord {
        let id = try fields.string("token")
        guard !id.isEmpty, id.utf8.count <= 64, id.utf8.allSatisfy({ $0 < 0x80 && isAlphanumeric($0) }) else {
            throw Fault("a token's id is 1 to 64 ASCII letters and digits, not \(String(reflecting: id))")
        }
        let name = try personName(&fields, "name")
        let role = try self.role(&fields)
        let hex = try fields.string("hash")
        guard let hash = bytes(hex: hex), hash.count == 32 else {
            throw Fault("token \(id)'s \"hash\" must be 64 hex digits (SHA-256)")
        }
        let created = try fields.uint("created")
        let expires: UInt64? = fields.has("expires") ? try fields.uint("expires") : nil
        let lastUsed: UInt64? = fields.has("lastUsed") ? try fields.uint("lastUsed") : nil
        try fields.done()
        return TokenRecord(
            id: id, name: name, role: role, hash: hash, created: created, expires: expires, lastUsed: lastUsed
        )
    }

    /// A role grant line's fields (its `grant` member present).
    static func grant(_ fields: inout Fields) throws(Fault) -> Line {
        let name = try personName(&fields, "grant")
        let role = try self.role(&fields)
        try fields.done()
        return .grant(name: name, role: role)
    }

    private static func personName(_ fields: inout Fields, _ key: String) throws(Fault) -> String {
        let name = try fields.string(key)
        if let why = PersonName.problem(name) { throw Fault("\"\(key)\" is not a person's name: \(why)") }
        return name
    }

    private static func role(_ fields: inout Fields) throws(Fault) -> AccessRole {
        let name = try fields.string("role")
        guard let role = AccessRole(rawValue: name) else {
            throw Fault(
                "\"role\" must be one of \(AccessRole.names.joined(separator: ", ")), not \(String(reflecting: name))"
            )
        }
        return role
    }

    private static func isAlphanumeric(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
    }

    /// The bytes of lowercase or uppercase hex, nil for anything else.
    static func bytes(hex: String) -> [UInt8]? {
        let u = Array(hex.utf8)
        guard u.count % 2 == 0 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case 0x30...0x39: c - 0x30
            case 0x61...0x66: c - 0x61 + 10
            case 0x41...0x46: c - 0x41 + 10
            default: nil
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(u.count / 2)
        var i = 0
        while i < u.count {
            guard let h = nibble(u[i]), let l = nibble(u[i + 1]) else { return nil }
            out.append(h << 4 | l)
            i += 2
        }
        return out
    }
}

extension ExportFormat.Fields {
    func has(_ k: String) -> Bool { members.contains { $0.key == k } }
}

/// The people lines of an export, checked as they come: after the events, tokens first, then
/// grants, each token's id and hash and each grant's name once.
struct PeopleLines {
    private(set) var tokens: [TokenRecord] = []
    private(set) var grants: [String: AccessRole] = [:]
    private var ids = Set<String>()
    private var hashes = Set<[UInt8]>()

    var started: Bool { !tokens.isEmpty || !grants.isEmpty }

    mutating func add(_ t: TokenRecord) throws(Fault) {
        guard grants.isEmpty else { throw Fault("a token line after the role grants (tokens come first)") }
        guard ids.insert(t.id).inserted else { throw Fault("a second token with the id \(t.id)") }
        guard hashes.insert(t.hash).inserted else {
            throw Fault("token \(t.id) has the hash of an earlier token")
        }
        tokens.append(t)
    }

    mutating func add(grant name: String, _ role: AccessRole) throws(Fault) {
        guard grants[name] == nil else { throw Fault("a second role grant to \(String(reflecting: name))") }
        grants[name] = role
    }

    var tables: PeopleTables { PeopleTables(tokens: tokens, grants: grants) }
}

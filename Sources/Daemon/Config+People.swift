// The command line of people and their rights (issue 45; protocol.md, "Who may do what").
import People

extension Config {
    /// The default rate limit of people who come through the web listener: 20 changes a second,
    /// 60 at once. A person tapping and swiping as fast as they can makes 3 or 4 a second; a
    /// script does many more.
    public static let defaultWebRateLimit = RateLimiter.Limit(perSecond: 20, burst: 60)

    static let peopleUsage = """
          --admins GROUP         peers in GROUP are admins: tokens, roles, denials, every
                                 client in status (root always is; default: $SWIPED_ADMINS)
          --web-anonymous ROLE   what a WebSocket may do before auth: none (only ping, help
                                 and auth), reader (default) or writer
          --web-trust-header NAME
                                 a trusted proxy names the signed-in user in this header
                                 (e.g. Remote-User from nginx auth_basic); default: none
          --web-trusted-proxy ADDR[/PREFIX]
                                 a proxy whose header and X-Forwarded-For are believed;
                                 repeatable (default: loopback, 127.0.0.0/8 and ::1)
          --web-proxy-role ROLE  a proxy's user's role unless an admin gave the name one:
                                 reader (default), writer or admin
          --rate-limit N/s[,BURST]|off
                                 changes a second per person through the web listener,
                                 BURST at once (default 20/s,60)
          --rate-limit-unix N/s[,BURST]|off
                                 the same for Unix-socket peers (default off: the
                                 operator's tools, imports and benchmarks)
        """

    /// An option of people and their rights; nil when `option` is not one. The result is a
    /// usage error's message, or "" when it was taken.
    static func parsePeople(_ option: String, _ value: () -> String?, into config: inout Config) -> String? {
        func role(_ allowed: [AccessRole]) -> Result<AccessRole, UsageError> {
            let names = allowed.map(\.rawValue).joined(separator: ", ")
            guard let v = value(), let r = AccessRole(rawValue: v), allowed.contains(r) else {
                return .failure(UsageError("\(option) must be one of \(names)"))
            }
            return .success(r)
        }
        func limit() -> Result<RateLimiter.Limit?, UsageError> {
            guard let v = value() else { return .failure(UsageError("\(option) needs N/s[,BURST] or off")) }
            if v == "off" { return .success(nil) }
            guard let l = RateLimiter.Limit.parse(v) else {
                return .failure(
                    UsageError("\(option) must be N/s[,BURST] (N > 0, BURST ≥ 1) or off, not '\(v)'"))
            }
            return .success(l)
        }
        switch option {
        case "--admins":
            guard let v = value() else { return "--admins needs a group name" }
            config.adminsGroup = v.isEmpty ? nil : v
        case "--web-anonymous":
            switch role([AccessRole.none, .reader, .writer]) {
            case .success(let r): config.webAnonymous = r
            case .failure(let m): return m.message
            }
        case "--web-proxy-role":
            switch role([AccessRole.reader, .writer, .admin]) {
            case .success(let r): config.webProxyRole = r
            case .failure(let m): return m.message
            }
        case "--web-trust-header":
            guard let v = value(), !v.isEmpty, v.utf8.allSatisfy(Self.isTokenByte) else {
                return "--web-trust-header needs an HTTP header name, e.g. Remote-User"
            }
            config.webTrustHeader = v
        case "--web-trusted-proxy":
            guard let v = value() else { return "--web-trusted-proxy needs an address" }
            do {
                _ = try TrustedProxies([v])
            } catch {
                return "--web-trusted-proxy: \(error)"
            }
            config.webTrustedProxies.append(v)
        case "--rate-limit":
            switch limit() {
            case .success(let l): config.webRateLimit = l
            case .failure(let m): return m.message
            }
        case "--rate-limit-unix":
            switch limit() {
            case .success(let l): config.unixRateLimit = l
            case .failure(let m): return m.message
            }
        default:
            return nil
        }
        return ""
    }

    /// RFC 9110's `tchar`: what a header name is made of.
    static func isTokenByte(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            "!#$%&'*+-.^_`|~".utf8.contains(b)
        }
    }
}

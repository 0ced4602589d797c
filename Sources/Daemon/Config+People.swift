// The command line of people and their rights (issue 45; protocol.md, "Who may do what").
import CommandLineParsing
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

    /// The options of people and their rights.
    static let peopleOptions: [OptionSpec] = [
        .value("--admins", needs: "a group name"),
        .value("--web-anonymous", needs: "one of \(roles(webAnonymousRoles))"),
        .value("--web-proxy-role", needs: "one of \(roles(webProxyRoles))"),
        .value("--web-trust-header", needs: "an HTTP header name, e.g. Remote-User", emptyIsMissing: true),
        .value("--web-trusted-proxy", needs: "an address"),
        .value("--rate-limit", needs: "N/s[,BURST] or off"),
        .value("--rate-limit-unix", needs: "N/s[,BURST] or off"),
    ]

    static let webAnonymousRoles = [AccessRole.none, .reader, .writer]
    static let webProxyRoles = [AccessRole.reader, .writer, .admin]

    static func roles(_ allowed: [AccessRole]) -> String {
        allowed.map(\.rawValue).joined(separator: ", ")
    }

    /// An option of people and their rights (one of `peopleOptions`), with its value.
    static func parsePeople(_ option: String, _ value: String, into config: inout Config)
        throws(ArgumentError)
    {
        func role(_ allowed: [AccessRole]) throws(ArgumentError) -> AccessRole {
            guard let r = AccessRole(rawValue: value), allowed.contains(r) else {
                throw .invalid("\(option) must be one of \(roles(allowed))")
            }
            return r
        }
        func limit() throws(ArgumentError) -> RateLimiter.Limit? {
            if value == "off" { return nil }
            guard let l = RateLimiter.Limit.parse(value) else {
                throw .invalid("\(option) must be N/s[,BURST] (N > 0, BURST ≥ 1) or off, not '\(value)'")
            }
            return l
        }
        switch option {
        case "--admins":
            config.adminsGroup = value.isEmpty ? nil : value
        case "--web-anonymous":
            config.webAnonymous = try role(webAnonymousRoles)
        case "--web-proxy-role":
            config.webProxyRole = try role(webProxyRoles)
        case "--web-trust-header":
            guard value.utf8.allSatisfy(Self.isTokenByte) else {
                throw .invalid("--web-trust-header needs an HTTP header name, e.g. Remote-User")
            }
            config.webTrustHeader = value
        case "--web-trusted-proxy":
            do {
                _ = try TrustedProxies([value])
            } catch {
                throw .invalid("--web-trusted-proxy: \(error)")
            }
            config.webTrustedProxies.append(value)
        case "--rate-limit":
            config.webRateLimit = try limit()
        case "--rate-limit-unix":
            config.unixRateLimit = try limit()
        default:
            preconditionFailure("\(option) is in Config.options but has no case here")
        }
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

// Which pages may open a WebSocket (issue 43, point 4). A browser lets any page open a WebSocket
// to any address, sending the page's origin in `Origin`; without a check, any site a person
// visits could open ws://127.0.0.1:8080/ws and change the movies (cross-site WebSocket
// hijacking). So the listener accepts a WebSocket only from its own pages:
//
// - `Origin` is one of `--web-origin` (a full origin, `https://swiped.example.org`, or a bare
//   `host[:port]`, which stands for http and https alike): the public names behind a proxy;
// - or `Origin` is the page's own origin as `Host` names it (`http://HOST` or `https://HOST`,
//   default ports written or not), and `Host` is an IP address (v4, or v6 in brackets) or
//   `localhost`. A host *name* in `Host` is never trusted on its own: that is DNS rebinding,
//   where evil.example resolves to 127.0.0.1 and its page's Origin and Host agree
//   (`http://evil.example:8080`), which same-origin alone would let through. An address
//   cannot be rebound. So with the listener on 0.0.0.0:8080, a page at http://192.168.1.5:8080/
//   or http://127.0.0.1:8080/ or http://localhost:8080/ gets in, a page at
//   http://myhost.lan:8080/ only with `--web-origin http://myhost.lan:8080`.
// - No `Origin` at all: not a browser (every browser sends one with a WebSocket), and a
//   program can write any Origin it likes, so refusing it would protect nothing: it is
//   served, as a Unix-socket client is. `Origin: null` (a sandboxed or file: page) and several
//   Origin lines are refused.
#if canImport(Glibc)
    import Glibc
#endif

public struct OriginPolicy: Equatable, Sendable {
    /// Full origins, normalized (`https://swiped.example.org`).
    public private(set) var origins: [String] = []
    /// Bare authorities (`swiped.example.org`, `example.org:8443`), lowercased.
    public private(set) var authorities: [String] = []

    public init() {}

    /// The `--web-origin` values; nil and why for one that is neither form.
    public init(configured: [String]) throws(OriginPolicyError) {
        for text in configured {
            if text.contains("://") {
                guard let origin = Self.origin(text) else {
                    throw OriginPolicyError(
                        "'\(text)' is not an origin: http:// or https://, a host, maybe a port, no path")
                }
                origins.append(origin.text)
            } else {
                guard let authority = Self.authority(text, defaultPort: nil) else {
                    throw OriginPolicyError("'\(text)' is not HOST or HOST:PORT")
                }
                authorities.append(authority)
            }
        }
    }

    public enum Verdict: Equatable, Sendable {
        case allowed
        case refused(String)
    }

    /// Whether a WebSocket whose head has these Origin lines and this Host may open.
    public func check(origin: [String], host: String?) -> Verdict {
        guard let text = origin.first else { return .allowed }
        guard origin.count == 1 else { return .refused("several Origin header lines") }
        guard let o = Self.origin(text) else {
            return .refused("Origin '\(text)' is not an http or https origin")
        }
        if origins.contains(o.text) || authorities.contains(o.authority) { return .allowed }
        guard let host, let h = Self.authority(host, defaultPort: o.defaultPort) else {
            return .refused("Origin \(o.text) is not a --web-origin, and the request has no usable Host")
        }
        guard Self.isAddressOrLocalhost(h) else {
            return .refused(
                "Origin \(o.text) is not a --web-origin, and Host \(host) is a name, not an address (DNS rebinding)"
            )
        }
        guard h == o.authority else {
            return .refused("Origin \(o.text) is not the page's own (Host \(host))")
        }
        return .allowed
    }

    struct Origin {
        /// `scheme://authority`.
        var text: String
        var authority: String
        var defaultPort: Int
    }

    /// `http://host[:port]` or `https://…`, lowercased, the scheme's default port dropped; a
    /// trailing `/` is tolerated (a person may write one), nothing else after the authority.
    static func origin(_ text: String) -> Origin? {
        let lower = text.lowercased()
        let scheme: String
        let port: Int
        if lower.hasPrefix("http://") {
            (scheme, port) = ("http", 80)
        } else if lower.hasPrefix("https://") {
            (scheme, port) = ("https", 443)
        } else {
            return nil
        }
        var rest = lower.dropFirst(scheme.count + 3)
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard let authority = authority(String(rest), defaultPort: port) else { return nil }
        return Origin(text: "\(scheme)://\(authority)", authority: authority, defaultPort: port)
    }

    /// `host[:port]` (an IPv6 address in brackets), lowercased, without `defaultPort`; nil when
    /// it is not one (empty host, a port that is not 1 to 65535, a path, spaces).
    static func authority(_ text: String, defaultPort: Int?) -> String? {
        let lower = text.lowercased()
        var host = Substring(lower)
        var port: Substring?
        if lower.hasPrefix("[") {
            guard let close = lower.firstIndex(of: "]") else { return nil }
            host = lower[...close]
            let after = lower[lower.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return nil }
                port = after.dropFirst()
            }
        } else if let colon = lower.lastIndex(of: ":") {
            host = lower[..<colon]
            port = lower[lower.index(after: colon)...]
        }
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789.-_[]:")
        guard !host.isEmpty, host.allSatisfy({ allowed.contains($0) }) else { return nil }
        guard let port else { return String(host) }
        guard let number = Int(port), (1...65535).contains(number), port.allSatisfy(\.isASCII) else {
            return nil
        }
        return number == defaultPort ? String(host) : "\(host):\(number)"
    }

    /// Whether an authority's host is an IP address or `localhost`: names that no DNS answer
    /// can point elsewhere.
    static func isAddressOrLocalhost(_ authority: String) -> Bool {
        var host = authority
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return false }
            host = String(host[host.index(after: host.startIndex)..<close])
            var address = in6_addr()
            return inet_pton(AF_INET6, host, &address) == 1
        }
        if let colon = host.lastIndex(of: ":") { host = String(host[..<colon]) }
        if host == "localhost" { return true }
        var address = in_addr()
        return inet_pton(AF_INET, host, &address) == 1
    }
}

/// A `--web-origin` that is not an origin nor an authority.
public struct OriginPolicyError: Error, Equatable, Sendable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

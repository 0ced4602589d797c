// `--web-trusted-proxy ADDR[/PREFIX]`: the reverse proxies whose word the web listener takes for
// who a browser is (`--web-trust-header`) and where it is (`X-Forwarded-For`). A header from any
// other address is ignored and logged: anyone can send one.
#if canImport(Glibc)
    import Glibc
#endif

struct TrustedProxies: Equatable {
    struct Block: Equatable {
        /// 4 or 16 bytes.
        let bytes: [UInt8]
        let prefix: Int
    }

    let blocks: [Block]
    /// As configured, for the journal.
    let spelled: [String]

    /// Loopback only: a proxy on the same machine (nginx in front of `--web 127.0.0.1:8080`).
    static let loopback = try! TrustedProxies(["127.0.0.0/8", "::1"])

    struct Invalid: Error, CustomStringConvertible {
        let description: String
    }

    init(_ spelled: [String]) throws(Invalid) {
        var blocks: [Block] = []
        for text in spelled {
            let parts = text.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count <= 2, let bytes = Self.address(String(parts[0])) else {
                throw Invalid(description: "\"\(text)\" is not an IP address or ADDRESS/PREFIX")
            }
            var prefix = bytes.count * 8
            if parts.count == 2 {
                guard let p = Int(parts[1]), (0...bytes.count * 8).contains(p) else {
                    throw Invalid(description: "\"\(text)\": the prefix is 0 to \(bytes.count * 8)")
                }
                prefix = p
            }
            blocks.append(Block(bytes: bytes, prefix: prefix))
        }
        self.blocks = blocks
        self.spelled = spelled
    }

    /// The bytes of an IPv4 or IPv6 address (an IPv4-mapped IPv6 one as IPv4), nil if it is none.
    static func address(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            return withUnsafeBytes(of: &v4) { Array($0) }
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        let bytes = withUnsafeBytes(of: &v6) { Array($0) }
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
            return Array(bytes[12...])
        }
        return bytes
    }

    /// The host of a peer address as `Listener.peerAddress` spells it (`1.2.3.4:5`, `[::1]:5`).
    static func host(of remote: String) -> String {
        if remote.hasPrefix("["), let end = remote.firstIndex(of: "]") {
            return String(remote[remote.index(after: remote.startIndex)..<end])
        }
        if let colon = remote.lastIndex(of: ":"), remote.firstIndex(of: ":") == colon {
            return String(remote[..<colon])
        }
        return remote
    }

    func contains(_ host: String) -> Bool {
        guard let bytes = Self.address(host) else { return false }
        return blocks.contains { block in
            guard block.bytes.count == bytes.count else { return false }
            var bits = block.prefix
            for i in bytes.indices where bits > 0 {
                let mask: UInt8 = bits >= 8 ? 0xFF : ~(0xFF >> UInt8(bits))
                if bytes[i] & mask != block.bytes[i] & mask { return false }
                bits -= 8
            }
            return true
        }
    }

    /// The browser's address behind a trusted proxy: the last address of `X-Forwarded-For`
    /// (the one the proxy itself appended; those before it are the browser's word, not the
    /// proxy's). Nil when there is no usable one.
    static func forwarded(_ values: [String]) -> String? {
        guard let last = values.last?.split(separator: ",").last else { return nil }
        let host = last.trimmed(" \t")
        return address(host) == nil ? nil : host
    }
}

extension Substring {
    func trimmed(_ set: String) -> String {
        var s = self[...]
        while let c = s.first, set.contains(c) { s = s.dropFirst() }
        while let c = s.last, set.contains(c) { s = s.dropLast() }
        return String(s)
    }
}

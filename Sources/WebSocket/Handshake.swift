// The WebSocket opening handshake, server side (RFC 6455, 4.2): a GET of the WebSocket's path
// whose head asks for the upgrade is answered 101 with Sec-WebSocket-Accept, or refused with a
// status and a reason. Every header it relies on is checked (as nats-server's websocket.go
// does), the Origin against the listener's rules (OriginPolicy.swift). Nothing else is
// negotiated: no subprotocol (the page asks for none), no extension — permessage-deflate is not
// offered back even when the browser asks for it, so every frame is plain text (a drag's reply
// is 300 bytes; compressing it would cost more CPU on the loop than the bytes it saves on
// loopback or behind a proxy, and a compression context per browser is memory a browser would
// control).
import HTTPScrape

/// Why a request on the web listener was refused before it became a WebSocket or a file: a
/// closed set, the label of `swiped_web_refused_total`.
public enum WebRefusal: String, CaseIterable, Sendable {
    /// A head that is not a well-formed GET or HEAD (400), or a handshake missing what RFC 6455
    /// requires (400).
    case badRequest = "bad-request"
    /// A method other than GET or HEAD (405).
    case method
    /// A head over 8 KiB (431), or a POST body over 4 KiB (413).
    case tooLarge = "too-large"
    /// A head not sent within its time (408): a slowloris.
    case timeout
    /// A head still coming in when a newer connection needed its place (408).
    case evicted
    /// A path that names no file (404).
    case notFound = "not-found"
    /// A WebSocket from a page of another origin (403).
    case origin
    /// A WebSocket version other than 13 (426).
    case version
    /// A WebSocket past `--max-clients`, or while the daemon stops (503).
    case unavailable
    /// A connection past `maxConnections` with no head to evict (503).
    case busy

    /// The reason a refusal's status implies, for refusals the head parser or the connection's
    /// timer decided.
    public static func of(_ status: Status, evicted: Bool = false) -> WebRefusal {
        switch status {
        case .methodNotAllowed: .method
        case .headerFieldsTooLarge, .contentTooLarge: .tooLarge
        case .requestTimeout: evicted ? .evicted : .timeout
        case .notFound: .notFound
        case .forbidden: .origin
        case .upgradeRequired: .version
        case .serviceUnavailable: .unavailable
        case .switchingProtocols, .ok, .notModified, .badRequest, .versionNotSupported, .lengthRequired,
            .tooManyRequests:
            .badRequest
        }
    }
}

public enum Handshake {
    /// RFC 6455, 1.3: appended to the key before hashing.
    public static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// Sec-WebSocket-Accept for a Sec-WebSocket-Key: base64(SHA-1(key + GUID)).
    public static func accept(key: String) -> String {
        Digest.base64(Digest.sha1(Array((key + guid).utf8)))
    }

    public enum Outcome: Equatable, Sendable {
        /// Switch: write `response` (the 101), then frames.
        case upgrade(response: [UInt8])
        /// Answer `status` with `extra` header lines, and close.
        case refuse(Status, WebRefusal, reason: String, extra: [String])
    }

    /// The answer to a request for the WebSocket: its head must be an HTTP/1.1 GET with
    /// `Upgrade: websocket`, `Connection: upgrade`, one Sec-WebSocket-Key of 16 bytes in base64,
    /// Sec-WebSocket-Version 13 (else 426, saying 13), and an Origin `policy` allows.
    public static func answer(_ request: HTTPRequest, policy: OriginPolicy) -> Outcome {
        func bad(_ reason: String) -> Outcome { .refuse(.badRequest, .badRequest, reason: reason, extra: []) }
        guard !request.head else {
            return .refuse(.methodNotAllowed, .method, reason: "a WebSocket opens with GET", extra: [])
        }
        guard request.minor >= 1 else { return bad("a WebSocket needs HTTP/1.1") }
        guard tokens(request.values("upgrade")).contains("websocket") else {
            return bad("no Upgrade: websocket")
        }
        guard tokens(request.values("connection")).contains("upgrade") else {
            return bad("no Connection: upgrade")
        }
        guard request.values("sec-websocket-version") == ["13"] else {
            return .refuse(
                .upgradeRequired, .version, reason: "Sec-WebSocket-Version is not 13",
                extra: ["Sec-WebSocket-Version: 13"])
        }
        guard let key = request.value("sec-websocket-key"), isKey(key) else {
            return bad("no Sec-WebSocket-Key of 16 bytes in base64")
        }
        switch policy.check(origin: request.values("origin"), host: request.value("host")) {
        case .allowed: break
        case .refused(let reason): return .refuse(.forbidden, .origin, reason: reason, extra: [])
        }
        let text =
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Accept: \(accept(key: key))\r\n\r\n"
        return .upgrade(response: Array(text.utf8))
    }

    /// The comma-separated tokens of header lines, lowercased (`Connection: keep-alive, Upgrade`).
    static func tokens(_ values: [String]) -> [String] {
        values.flatMap { $0.split(separator: ",") }.map { $0.trimmingSpaces.lowercased() }
    }

    /// 16 bytes in padded base64: 22 characters of the alphabet, then `==`.
    static func isKey(_ key: String) -> Bool {
        let bytes = Array(key.utf8)
        guard bytes.count == 24, bytes[22] == UInt8(ascii: "="), bytes[23] == UInt8(ascii: "=") else {
            return false
        }
        return bytes[0..<22].allSatisfy {
            switch $0 {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "/"):
                true
            default: false
            }
        }
    }
}

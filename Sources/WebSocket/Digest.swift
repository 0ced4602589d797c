// The digests the web listener needs, from libcrypto (Sources/CCrypto): SHA-1 and base64 for
// the handshake's Sec-WebSocket-Accept (RFC 6455, 4.2.2), SHA-256 for the page's ETags. Written
// by hand they would be protocol code of our own to get wrong (issue 43, point 2).
import CCrypto

public enum Digest {
    /// SHA-1 of `bytes` (20 bytes).
    public static func sha1(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 20)
        // EVP_Digest of a built-in digest fails only when out of memory.
        guard swiped_sha1(bytes, bytes.count, &digest) == 1 else { preconditionFailure("SHA-1 failed") }
        return digest
    }

    /// Padded base64 (RFC 4648, 4), no line breaks.
    public static func base64(_ bytes: [UInt8]) -> String {
        var out = [UInt8](repeating: 0, count: 4 * ((bytes.count + 2) / 3) + 1)
        let n = swiped_base64(bytes, Int32(bytes.count), &out)
        return String(decoding: out[0..<Int(n)], as: UTF8.self)
    }

    /// SHA-256 of `bytes` as lowercase hex.
    public static func sha256Hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        return String(
            decoding: sha256(bytes).flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] }, as: UTF8.self)
    }

    /// SHA-256 of `bytes` (32 bytes): the page's ETags, the hashes tokens are kept as.
    public static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        guard let context = swiped_sha256_new() else { preconditionFailure("SHA-256: out of memory") }
        guard swiped_sha256_update(context, bytes, bytes.count) == 1 else {
            swiped_sha256_free(context)
            preconditionFailure("SHA-256: EVP_DigestUpdate failed")
        }
        var digest = [UInt8](repeating: 0, count: 32)
        guard swiped_sha256_final(context, &digest) == 1 else { preconditionFailure("SHA-256 failed") }
        return digest
    }

    /// Unpadded base64url (RFC 4648, 5): URL- and cookie-safe.
    public static func base64url(_ bytes: [UInt8]) -> String {
        var text = base64(bytes)
        while text.hasSuffix("=") { text.removeLast() }
        return String(text.map { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 })
    }
}

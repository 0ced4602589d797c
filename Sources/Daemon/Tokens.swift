// Tokens: made from the kernel's random bytes, kept only as their SHA-256 (People's
// TokenRecord). 192 random bits each, so that the hash needs no salt and no slow KDF: nobody
// guesses a 192-bit secret, slowly or fast; a slow hash would only slow every honest sign-in.
import CCrypto
import People
import WebSocket

enum Tokens {
    /// What every token starts with: says what it is when found in a file or a log.
    static let prefix = "swp_"

    /// A new token and its record (id and hash).
    static func make(name: String, role: AccessRole, now: UInt64, expiresIn: Int64?) -> (String, TokenRecord)
    {
        var secret = [UInt8](repeating: 0, count: 24)
        // OpenSSL's generator fails only when it cannot seed itself from the kernel: nothing
        // random can be made then, and a token that is not random must never be handed out.
        precondition(swiped_random(&secret, Int32(secret.count)) == 1, "RAND_bytes failed: no randomness")
        let token = prefix + Digest.base64url(secret)
        let hash = hash(token)
        let record = TokenRecord(
            id: hex(hash.prefix(6)), name: name, role: role, hash: hash, created: now,
            expires: expiresIn.map { now + UInt64($0) * 1_000_000 })
        return (token, record)
    }

    static func hash(_ token: String) -> [UInt8] { Digest.sha256(Array(token.utf8)) }

    static func hex<C: Collection<UInt8>>(_ bytes: C) -> String {
        let digits = Array("0123456789abcdef".utf8)
        return String(
            decoding: bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] }, as: UTF8.self)
    }
}

// SHA-256 for `verify`'s digest and the export's trailer, from libcrypto (OpenSSL 3's EVP
// interface, through Sources/CCrypto). It used to be written here in Swift so that swiped would
// need no library beyond the ones it had; the web listener links libcrypto for the WebSocket
// handshake (issue 43), so that reason is gone, and OpenSSL's is the implementation everyone
// checks. The digests are the same bytes: SHA256Tests checks NIST's vectors and an export
// written before the change (Tests/DataToolsTests/Fixtures) still verifies.
import CCrypto

/// A running SHA-256: `update` with bytes in any pieces, then `finish` once. A value: a copy
/// finishes on its own while the original goes on (the context is copied when shared).
public struct SHA256: Sendable {
    /// The OpenSSL context, shared by copies until one of them changes it.
    private final class Context: @unchecked Sendable {
        // @unchecked: only the value that uniquely owns it mutates it (`mutate` copies first).
        let pointer: OpaquePointer

        init(_ pointer: OpaquePointer) { self.pointer = pointer }

        deinit { swiped_sha256_free(pointer) }
    }

    private var context: Context

    public init() {
        // Out of memory is the only way EVP_DigestInit_ex fails for a built-in digest: as fatal
        // as any allocation Swift makes.
        guard let pointer = swiped_sha256_new() else { preconditionFailure("SHA-256: out of memory") }
        context = Context(pointer)
    }

    /// The context, copied first when another value shares it.
    private mutating func owned() -> OpaquePointer {
        if !isKnownUniquelyReferenced(&context) {
            guard let copy = swiped_sha256_copy(context.pointer) else {
                preconditionFailure("SHA-256: out of memory")
            }
            context = Context(copy)
        }
        return context.pointer
    }

    public mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { update($0) }
    }

    public mutating func update(_ bytes: UnsafeBufferPointer<UInt8>) {
        let pointer = owned()
        guard swiped_sha256_update(pointer, bytes.baseAddress, bytes.count) == 1 else {
            preconditionFailure("SHA-256: EVP_DigestUpdate failed")
        }
    }

    /// The 32-byte digest. The value is spent: finish a copy to go on hashing.
    public mutating func finish() -> [UInt8] {
        // Finishing frees OpenSSL's context: it is finished on a copy of its own, so that the
        // Context this value holds is freed once, by its deinit.
        guard let copy = swiped_sha256_copy(context.pointer) else {
            preconditionFailure("SHA-256: out of memory")
        }
        var digest = [UInt8](repeating: 0, count: 32)
        guard swiped_sha256_final(copy, &digest) == 1 else {
            preconditionFailure("SHA-256: EVP_DigestFinal_ex failed")
        }
        return digest
    }

    /// The digest of `bytes`, as lowercase hex.
    public static func hex(_ bytes: [UInt8]) -> String {
        var s = SHA256()
        s.update(bytes)
        return hex(digest: s.finish())
    }

    public static func hex(digest: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for b in digest {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

// libcrypto (OpenSSL 3, Debian's libssl-dev; libpq already loads it): SHA-1 and base64 for the
// WebSocket handshake's Sec-WebSocket-Accept (Sources/WebSocket/Handshake.swift), SHA-256 for
// the export digest (Sources/DataTools/SHA256.swift) and the web page's ETags. Only the EVP
// interface: OpenSSL 3 deprecates the low-level SHA1()/SHA256_*() functions, whose deprecation
// Swift would report as a warning at every call. The shims below keep OpenSSL's macros and
// out-parameters out of Swift.
#ifndef SWIPED_CCRYPTO_SHIM_H
#define SWIPED_CCRYPTO_SHIM_H
#include <stddef.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

/// `length` bytes from OpenSSL's CSPRNG (seeded from the kernel's getrandom), for tokens.
/// Returns 1, or 0 on failure.
static inline int swiped_random(unsigned char *out, int length) {
    return RAND_bytes(out, length);
}

/// SHA-1 of `length` bytes into `digest` (20 bytes). Returns 1, or 0 on failure.
static inline int swiped_sha1(const void *data, size_t length, unsigned char *digest) {
    unsigned int size = 0;
    return EVP_Digest(data, length, digest, &size, EVP_sha1(), NULL) == 1 && size == 20;
}

/// Standard base64 (RFC 4648, padded, no line breaks) of `length` bytes into `out`, which must
/// hold 4 * ((length + 2) / 3) + 1 bytes. Returns the characters written (not the NUL).
static inline int swiped_base64(const unsigned char *data, int length, unsigned char *out) {
    return EVP_EncodeBlock(out, data, length);
}

/// A SHA-256 in progress: new (NULL when out of memory), update, final (frees it).
static inline EVP_MD_CTX *swiped_sha256_new(void) {
    EVP_MD_CTX *context = EVP_MD_CTX_new();
    if (context != NULL && EVP_DigestInit_ex(context, EVP_sha256(), NULL) != 1) {
        EVP_MD_CTX_free(context);
        return NULL;
    }
    return context;
}

static inline int swiped_sha256_update(EVP_MD_CTX *context, const void *data, size_t length) {
    return EVP_DigestUpdate(context, data, length);
}

/// Writes the 32-byte digest and frees the context. Returns 1, or 0 on failure.
static inline int swiped_sha256_final(EVP_MD_CTX *context, unsigned char *digest) {
    unsigned int size = 0;
    int ok = EVP_DigestFinal_ex(context, digest, &size) == 1 && size == 32;
    EVP_MD_CTX_free(context);
    return ok;
}

/// A copy of a SHA-256 in progress, to finish while the original goes on (NULL when out of memory).
static inline EVP_MD_CTX *swiped_sha256_copy(const EVP_MD_CTX *context) {
    EVP_MD_CTX *copy = EVP_MD_CTX_new();
    if (copy != NULL && EVP_MD_CTX_copy_ex(copy, context) != 1) {
        EVP_MD_CTX_free(copy);
        return NULL;
    }
    return copy;
}

static inline void swiped_sha256_free(EVP_MD_CTX *context) { EVP_MD_CTX_free(context); }
#endif

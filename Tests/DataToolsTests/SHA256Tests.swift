import XCTest

@testable import DataTools

/// NIST's published SHA-256 examples (FIPS 180-2 appendix B, and the empty message).
final class SHA256Tests: XCTestCase {
    func testNISTVectors() {
        XCTAssertEqual(
            SHA256.hex(Array("abc".utf8)), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        XCTAssertEqual(SHA256.hex([]), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        XCTAssertEqual(
            SHA256.hex(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    /// One million "a", fed in uneven pieces (the buffering across blocks).
    func testMillionAInPieces() {
        var h = SHA256()
        let a = [UInt8](repeating: 0x61, count: 1_000_000)
        var at = 0
        var step = 1
        while at < a.count {
            let n = min(step, a.count - at)
            h.update(Array(a[at..<at + n]))
            at += n
            step = step % 131 + 7
        }
        XCTAssertEqual(
            SHA256.hex(digest: h.finish()), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        )
    }
}

/// SHA-256 moved from Swift to libcrypto (issue 43): an export written before, by the Swift
/// SHA-256, still verifies (its trailer's checksum of the lines) and folds to the same digest as
/// `swiped verify` printed then.
final class ExportBeforeLibcryptoTests: XCTestCase {
    func testAnExportWrittenBeforeStillVerifiesWithItsDigest() throws {
        let folder = try XCTUnwrap(Bundle.module.url(forResource: "Fixtures", withExtension: nil))
        let path = folder.appendingPathComponent("export-before-libcrypto.jsonl").path
        let verified = try Moves.readExport(try LineInput.open(path))
        XCTAssertEqual(verified.seq, 15)
        XCTAssertEqual(verified.events, 15)
        // What `swiped verify` printed for this log with the Swift SHA-256.
        XCTAssertEqual(
            verified.digest, "sha256:4905b32bda3c4682b22cda3513687553ef403a88e262f484b75b16c3d9891e11")
    }

    /// A copy finishes on its own while the original goes on (the trailer's check does that).
    func testACopyFinishesWhileTheOriginalGoesOn() {
        var running = SHA256()
        running.update(Array("ab".utf8))
        var copy = running
        XCTAssertEqual(SHA256.hex(digest: copy.finish()), SHA256.hex(Array("ab".utf8)))
        running.update(Array("c".utf8))
        XCTAssertEqual(SHA256.hex(digest: running.finish()), SHA256.hex(Array("abc".utf8)))
    }
}

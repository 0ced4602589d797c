import XCTest

@testable import Daemon

#if canImport(Glibc)
    import Glibc
#endif

/// What a non-blocking send tells its caller: how much a socket took (0 when full), and, when it
/// fails, whether the peer went (how connections end) or something else did (a fault to report).
final class SyscallTests: XCTestCase {
    private func pair() throws -> (Int32, Int32) {
        var fds: [Int32] = [0, 0]
        let kind = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        XCTAssertEqual(socketpair(AF_UNIX, kind, 0, &fds), 0)
        return (fds[0], fds[1])
    }

    func testAFullSocketTakesNothingAndIsNoError() throws {
        let (a, b) = try pair()
        defer {
            close(a)
            close(b)
        }
        let chunk = [UInt8](repeating: 0x61, count: 65_536)
        var total = 0
        while true {
            let n = try chunk.withUnsafeBytes { raw throws(SystemError) in try writeNonBlocking(a, raw) }
            if n == 0 { break }
            total += n
            XCTAssertLessThan(total, 64 << 20, "a socket that never fills")
        }
        XCTAssertGreaterThan(total, 0)
    }

    func testASendToAPeerThatWentIsPeerGone() throws {
        let (a, b) = try pair()
        defer { close(a) }
        close(b)
        XCTAssertThrowsError(
            try [UInt8(0x61)].withUnsafeBytes { raw throws(SystemError) in try writeNonBlocking(a, raw) }
        ) {
            let error = $0 as? SystemError
            XCTAssertEqual(error?.errno, EPIPE)
            XCTAssertEqual(error?.peerGone, true)
            XCTAssertEqual(error?.description, "send: Broken pipe")
        }
    }

    func testOtherSendErrorsAreNotPeerGone() throws {
        let (a, b) = try pair()
        close(a)
        close(b)
        XCTAssertThrowsError(
            try [UInt8(0x61)].withUnsafeBytes { raw throws(SystemError) in try writeNonBlocking(a, raw) }
        ) {
            let error = $0 as? SystemError
            XCTAssertEqual(error?.errno, EBADF)
            XCTAssertEqual(error?.peerGone, false)
        }
        XCTAssertTrue(SystemError("send", errno: ECONNRESET).peerGone)
    }
}

// A Unix socket the test serves itself, so that the client's framing, decoding and errors are
// checked byte for byte with no daemon: what arrives in which read is the test's to choose.
import Foundation
import Glibc
import XCTest

final class FakeDaemon: @unchecked Sendable {
    let directory: String
    let path: String
    private let listener: Int32
    private let lock = NSLock()
    private var lines: [String] = []
    private let done = DispatchSemaphore(value: 0)

    /// What the served side does, in order.
    enum Step: Sendable {
        /// Writes these bytes with one `write`.
        case write(String)
        /// Waits, so that what was written before arrives in a read of its own.
        case pause
        /// Reads one line (a request), kept for `requests`.
        case readLine
        /// Closes the connection.
        case close
    }

    init() throws {
        var template = Array("/tmp/swiped-client-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw POSIXError(POSIXErrorCode(rawValue: errno)!) }
        directory = String(cString: made)
        path = directory + "/s.sock"
        listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: Array(path.utf8) + [0])
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard listener >= 0, bound == 0, listen(listener, 4) == 0 else {
            throw POSIXError(POSIXErrorCode(rawValue: errno)!)
        }
    }

    deinit {
        close(listener)
        unlink(path)
        rmdir(directory)
    }

    /// The connection a client made, accepted on the calling thread (a client's connect has
    /// already succeeded: the listener's backlog holds it).
    func accept() -> Int32 { Glibc.accept(listener, nil, nil) }

    /// Accepts one connection and runs `steps` on a thread of its own (for a client that blocks,
    /// such as `SwipedClient`, which waits for its hello); `finish` waits for the end.
    func serve(_ steps: [Step]) {
        Thread { [self] in
            let fd = accept()
            var buffer: [UInt8] = []
            for step in steps {
                switch step {
                case .write(let text): FakeDaemon.write(text, to: fd)
                case .pause: usleep(50_000)
                case .readLine:
                    var byte: UInt8 = 0
                    while read(fd, &byte, 1) == 1, byte != UInt8(ascii: "\n") { buffer.append(byte) }
                    lock.withLock { lines.append(String(decoding: buffer, as: UTF8.self)) }
                    buffer = []
                case .close: Glibc.close(fd)
                }
            }
            done.signal()
        }.start()
    }

    /// Waits until the served steps are done; the lines read, in order.
    func finish() -> [String] {
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success, "the fake daemon did not finish")
        return lock.withLock { lines }
    }

    /// Writes all of `text` to `fd`.
    static func write(_ text: String, to fd: Int32) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            guard n > 0 else { return XCTFail("write: \(String(cString: strerror(errno)))") }
            offset += n
        }
    }
}

/// The daemon's hello, as protocol 1 words it.
let hello =
    #"{"event":"hello","protocol":1,"server":"swiped 0.1.0","client":7,"seq":10,"writer":true}"# + "\n"

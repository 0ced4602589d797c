// NotifySocket: plays the service manager's side of sd_notify(3).
//
//     let notify = try NotifySocket()
//     let daemon = try Subprocess(swiped, [], environment: notify.environment)
//     try notify.waitFor("READY=1")
//     let status = try notify.waitFor("STATUS=")     // the next STATUS=… line, whole
//     daemon.kill(SIGTERM)
//     try notify.waitFor("STOPPING=1")
//
// A datagram may hold several newline-separated assignments; each one is recorded on its own,
// in order, in `assignments`.

import Foundation
import Glibc

final class NotifySocket {
    /// The socket's path, the value of NOTIFY_SOCKET.
    let path: String

    private let receiver: Receiver
    private let directory: TemporaryDirectory
    /// Where the next `waitFor` starts looking.
    private var cursor = 0

    /// Binds a datagram socket in a fresh temporary directory and starts receiving on a thread of
    /// its own, as a service manager does (so senders that wait, like `systemd-notify`'s
    /// BARRIER=1, never block on the test). The socket is writable by every user (mode 0666,
    /// directory 0755), so daemons run as test users can notify it too.
    init() throws {
        directory = try TemporaryDirectory("swiped-notify")
        let path = directory.file("notify.sock")
        self.path = path
        let fd = try retryingEINTR("socket") {
            socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        }
        do {
            var address = try unixAddress(path)
            try retryingEINTR("bind", path) {
                withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                    }
                }
            }
            try retryingEINTR("chmod", path) { chmod(path, 0o666) }
            try directory.allowOthers()
        } catch {
            close(fd)
            throw error
        }
        receiver = Receiver(fd: fd)
        let receiver = self.receiver
        let thread = Thread { receiver.run() }
        thread.name = "NotifySocket \(path)"
        thread.start()
    }

    deinit { receiver.cancel() }

    /// NOTIFY_SOCKET for a child's environment.
    var environment: [String: String?] { ["NOTIFY_SOCKET": path] }

    /// Every assignment received so far, in order ("READY=1", "STATUS=Idle.", …).
    var assignments: [String] { receiver.snapshot() }

    /// Waits for the next assignment (after the one the previous `waitFor` returned) that matches
    /// `expected` and returns it whole. `expected` ending in "=" ("STATUS=") matches any value of
    /// that variable; otherwise the assignment must be equal ("READY=1").
    /// On timeout, throws with everything received so far.
    @discardableResult
    func waitFor(_ expected: String, timeout: Duration = .seconds(10)) throws -> String {
        let start = cursor
        let found = receiver.wait(until: Deadline(timeout)) { received in
            received[min(start, received.count)...].firstIndex { Self.matches($0, expected) }
        }
        guard let (index, received) = found else {
            throw TimeoutError(
                "timed out after \(timeout) waiting for \(expected) on \(path); received: \(assignments)")
        }
        cursor = index + 1
        return received[index]
    }

    /// Waits `duration` and returns every assignment that arrived in that time (for checking that
    /// nothing, or only watchdog pings, came).
    func collect(for duration: Duration) -> [String] {
        let start = receiver.snapshot().count
        _ = receiver.wait(until: Deadline(duration)) { _ -> Int? in nil }
        return Array(receiver.snapshot()[start...])
    }

    /// How many received assignments equal `assignment` (such as "WATCHDOG=1").
    func count(_ assignment: String) -> Int {
        assignments.filter { $0 == assignment }.count
    }

    static func matches(_ assignment: String, _ expected: String) -> Bool {
        expected.hasSuffix("=") ? assignment.hasPrefix(expected) : assignment == expected
    }

    /// Receives datagrams until cancelled; file descriptors sent along (BARRIER=1, FDSTORE=1) are
    /// dropped by the kernel, since no control buffer is given, which closes them.
    private final class Receiver: @unchecked Sendable {
        private let condition = NSCondition()
        private let fd: Int32
        private var received: [String] = []
        private var cancelled = false

        init(fd: Int32) { self.fd = fd }

        func run() {
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                condition.lock()
                let stop = cancelled
                condition.unlock()
                if stop { break }
                var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard poll(&pfd, 1, 100) > 0 else { continue }
                let n = buffer.withUnsafeMutableBytes {
                    recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
                }
                guard n > 0 else { continue }
                let lines = String(decoding: buffer[0..<n], as: UTF8.self).split(separator: "\n").map(
                    String.init)
                condition.lock()
                received += lines
                condition.broadcast()
                condition.unlock()
            }
            close(fd)
        }

        func cancel() {
            condition.lock()
            cancelled = true
            condition.unlock()
        }

        func snapshot() -> [String] {
            condition.lock()
            defer { condition.unlock() }
            return received
        }

        /// Calls `find` with everything received, each time more arrives, until it returns an
        /// index or the deadline passes.
        func wait(until deadline: Deadline, _ find: ([String]) -> Int?) -> (Int, [String])? {
            condition.lock()
            defer { condition.unlock() }
            while true {
                if let index = find(received) { return (index, received) }
                if deadline.hasPassed { return nil }
                _ = condition.wait(until: Date(timeIntervalSinceNow: deadline.remaining.seconds))
            }
        }
    }
}

// Small wrappers over the C calls the harness makes: each call is wrapped once, retries EINTR,
// and keeps errno and the call's name in the error it throws.

import Foundation
import Glibc

/// A failed system call: its name, errno and what the harness was doing.
struct SystemCallError: Error, CustomStringConvertible {
    let call: String
    let errno: Int32
    let context: String

    init(_ call: String, errno: Int32 = Glibc.errno, _ context: String = "") {
        self.call = call
        self.errno = errno
        self.context = context
    }

    var description: String {
        let what = context.isEmpty ? "" : " (\(context))"
        return "\(call) failed: \(String(cString: strerror(errno))) [errno \(errno)]\(what)"
    }
}

/// A harness operation that ran out of time.
struct TimeoutError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Calls `body` until it stops failing with EINTR; throws for any other failure (result -1).
@discardableResult
func retryingEINTR<T: BinaryInteger>(
    _ call: String, _ context: String = "", _ body: () -> T
) throws -> T {
    while true {
        let result = body()
        if result != -1 { return result }
        let code = errno
        if code == EINTR { continue }
        throw SystemCallError(call, errno: code, context)
    }
}

extension Duration {
    /// The duration in (fractional) seconds.
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}

/// A point in time by which an operation must finish.
struct Deadline {
    let instant: ContinuousClock.Instant

    init(_ timeout: Duration) { instant = ContinuousClock.now.advanced(by: timeout) }

    var remaining: Duration { max(.zero, instant - ContinuousClock.now) }
    var hasPassed: Bool { ContinuousClock.now >= instant }

    /// Milliseconds left, rounded up, for poll(2); never negative.
    var pollMilliseconds: Int32 {
        let ms = (remaining.seconds * 1000).rounded(.up)
        return Int32(min(ms, Double(Int32.max)))
    }
}

/// Waits until `fd` is readable (or hung up) or the deadline passes. Returns false on timeout.
func waitReadable(_ fd: Int32, until deadline: Deadline) throws -> Bool {
    while true {
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let n = poll(&pfd, 1, deadline.pollMilliseconds)
        if n > 0 { return true }
        if n == 0 { return false }
        if errno == EINTR { continue }
        throw SystemCallError("poll", "fd \(fd)")
    }
}

/// Runs `body` until it returns a value or the deadline passes, sleeping a little in between
/// (5 ms growing to 50 ms). For conditions no file descriptor can signal, such as a path appearing.
func poll<T>(
    until timeout: Duration, _ what: @autoclosure () -> String, _ body: () throws -> T?
) throws -> T {
    let deadline = Deadline(timeout)
    var pause = 5_000 as useconds_t
    while true {
        if let value = try body() { return value }
        if deadline.hasPassed { throw TimeoutError("timed out after \(timeout) waiting for \(what())") }
        usleep(pause)
        pause = min(pause * 2, 50_000)
    }
}

/// A sockaddr_un for `path`; throws if the path does not fit (108 bytes with the NUL on Linux).
func unixAddress(_ path: String) throws -> sockaddr_un {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    let capacity = MemoryLayout.size(ofValue: address.sun_path)
    guard bytes.count < capacity else {
        throw SystemCallError("sockaddr_un", errno: ENAMETOOLONG, "\(path) is \(bytes.count) bytes")
    }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        raw.copyBytes(from: bytes)
        raw[bytes.count] = 0
    }
    return address
}

/// The process ignores SIGPIPE once, so writes to a closed pipe or socket fail with EPIPE
/// instead of killing the test runner.
let ignoreSIGPIPE: Void = {
    signal(SIGPIPE, SIG_IGN)
}()

/// The GNU extensions the harness needs. Swift's Glibc module is imported without _GNU_SOURCE
/// (and cannot call variadic functions such as prctl), so they are looked up with dlsym and
/// called through C function pointers of the right type.
enum GNU {
    private static func symbol<T>(_ name: String, as type: T.Type) -> T {
        guard let pointer = dlsym(nil, name) else {  // nil is RTLD_DEFAULT
            fatalError("\(name) is missing from the C library (glibc 2.34 or later is needed)")
        }
        return unsafeBitCast(pointer, to: type)
    }

    /// pipe2(2).
    static func pipe2(_ fds: UnsafeMutablePointer<Int32>, _ flags: Int32) -> Int32 {
        typealias Function = @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32
        return symbol("pipe2", as: Function.self)(fds, flags)
    }

    /// prctl(2), with all five arguments spelled out.
    static func prctl(_ option: Int32, _ a2: UInt, _ a3: UInt, _ a4: UInt, _ a5: UInt) -> Int32 {
        typealias Function = @convention(c) (Int32, UInt, UInt, UInt, UInt) -> Int32
        return symbol("prctl", as: Function.self)(option, a2, a3, a4, a5)
    }

    /// posix_spawn_file_actions_addchdir_np(3) (glibc 2.29).
    static func addchdir(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ path: String) -> Int32
    {
        typealias Function =
            @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32
        return symbol("posix_spawn_file_actions_addchdir_np", as: Function.self)(actions, path)
    }

    /// posix_spawn_file_actions_addclosefrom_np(3) (glibc 2.34): close every fd from `low` on.
    static func addclosefrom(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ low: Int32)
        -> Int32
    {
        typealias Function = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        return symbol("posix_spawn_file_actions_addclosefrom_np", as: Function.self)(actions, low)
    }
}

// Subprocess: a child program with pipes, timeouts and no leftovers.
//
// Every child is spawned in a process group of its own, and the test runner becomes a child
// subreaper (PR_SET_CHILD_SUBREAPER): whatever the child starts stays in that group and, when
// orphaned, becomes our child rather than PID 1's (which, in this container, reaps nothing).
// When the child exits, is waited for, times out or is dropped (deinit), the rest of its group
// is killed with SIGKILL and reaped. A failing test therefore leaves no process and no zombie.
//
//     let p = try Subprocess("socat", ["-V"])
//     let status = try p.wait(timeout: .seconds(5))          // always reaps
//     XCTAssertEqual(status, .exited(0), p.standardError)
//
//     let r = try Subprocess.run("sh", ["-c", "cat; echo err >&2"], input: "hi")
//     XCTAssertEqual(r.standardOutput, "hi")

import Foundation
import Glibc

/// How a child ended.
enum Termination: Equatable, CustomStringConvertible {
    case exited(Int32)
    case signaled(Int32)

    /// Exited with status 0.
    var isSuccess: Bool { self == .exited(0) }

    init(waitStatus status: Int32) {
        if status & 0x7f == 0 {
            self = .exited((status >> 8) & 0xff)
        } else {
            self = .signaled(status & 0x7f)
        }
    }

    var description: String {
        switch self {
        case .exited(let code): return "exited with status \(code)"
        case .signaled(let signal):
            return "killed by signal \(signal) (\(String(cString: strsignal(signal))))"
        }
    }
}

/// A child process. See the top of this file for the guarantees.
final class Subprocess {
    /// What the child reads on its standard input.
    enum Input {
        /// /dev/null.
        case null
        /// A pipe: feed it with `write(_:)`, end it with `closeStandardInput()`.
        case pipe
    }

    /// One of the two output streams.
    enum Stream: String {
        case standardOutput = "stdout"
        case standardError = "stderr"
    }

    /// The child's pid, which is also its process group id.
    let pid: pid_t
    /// The program (resolved path) and its arguments, for messages.
    let command: [String]

    private var stdinFD: Int32
    private let output: OutputCollector
    private var termination: Termination?

    /// Starts `program` (a path, or a name looked up in PATH, /usr/sbin, /sbin and
    /// /usr/lib/systemd) with `arguments`.
    ///
    /// - Parameters:
    ///   - environment: added to (or, with nil, removed from) the inherited environment.
    ///   - inheritEnvironment: false to start from an empty environment.
    ///   - workingDirectory: the child's current directory; the runner's when nil.
    ///   - input: /dev/null (default) or a pipe.
    init(
        _ program: String, _ arguments: [String] = [], environment: [String: String?] = [:],
        inheritEnvironment: Bool = true, workingDirectory: String? = nil, input: Input = .null
    ) throws {
        _ = ignoreSIGPIPE
        _ = Subprocess.becomeSubreaper
        let path = try Binaries.system(program)
        command = [path] + arguments

        var env = inheritEnvironment ? ProcessInfo.processInfo.environment : [:]
        for (key, value) in environment { env[key] = value }

        let out = try Subprocess.makePipe()
        let err = try Subprocess.makePipe()
        var inPipe: (read: Int32, write: Int32)? = nil
        if case .pipe = input { inPipe = try Subprocess.makePipe() }
        defer {
            // The child's ends; the parent keeps out.read, err.read and inPipe.write.
            close(out.write)
            close(err.write)
            if let inPipe { close(inPipe.read) }
        }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let inPipe {
            posix_spawn_file_actions_adddup2(&actions, inPipe.read, 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        posix_spawn_file_actions_adddup2(&actions, out.write, 1)
        posix_spawn_file_actions_adddup2(&actions, err.write, 2)
        if let workingDirectory {
            _ = GNU.addchdir(&actions, workingDirectory)
        }
        _ = GNU.addclosefrom(&actions, 3)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = command.map { strdup($0) } + [nil]
        let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var child = pid_t()
        let rc = posix_spawn(&child, path, &actions, &attributes, argv, envp)
        guard rc == 0 else {
            close(out.read)
            close(err.read)
            if let inPipe { close(inPipe.write) }
            throw SystemCallError("posix_spawn", errno: rc, path)
        }
        pid = child
        stdinFD = inPipe?.write ?? -1
        output = OutputCollector(stdout: out.read, stderr: err.read)
        let collector = output
        let thread = Thread { collector.run() }
        thread.name = "Subprocess \(child) output"
        thread.start()
    }

    deinit {
        if termination == nil {
            Glibc.kill(-pid, SIGKILL)
            _ = try? reap(until: Deadline(.seconds(5)))
        }
        closeStandardInput()
        output.cancel()
    }

    // MARK: Running to completion

    /// What a finished child left.
    struct Result {
        let status: Termination
        let standardOutput: String
        let standardError: String
    }

    /// Runs `program` to completion, feeding it `input` (nil: /dev/null).
    /// Throws on timeout, after killing the child and its group.
    static func run(
        _ program: String, _ arguments: [String] = [], input: String? = nil,
        environment: [String: String?] = [:], workingDirectory: String? = nil,
        timeout: Duration = .seconds(30)
    ) throws -> Result {
        let process = try Subprocess(
            program, arguments, environment: environment, workingDirectory: workingDirectory,
            input: input == nil ? .null : .pipe)
        if let input {
            try process.write(input)
            process.closeStandardInput()
        }
        let status = try process.wait(timeout: timeout)
        return Result(
            status: status, standardOutput: process.standardOutput, standardError: process.standardError)
    }

    /// Like `run`, but throws unless the program exits with status 0; returns its standard output.
    @discardableResult
    static func check(
        _ program: String, _ arguments: [String] = [], input: String? = nil,
        environment: [String: String?] = [:], timeout: Duration = .seconds(30)
    ) throws -> String {
        let result = try run(program, arguments, input: input, environment: environment, timeout: timeout)
        guard result.status.isSuccess else {
            throw SubprocessFailure(
                command: [program] + arguments, status: result.status, standardError: result.standardError)
        }
        return result.standardOutput
    }

    // MARK: Input and output

    /// Writes `text` to the child's standard input (requires `input: .pipe`).
    func write(_ text: String) throws {
        guard stdinFD >= 0 else {
            throw SystemCallError("write", errno: EBADF, "standard input is not a pipe")
        }
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let n = try retryingEINTR("write", "standard input of \(pid)") {
                bytes.withUnsafeBytes { Glibc.write(stdinFD, $0.baseAddress, $0.count) }
            }
            bytes = bytes.dropFirst(n)
        }
    }

    /// Closes the child's standard input, so it reads end-of-file.
    func closeStandardInput() {
        if stdinFD >= 0 {
            close(stdinFD)
            stdinFD = -1
        }
    }

    /// Everything the child wrote to standard output so far (UTF-8, invalid bytes replaced).
    var standardOutput: String { output.text(.standardOutput) }
    /// Everything the child wrote to standard error so far.
    var standardError: String { output.text(.standardError) }

    /// Waits until `stream` contains `needle`; returns the stream's text at that point.
    /// Throws on timeout or when the stream ends without it, with the text in the error.
    @discardableResult
    func waitForOutput(
        _ needle: String, in stream: Stream = .standardOutput, timeout: Duration = .seconds(10)
    ) throws -> String {
        let deadline = Deadline(timeout)
        let what = "\"\(needle)\" on \(stream.rawValue) of \(describe)"
        return try output.wait(stream, until: deadline) { text, ended in
            if text.contains(needle) { return text }
            if ended { throw TimeoutError("the stream ended without \(what):\n\(text)") }
            return nil
        } onTimeout: {
            TimeoutError("timed out after \(timeout) waiting for \(what):\n\($0)")
        }
    }

    // MARK: Signals and waiting

    /// Sends `signal` to the child, or with `group` to its whole process group.
    func kill(_ signal: Int32 = SIGTERM, group: Bool = false) {
        guard termination == nil else { return }
        Glibc.kill(group ? -pid : pid, signal)
    }

    /// Whether the child is still running (it has not exited).
    var isRunning: Bool { termination == nil && !((try? hasExited()) ?? true) }

    /// Waits for the child to exit and reaps it and whatever is left of its process group.
    /// On timeout, kills the group with SIGKILL, reaps it, and throws (with the child's output).
    @discardableResult
    func wait(timeout: Duration = .seconds(10)) throws -> Termination {
        if let termination { return termination }
        let deadline = Deadline(timeout)
        let exited = try Subprocess.poll(until: deadline) { try self.hasExited() }
        if !exited {
            Glibc.kill(-pid, SIGKILL)
            let status = try reap(until: Deadline(.seconds(5)))
            throw TimeoutError(
                "\(describe) did not exit within \(timeout); killed (\(status))\n"
                    + "stdout:\n\(standardOutput)\nstderr:\n\(standardError)")
        }
        return try reap(until: Deadline(.seconds(5)))
    }

    /// SIGTERM, then SIGKILL after `grace`; returns how the child ended.
    @discardableResult
    func terminate(grace: Duration = .seconds(3)) throws -> Termination {
        kill(SIGTERM)
        do {
            return try wait(timeout: grace)
        } catch is TimeoutError {
            return termination ?? .signaled(SIGKILL)
        }
    }

    private var describe: String { "`\(command.joined(separator: " "))` (pid \(pid))" }

    /// True once the child is a zombie (exited, not yet reaped: its pid cannot be reused).
    private func hasExited() throws -> Bool {
        var info = siginfo_t()
        try retryingEINTR("waitid", "pid \(pid)") {
            waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT)
        }
        return info.si_signo != 0
    }

    private static func poll(until deadline: Deadline, _ done: () throws -> Bool) throws -> Bool {
        var pause = 1_000 as useconds_t
        while true {
            if try done() { return true }
            if deadline.hasPassed { return false }
            usleep(pause)
            pause = min(pause * 2, 20_000)
        }
    }

    /// Reaps the exited (or SIGKILLed) child, then kills and reaps the rest of its group, then
    /// waits briefly for the output pipes to close.
    private func reap(until deadline: Deadline) throws -> Termination {
        // The leader is a zombie or dying, so its pid (the group id) cannot have been reused.
        Glibc.kill(-pid, SIGKILL)
        var status: Int32 = 0
        try retryingEINTR("waitpid", "pid \(pid)") { waitpid(pid, &status, 0) }
        let result = Termination(waitStatus: status)
        termination = result
        // Orphans of the group are reparented to us (subreaper): reap until none is left.
        _ = try Subprocess.poll(until: deadline) {
            var ignored: Int32 = 0
            while waitpid(-self.pid, &ignored, WNOHANG) > 0 {}
            return Glibc.kill(-self.pid, 0) == -1 && errno == ESRCH
        }
        output.waitUntilEnded(Deadline(.seconds(2)))
        return result
    }

    // MARK: Plumbing

    private static func makePipe() throws -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        try retryingEINTR("pipe2") { GNU.pipe2(&fds, O_CLOEXEC) }
        return (fds[0], fds[1])
    }

    /// prctl(PR_SET_CHILD_SUBREAPER, 1), once per process.
    private static let becomeSubreaper: Void = {
        _ = GNU.prctl(36 /* PR_SET_CHILD_SUBREAPER */, 1, 0, 0, 0)
    }()
}

/// A command that exited unsuccessfully.
struct SubprocessFailure: Error, CustomStringConvertible {
    let command: [String]
    let status: Termination
    let standardError: String

    var description: String {
        "`\(command.joined(separator: " "))` \(status)" + (standardError.isEmpty ? "" : ":\n\(standardError)")
    }
}

/// Drains a child's stdout and stderr on a thread of its own, so the child never blocks on a
/// full pipe, and lets the test wait for text to appear.
private final class OutputCollector: @unchecked Sendable {
    /// Each stream keeps at most this much (the newest bytes).
    static let cap = 16 << 20

    private let condition = NSCondition()
    private var fds: [Int32]
    private var buffers: [Data] = [Data(), Data()]
    private var ended = false
    private var cancelled = false

    init(stdout: Int32, stderr: Int32) { fds = [stdout, stderr] }

    func run() {
        var pfds = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        var chunk = [UInt8](repeating: 0, count: 65536)
        while pfds.contains(where: { $0.fd >= 0 }) {
            condition.lock()
            let stop = cancelled
            condition.unlock()
            if stop { break }
            let n = Glibc.poll(&pfds, nfds_t(pfds.count), 100)
            if n < 0 && errno != EINTR { break }
            guard n > 0 else { continue }
            for i in pfds.indices where pfds[i].fd >= 0 && pfds[i].revents != 0 {
                let count = chunk.withUnsafeMutableBytes { read(pfds[i].fd, $0.baseAddress, $0.count) }
                if count > 0 {
                    condition.lock()
                    buffers[i].append(contentsOf: chunk[0..<count])
                    if buffers[i].count > Self.cap { buffers[i].removeFirst(buffers[i].count - Self.cap) }
                    condition.broadcast()
                    condition.unlock()
                } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
                    pfds[i].fd = -1
                }
            }
        }
        condition.lock()
        fds.forEach { close($0) }
        ended = true
        condition.broadcast()
        condition.unlock()
    }

    func cancel() {
        condition.lock()
        cancelled = true
        condition.unlock()
    }

    func text(_ stream: Subprocess.Stream) -> String {
        condition.lock()
        defer { condition.unlock() }
        return String(decoding: buffers[stream == .standardOutput ? 0 : 1], as: UTF8.self)
    }

    func waitUntilEnded(_ deadline: Deadline) {
        condition.lock()
        defer { condition.unlock() }
        while !ended && !deadline.hasPassed {
            _ = condition.wait(until: Date(timeIntervalSinceNow: deadline.remaining.seconds))
        }
    }

    /// Calls `check` with the stream's text (and whether the stream ended) each time it grows,
    /// until it returns a value or the deadline passes.
    func wait<T>(
        _ stream: Subprocess.Stream, until deadline: Deadline, _ check: (String, Bool) throws -> T?,
        onTimeout: (String) -> Error
    ) throws -> T {
        condition.lock()
        defer { condition.unlock() }
        let index = stream == .standardOutput ? 0 : 1
        while true {
            let text = String(decoding: buffers[index], as: UTF8.self)
            if let value = try check(text, ended) { return value }
            if deadline.hasPassed { throw onTimeout(text) }
            _ = condition.wait(until: Date(timeIntervalSinceNow: deadline.remaining.seconds))
        }
    }
}

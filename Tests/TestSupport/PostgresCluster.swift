// PostgresCluster: a real PostgreSQL 15 server of a test's own, in a temporary directory.
//
//     let cluster = try PostgresCluster()                  // initdb, started, database "swiped"
//     let daemon = … ["--postgres", cluster.conninfo] …     // host=DIR dbname=swiped user=…
//     try cluster.stopImmediate()                          // SIGQUIT: a crash, WAL replay next
//     try cluster.start()                                  // the same data directory again
//     XCTAssertEqual(try cluster.psql("SELECT 1"), "1")
//     try cluster.destroy()                                // also done on deinit
//
// The server listens on a Unix socket in the directory only (`listen_addresses=''`), with
// `fsync=on` and `synchronous_commit=on`, so a commit it acknowledged survives `stopImmediate()`.
// The postmaster is this process's direct child (started by `setpriv`, which execs rather than
// forks), so the test waits for it with waitpid: PID 1 in the test container reaps nothing.
// As root, the directory is chowned to the `postgres` account and every PostgreSQL program runs
// as it (the server refuses to run as root); otherwise they run as the current user. The
// programs come from /usr/lib/postgresql/15/bin (Debian's `postgresql-15`), or
// `SWIPED_PG_BINDIR` when set.

import Foundation
import Glibc

/// A PostgreSQL cluster for one test: see the top of this file. Its names (`conninfo`,
/// `directory`) may be read from any thread; start, stop and destroy it from one thread at a time.
public final class PostgresCluster: @unchecked Sendable {
    /// What went wrong, with the server's log or the program's output.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// The temporary directory: the data directory `data/`, the socket, the server's log.
    public let directory: String
    /// The data directory (`postgres -D`).
    public let dataDirectory: String
    /// The directory that holds the Unix socket (`.s.PGSQL.5432`): libpq's `host`.
    public var socketDirectory: String { directory }
    /// The server's standard output and error, appended across restarts.
    public let logFile: String
    /// The database `init` created.
    public let database: String
    /// The role the tests connect as: the cluster's superuser (the account that runs the server).
    public let user: String
    /// A libpq connection string for `database` (no password: local connections are trusted).
    public var conninfo: String { conninfo(database: database) }

    /// The postmaster's pid while it runs.
    public private(set) var pid: pid_t?

    private let binaries: String
    /// Where PostgreSQL's programs are (initdb, createuser, createdb, psql…).
    public var binDirectory: String { binaries }
    private let runAs: (uid: uid_t, gid: gid_t)?
    private let settings: [String: String]
    private var destroyed = false

    /// Creates the cluster (initdb), starts it, and creates `database`.
    /// - Parameters:
    ///   - database: the database to create (nil: only the default `postgres` database).
    ///   - settings: more `-c name=value` server settings (e.g. `["max_connections": "200"]`).
    ///   - prefix: a few letters naming the directory under /tmp.
    public init(
        database: String? = "swiped", settings: [String: String] = [:], prefix: String = "swiped-pg"
    ) throws {
        binaries = ProcessInfo.processInfo.environment["SWIPED_PG_BINDIR"] ?? "/usr/lib/postgresql/15/bin"
        guard access("\(binaries)/postgres", X_OK) == 0 else {
            throw Failure(
                "PostgreSQL 15 is not installed (\(binaries)/postgres is missing): "
                    + "apt-get install postgresql (make test does it)")
        }
        var template = Array("/tmp/\(prefix).XXXXXX".utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
            throw Failure("mkdtemp /tmp/\(prefix).XXXXXX: \(String(cString: strerror(errno)))")
        }
        directory = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        dataDirectory = directory + "/data"
        logFile = directory + "/server.log"
        self.database = database ?? "postgres"
        self.settings = settings

        if geteuid() == 0 {
            guard let account = getpwnam("postgres") else {
                try? FileManager.default.removeItem(atPath: directory)
                throw Failure("running as root, but there is no `postgres` account to run the server as")
            }
            runAs = (account.pointee.pw_uid, account.pointee.pw_gid)
            user = "postgres"
            guard chown(directory, account.pointee.pw_uid, account.pointee.pw_gid) == 0 else {
                let reason = String(cString: strerror(errno))
                try? FileManager.default.removeItem(atPath: directory)
                throw Failure("chown \(directory) to postgres: \(reason)")
            }
        } else {
            runAs = nil
            user = getpwuid(geteuid()).map { String(cString: $0.pointee.pw_name) } ?? "postgres"
        }

        do {
            try run(
                "initdb",
                [
                    "-D", dataDirectory, "-U", user, "--auth=trust", "--encoding=UTF8", "--locale=C",
                    "--no-instructions",
                ], timeout: 120)
            try start()
            if let database { try createDatabase(database) }
        } catch {
            destroy()
            throw error
        }
    }

    deinit { destroy() }

    /// A libpq connection string for another database of this cluster.
    public func conninfo(database: String) -> String {
        "host=\(socketDirectory) dbname=\(database) user=\(user)"
    }

    // MARK: Starting and stopping

    /// Starts the server on the data directory (after `init`, `stopImmediate()` or `stop()`) and
    /// waits until it accepts connections. Throws, with the log, if it exits or is not ready in time.
    public func start(timeout: Double = 60) throws {
        guard pid == nil else { return }
        var arguments = ["-D", dataDirectory, "-k", socketDirectory]
        let fixed = ["listen_addresses": "", "fsync": "on", "synchronous_commit": "on"]
        for (name, value) in fixed.merging(settings, uniquingKeysWith: { $1 }).sorted(by: { $0.key < $1.key })
        {
            arguments += ["-c", "\(name)=\(value)"]
        }
        let child = try spawn("postgres", arguments, output: logFile)
        pid = child
        let deadline = Date(timeIntervalSinceNow: timeout)
        while true {
            var status: Int32 = 0
            if waitpid(child, &status, WNOHANG) == child {
                pid = nil
                throw Failure("postgres exited during start-up (\(describe(status))); log:\n\(logTail())")
            }
            if isReady() { return }
            if Date() > deadline {
                try? stopImmediate()
                throw Failure("postgres was not ready within \(timeout) s; log:\n\(logTail())")
            }
            usleep(10_000)
        }
    }

    /// An immediate shutdown (SIGQUIT to the postmaster, as `pg_ctl stop -m immediate`): no
    /// checkpoint, the next start replays the WAL, as after a crash. Waits for the postmaster
    /// (which first waits for its own children) and reaps it.
    public func stopImmediate(timeout: Double = 30) throws {
        try stop(signal: SIGQUIT, timeout: timeout)
    }

    /// A fast shutdown (SIGINT: connections are ended, then a checkpoint). Waits and reaps.
    public func stop(timeout: Double = 30) throws {
        try stop(signal: SIGINT, timeout: timeout)
    }

    /// Whether the postmaster runs (it has not exited).
    public var isRunning: Bool {
        guard let pid else { return false }
        var info = siginfo_t()
        return waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_signo == 0
    }

    /// Stops the server if it runs (immediately: the data is thrown away), reaps it, and removes
    /// the directory. Safe to call more than once; `deinit` calls it.
    public func destroy() {
        guard !destroyed else { return }
        destroyed = true
        if pid != nil {
            do {
                try stopImmediate(timeout: 15)
            } catch {
                // The postmaster did not exit on SIGQUIT: SIGKILL it and its process group.
                if let pid {
                    kill(-pid, SIGKILL)
                    var status: Int32 = 0
                    _ = waitpid(pid, &status, 0)
                }
                pid = nil
            }
        }
        do {
            try FileManager.default.removeItem(atPath: directory)
        } catch {
            FileHandle.standardError.write(
                Data("PostgresCluster: could not remove \(directory): \(error)\n".utf8))
        }
    }

    private func stop(signal: Int32, timeout: Double) throws {
        guard let child = pid else { return }
        kill(child, signal)
        let deadline = Date(timeIntervalSinceNow: timeout)
        var status: Int32 = 0
        while true {
            let reaped = waitpid(child, &status, WNOHANG)
            if reaped == child { break }
            if reaped == -1 && errno != EINTR {
                pid = nil
                throw Failure("waitpid \(child): \(String(cString: strerror(errno)))")
            }
            if Date() > deadline {
                kill(-child, SIGKILL)
                _ = waitpid(child, &status, 0)
                pid = nil
                throw Failure("postgres did not stop within \(timeout) s; killed; log:\n\(logTail())")
            }
            usleep(5_000)
        }
        pid = nil
        // The postmaster waits for its children before it exits; anything of its process group
        // left (none is expected) is killed, and reaped if it became ours.
        kill(-child, SIGKILL)
        while waitpid(-child, &status, WNOHANG) > 0 {}
    }

    /// Whether postmaster.pid's status line says "ready" (what `pg_ctl start -w` waits for).
    private func isReady() -> Bool {
        guard let text = try? String(contentsOfFile: dataDirectory + "/postmaster.pid", encoding: .utf8)
        else { return false }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        return lines.count >= 8 && lines[7].trimmingCharacters(in: .whitespaces) == "ready"
    }

    // MARK: SQL

    /// Creates a database (owned by `owner`, default the superuser).
    public func createDatabase(_ name: String, owner: String? = nil) throws {
        try run("createdb", ["-h", socketDirectory, "-U", user] + (owner.map { ["-O", $0] } ?? []) + [name])
    }

    /// Runs `sql` with psql in `database` (default: the cluster's), stopping at the first error;
    /// returns the rows unaligned (`|` between columns), without the trailing newline.
    @discardableResult
    public func psql(_ sql: String, database: String? = nil, timeout: Double = 120) throws -> String {
        let output = try run(
            "psql",
            [
                "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", socketDirectory, "-U", user,
                "-d", database ?? self.database, "-c", sql,
            ], timeout: timeout)
        return output.hasSuffix("\n") ? String(output.dropLast()) : output
    }

    /// Creates a login role that must give `password` (SCRAM) to reach its own new database
    /// `database` over the socket, as a deployed database would ask of swiped; the cluster's
    /// superuser stays trusted. Returns the conninfo for it, without the password.
    @discardableResult
    public func addPasswordRole(_ role: String, password: String, database: String) throws -> String {
        let quoted = password.replacingOccurrences(of: "'", with: "''")
        try psql("CREATE ROLE \(role) LOGIN PASSWORD '\(quoted)'")
        try createDatabase(database, owner: role)
        // pg_hba.conf is read top down: this line comes before initdb's `local all all trust`.
        let hba = dataDirectory + "/pg_hba.conf"
        let rules = try String(contentsOfFile: hba, encoding: .utf8)
        try ("local \(database) \(role) scram-sha-256\n" + rules).write(
            toFile: hba, atomically: false, encoding: .utf8)
        guard try psql("SELECT pg_reload_conf()") == "t" else { throw Failure("pg_reload_conf() failed") }
        return "host=\(socketDirectory) dbname=\(database) user=\(role)"
    }

    // MARK: Running programs

    /// Runs a PostgreSQL program to completion (as the server's account); returns its standard
    /// output and error. Throws unless it exits 0.
    @discardableResult
    private func run(_ program: String, _ arguments: [String], timeout: Double = 60) throws -> String {
        let output = directory + "/.\(program).\(UInt32.random(in: 0...UInt32.max)).out"
        defer { unlink(output) }
        let child = try spawn(program, arguments, output: output)
        let deadline = Date(timeIntervalSinceNow: timeout)
        var status: Int32 = 0
        while waitpid(child, &status, WNOHANG) != child {
            if Date() > deadline {
                kill(-child, SIGKILL)
                _ = waitpid(child, &status, 0)
                throw Failure("\(program) did not finish within \(timeout) s; killed")
            }
            usleep(2_000)
        }
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        guard status == 0 else {
            throw Failure("\(program) \(arguments.joined(separator: " ")) \(describe(status)):\n\(text)")
        }
        return text
    }

    /// Starts `program` from the PostgreSQL binaries in a process group of its own, as the
    /// server's account, in the cluster's directory, its stdout and stderr appended to `output`.
    private func spawn(_ program: String, _ arguments: [String], output: String) throws -> pid_t {
        var command = ["\(binaries)/\(program)"] + arguments
        if let runAs {
            // setpriv execs the program (runuser forks and waits): the postmaster stays our child.
            command =
                ["/usr/bin/setpriv", "--reuid=\(runAs.uid)", "--regid=\(runAs.gid)", "--init-groups", "--"]
                + command
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        _ = Spawn.addchdir(&actions, directory)
        _ = Spawn.addclosefrom(&actions, 3)

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

        // A fixed environment: the runner's PG* variables must not redirect the programs.
        var environment = ["PATH=/usr/bin:/bin", "LC_ALL=C", "TZ=UTC"]
        environment.append("HOME=\(directory)")
        let argv = command.map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var child = pid_t()
        let rc = posix_spawn(&child, command[0], &actions, &attributes, argv, envp)
        guard rc == 0 else {
            throw Failure("posix_spawn \(command[0]): \(String(cString: strerror(rc)))")
        }
        return child
    }

    /// The last lines of the server's log, for messages.
    public func logTail(lines: Int = 40) -> String {
        let text = (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? "(no log)"
        return text.split(separator: "\n", omittingEmptySubsequences: false).suffix(lines).joined(
            separator: "\n")
    }

    private func describe(_ status: Int32) -> String {
        status & 0x7f == 0
            ? "exited with status \((status >> 8) & 0xff)" : "killed by signal \(status & 0x7f)"
    }
}

/// The posix_spawn file actions glibc has but Swift's Glibc module does not import (it is built
/// without _GNU_SOURCE): looked up with dlsym, called through C function pointers.
private enum Spawn {
    private static func symbol<T>(_ name: String, as type: T.Type) -> T {
        guard let pointer = dlsym(nil, name) else {  // nil is RTLD_DEFAULT
            fatalError("\(name) is missing from the C library (glibc 2.34 or later is needed)")
        }
        return unsafeBitCast(pointer, to: type)
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

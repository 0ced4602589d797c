// PrivateJournal: runs a shell script next to a real systemd-journald of its own, and reads back
// the journal entries written while it runs.
//
// All at once, for a script that ends by itself:
//
//     let run = try PrivateJournal.run(script: "systemd-cat -t swiped-test echo hello")
//     XCTAssertEqual(run.entries(identifier: "swiped-test").first?["MESSAGE"], "hello")
//
// Or as a session, for a daemon the test talks to meanwhile (socket paths under /tmp are the
// same inside and outside the namespace):
//
//     let journal = try PrivateJournal(script: #"exec "$SWIPED" --socket "$TEST_DIR/s.sock" --state "$TEST_DIR/st""#,
//                                      environment: ["SWIPED": try Binaries.swiped])
//     let client = try LineClient(path: journal.directory.file("s.sock"))
//     ...
//     let connects = try journal.entries().filter { $0["MESSAGE"] == "…" }     // mid-run
//     let run = try journal.stop()                        // SIGTERM to the script, then the rest
//     XCTAssertEqual(run.status, .exited(0))
//
// How: `unshare --mount --propagation private` gives the script a mount namespace of its own,
// in which tmpfs is mounted over /run/systemd, /run/log (and /var/log/journal if it exists), so
// the host's journal and sockets are hidden and nothing is written to them (/run/log is created
// on the host first if missing). A journald.conf.d drop-in there sets Storage=volatile (the
// journal goes to /run/log/journal), no kmsg, no forwarding, no rate limit. systemd-journald
// starts in the background, and the script starts only once journald's sockets exist
// (libsystemd drops entries silently when nothing listens at /run/systemd/journal/socket).
// Reading the entries is `journalctl --sync` (waits until journald has written everything
// queued) and `journalctl -o json`, into a file the test reads back. journald is stopped on
// every way out, and the whole namespace is one Subprocess: nothing outlives the test.
//
// The script runs with `sh` (no -e) in $TEST_DIR, a temporary directory shared with the test
// (`directory`), stdin from /dev/null, stdout and stderr into `output`. End it with `exec` when it
// starts a daemon, so that `stop()` signals the daemon itself.

import Foundation
import Glibc

final class PrivateJournal {
    /// What a script run left.
    struct Result {
        /// How the script ended (its own exit status; 128+N is reported as signal N).
        let status: Termination
        /// Every journal entry, oldest first, as journalctl -o json gives them (binary or
        /// repeated fields are decoded as UTF-8, repeated values joined with "\n").
        let entries: [[String: String]]
        /// The script's standard output and standard error, interleaved.
        let output: String
        /// The script's $TEST_DIR; removed when the result (and the PrivateJournal) are dropped.
        let directory: TemporaryDirectory

        /// The entries with SYSLOG_IDENTIFIER `identifier`.
        func entries(identifier: String) -> [[String: String]] {
            entries.filter { $0["SYSLOG_IDENTIFIER"] == identifier }
        }

        /// The entries whose fields include every pair of `fields`.
        func entries(matching fields: [String: String]) -> [[String: String]] {
            entries.filter { entry in fields.allSatisfy { entry[$0.key] == $0.value } }
        }
    }

    /// Why a private journal could not be set up or read (not: the script failed).
    struct SetupError: Error, CustomStringConvertible {
        let description: String
    }

    static let journald = "/usr/lib/systemd/systemd-journald"

    /// $TEST_DIR: the script's working directory, shared with the test.
    let directory: TemporaryDirectory
    /// The namespace (unshare, then the wrapper shell, journald and the script).
    let process: Subprocess
    private var dumps = 0

    /// Starts journald in a private mount namespace, then `script` (with `sh`) next to it, and
    /// returns once the script has been started.
    /// - Parameter environment: added to the script's environment.
    init(script: String, environment: [String: String] = [:], timeout: Duration = .seconds(10)) throws {
        for program in ["unshare", "journalctl", "mount"] { _ = try Binaries.system(program) }
        guard access(Self.journald, X_OK) == 0 else {
            throw MissingProgram(
                description: "\(Self.journald) not found; install the Debian package systemd")
        }
        directory = try TemporaryDirectory("swiped-journal")
        try directory.write("script.sh", script)
        try directory.write("wrapper.sh", Self.wrapper)
        var env: [String: String?] = ["TEST_DIR": directory.path, "JOURNALD": Self.journald]
        for (key, value) in environment { env[key] = value }
        process = try Subprocess(
            "unshare", ["--mount", "--propagation", "private", "sh", directory.file("wrapper.sh")],
            environment: env, input: .pipe)
        do {
            try process.waitForOutput("STARTED\n", timeout: timeout)
        } catch {
            throw SetupError(description: "the private journal did not start: \(error)\n\(setupLog)")
        }
    }

    /// Everything journald has received so far (after `journalctl --sync`).
    func entries(timeout: Duration = .seconds(10)) throws -> [[String: String]] {
        dumps += 1
        try process.write("dump\n")
        do {
            try process.waitForOutput("DUMPED \(dumps)\n", timeout: timeout)
        } catch {
            throw SetupError(description: "could not read the private journal: \(error)\n\(setupLog)")
        }
        let json = try directory.read("journal.json")
        let entries = try json.split(separator: "\n").map { try Self.parseEntry(String($0)) }
        guard entries.contains(where: { $0["SYSLOG_IDENTIFIER"] == "systemd-journald" }) else {
            throw SetupError(description: "journald wrote no entry of its own:\n\(setupLog)")
        }
        return entries
    }

    /// Waits for the script to end by itself, then returns everything.
    func finish(timeout: Duration = .seconds(20)) throws -> Result { try end("wait", timeout: timeout) }

    /// Sends SIGTERM to the script (a daemon it exec'ed), waits for it, then returns everything.
    func stop(timeout: Duration = .seconds(10)) throws -> Result { try end("term", timeout: timeout) }

    /// The script's output so far.
    var output: String { (try? directory.read("output")) ?? "" }

    /// What the wrapper and journald said (for failures).
    private var setupLog: String {
        "setup log:\n\((try? directory.read("setup")) ?? "")\nstderr:\n\(process.standardError)"
    }

    private func end(_ command: String, timeout: Duration) throws -> Result {
        let deadline = Deadline(timeout)
        try process.write("\(command)\n")
        try process.waitForOutput("ENDED\n", timeout: deadline.remaining)
        let entries = try self.entries(timeout: deadline.remaining)
        process.closeStandardInput()
        let namespace = try process.wait(timeout: deadline.remaining)
        guard namespace.isSuccess,
            let text = try? directory.read("status"),
            let code = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines))
        else {
            throw SetupError(description: "the private journal ended badly (\(namespace))\n\(setupLog)")
        }
        return Result(
            status: code > 128 ? .signaled(code - 128) : .exited(code), entries: entries, output: output,
            directory: directory)
    }

    /// Runs `script` to its end inside a private mount namespace with its own journald.
    /// - Parameters:
    ///   - environment: added to the script's environment.
    ///   - timeout: for the whole run; the namespace is killed after it.
    static func run(
        script: String, environment: [String: String] = [:], timeout: Duration = .seconds(20)
    ) throws -> Result {
        let deadline = Deadline(timeout)
        let journal = try PrivateJournal(
            script: script, environment: environment, timeout: deadline.remaining)
        return try journal.finish(timeout: deadline.remaining)
    }

    /// One line of `journalctl -o json`: values are strings, byte arrays (binary or invalid
    /// UTF-8), or arrays of those (a field given more than once).
    static func parseEntry(_ line: String) throws -> [String: String] {
        guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            throw SetupError(description: "journalctl printed a line that is not an object: \(line)")
        }
        func text(_ value: Any) -> String {
            if let string = value as? String { return string }
            if let bytes = value as? [Int] {
                return String(decoding: bytes.map { UInt8(truncatingIfNeeded: $0) }, as: UTF8.self)
            }
            if let values = value as? [Any] { return values.map(text).joined(separator: "\n") }
            return "\(value)"
        }
        return object.mapValues(text)
    }

    /// The namespace's shell: mounts, journald, the script in the background, then commands from
    /// the test on stdin: `dump` (sync and export, answer `DUMPED n`), `wait` or `term` (end the
    /// script, record its status, answer `ENDED`). Its own diagnostics go to $TEST_DIR/setup.
    static let wrapper = #"""
        exec 3>"$TEST_DIR/setup" 2>&3
        set -eu
        [ -d /run/log ] || mkdir -p /run/log
        mount -t tmpfs -o mode=0755 tmpfs /run/systemd
        mount -t tmpfs -o mode=0755 tmpfs /run/log
        if [ -d /var/log/journal ]; then mount -t tmpfs -o mode=0755 tmpfs /var/log/journal; fi
        mkdir -p /run/systemd/journal /run/systemd/journald.conf.d
        cat >/run/systemd/journald.conf.d/50-private.conf <<'EOF'
        [Journal]
        Storage=volatile
        ReadKMsg=no
        ForwardToSyslog=no
        ForwardToKMsg=no
        ForwardToConsole=no
        ForwardToWall=no
        RateLimitIntervalSec=0
        RateLimitBurst=0
        RuntimeMaxUse=64M
        EOF
        SYSTEMD_LOG_TARGET=console "$JOURNALD" </dev/null >&3 2>&3 &
        journald_pid=$!
        script_pid=
        cleanup() {
            [ -z "$script_pid" ] || kill -KILL "$script_pid" 2>/dev/null || true
            kill "$journald_pid" 2>/dev/null || true
            wait "$journald_pid" 2>/dev/null || true
        }
        trap cleanup EXIT
        i=0
        until [ -S /run/systemd/journal/socket ] && [ -S /run/systemd/journal/stdout ] \
              && [ -S /run/systemd/journal/io.systemd.journal ]; do
            i=$((i + 1))
            if [ $i -gt 1000 ] || ! kill -0 "$journald_pid" 2>/dev/null; then
                echo "systemd-journald did not come up" >&3; exit 1
            fi
            sleep 0.01
        done
        (cd "$TEST_DIR" && exec sh "$TEST_DIR/script.sh") </dev/null >"$TEST_DIR/output" 2>&1 &
        script_pid=$!
        echo STARTED
        dumps=0
        while read -r command; do
            case "$command" in
            dump)
                journalctl --sync
                journalctl --directory=/run/log/journal --output=json --no-pager >"$TEST_DIR/journal.tmp"
                mv "$TEST_DIR/journal.tmp" "$TEST_DIR/journal.json"
                dumps=$((dumps + 1))
                echo "DUMPED $dumps"
                ;;
            wait|term)
                [ "$command" = wait ] || kill -TERM "$script_pid" 2>/dev/null || true
                status=0
                wait "$script_pid" || status=$?
                script_pid=
                echo "$status" >"$TEST_DIR/status"
                echo ENDED
                ;;
            esac
        done
        """#
}

// Binaries: where the programs the integration tests run are.
//
//     let swiped = try Binaries.swiped                  // .build/debug/swiped, next to the tests
//     let socat = try Binaries.system("socat")          // /usr/bin/socat
//
// Both throw a `MissingProgram` that says what to do ("run `swift build` first", "install the
// Debian package socat") rather than failing later with ENOENT.

import Foundation
import Glibc

/// A program a test needs is not there.
struct MissingProgram: Error, CustomStringConvertible {
    let description: String
}

enum Binaries {
    /// The directory of the built products: `$SWIPED_BUILD_DIR` if set, else the directory of
    /// the running test bundle (`.build/<triple>/debug` for `swift test`).
    static var buildDirectory: String {
        if let dir = ProcessInfo.processInfo.environment["SWIPED_BUILD_DIR"], !dir.isEmpty { return dir }
        let exe =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
        var url = URL(fileURLWithPath: exe)
        // On Linux the bundle is the executable itself; elsewhere it is a directory inside it.
        while url.path != "/" && !url.lastPathComponent.hasSuffix(".xctest") { url.deleteLastPathComponent() }
        if url.path == "/" { url = URL(fileURLWithPath: exe) }
        return url.deletingLastPathComponent().path
    }

    /// The product `name` (an executable target of this package), built next to the tests.
    static func product(_ name: String) throws -> String {
        let path = "\(buildDirectory)/\(name)"
        guard access(path, X_OK) == 0 else {
            throw MissingProgram(
                description: "\(path) not found: run `swift build` (or `swift build --build-tests`) first, "
                    + "or point SWIPED_BUILD_DIR at the directory holding the built products")
        }
        return path
    }

    /// The daemon.
    static var swiped: String { get throws { try product("swiped") } }
    /// The command-line client.
    static var swipectl: String { get throws { try product("swipectl") } }
    /// The crash-consistency helper of the event log.
    static var logTorture: String { get throws { try product("log-torture") } }

    /// Directories searched after PATH: the runner's PATH may lack the sbin directories, and
    /// systemd keeps its daemons in /usr/lib/systemd.
    static let extraSearchPath = [
        "/usr/local/sbin", "/usr/sbin", "/sbin", "/usr/bin", "/bin", "/usr/lib/systemd",
    ]

    /// The Debian package that provides each system program the tests use.
    static let debianPackage: [String: String] = [
        "systemd-analyze": "systemd", "systemd-notify": "systemd", "systemd-socket-activate": "systemd",
        "systemd-cat": "systemd", "journalctl": "systemd", "systemd-journald": "systemd",
        "systemd-sysusers": "systemd",
        "unshare": "util-linux", "setpriv": "util-linux", "logger": "bsdutils", "mount": "mount",
        "socat": "socat", "nc": "netcat-openbsd", "useradd": "passwd", "groupadd": "passwd",
        "usermod": "passwd", "getent": "libc-bin", "pkill": "procps", "ps": "procps",
    ]

    /// The absolute path of the system program `name` (a path is returned as is, if executable).
    static func system(_ name: String) throws -> String {
        if name.contains("/") {
            guard access(name, X_OK) == 0 else {
                throw MissingProgram(description: "\(name) is not executable")
            }
            return name
        }
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        for dir in path + extraSearchPath where !dir.isEmpty {
            let candidate = "\(dir)/\(name)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        let hint =
            debianPackage[name].map { "; install it with `apt-get install \($0)` (or `make test`)" } ?? ""
        throw MissingProgram(description: "program `\(name)` not found in PATH or \(extraSearchPath)\(hint)")
    }

    /// Whether the system program `name` exists.
    static func hasSystem(_ name: String) -> Bool { (try? system(name)) != nil }
}

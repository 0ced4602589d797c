// TestUsers: real users and a group for permission tests (`--writers GROUP`, socket modes).
//
//     let users = try TestUsers.ensure()                     // idempotent; needs root
//     let daemon = try Subprocess("swiped", ["--writers", TestUsers.writersGroup, …])
//     let asReader = try Subprocess(
//         "setpriv", TestUsers.setpriv(users.reader) + [try Binaries.swipectl, "add", "Heat"])
//
// The users are system users without a home directory or a login shell, created once per
// machine with useradd/groupadd (Debian package passwd) and left in place: creating them again
// is a no-op, so concurrent test runs and re-runs are fine.

import Foundation
import Glibc

enum TestUsers {
    /// A user as the system knows it.
    struct User: Equatable {
        let name: String
        let uid: uid_t
        /// The primary group.
        let gid: gid_t
    }

    /// The group whose members may write (for `--writers`).
    static let writersGroup = "swiped-it-writers"
    /// A user in `writersGroup`.
    static let writerName = "swiped-it-writer"
    /// A user not in `writersGroup`.
    static let readerName = "swiped-it-reader"

    /// The two test users and the writers group's gid.
    struct Users {
        let writer: User
        let reader: User
        let writersGID: gid_t
    }

    /// Creates (if missing) the writers group, the writer (a member of it) and the reader (not a
    /// member). Throws, saying so, when not root.
    static func ensure() throws -> Users {
        guard geteuid() == 0 else {
            throw MissingProgram(
                description: "TestUsers needs root (useradd, setpriv); run the tests as root")
        }
        let writersGID = try ensureGroup(writersGroup)
        let writer = try ensureUser(writerName, groups: [writersGroup])
        let reader = try ensureUser(readerName, groups: [])
        guard !isMember(readerName, of: writersGroup) else {
            throw SubprocessFailure(
                command: ["check"], status: .exited(1),
                standardError:
                    "\(readerName) is in \(writersGroup); remove it: gpasswd -d \(readerName) \(writersGroup)"
            )
        }
        return Users(writer: writer, reader: reader, writersGID: writersGID)
    }

    /// setpriv arguments that run the rest of the command line as `user`, with its primary group
    /// and its supplementary groups from /etc/group (the environment is kept: NOTIFY_SOCKET, …).
    /// Use as `Subprocess("setpriv", TestUsers.setpriv(user) + [program] + arguments)`.
    static func setpriv(_ user: User) -> [String] {
        ["--reuid=\(user.uid)", "--regid=\(user.gid)", "--init-groups", "--"]
    }

    /// The user named `name`, if it exists.
    static func user(named name: String) -> User? {
        guard let entry = getpwnam(name) else { return nil }
        return User(name: name, uid: entry.pointee.pw_uid, gid: entry.pointee.pw_gid)
    }

    /// The gid of the group named `name`, if it exists.
    static func group(named name: String) -> gid_t? {
        getgrnam(name).map { $0.pointee.gr_gid }
    }

    /// Whether `user` is listed as a member of `group` in /etc/group.
    static func isMember(_ user: String, of group: String) -> Bool {
        guard let entry = getgrnam(group), var member = entry.pointee.gr_mem else { return false }
        while let name = member.pointee {
            if String(cString: name) == user { return true }
            member += 1
        }
        return false
    }

    /// Creates the system group `name` unless it exists; returns its gid.
    @discardableResult
    static func ensureGroup(_ name: String) throws -> gid_t {
        try retrying("group \(name)") {
            if let gid = group(named: name) { return gid }
            _ = try? Subprocess.check("groupadd", ["--system", name])
            return group(named: name)
        }
    }

    /// Creates the system user `name` (own primary group, no home, nologin) unless it exists, and
    /// adds it to `groups` unless already a member; returns it.
    @discardableResult
    static func ensureUser(_ name: String, groups: [String]) throws -> User {
        let user = try retrying("user \(name)") { () -> User? in
            if let existing = Self.user(named: name) { return existing }
            _ = try? Subprocess.check(
                "useradd",
                ["--system", "--no-create-home", "--user-group", "--shell", "/usr/sbin/nologin", name])
            return Self.user(named: name)
        }
        for group in groups {
            try retrying("\(name) in \(group)") { () -> Bool? in
                if isMember(name, of: group) { return true }
                _ = try? Subprocess.check("usermod", ["--append", "--groups", group, name])
                return isMember(name, of: group) ? true : nil
            }
        }
        return user
    }

    /// Runs `attempt` until it returns a value: another test run may hold the lock on
    /// /etc/passwd or have just created the same user.
    @discardableResult
    private static func retrying<T>(_ what: String, _ attempt: () throws -> T?) throws -> T {
        for _ in 0..<20 {
            if let value = try attempt() { return value }
            usleep(100_000)
        }
        throw SubprocessFailure(
            command: ["useradd/groupadd/usermod"], status: .exited(1),
            standardError: "could not create \(what)")
    }
}

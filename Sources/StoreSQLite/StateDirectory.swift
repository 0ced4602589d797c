// The state directory (issue 40): the names a store keeps in it, and who besides its owner may
// reach them. One place for both, so that the daemon, `swiped import` and the checks that keep
// `backup` and `export` off the store's files agree on what the store's files are.
import Glibc
import StoreCore

public enum StateDirectory {
    /// The log.
    public static let logName = "events.sqlite3"
    /// What SQLite keeps beside the log: its write-ahead log and shared memory while it is open,
    /// a rollback journal during a migration. After a crash they may hold committed writes, and
    /// SQLite replays a `-wal` onto whatever file has the log's name when it is next opened.
    public static let logCompanions = ["-wal", "-shm", "-journal"].map { logName + $0 }
    /// `DirectoryLock`'s file.
    public static let lockName = "lock"
    /// Every name a store uses in its state directory.
    public static let storeNames = [logName] + logCompanions + [lockName]

    /// Who besides its owner may reach a state directory, from its mode.
    public struct Exposure: Equatable, Sendable {
        /// The permission bits (`st_mode & 0o7777`).
        public var mode: UInt32

        public init(mode: UInt32) { self.mode = mode & 0o7777 }

        /// Others than the owner and the group may create, rename and remove names in it, so
        /// anyone could put another file in the log's place (even with the sticky bit, a name
        /// the store has not made yet, such as `events.sqlite3-wal`, is anyone's to create).
        public var writableByOthers: Bool { mode & 0o002 != 0 }
        /// Neither the group nor others may read, search or change it: the owner's alone.
        public var isPrivate: Bool { mode & 0o077 == 0 }

        /// "mode 0755 (group r-x, others r-x)".
        public var description: String {
            func bits(_ b: UInt32) -> String {
                (b & 4 != 0 ? "r" : "-") + (b & 2 != 0 ? "w" : "-") + (b & 1 != 0 ? "x" : "-")
            }
            var octal = String(mode, radix: 8)
            while octal.count < 4 { octal = "0" + octal }
            return "mode \(octal) (group \(bits(mode >> 3 & 7)), others \(bits(mode & 7)))"
        }
    }

    /// The mode of `directory` (following a symlink, as opening the log does).
    public static func exposure(of directory: String) throws(StoreError) -> Exposure {
        var st = stat()
        guard stat(directory, &st) == 0 else {
            throw StoreError(.storage, "\(directory): cannot stat: \(String(cString: strerror(errno)))")
        }
        return Exposure(mode: UInt32(st.st_mode))
    }

    /// Why a state directory others may write is not used, and what to do: for the daemon's
    /// "cannot start" and `swiped import`'s refusal.
    public static func refusal(_ directory: String, _ exposure: Exposure) -> String {
        "\(directory): the state directory is writable by others, \(exposure.description): anyone could put another file in the log's place; make it its owner's alone (chmod 0700 \(directory)) and try again"
    }

    /// The warning's reason for a state directory the group or others may look into.
    public static func openness(_ directory: String, _ exposure: Exposure) -> String {
        "\(directory): the state directory is open to others than its owner, \(exposure.description); chmod 0700 \(directory) keeps the log to its owner"
    }
}

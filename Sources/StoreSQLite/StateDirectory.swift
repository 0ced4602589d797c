// The state directory (issue 40): the names a store keeps in it, in one place, so that the
// daemon, `swiped import` and the checks that keep `backup` and `export` off the store's files
// agree on what the store's files are.

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
}

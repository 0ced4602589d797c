// What keeps `backup` and `export` off the store they read, and says what the subcommands think
// of a state directory others may reach (issue 40).
//
// `swiped backup --state st st/events.sqlite3 --force` used to rename its copy over the log of a
// running daemon, which went on acknowledging writes into a file no longer there; aimed at
// `events.sqlite3-wal` it took every write since the last checkpoint. A path is compared by what
// it is, not by how it is spelled: device and inode, after symlinks (`..`, `./`, a symlink to the
// log or to the state directory, a hard link to the log all name the same file).
import Glibc
import StoreCore
import StoreSQLite

enum StoreGuard {
    /// A file's identity, whatever its names.
    struct FileID: Hashable {
        var device: UInt64
        var inode: UInt64
        init(_ st: stat) {
            device = UInt64(st.st_dev)
            inode = UInt64(st.st_ino)
        }
    }

    /// The state directory of `location` and its store's files as they are now, by identity;
    /// nil when there is none to guard (PostgreSQL, or a directory that is not there: nothing in
    /// it to overwrite, and the read that follows says why it cannot be read).
    static func storeFiles(_ location: StoreLocation) -> (directory: FileID, files: [FileID: String])? {
        guard case .state(let directory) = location else { return nil }
        var st = stat()
        guard stat(directory, &st) == 0 else { return nil }
        let id = FileID(st)
        var files: [FileID: String] = [:]
        for name in StateDirectory.storeNames where stat(directory + "/" + name, &st) == 0 {
            files[FileID(st)] = name
        }
        return (id, files)
    }

    /// Refuses `target` as the output of `command` when it is one of the store's files or the
    /// state directory, or lies anywhere inside it (where the file and its temporary
    /// `.NAME.tmp-PID` would be made and renamed), with or without --force.
    static func refuseOutput(_ target: String, of command: String, reading location: StoreLocation)
        throws(Fault)
    {
        guard case .state(let directory) = location, let store = storeFiles(location) else { return }
        let never = "\(command) never writes into the store it reads, with or without --force"
        var st = stat()
        // Through symlinks: a symlink to the log, or a hard link to it, is the log.
        if stat(target, &st) == 0 {
            let id = FileID(st)
            if id == store.directory {
                throw Fault("\(target) is the state directory \(directory): \(never); name a file outside it")
            }
            if let name = store.files[id] {
                throw Fault(
                    "\(target) is the store's \(name) (in the state directory \(directory)): \(never); name a file outside the state directory"
                )
            }
        }
        // Where the new file is made (beside the name given), and where the name leads.
        var places = [Files.directory(of: target)]
        if let resolved = realPath(target) { places.append(Files.directory(of: resolved)) }
        for place in places where isInside(place, store.directory) {
            throw Fault(
                "\(target) is inside the state directory \(directory), where a file \(command) makes could take the place of the log's: \(never); name a file outside the state directory"
            )
        }
    }

    /// Refuses to write an export to standard output when it is one of the store's files
    /// (`swiped export --state st >> st/events.sqlite3`).
    static func refuseStandardOutput(reading location: StoreLocation) throws(Fault) {
        guard case .state(let directory) = location, let store = storeFiles(location) else { return }
        var st = stat()
        guard fstat(1, &st) == 0, let name = store.files[FileID(st)] else { return }
        throw Fault(
            "standard output is the store's \(name) (in the state directory \(directory)): export never writes into the store it reads (a redirection with > empties the file before swiped starts: if it was one, stop the daemon and check the log with swiped verify --state \(directory))"
        )
    }

    /// Whether `path` (a directory, resolved through every symlink) is `directory` or lies
    /// below it. A path that cannot be resolved is not there: nothing can be made in it.
    static func isInside(_ path: String, _ directory: FileID) -> Bool {
        guard var at = realPath(path) else { return false }
        var st = stat()
        while true {
            if stat(at, &st) == 0 && FileID(st) == directory { return true }
            if at == "/" { return false }
            // `at` is canonical (no symlink, no `..`): its parent is its prefix.
            at = Files.directory(of: at)
        }
    }

    static func realPath(_ path: String) -> String? {
        guard let p = realpath(path, nil) else { return nil }
        defer { free(p) }
        return String(cString: p)
    }

    // MARK: - Who may reach the state directory

    /// What `command` makes of a state directory the group or others may reach: import refuses
    /// one others may write (the daemon would refuse to start on it); every subcommand warns,
    /// and goes on, for the rest. Returns the warning, nil when the directory is its owner's
    /// alone, not there (import makes it 0700), or not a state directory.
    static func exposureWarning(_ command: String, _ location: StoreLocation) throws(Fault) -> String? {
        guard case .state(let directory) = location, Files.exists(directory) else { return nil }
        let exposure: StateDirectory.Exposure
        do throws(StoreError) {
            exposure = try StateDirectory.exposure(of: directory)
        } catch {
            throw Fault(error.message)
        }
        if exposure.isPrivate { return nil }
        if exposure.writableByOthers {
            if command == "import" { throw Fault(StateDirectory.refusal(directory, exposure)) }
            return
                "warning: \(directory): the state directory is writable by others, \(exposure.description): anyone could have put another file in the log's place; reading it as it is"
        }
        let doing = command == "import" ? "importing into it as it is" : "reading it as it is"
        return "warning: \(StateDirectory.openness(directory, exposure)); \(doing)"
    }
}

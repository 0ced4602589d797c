// What the subcommands do (issue 32), apart from their command line (DataTools.swift).
import EventLog
import Glibc
import JSONCodec
import Movies
import People
import StoreCore
import StorePostgres
import StoreSQLite

/// What a verification found: where the log ends, how many events, its digest, and how many
/// tokens and role grants the people tables hold (issue 45; not in the digest).
public struct Verified: Equatable, Sendable {
    public var source: String
    public var seq: UInt64
    public var events: UInt64
    public var digest: String
    public var tokens = 0
    public var grants = 0

    /// ", 2 tokens, 1 role grant" for a store whose people tables hold any, else nothing: what
    /// the subcommands print between the events and the digest.
    public var peopleSummary: String {
        guard tokens > 0 || grants > 0 else { return "" }
        return ", \(tokens) token\(tokens == 1 ? "" : "s"), \(grants) role grant\(grants == 1 ? "" : "s")"
    }
}

public enum Moves {
    // MARK: - verify

    /// Reads the whole store and checks it (see `LogChecker`); the first fault is thrown.
    public static func verify(_ location: StoreLocation, postgres: PostgresLogAccess? = nil) throws(Fault)
        -> Verified
    {
        try verifyReading(location, postgres: postgres).verified
    }

    /// `verify`, with the people tables it read (nil for a store made before them).
    static func verifyReading(_ location: StoreLocation, postgres: PostgresLogAccess? = nil) throws(Fault)
        -> (verified: Verified, people: PeopleTables?)
    {
        var checker = LogChecker()
        var snapshots: [UInt64: [UInt8]] = [:]
        var head = StoreHead(source: "", seq: 0, events: 0, snapshots: [])
        var fault: Fault?
        let people = try Stores.read(location, integrity: true, postgres: postgres) {
            (h: StoreHead) throws(Fault) in
            head = h
            for s in h.snapshots {
                guard s.seq <= h.seq else {
                    throw Fault(
                        "\(h.source): a snapshot at seq \(s.seq) is past the log's last event (\(h.seq))")
                }
                snapshots[s.seq] = s.data
            }
            if let empty = snapshots[0] { try checker.check(snapshot: empty, at: 0) }
        } _: { row in
            do throws(Fault) {
                _ = try checker.fold(row)
                if let s = snapshots[row.seq] { try checker.check(snapshot: s, at: row.seq) }
                return true
            } catch {
                fault = error
                return false
            }
        }
        if let fault { throw Fault("\(head.source): \(fault.message)") }
        guard checker.state.lastSeq == head.seq, checker.events == head.events else {
            throw Fault(
                "\(head.source): the events end at seq \(checker.state.lastSeq) (\(checker.events) events), the log's head says seq \(head.seq) (\(head.events) events)"
            )
        }
        let verified = Verified(
            source: head.source, seq: head.seq, events: checker.events, digest: checker.digest,
            tokens: people?.tokens.count ?? 0, grants: people?.grants.count ?? 0)
        return (verified, people)
    }

    // MARK: - export

    /// Writes the whole log at `location`, from one snapshot, to `out` (streamed).
    static func export(_ location: StoreLocation, to out: Output, now: Int64) throws(Fault) -> Verified {
        var checker = LogChecker()
        var head = StoreHead(source: "", seq: 0, events: 0, snapshots: [])
        var fault: Fault?
        var line = JSONWriter(capacity: 512)
        let read = try Stores.read(location, integrity: false) { (h: StoreHead) throws(Fault) in
            head = h
            try out.write(
                ExportFormat.header(
                    .init(version: ExportFormat.version, source: h.source, seq: h.seq, at: now)))
        } _: { row in
            do throws(Fault) {
                let event = try checker.fold(row)
                line.reset()
                ExportFormat.event(ExportedEvent(event: event, key: row.key), into: &line)
                try out.write(line.bytes)
                return true
            } catch {
                fault = error
                return false
            }
        }
        if let fault { throw Fault("\(head.source): \(fault.message)") }
        guard checker.state.lastSeq == head.seq else {
            throw Fault(
                "\(head.source): the events end at seq \(checker.state.lastSeq), the log's head says \(head.seq)"
            )
        }
        // The people tables, read in the same snapshot as the events, after them.
        let people = read ?? PeopleTables()
        do throws(Fault) {
            for l in try ExportFormat.lines(people) { try out.write(l) }
        } catch {
            throw Fault("\(head.source): \(error.message)")
        }
        var sum = out.hash
        let trailer = ExportFormat.Trailer(
            seq: head.seq, events: checker.events, tokens: UInt64(people.tokens.count),
            grants: UInt64(people.grants.count), digest: checker.digest,
            sha256: SHA256.hex(digest: sum.finish()))
        try out.write(ExportFormat.trailer(trailer), hashed: false)
        try out.finish()
        return Verified(
            source: head.source, seq: head.seq, events: checker.events, digest: checker.digest,
            tokens: people.tokens.count, grants: people.grants.count)
    }

    /// `export` into `file`: a temporary file published when whole (see `Files`).
    static func export(_ location: StoreLocation, toFile file: String, replace: Bool, now: Int64)
        throws(Fault) -> Verified
    {
        // First: for the log itself, "exists: --force replaces it" would be the wrong advice.
        try StoreGuard.refuseOutput(file, of: "export", reading: location)
        if !replace && Files.exists(file) {
            throw Fault("\(file) exists: not replaced (--force replaces it)")
        }
        let out = try Output(beside: file)
        do throws(Fault) {
            let v = try export(location, to: out, now: now)
            try Files.publish(out.temporary!, as: file, replace: replace)
            return v
        } catch {
            out.discard()
            throw error
        }
    }

    // MARK: - import

    /// Where an import reads from.
    public enum ImportSource: Equatable, Sendable {
        /// An export (a path, or "-" for standard input).
        case export(String)
        /// A SQLite log file (a backup).
        case sqlite(String)
    }

    /// Imports into an empty store (see `DataTools.usage`). Returns the target's verification,
    /// whose digest is the source's.
    public static func importLog(from source: ImportSource, into target: StoreLocation) throws(Fault)
        -> Verified
    {
        switch target {
        case .state(let directory):
            return try importSQLite(from: source, directory: directory)
        case .postgres(let conninfo):
            return try importPostgres(from: source, conninfo: conninfo)
        case .sqliteFile:
            preconditionFailure("import into a file: \(target)")
        }
    }

    /// Feeds every event of `source` to `each`, checked; returns the source's verification, the
    /// state its events fold to, and its people tables (empty when it has none).
    private static func feed(_ source: ImportSource, _ each: (StoredEvent) throws(Fault) -> Void)
        throws(Fault)
        -> (Verified, MovieState, PeopleTables)
    {
        switch source {
        case .export(let path):
            return try readExportFolding(try LineInput.open(path), each)
        case .sqlite(let path):
            // The source is verified first (it is a file nobody writes), then read again to copy.
            let (v, people) = try verifyReading(.sqliteFile(path))
            var checker = LogChecker()
            var fault: Fault?
            try Stores.read(.sqliteFile(path), integrity: false) { _ in
            } _: { row in
                do throws(Fault) {
                    let e = try checker.fold(row)
                    let event = try MovieEvent(checked: row)
                    let payload =
                        e.kind == MovieEvent.Kind.added
                        ? event.payload : event.payload(after: e.movie, undoes: e.undoes)
                    try each(
                        StoredEvent(
                            seq: row.seq, stream: row.stream, kind: row.kind, payload: payload, key: row.key,
                            at: row.at, author: row.author))
                    return true
                } catch {
                    fault = error
                    return false
                }
            }
            if let fault { throw fault }
            return (v, checker.state, people ?? PeopleTables())
        }
    }

    /// Whether the imported store holds what the source held: the same state (its digest and
    /// seq) and the same people tables.
    private static func checkImported(
        _ target: (verified: Verified, people: PeopleTables?), source: Verified, people: PeopleTables
    ) throws(Fault) {
        let t = target.verified
        guard t.digest == source.digest, t.seq == source.seq else {
            throw Fault(
                "the imported log (seq \(t.seq), \(t.digest)) is not the source (seq \(source.seq), \(source.digest))"
            )
        }
        guard (target.people ?? PeopleTables()) == people else {
            throw Fault(
                "the imported people tables (\(t.tokens) tokens, \(t.grants) role grants) are not the source's (\(people.tokens.count) and \(people.grants.count))"
            )
        }
    }

    private static func importSQLite(from source: ImportSource, directory: String) throws(Fault) -> Verified {
        let made = try makeStateDirectory(directory)
        let lock: DirectoryLock
        do throws(StoreError) {
            lock = try DirectoryLock(directory)
        } catch {
            if made { rmdir(directory) }
            throw Fault(error.message)
        }
        var done = false
        defer {
            lock.release()
            // A directory this import made goes again when it failed: nothing is left behind.
            if made && !done {
                unlink(directory + "/lock")
                rmdir(directory)
            }
        }
        let path = directory + "/" + StateDirectory.logName
        guard !Files.exists(path) else {
            throw Fault(
                "\(directory) is not empty: it holds events.sqlite3; import writes only into a state directory without one"
            )
        }
        // SQLite would replay a leftover -wal onto the imported log the next time it is opened
        // (a crash's last writes over the restore): `verify` and the daemon would find another
        // log than the one imported and printed. Which of them to keep is the operator's call.
        let leftovers = StateDirectory.logCompanions.filter { Files.exists(directory + "/" + $0) }
        guard leftovers.isEmpty else {
            throw Fault(
                "\(directory) holds what a log left behind (\(leftovers.joined(separator: ", "))): SQLite would replay it onto the imported log. Move these files out of the state directory (keep them with the log they belong to: they may hold its last writes), then import again; nothing was written"
            )
        }
        // What an import killed before its end left (a hidden temporary file, never the log):
        // under the lock, nobody else is writing one.
        for name in Files.names(in: directory) where name.hasPrefix(".events.sqlite3.tmp-") {
            unlink(directory + "/" + name)
        }
        let temporary = Files.temporary(for: path)
        close(try Files.createExclusive(temporary))
        var importer: LogImporter?
        do throws(Fault) {
            do throws(LogError) {
                importer = try LogImporter(path: temporary)
            } catch {
                throw Fault(error.message)
            }
            let (source, state, people) = try feed(source) { (row: StoredEvent) throws(Fault) in
                do throws(LogError) { try importer!.append(row) } catch { throw Fault(error.message) }
            }
            do throws(LogError) {
                try importer!.write(people)
                try importer!.finish(
                    snapshot: state.lastSeq > 0 ? (state.lastSeq, state.snapshotBytes()) : nil)
                importer = nil
            } catch {
                throw Fault(error.message)
            }
            try Files.fsync(path: temporary)
            let target = try verifyReading(.sqliteFile(temporary))
            try checkImported(target, source: source, people: people)
            for suffix in ["-wal", "-shm"] { unlink(temporary + suffix) }
            try Files.publish(temporary, as: path, replace: false)
            done = true
            var published = target.verified
            published.source = "sqlite:\(Stores.absolute(path))"
            return published
        } catch {
            importer?.abandon()
            Files.removeDatabase(temporary)
            throw error
        }
    }

    private static func importPostgres(from source: ImportSource, conninfo: String) throws(Fault) -> Verified
    {
        let access: PostgresLogAccess
        do throws(StoreError) {
            access = try PostgresLogAccess(conninfo: conninfo)
            try access.beginImport()
        } catch {
            throw Fault(error.message)
        }
        do throws(Fault) {
            let (source, state, people) = try feed(source) { (row: StoredEvent) throws(Fault) in
                do throws(StoreError) { try access.insert(row) } catch { throw Fault(error.message) }
            }
            do throws(StoreError) {
                try access.writeImport(
                    seq: state.lastSeq, snapshot: state.lastSeq > 0 ? state.snapshotBytes() : nil,
                    people: people)
            } catch {
                throw Fault(error.message)
            }
            let target = try verifyReading(.postgres(conninfo), postgres: access)
            try checkImported(target, source: source, people: people)
            do throws(StoreError) { try access.commitImport() } catch { throw Fault(error.message) }
            return target.verified
        } catch {
            access.abandon()
            throw error
        }
    }

    /// Creates a state directory 0700 (whatever the umask) when it is missing; true when it did.
    static func makeStateDirectory(_ directory: String) throws(Fault) -> Bool {
        if Files.exists(directory) { return false }
        guard mkdir(directory, 0o700) == 0 else { throw Files.errno("\(directory): cannot create") }
        guard chmod(directory, 0o700) == 0 else { throw Files.errno("\(directory): cannot set its mode") }
        return true
    }

    // MARK: - backup

    /// An online, consistent copy of the store at `location` into `file`, verified, then
    /// published. A SQLite store gives a SQLite file; PostgreSQL, an export.
    public static func backup(_ location: StoreLocation, to file: String, replace: Bool, now: Int64)
        throws(Fault)
        -> (Verified, size: Int)
    {
        try StoreGuard.refuseOutput(file, of: "backup", reading: location)
        if !replace && Files.exists(file) {
            throw Fault("\(file) exists: not replaced (--force replaces it)")
        }
        // A backup is background work beside a daemon serving clients on the same CPUs: it
        // yields to them (nice 19; BENCHMARKS.md, the toggles' p99 while backups run).
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19)
        let verified: Verified
        let temporary: String
        if let path = location.sqlitePath {
            temporary = Files.temporary(for: file)
            close(try Files.createExclusive(temporary))
            do throws(Fault) {
                do throws(LogError) {
                    let reader = try LogFileReader(path: path)
                    defer { reader.close() }
                    try reader.vacuum(into: temporary)
                } catch {
                    throw Fault(error.message)
                }
                try Files.fsync(path: temporary)
                verified = try verify(.sqliteFile(temporary))
                for suffix in ["-wal", "-shm", "-journal"] { unlink(temporary + suffix) }
            } catch {
                Files.removeDatabase(temporary)
                throw error
            }
        } else {
            let out = try Output(beside: file)
            temporary = out.temporary!
            do throws(Fault) {
                _ = try export(location, to: out, now: now)
                verified = try readExport(try LineInput.open(temporary))
            } catch {
                out.discard()
                throw error
            }
        }
        do throws(Fault) {
            try Files.publish(temporary, as: file, replace: replace)
        } catch {
            unlink(temporary)
            throw error
        }
        var st = stat()
        _ = stat(file, &st)
        return (verified, Int(st.st_size))
    }
}

extension MovieEvent {
    /// A row already checked by `LogChecker` as an event.
    init(checked row: StoredEvent) throws(Fault) {
        do throws(MovieDecodingError) {
            try self.init(stream: row.stream, kind: row.kind, payload: row.payload)
        } catch {
            throw Fault("event \(row.seq) cannot be decoded: \(error.message)")
        }
    }
}

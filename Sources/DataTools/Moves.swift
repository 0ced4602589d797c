// What the subcommands do (issue 32), apart from their command line (DataTools.swift).
import EventLog
import Glibc
import JSONCodec
import Movies
import StoreCore
import StorePostgres
import StoreSQLite

/// What a verification found: where the log ends, how many events, its digest.
public struct Verified: Equatable, Sendable {
    public var source: String
    public var seq: UInt64
    public var events: UInt64
    public var digest: String
}

public enum Moves {
    // MARK: - verify

    /// Reads the whole store and checks it (see `LogChecker`); the first fault is thrown.
    public static func verify(_ location: StoreLocation, postgres: PostgresLogAccess? = nil) throws(Fault)
        -> Verified
    {
        var checker = LogChecker()
        var snapshots: [UInt64: [UInt8]] = [:]
        var head = StoreHead(source: "", seq: 0, events: 0, snapshots: [])
        var fault: Fault?
        try Stores.read(location, integrity: true, postgres: postgres) { (h: StoreHead) throws(Fault) in
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
        return Verified(source: head.source, seq: head.seq, events: checker.events, digest: checker.digest)
    }

    /// Reads an export and checks it: the header, every event folded, the trailer's counts, digest
    /// and checksum. `each` gets every event with the row a store keeps for it.
    @discardableResult
    static func readExport(
        _ input: LineInput, _ each: (StoredEvent) throws(Fault) -> Void = { _ in }
    ) throws(Fault) -> Verified {
        try readExportFolding(input, each).verified
    }

    static func readExportFolding(
        _ input: LineInput, _ each: (StoredEvent) throws(Fault) -> Void
    ) throws(Fault) -> (verified: Verified, state: MovieState) {
        func at(_ f: Fault) -> Fault { Fault("\(input.name): line \(input.number): \(f.message)") }
        var hash = SHA256()
        // A copy: a slice kept of the input's buffer would make it copy itself at its next read.
        guard let first = try input.next().map(Array.init) else {
            throw Fault("\(input.name): empty: not a swiped export")
        }
        let header: ExportFormat.Header
        do throws(Fault) {
            guard case .header(let h) = try ExportFormat.parse(first[...], first: true) else {
                preconditionFailure("the first line parsed as something other than a header")
            }
            header = h
        } catch {
            throw at(error)
        }
        let newline: [UInt8] = [0x0A]
        first.withUnsafeBufferPointer { hash.update($0) }
        hash.update(newline)
        var checker = LogChecker()
        while let line = try input.next() {
            do throws(Fault) {
                let parsed: ExportFormat.Line
                do throws(Fault) {
                    if let fast = ExportFormat.fastEvent(line) {
                        parsed = .event(fast)
                    } else {
                        parsed = try ExportFormat.parse(line, first: false)
                    }
                } catch {
                    guard !input.unterminated else {
                        throw Fault("the last line has no newline and \(error.message): the file was cut")
                    }
                    throw error
                }
                switch parsed {
                case .header:
                    throw Fault("a second header")
                case .event(let x):
                    let row = try checker.fold(exported: x)
                    try each(row)
                    line.withUnsafeBufferPointer { hash.update($0) }
                    hash.update(newline)
                case .trailer(let t):
                    guard !input.unterminated else {
                        throw Fault("the trailer has no newline: the file was cut")
                    }
                    var h = hash
                    guard SHA256.hex(digest: h.finish()) == t.sha256 else {
                        throw Fault(
                            "the checksum of the lines before the trailer is not the trailer's: the file was altered"
                        )
                    }
                    guard t.seq == checker.state.lastSeq, t.events == checker.events, t.seq == header.seq
                    else {
                        throw Fault(
                            "the trailer says seq \(t.seq) and \(t.events) events, the header seq \(header.seq), the file has \(checker.state.lastSeq) and \(checker.events)"
                        )
                    }
                    guard t.digest == checker.digest else {
                        throw Fault("the trailer's digest \(t.digest) is not the fold's \(checker.digest)")
                    }
                    if try input.next() != nil { throw Fault("a line after the trailer") }
                    let source = "\(input.name) (an export of \(header.source))"
                    return (
                        Verified(source: source, seq: t.seq, events: t.events, digest: t.digest),
                        checker.state
                    )
                }
            } catch {
                throw at(error)
            }
        }
        throw Fault(
            "\(input.name): ends at line \(input.number) without its trailer: the file was cut (the header says seq \(header.seq), it has \(checker.state.lastSeq))"
        )
    }

    // MARK: - export

    /// Writes the whole log at `location`, from one snapshot, to `out` (streamed).
    static func export(_ location: StoreLocation, to out: Output, now: Int64) throws(Fault) -> Verified {
        var checker = LogChecker()
        var head = StoreHead(source: "", seq: 0, events: 0, snapshots: [])
        var fault: Fault?
        var line = JSONWriter(capacity: 512)
        try Stores.read(location, integrity: false) { (h: StoreHead) throws(Fault) in
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
        var sum = out.hash
        let trailer = ExportFormat.Trailer(
            seq: head.seq, events: checker.events, digest: checker.digest,
            sha256: SHA256.hex(digest: sum.finish()))
        try out.write(ExportFormat.trailer(trailer), hashed: false)
        try out.finish()
        return Verified(source: head.source, seq: head.seq, events: checker.events, digest: checker.digest)
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

    /// Feeds every event of `source` to `each`, checked; returns the source's verification.
    private static func feed(_ source: ImportSource, _ each: (StoredEvent) throws(Fault) -> Void)
        throws(Fault)
        -> (Verified, MovieState)
    {
        switch source {
        case .export(let path):
            return try readExportFolding(try LineInput.open(path), each)
        case .sqlite(let path):
            // The source is verified first (it is a file nobody writes), then read again to copy.
            let v = try verify(.sqliteFile(path))
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
                            at: row.at))
                    return true
                } catch {
                    fault = error
                    return false
                }
            }
            if let fault { throw fault }
            return (v, checker.state)
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
            let (source, state) = try feed(source) { (row: StoredEvent) throws(Fault) in
                do throws(LogError) { try importer!.append(row) } catch { throw Fault(error.message) }
            }
            do throws(LogError) {
                try importer!.finish(
                    snapshot: state.lastSeq > 0 ? (state.lastSeq, state.snapshotBytes()) : nil)
                importer = nil
            } catch {
                throw Fault(error.message)
            }
            try Files.fsync(path: temporary)
            let target = try verify(.sqliteFile(temporary))
            guard target.digest == source.digest, target.seq == source.seq else {
                throw Fault(
                    "the imported log (seq \(target.seq), \(target.digest)) is not the source (seq \(source.seq), \(source.digest))"
                )
            }
            for suffix in ["-wal", "-shm"] { unlink(temporary + suffix) }
            try Files.publish(temporary, as: path, replace: false)
            done = true
            return Verified(
                source: "sqlite:\(Stores.absolute(path))", seq: target.seq, events: target.events,
                digest: target.digest)
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
            let (source, state) = try feed(source) { (row: StoredEvent) throws(Fault) in
                do throws(StoreError) { try access.insert(row) } catch { throw Fault(error.message) }
            }
            do throws(StoreError) {
                try access.writeImport(
                    seq: state.lastSeq, snapshot: state.lastSeq > 0 ? state.snapshotBytes() : nil)
            } catch {
                throw Fault(error.message)
            }
            let target = try verify(.postgres(conninfo), postgres: access)
            guard target.digest == source.digest, target.seq == source.seq else {
                throw Fault(
                    "the imported log (seq \(target.seq), \(target.digest)) is not the source (seq \(source.seq), \(source.digest))"
                )
            }
            do throws(StoreError) { try access.commitImport() } catch { throw Fault(error.message) }
            return target
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

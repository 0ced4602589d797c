// `swiped backup|export|import|verify` (issue 32): the command line of the subcommands.
// `swiped` with none of them serves, as always (Sources/swiped/main.swift dispatches).
import CommandLineParsing
import EventLog
import Glibc
import JSONCodec

public enum DataTools {
    public static let subcommands: Set<String> = ["backup", "export", "import", "verify"]

    public static let usage = """
        Usage: swiped export (--state DIR | --postgres CONNINFO) [--to FILE [--force]]
               swiped verify (--state DIR | --postgres CONNINFO | --backup FILE)
               swiped import (--state DIR | --postgres CONNINFO) (FILE | - | --from-sqlite FILE)
               swiped backup (--state DIR | --postgres CONNINFO) FILE [--force]

        Keep and move the event log, and the people tables beside it: the tokens (their
        hashes) and the roles given to names (docs/running.md: "Backups", "Moving from SQLite
        to PostgreSQL"; the export format: docs/export-format.md). Each reads the store from
        one consistent snapshot while daemons go on serving it, and takes no lock of theirs,
        except import.

          export   the whole log as JSON lines, to standard output or (written to a temporary
                   name, fsynced, renamed, mode 0600) to FILE; an existing FILE is kept
                   unless --force
          verify   the restore drill: seqs from 1 without a gap, every event follows from the
                   state before it, every snapshot is the fold at its seq, keys are unique,
                   SQLite's integrity_check; prints the seq, the events and the state's digest
                   (the same for the same state in any store: the events', not the
                   people tables'), and the tokens and role grants when there are any;
                   exit 1 with the first fault.
                   --backup FILE takes a SQLite backup or an export (told by its first bytes)
          import   an export (FILE, or - for standard input) or a SQLite log (--from-sqlite)
                   into an EMPTY store: a state directory without events.sqlite3 (its lock is
                   held throughout), or a database without swiped tables (under the migration
                   lock, in one transaction). A state directory still holding a log's -wal,
                   -shm or -journal is refused: move them out of it first. All or nothing: a
                   bad line (or one over 65536 bytes) stops it, with its number, leaving
                   nothing. Seqs, times, keys, removed movies, tokens and role grants are
                   kept; then the result is verified against the source's digest and tables
          backup   an online copy, verified: SQLite's VACUUM INTO (one read transaction) for a
                   state directory, an export for PostgreSQL; prints its seq, events and size

        FILE (backup, export --to) may not be the state directory, nor anything in it: the
        log, its -wal and -shm, the lock, or a new name, however spelled (symlinks, hard
        links, ..), with or without --force.
        --state and --postgres are explicit here: no default, no $SWIPED_POSTGRES. A state
        directory others may write is refused by import (and by the daemon); one others may
        reach is read with a warning.
        Exit status: 0 done, 1 refused or a fault found (nothing written), 2 usage.
        """

    struct Usage: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }

    /// Runs `arguments` (the subcommand first); returns the exit status.
    public static func run(_ arguments: [String]) -> Int32 {
        let command = arguments.first ?? ""
        let name = "swiped \(command)"
        do throws(Usage) {
            let parsed = try parse(Array(arguments.dropFirst()))
            if parsed.help {
                print(usage)
                return 0
            }
            try check(command, parsed)
            do throws(Fault) {
                if let store = parsed.store, let warning = try StoreGuard.exposureWarning(command, store) {
                    printError("\(name): \(warning)\n")
                }
                try execute(command, parsed)
                return 0
            } catch {
                printError("\(name): \(error.message)\n")
                return 1
            }
        } catch {
            printError("\(name): \(error.message)\nTry 'swiped \(command) --help'.\n")
            return 2
        }
    }

    struct Parsed {
        var store: StoreLocation?
        var backup: String?
        var fromSQLite: String?
        var to: String?
        var force = false
        var help = false
        var positional: [String] = []
    }

    /// The options of every subcommand (`check` says which goes with which). A value may not be
    /// empty: none names nothing.
    static let options: [OptionSpec] =
        [.flag("--help", aliases: ["-h"]), .flag("--force")]
        + ["--state", "--postgres", "--backup", "--from-sqlite", "--to"].map {
            .value($0, emptyIsMissing: true)
        }

    static func parse(_ arguments: [String]) throws(Usage) -> Parsed {
        let scanned: ScannedArguments
        do throws(ArgumentError) {
            scanned = try ScannedArguments(arguments, options: options)
        } catch {
            throw Usage(error.description)
        }
        var p = Parsed()
        p.help = scanned.has("--help")
        p.force = scanned.has("--force")
        // One store, named once (a backup named again is the last one named).
        let stores =
            scanned.values("--state").map(StoreLocation.state)
            + scanned.values("--postgres").map(StoreLocation.postgres)
        p.backup = scanned.value("--backup")
        guard stores.count <= 1, stores.isEmpty || p.backup == nil else {
            throw Usage("name one store: --state, --postgres or --backup")
        }
        p.store = stores.first
        p.fromSQLite = scanned.value("--from-sqlite")
        p.to = scanned.value("--to")
        p.positional = scanned.positionals
        return p
    }

    /// What each subcommand needs named, before anything is read.
    static func check(_ command: String, _ p: Parsed) throws(Usage) {
        let named = p.store != nil || (command == "verify" && p.backup != nil)
        guard named else {
            throw Usage(
                command == "verify"
                    ? "name the store: --state DIR, --postgres CONNINFO or --backup FILE"
                    : "name the store: --state DIR or --postgres CONNINFO")
        }
        if p.backup != nil && command != "verify" { throw Usage("--backup is for verify") }
        if p.force && (command == "import" || command == "verify") {
            throw Usage("--force is for backup and export")
        }
        let files: Int
        switch command {
        case "verify", "export": files = 0
        case "import": files = p.fromSQLite == nil ? 1 : 0
        case "backup": files = 1
        default: preconditionFailure("not a subcommand: \(command)")
        }
        if p.fromSQLite != nil && command != "import" { throw Usage("--from-sqlite is for import") }
        if p.to != nil && command != "export" { throw Usage("--to is for export") }
        guard p.positional.count == files else {
            throw Usage(
                p.positional.count > files
                    ? "unexpected argument '\(p.positional[files])'"
                    : command == "import"
                        ? "name what to import: FILE, - or --from-sqlite FILE" : "name the backup file")
        }
    }

    /// Runs a command line that `check` accepted.
    static func execute(_ command: String, _ p: Parsed) throws(Fault) {
        let now = SystemClockNow.micros()
        func store() -> StoreLocation {
            guard let s = p.store else {
                preconditionFailure("\(command) without a store passed check: \(p)")
            }
            return s
        }
        switch command {
        case "verify":
            let v: Verified
            if let file = p.backup {
                v =
                    LineInput.isSQLite(file)
                    ? try Moves.verify(.sqliteFile(file)) : try Moves.readExport(try LineInput.open(file))
            } else {
                v = try Moves.verify(store())
            }
            print("ok: \(v.source): seq \(v.seq), \(v.events) events\(v.peopleSummary), digest \(v.digest)")
        case "export":
            if let file = p.to {
                let v = try Moves.export(store(), toFile: file, replace: p.force, now: now)
                printError(
                    "exported \(v.source): seq \(v.seq), \(v.events) events\(v.peopleSummary), digest \(v.digest) to \(file)\n"
                )
            } else {
                try StoreGuard.refuseStandardOutput(reading: store())
                let v = try Moves.export(store(), to: Output(), now: now)
                printError(
                    "exported \(v.source): seq \(v.seq), \(v.events) events\(v.peopleSummary), digest \(v.digest)\n"
                )
            }
        case "import":
            let source: Moves.ImportSource = p.fromSQLite.map { .sqlite($0) } ?? .export(p.positional[0])
            let v = try Moves.importLog(from: source, into: store())
            print(
                "imported into \(v.source): seq \(v.seq), \(v.events) events\(v.peopleSummary), digest \(v.digest)"
            )
        case "backup":
            let (v, size) = try Moves.backup(store(), to: p.positional[0], replace: p.force, now: now)
            print(
                "backup \(p.positional[0]): seq \(v.seq), \(v.events) events\(v.peopleSummary), \(size) bytes, digest \(v.digest)"
            )
        default:
            preconditionFailure("not a subcommand: \(command)")
        }
    }

    static func printError(_ text: String) {
        var t = text
        t.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    }
}

enum SystemClockNow {
    static func micros() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
    }
}

// Where a log is read from or written to by the subcommands: a SQLite file (a state directory's
// events.sqlite3, or a backup) or a PostgreSQL database, each read from one consistent snapshot.
import EventLog
import Glibc
import People
import StoreCore
import StorePostgres

/// A store named on the command line.
public enum StoreLocation: Equatable, Sendable {
    /// A state directory (its events.sqlite3).
    case state(String)
    /// A SQLite log file itself (a backup, `--from-sqlite`).
    case sqliteFile(String)
    case postgres(String)

    var sqlitePath: String? {
        switch self {
        case .state(let d): d + "/events.sqlite3"
        case .sqliteFile(let f): f
        case .postgres: nil
        }
    }
}

/// What a read sees before the events.
struct StoreHead {
    var source: String
    var seq: UInt64
    var events: UInt64
    var snapshots: [(seq: UInt64, data: [UInt8])]
}

enum Stores {
    /// Reads the whole log at `location` from one snapshot: `head`, then every event in seq order
    /// until `row` returns false; returns the people tables of that snapshot (issue 45), nil for
    /// a store made before them. `integrity`: run SQLite's integrity_check first (a fault).
    @discardableResult
    static func read(
        _ location: StoreLocation, integrity: Bool, postgres: PostgresLogAccess? = nil,
        _ head: (StoreHead) throws(Fault) -> Void, _ row: (StoredEvent) -> Bool
    ) throws(Fault) -> PeopleTables? {
        if let path = location.sqlitePath {
            do throws(LogError) {
                let reader = try LogFileReader(path: path)
                defer { reader.close() }
                try reader.begin()
                if integrity {
                    let problems = try reader.integrityProblems()
                    if !problems.isEmpty {
                        throw LogError.corrupt(
                            "\(path): integrity_check: \(problems.prefix(3).joined(separator: "; "))\(problems.count > 3 ? "; …" : "")"
                        )
                    }
                }
                let h = StoreHead(
                    source: "sqlite:\(absolute(path))", seq: try reader.latestSeq(),
                    events: try reader.eventCount(),
                    snapshots: try reader.snapshots())
                var failed: Fault?
                do throws(Fault) { try head(h) } catch { failed = error }
                if let failed { throw LogError.other(failed.message) }
                try reader.forEachEvent(row)
                let people = try reader.peopleTables()
                try reader.end()
                return people
            } catch {
                throw Fault(error.message)
            }
        }
        guard case .postgres(let conninfo) = location else {
            preconditionFailure("\(location) is not a store")
        }
        do throws(StoreError) {
            let access: PostgresLogAccess
            if let postgres { access = postgres } else { access = try PostgresLogAccess(conninfo: conninfo) }
            var failed: Fault?
            var people: PeopleTables?
            try access.read(
                { (h: PostgresLogAccess.Head) throws(StoreError) in
                    let sh = StoreHead(
                        source: "postgres:\(access.description)", seq: h.seq, events: h.events,
                        snapshots: h.snapshots)
                    do throws(Fault) { try head(sh) } catch { failed = error }
                    if let failed { throw StoreError(.badRequest, failed.message) }
                }, row, people: { people = $0 })
            if let failed { throw StoreError(.badRequest, failed.message) }
            return people
        } catch {
            throw Fault(error.message)
        }
    }

    static func absolute(_ path: String) -> String {
        if path.hasPrefix("/") { return path }
        guard let p = getcwd(nil, 0) else { return path }
        defer { free(p) }
        let cwd = String(cString: p)
        return cwd + "/" + (path.hasPrefix("./") ? String(path.dropFirst(2)) : path)
    }
}

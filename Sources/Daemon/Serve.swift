// The daemon's entry point: picks the store from the configuration and runs the manager over
// it. The manager is generic over its store and is instantiated here, inside this module, so
// that the compiler specialises it (no witness-table calls on the request path).
import StoreCore
import StorePostgres
import StoreSQLite

#if canImport(Glibc)
    import Glibc
#endif

/// Runs the daemon until SIGTERM/SIGINT (0), a fatal storage error (1), or a failed start (1,
/// logged as "cannot start").
public func serve(config: Config, journal: Journal) -> Int32 {
    defer { journal.finish() }
    if let conninfo = config.postgres {
        return servePostgres(config: config, conninfo: conninfo, journal: journal)
    }
    let server: Server<SQLiteStore>
    do {
        server = try Server(
            config: config, journal: journal,
            openStore: { config, meters throws(StoreError) in
                try SQLiteStore.open(
                    directory: config.stateDirectory, durability: config.durability, meters: meters)
            },
            openPeople: { config, store throws(StoreError) in
                try SQLitePeopleStore(path: store.path, durability: config.durability)
            })
    } catch {
        journal.log(.err, "cannot start", [("ERROR", error.description)])
        return 1
    }
    server.listener.logPassedSockets(journal)
    return server.run()
}

/// The daemon with its log in PostgreSQL (`--postgres`, docs/postgres.md).
private func servePostgres(config: Config, conninfo: String, journal: Journal) -> Int32 {
    let server: Server<PostgresStore>
    do {
        server = try Server(
            config: config, journal: journal,
            openStore: { config, meters throws(StoreError) in
                try PostgresStore.open(conninfo: conninfo, durability: config.durability, meters: meters)
            },
            openPeople: { config, _ throws(StoreError) in
                try PostgresPeopleStore(conninfo: conninfo, durability: config.durability)
            })
    } catch {
        journal.log(.err, "cannot start", [("ERROR", error.description)])
        return 1
    }
    server.listener.logPassedSockets(journal)
    return server.run()
}

/// Limits and constants of the manager (stored statics cannot live in a generic class).
enum ServerLimits {
    /// Commands submitted but not yet answered by the store, at most; past it, `overloaded`.
    static let maxPendingCommands = 65_536
    static let handledSignals = [SIGTERM, SIGINT, SIGHUP]
}

/// Why the daemon could not start.
public struct StartError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

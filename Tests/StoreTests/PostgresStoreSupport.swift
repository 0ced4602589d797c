// One PostgreSQL cluster (TestSupport's PostgresCluster) for the store tests of a class, started
// when a test first asks for a database and destroyed (stopped, reaped, removed) by the class's
// tearDown; each test gets a database of its own on it.
import Foundation
import TestSupport
import XCTest

enum SharedCluster {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var cluster: PostgresCluster?
    nonisolated(unsafe) private static var databases = 0

    /// The cluster, started on first use.
    static func get() throws -> PostgresCluster {
        lock.lock()
        defer { lock.unlock() }
        if let cluster { return cluster }
        let c = try PostgresCluster(
            database: nil, settings: ["max_connections": "100"], prefix: "swiped-pgst")
        cluster = c
        return c
    }

    /// A new, empty database; its connection string.
    static func newDatabase(_ test: XCTestCase) throws -> String {
        try newNamedDatabase().conninfo
    }

    /// A new, empty database: its name and connection string.
    static func newNamedDatabase() throws -> (name: String, conninfo: String) {
        let c = try get()
        lock.lock()
        databases += 1
        let name = "store_\(databases)"
        lock.unlock()
        try c.createDatabase(name)
        return (name, c.conninfo(database: name))
    }

    static func destroy() {
        lock.lock()
        defer { lock.unlock() }
        cluster?.destroy()
        cluster = nil
    }
}

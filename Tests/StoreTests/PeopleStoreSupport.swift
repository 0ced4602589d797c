// Driving a people store as the daemon's loop would: submit, wait on `completionFD`, collect.
import Foundation
import Glibc
import People
import StoreCore
import XCTest

extension PeopleStore {
    /// Collects completions until `done` says so of everything collected, or `seconds` passed.
    /// `reports` counts the completions that carried tables.
    func collect(
        seconds: Double = 5, until done: (PeopleCompletions, _ reports: Int) -> Bool = { _, _ in false }
    ) -> (PeopleCompletions, reports: Int) {
        var all = PeopleCompletions()
        var reports = 0
        let deadline = Date().addingTimeInterval(seconds)
        while !done(all, reports), Date() < deadline {
            var p = pollfd(fd: completionFD, events: Int16(POLLIN), revents: 0)
            _ = poll(&p, 1, 20)
            let c = completions()
            all.results += c.results
            all.notes += c.notes
            if let t = c.tables {
                all.tables = t
                reports += 1
            }
        }
        return (all, reports)
    }

    /// Submits `change` and waits for its outcome; the completion that carried it, with the
    /// tables if they came with it.
    func make(
        _ change: PeopleChange, token: UInt64 = 1, file: StaticString = #filePath, line: UInt = #line
    ) -> (result: Result<Int, StoreError>?, tables: PeopleTables?) {
        submit(change, token: token)
        let (c, _) = collect { all, _ in !all.results.isEmpty }
        XCTAssertEqual(
            c.results.map(\.token), [token], "the outcome did not come once", file: file, line: line)
        return (c.results.first?.result, c.tables)
    }

    /// Collects completions until the tables (as the store now has them: `completions()` moves
    /// them) satisfy `wanted`, for up to `seconds`; how long it took, nil when they did not.
    func waitForTables(seconds: Double = 5, _ wanted: (PeopleTables) -> Bool) -> Double? {
        let began = Date()
        _ = collect(seconds: seconds) { _, _ in wanted(tables) }
        guard wanted(tables) else { return nil }
        return Date().timeIntervalSince(began)
    }
}

/// A token for a test: its hash made from `secret` (any 32 bytes do here).
func token(
    _ id: String, _ name: String, _ role: AccessRole, secret: UInt8, created: UInt64 = 1_764_000_000_000_000,
    expires: UInt64? = nil, lastUsed: UInt64? = nil
) -> TokenRecord {
    TokenRecord(
        id: id, name: name, role: role, hash: (0..<32).map { UInt8($0) &* 7 &+ secret }, created: created,
        expires: expires, lastUsed: lastUsed)
}

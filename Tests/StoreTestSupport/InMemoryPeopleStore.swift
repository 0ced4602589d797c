// The people tables in memory, for tests of the Session and the Daemon's decisions: the same
// contract as the SQLite and PostgreSQL people stores (StoreTests' contract suite runs it
// against all three), outcomes from the next `completions()`.
import EventLog
import People
import Plumbing
import StoreCore

public final class InMemoryPeopleStore: PeopleStore {
    public private(set) var tables: PeopleTables
    private var reported: PeopleTables
    private var results: [PeopleResult] = []
    private let doorbell: Doorbell
    /// Set by a test: every change fails with it (nothing changes).
    public var failure: StoreError?

    public init(_ tables: PeopleTables = PeopleTables()) {
        do throws(PlumbingError) {
            doorbell = try Doorbell("the in-memory people store")
        } catch {
            preconditionFailure(error.message)
        }
        self.tables = tables
        reported = tables
    }

    deinit { doorbell.close() }

    public var completionFD: Int32 { doorbell.fd }

    public func submit(_ change: PeopleChange, token: UInt64) {
        defer { doorbell.ring() }
        if let failure { return results.append(PeopleResult(token: token, result: .failure(failure))) }
        let (next, result) = Self.apply(change, to: tables)
        if case .success = result { tables = next }
        results.append(PeopleResult(token: token, result: result))
    }

    /// What `change` makes of `tables`: the rule every people store follows (the SQL stores
    /// say it in SQL; StoreTests checks them against this).
    public static func apply(_ change: PeopleChange, to tables: PeopleTables) -> (
        PeopleTables, Result<Int, StoreError>
    ) {
        var tokens = tables.tokens
        var grants = tables.grants
        let touched: Int
        switch change {
        case .createToken(let t):
            if tokens.contains(where: { $0.id == t.id || $0.hash == t.hash }) {
                return (tables, .failure(StoreError(.conflict, "a token with this id or hash exists")))
            }
            tokens.append(t)
            touched = 1
        case .revokeTokens(let name, let id):
            let before = tokens.count
            tokens.removeAll { $0.name == name && (id == nil || $0.id == id) }
            touched = before - tokens.count
        case .setRole(let name, let role):
            let before = grants[name]
            grants[name] = role
            touched = before == role ? 0 : 1
        case .touch(let id, let at):
            guard let i = tokens.firstIndex(where: { $0.id == id }) else { return (tables, .success(0)) }
            tokens[i].lastUsed = at
            touched = 1
        }
        return (PeopleTables(tokens: tokens, grants: grants), .success(touched))
    }

    public func completions() -> PeopleCompletions {
        doorbell.reset()
        var out = PeopleCompletions(results: results)
        results = []
        if tables != reported {
            out.tables = tables
            reported = tables
        }
        return out
    }

    public func close() {}
}

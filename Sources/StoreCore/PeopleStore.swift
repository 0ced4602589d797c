// The boundary to where people's tokens and roles are kept (issue 45): tables beside the
// events, in the same database (the SQLite file in the state directory, or the PostgreSQL
// database several daemons share), so that backups keep them and every daemon on one database
// knows the same tokens. Asynchronous like `Store`: the loop submits changes and learns their
// outcomes and the tables' new contents from `completions()`, never waiting on the disk or the
// network. Each store runs a thread of its own with a connection of its own, which also reads
// the tables again whenever another daemon may have changed them (PostgreSQL: a version row it
// polls every `pollMicroseconds`), so that a revocation made anywhere reaches every daemon
// within a second.
import People

public protocol PeopleStore: AnyObject {
    /// The tables as last read: at open, then as `completions()` reports them.
    var tables: PeopleTables { get }

    /// Readable when `completions()` has something.
    var completionFD: Int32 { get }

    /// Asks for `change` to be made durable; its outcome comes back from `completions()` under
    /// `token`, and the tables it changed with it.
    func submit(_ change: PeopleChange, token: UInt64)

    /// Outcomes, and the tables when they changed (by this daemon or another).
    func completions() -> PeopleCompletions

    /// Finishes what is in flight, then releases everything. Idempotent.
    func close()
}

/// The outcome of a submitted change: how many rows it touched (0: nothing matched, such as
/// revoking a name that has no token), or why it failed (nothing changed then).
public struct PeopleResult: Equatable, Sendable {
    public var token: UInt64
    public var result: Result<Int, StoreError>

    public init(token: UInt64, result: Result<Int, StoreError>) {
        self.token = token
        self.result = result
    }
}

public struct PeopleCompletions: Equatable, Sendable {
    public var results: [PeopleResult] = []
    /// The tables, when they differ from the last ones reported (or from `tables` at open).
    public var tables: PeopleTables?
    /// What a person should read once (the database unreachable, then back).
    public var notes: [StoreNote] = []

    public init(results: [PeopleResult] = [], tables: PeopleTables? = nil, notes: [StoreNote] = []) {
        self.results = results
        self.tables = tables
        self.notes = notes
    }

    public var isEmpty: Bool { results.isEmpty && tables == nil && notes.isEmpty }
}

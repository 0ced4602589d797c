// The seam where a test breaks the connection around a commit.
//
// A seam, not a check: the store thread sends every transaction's commit pipeline through the
// `PGCommitPath` it was opened with. The product's is `PGDirectCommit`, which only runs the
// pipeline (one call through a witness table a transaction, nothing tested on the way). Tests
// open a store with StoreTestSupport's `PostgresFaults`, which breaks the connection before the
// commit is sent or after, or hides how far the WAL is flushed. Before, the commit path asked a
// global of the tests' at each commit, and the fault code shipped in the daemon.

/// How a transaction's commit pipeline reaches the server.
package protocol PGCommitPath: AnyObject, Sendable {
    /// Runs `steps` on `conn` as `PGConnection.run(_:early:onEarly:)` does.
    func run(
        _ conn: PGConnection, _ steps: [(PGStatement, [PGParam])], early: Int, onEarly: (PGResult?) -> Void
    ) throws(PGFailure) -> [PGResult?]
}

/// The product's commit path: the pipeline, run.
package final class PGDirectCommit: PGCommitPath {
    package init() {}

    package func run(
        _ conn: PGConnection, _ steps: [(PGStatement, [PGParam])], early: Int, onEarly: (PGResult?) -> Void
    ) throws(PGFailure) -> [PGResult?] {
        try conn.run(steps, early: early, onEarly: onEarly)
    }
}

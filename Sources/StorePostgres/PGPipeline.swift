/// Statements for one `PGConnection.run`, each added with the place its result will have in
/// `run`'s answer: a transaction reads its results by name, not by a position that shifts when
/// an optional statement is present.
struct PGPipeline {
    private(set) var steps: [(PGStatement, [PGParam])] = []

    init(capacity: Int) {
        steps.reserveCapacity(capacity)
    }

    /// Adds `statement`; returns the index of its result (and of its failure, `failedStep`).
    @discardableResult
    mutating func add(_ statement: PGStatement, _ parameters: [PGParam] = []) -> Int {
        steps.append((statement, parameters))
        return steps.count - 1
    }
}

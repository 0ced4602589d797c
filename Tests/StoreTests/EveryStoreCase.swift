// What the store test classes whose tests run once per implementation share: the loop over
// the implementations, a failure named by the implementation it happened with, and the
// PostgreSQL cluster taken down after the class. Helpers only, no tests: on Linux, XCTest runs
// the test methods a class declares, not those it inherits (StoreContractTests says more).
import StoreCore
import StoreTestSupport
import TestSupport
import XCTest

class EveryStoreCase: XCTestCase {
    override class func tearDown() {
        SharedCluster.destroy()
        super.tearDown()
    }

    /// The implementation the test is running with, for failures ("" outside the loops).
    var implementation = ""

    /// Runs `body` with a new store of each implementation, closed afterwards.
    func forEachStore(_ body: (any Store) throws -> Void) throws {
        for (name, make) in StoreContractTests.implementations {
            implementation = name
            let store = try make(self)
            defer { store.close() }
            try body(store)
        }
        implementation = ""
    }

    override func recordFailure(
        withDescription description: String, inFile filePath: String, atLine lineNumber: Int, expected: Bool
    ) {
        super.recordFailure(
            withDescription: "[\(implementation)] \(description)", inFile: filePath, atLine: lineNumber,
            expected: expected)
    }
}

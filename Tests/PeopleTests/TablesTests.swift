import People
import XCTest

final class RoleTests: XCTestCase {
    func testRolesAreOrderedByWhatTheyMayDo() {
        XCTAssertTrue(AccessRole.allCases == [.none, .reader, .writer, .admin])
        XCTAssertTrue(AccessRole.allCases.sorted() == AccessRole.allCases)
        XCTAssertTrue(AccessRole.none < .reader && .reader < .writer && .writer < .admin)
        XCTAssertTrue(!(AccessRole.admin < .admin))
        XCTAssertTrue(AccessRole.names == ["none", "reader", "writer", "admin"])
    }

    func testMayWriteIsWriterOrAbove() {
        XCTAssertTrue(
            AccessRole.allCases.map { Identity(user: "a", role: $0, door: .proxy).mayWrite } == [
                false, false, true, true,
            ])
    }
}

final class TablesTests: XCTestCase {
    static let alice = TokenRecord(
        id: "a1", name: "alice", role: .writer, hash: [UInt8](repeating: 1, count: 32), created: 10,
        expires: 100)
    static let bob = TokenRecord(
        id: "b1", name: "bob", role: .reader, hash: [UInt8](repeating: 2, count: 32), created: 20)

    func testATokenIsFoundByItsHashOnly() {
        let t = PeopleTables(tokens: [Self.alice, Self.bob])
        XCTAssertTrue(t.token(hash: Self.alice.hash) == Self.alice)
        XCTAssertTrue(t.token(hash: Self.bob.hash) == Self.bob)
        var close = Self.alice.hash
        close[31] = 0
        XCTAssertTrue(t.token(hash: close) == nil)
        XCTAssertTrue(t.token(hash: []) == nil)
        XCTAssertTrue(t.token(id: "b1") == Self.bob)
        XCTAssertTrue(t.token(id: "zz") == nil)
    }

    func testAGivenRoleWinsOverEveryDoorExceptRoot() {
        let t = PeopleTables(tokens: [Self.alice], grants: ["alice": .reader, "root": .none, "carol": .none])
        XCTAssertTrue(t.role(of: "alice", door: .unix(uid: 1000), doorRole: .writer) == .reader)
        XCTAssertTrue(t.role(of: "alice", door: .proxy, doorRole: .writer) == .reader)
        XCTAssertTrue(t.role(of: "dave", door: .proxy, doorRole: .writer) == .writer)
        XCTAssertTrue(t.role(of: nil, door: .anonymous, doorRole: .reader) == .reader)
        XCTAssertTrue(t.role(of: "carol", door: .unix(uid: 1001), doorRole: .admin) == AccessRole.none)
        // Root cannot be locked out: it is admin whatever is given to "root".
        XCTAssertTrue(t.role(of: "root", door: .unix(uid: 0), doorRole: .admin) == .admin)
        // A token for "root" is not uid 0: the grant applies.
        XCTAssertTrue(t.role(of: "root", door: .token(id: "x"), doorRole: .admin) == AccessRole.none)
    }

    func testATokensRoleIsItsOwnUnlessTheNameWasGivenOneAndNothingOnceExpired() {
        var t = PeopleTables(tokens: [Self.alice, Self.bob])
        XCTAssertTrue(t.role(ofToken: "a1", at: 99)! == ("alice", .writer))
        XCTAssertTrue(t.role(ofToken: "a1", at: 100) == nil)
        XCTAssertTrue(t.role(ofToken: "b1", at: .max)! == ("bob", .reader))
        XCTAssertTrue(t.role(ofToken: "gone", at: 0) == nil)
        t = PeopleTables(tokens: [Self.alice, Self.bob], grants: ["bob": .admin])
        XCTAssertTrue(t.role(ofToken: "b1", at: 0)! == ("bob", .admin))
    }

    func testTablesCompareByContent() {
        XCTAssertTrue(PeopleTables(tokens: [Self.alice]) == PeopleTables(tokens: [Self.alice]))
        XCTAssertTrue(PeopleTables(tokens: [Self.alice]) != PeopleTables(tokens: [Self.bob]))
        XCTAssertTrue(PeopleTables(grants: ["a": .reader]) != PeopleTables(grants: ["a": .writer]))
    }

    func testConstantTimeEqualIsEquality() {
        XCTAssertTrue(constantTimeEqual([1, 2, 3], [1, 2, 3]))
        XCTAssertTrue(!constantTimeEqual([1, 2, 3], [1, 2, 4]))
        XCTAssertTrue(!constantTimeEqual([1, 2], [1, 2, 3]))
        XCTAssertTrue(constantTimeEqual([], []))
    }

    func testPersonNames() {
        XCTAssertTrue(PersonName.problem("alice") == nil)
        XCTAssertTrue(PersonName.problem("alice@example.org") == nil)
        XCTAssertTrue(PersonName.problem("Zoë") == nil)
        XCTAssertTrue(PersonName.problem(String(repeating: "a", count: 64)) == nil)
        XCTAssertTrue(PersonName.problem(String(repeating: "a", count: 65))?.contains("65") == true)
        XCTAssertTrue(PersonName.problem("")?.contains("empty") == true)
        XCTAssertTrue(PersonName.problem("a b")?.contains("U+20") == true)
        XCTAssertTrue(PersonName.problem("a\u{7}")?.contains("U+7") == true)
    }
}

import People
import Testing

@Suite struct RoleTests {
    @Test func rolesAreOrderedByWhatTheyMayDo() {
        #expect(AccessRole.allCases == [.none, .reader, .writer, .admin])
        #expect(AccessRole.allCases.sorted() == AccessRole.allCases)
        #expect(AccessRole.none < .reader && .reader < .writer && .writer < .admin)
        #expect(!(AccessRole.admin < .admin))
        #expect(AccessRole.names == ["none", "reader", "writer", "admin"])
    }

    @Test func mayWriteIsWriterOrAbove() {
        #expect(
            AccessRole.allCases.map { Identity(user: "a", role: $0, door: .proxy).mayWrite } == [
                false, false, true, true,
            ])
    }
}

@Suite struct TablesTests {
    static let alice = TokenRecord(
        id: "a1", name: "alice", role: .writer, hash: [UInt8](repeating: 1, count: 32), created: 10,
        expires: 100)
    static let bob = TokenRecord(
        id: "b1", name: "bob", role: .reader, hash: [UInt8](repeating: 2, count: 32), created: 20)

    @Test func aTokenIsFoundByItsHashOnly() {
        let t = PeopleTables(tokens: [Self.alice, Self.bob])
        #expect(t.token(hash: Self.alice.hash) == Self.alice)
        #expect(t.token(hash: Self.bob.hash) == Self.bob)
        var close = Self.alice.hash
        close[31] = 0
        #expect(t.token(hash: close) == nil)
        #expect(t.token(hash: []) == nil)
        #expect(t.token(id: "b1") == Self.bob)
        #expect(t.token(id: "zz") == nil)
    }

    @Test func aGivenRoleWinsOverEveryDoorExceptRoot() {
        let t = PeopleTables(tokens: [Self.alice], grants: ["alice": .reader, "root": .none, "carol": .none])
        #expect(t.role(of: "alice", door: .unix(uid: 1000), doorRole: .writer) == .reader)
        #expect(t.role(of: "alice", door: .proxy, doorRole: .writer) == .reader)
        #expect(t.role(of: "dave", door: .proxy, doorRole: .writer) == .writer)
        #expect(t.role(of: nil, door: .anonymous, doorRole: .reader) == .reader)
        #expect(t.role(of: "carol", door: .unix(uid: 1001), doorRole: .admin) == AccessRole.none)
        // Root cannot be locked out: it is admin whatever is given to "root".
        #expect(t.role(of: "root", door: .unix(uid: 0), doorRole: .admin) == .admin)
        // A token for "root" is not uid 0: the grant applies.
        #expect(t.role(of: "root", door: .token(id: "x"), doorRole: .admin) == AccessRole.none)
    }

    @Test func aTokensRoleIsItsOwnUnlessTheNameWasGivenOneAndNothingOnceExpired() {
        var t = PeopleTables(tokens: [Self.alice, Self.bob])
        #expect(t.role(ofToken: "a1", at: 99)! == ("alice", .writer))
        #expect(t.role(ofToken: "a1", at: 100) == nil)
        #expect(t.role(ofToken: "b1", at: .max)! == ("bob", .reader))
        #expect(t.role(ofToken: "gone", at: 0) == nil)
        t = PeopleTables(tokens: [Self.alice, Self.bob], grants: ["bob": .admin])
        #expect(t.role(ofToken: "b1", at: 0)! == ("bob", .admin))
    }

    @Test func tablesCompareByContent() {
        #expect(PeopleTables(tokens: [Self.alice]) == PeopleTables(tokens: [Self.alice]))
        #expect(PeopleTables(tokens: [Self.alice]) != PeopleTables(tokens: [Self.bob]))
        #expect(PeopleTables(grants: ["a": .reader]) != PeopleTables(grants: ["a": .writer]))
    }

    @Test func constantTimeEqualIsEquality() {
        #expect(constantTimeEqual([1, 2, 3], [1, 2, 3]))
        #expect(!constantTimeEqual([1, 2, 3], [1, 2, 4]))
        #expect(!constantTimeEqual([1, 2], [1, 2, 3]))
        #expect(constantTimeEqual([], []))
    }

    @Test func personNames() {
        #expect(PersonName.problem("alice") == nil)
        #expect(PersonName.problem("alice@example.org") == nil)
        #expect(PersonName.problem("Zoë") == nil)
        #expect(PersonName.problem(String(repeating: "a", count: 64)) == nil)
        #expect(PersonName.problem(String(repeating: "a", count: 65))?.contains("65") == true)
        #expect(PersonName.problem("")?.contains("empty") == true)
        #expect(PersonName.problem("a b")?.contains("U+20") == true)
        #expect(PersonName.problem("a\u{7}")?.contains("U+7") == true)
    }
}

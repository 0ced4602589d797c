import XCTest

@testable import Movies

/// `decideAndApply` is `decide` then `apply` at the next seq: the same event, the same movie
/// after it, the same error, and the same state after, for every kind of command, with and
/// without `expect`, on live, removed and unknown ids.
final class DecideAndApplyTests: XCTestCase {
    func testIsDecideThenApply() {
        var fast = MovieState()
        for e in MovieState.seedCatalogue { fast.apply(e, seq: fast.lastSeq + 1) }
        var slow = fast
        var random: UInt64 = 0x5EED
        func next(_ n: Int) -> Int {
            random = random &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((random >> 33) % UInt64(n))
        }
        let ids = MovieState.seedCatalogue.map(\.movieID) + ["nope", "a_new_movie"]
        var decided = (events: 0, refusals: 0)
        for _ in 0..<5_000 {
            let id = ids[next(ids.count)]
            let version = slow.movie(id)?.version ?? slow.removed[id]?.movie.version ?? 0
            let expect: UInt64? = [nil, version, version + 1, 0][next(4)]
            let ops: [MovieCommand.Op] = [
                .toggleWatched(movie: id), .toggleWatchedWithFriends(movie: id), .remove(movie: id),
                .restore(movie: id), .add(title: "A New Movie", image: nil),
                .undo(Undo(movie: id, original: 1, compensation: .toggleWatched, version: version)),
            ]
            // Toggles most of the time, as in use, so that removes do not empty the catalogue.
            let op = next(3) > 0 ? ops[next(2)] : ops[next(ops.count)]
            let command = MovieCommand(op, expect: expect)
            let expected: Result<(MovieEvent, Movie?), CommandError>
            do throws(CommandError) {
                let event = try slow.decide(command)
                expected = .success((event, slow.apply(event, seq: slow.lastSeq + 1)))
            } catch {
                expected = .failure(error)
            }
            do throws(CommandError) {
                let (event, after) = try fast.decideAndApply(command)
                guard case .success(let e) = expected else { return XCTFail("\(command) decided \(event)") }
                XCTAssertEqual(event, e.0, "\(command)")
                XCTAssertEqual(after, e.1, "\(command)")
                decided.events += 1
            } catch {
                XCTAssertEqual(expected.failure, error, "\(command)")
                decided.refusals += 1
            }
            XCTAssertEqual(fast, slow, "\(command)")
        }
        // Both outcomes were exercised many times.
        XCTAssertGreaterThan(decided.events, 1_000)
        XCTAssertGreaterThan(decided.refusals, 1_000)
    }
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let e) = self { return e }
        return nil
    }
}

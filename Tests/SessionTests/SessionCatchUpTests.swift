import Foundation
import JSONCodec
import Movies
import People
import Session
import StoreCore
import StoreTestSupport
import Wire
import XCTest

/// A subscriber catching up from the log (issue 40, point 4): what it holds for its peer is
/// bounded by its window (64 KB) whatever `--max-queue` is, it reads on as its output drains,
/// and every event reaches the peer once, in order, live events during a held catch-up too.
final class SessionCatchUpTests: XCTestCase {
    /// A subscriber's harness whose `--max-queue` would let it hold a gigabyte.
    private func harness(maxQueue: Int = 1 << 30) -> SessionHarness {
        let h = SessionHarness(SessionConfig(client: 7, identity: .tester(.writer), maxQueue: maxQueue))
        XCTAssertEqual(h.read().count, 1)  // hello
        return h
    }

    /// `count` changes by another client, committed before the subscriber subscribes.
    private func fill(_ h: SessionHarness, _ count: Int) {
        let other = InMemoryStoreDriver(h.store)
        for n in 0..<count { _ = other.toggle(n % 2 == 0 ? "matrix" : "seven") }
    }

    /// Writes at most `n` bytes of the output, as a socket that takes that much would, then
    /// resumes the session as the daemon's `afterWork` does and carries its actions out.
    private func write(_ h: SessionHarness, atMost n: Int) -> [UInt8] {
        let bytes = h.session.withPendingOutput { Array($0.prefix(n)) }
        h.hear(.written(bytes.count))
        if h.session.mayResume(latestSeq: h.store.latestSeq) {
            h.hear(.resume)
        }
        h.settle()
        return bytes
    }

    /// The seqs of the `movie` events in `bytes`, in order.
    private func seqs(_ bytes: [UInt8]) -> [Int] {
        String(decoding: bytes, as: UTF8.self).split(separator: "\n").compactMap { line in
            let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
            guard object?["event"] as? String == "movie" else { return nil }
            return (object?["seq"] as? NSNumber)?.intValue
        }
    }

    func testACatchUpHoldsAtMostItsWindowWhateverMaxQueueAndGoesOnAsTheSocketDrains() {
        let h = harness()
        fill(h, 3_000)  // about 600 KB of events after the seed's 10
        h.send(#"{"op":"subscribe","from":0}"#)
        h.settle()
        XCTAssertEqual(h.read().first, #"{"ok":true,"seq":3010}"#)
        h.settle()
        // The peer reads nothing: the catch-up stops at its window.
        XCTAssertGreaterThan(h.session.pendingOutput, 0)
        XCTAssertLessThanOrEqual(h.session.backlog, Session.catchUpWindow)
        XCTAssertTrue(h.catchUpShare, "a catch-up holds a share of the daemon's cap")
        // A slow peer, 1,000 bytes at a time: the window is never passed, and the log is read on.
        var wire: [UInt8] = []
        var largest = 0
        while h.session.pendingOutput > 0 {
            wire += write(h, atMost: 1_000)
            largest = max(largest, h.session.backlog)
        }
        XCTAssertLessThanOrEqual(largest, Session.catchUpWindow)
        XCTAssertEqual(seqs(wire), Array(1...3010), "every event once, in order")
        XCTAssertFalse(h.catchUpShare, "caught up and written: the share is given back")
        XCTAssertTrue(h.session.wantsLiveEvent(seq: 3011))
    }

    func testAPageIsAskedOnlyOnceTheOutputDrainedAndSizedToTheRoomLeft() {
        let h = harness()
        fill(h, 1_000)
        h.send(#"{"op":"subscribe","from":0}"#)
        XCTAssertEqual(h.takeActions(), [.subscription(active: true)])
        _ = h.read()  // the subscribe reply: the output is empty, the whole window is room
        XCTAssertEqual(h.takeActions(), [.catchUp(ticket: 1, after: 0, limit: 256)])
        h.forgetTakenActions()
        h.store.read(.events(after: 0, limit: 256), token: 1)
        let page = h.store.completions().reads[0].result.mapError(WireError.init)
        h.hear(.readAnswered(ticket: 1, page))
        // 256 events are more than a quarter of the window: no next page yet.
        XCTAssertEqual(h.takeActions(), [])
        let owed = h.session.pendingOutput
        XCTAssertGreaterThan(owed, Session.catchUpWindow / 4)
        // Written down to a quarter of the window: the next page, sized to what it has room for.
        h.hear(.written(owed - Session.catchUpWindow / 4))
        XCTAssertTrue(h.session.mayResume(latestSeq: h.store.latestSeq))
        h.hear(.resume)
        let actions = h.takeActions()
        guard case .catchUp(ticket: 2, after: 256, limit: let limit) = actions.first, actions.count == 1
        else {
            return XCTFail("\(actions)")
        }
        let room = Session.catchUpWindow - h.session.pendingOutput
        XCTAssertLessThan(limit, 256)
        XCTAssertGreaterThanOrEqual(limit, room / 300, "events of about 200 bytes")
    }

    /// Live events committed while the catch-up is behind, its page held back (as the daemon's
    /// cap on catch-ups holds one) or its window full and the peer not reading, are not due
    /// live: they are read from the log with the rest, and the first change after goes live.
    func testLiveEventsDuringAPausedCatchUpComeFromTheLogInOrderThenLive() {
        let h = harness()
        fill(h, 600)
        h.send(#"{"op":"subscribe","from":0}"#)
        XCTAssertEqual(h.read().count, 1)
        // Its first page is held back: nothing answers it for now.
        XCTAssertEqual(
            h.takeActions(), [.subscription(active: true), .catchUp(ticket: 1, after: 0, limit: 256)])
        h.forgetTakenActions()
        h.subscribed = true
        /// Changes by another client, delivered as the daemon delivers them (live when due).
        func commit(_ count: Int) {
            for _ in 0..<count {
                h.store.submit(MovieCommand(.toggleWatched(movie: "godfather")), token: 1 << 40)
                h.store.flush()
                let batch = h.store.completions()
                XCTAssertFalse(batch.committed.contains { h.session.wantsLiveEvent(seq: $0.seq) }, "not due")
                h.deliver(batch)
            }
        }
        commit(300)
        XCTAssertEqual(h.session.pendingOutput, 0)
        // The page comes at last (the share is free); the peer still reads nothing: the catch-up
        // stops at its window, and more changes come meanwhile.
        h.store.read(.events(after: 0, limit: 256), token: 1)
        let page = h.store.completions().reads[0].result.mapError(WireError.init)
        h.hear(.readAnswered(ticket: 1, page))
        h.settle()
        XCTAssertLessThanOrEqual(h.session.backlog, Session.catchUpWindow)
        commit(100)
        XCTAssertLessThanOrEqual(h.session.backlog, Session.catchUpWindow)
        // The peer reads, slowly: everything comes, once, in order, within the window.
        var wire: [UInt8] = []
        var largest = 0
        while h.session.pendingOutput > 0 {
            wire += write(h, atMost: 4_096)
            largest = max(largest, h.session.backlog)
        }
        XCTAssertLessThanOrEqual(largest, Session.catchUpWindow)
        XCTAssertEqual(seqs(wire), Array(1...1010), "the seed, the 600, and the 400 live ones, once each")
        // Caught up: the next change is live.
        let next = InMemoryStoreDriver(h.store).toggle("matrix")
        XCTAssertTrue(h.session.wantsLiveEvent(seq: next.seq))
    }

    func testUnsubscribingOrByeMidCatchUpGivesTheShareBack() {
        let h = harness()
        fill(h, 2_000)
        h.send(#"{"op":"subscribe","from":0}"#)
        h.settle()
        _ = write(h, atMost: 100)
        XCTAssertTrue(h.catchUpShare)
        h.send(#"{"op":"unsubscribe"}"#)
        XCTAssertEqual(h.takeActions(), [.catchUpEnded, .subscription(active: false)])

        let other = harness()
        fill(other, 2_000)
        other.send(#"{"op":"subscribe","from":0}"#)
        other.settle()
        _ = write(other, atMost: 10)
        XCTAssertTrue(other.catchUpShare)
        other.hear(.goodbye(.shutdown))
        XCTAssertEqual(
            other.takeActions(),
            [.catchUpEnded, .subscription(active: false), .arm(.goodbye, microseconds: 1_000_000)])
    }

    /// With a `--max-queue` of a few hundred bytes the window is smaller than an event: each
    /// page still words one, so the catch-up goes on.
    func testATinyMaxQueueStillCatchesUpAnEventAtATime() {
        let h = harness(maxQueue: 256)
        fill(h, 50)
        h.send(#"{"op":"subscribe","from":0}"#)
        h.settle()
        var wire: [UInt8] = []
        while h.session.pendingOutput > 0 { wire += write(h, atMost: 64) }
        XCTAssertEqual(seqs(wire), Array(1...60))
    }
}

import Foundation
import JSONCodec
import Movies
import People
import Session
import StoreCore
import StoreTestSupport
import SwipeEngine
import Wire
import XCTest

/// A connection's state machine, driven through its inputs with a fake store and a fake clock.
/// Where the Session changes state, every action it emits is asserted.
final class SessionTests: XCTestCase {
    private func harness(
        mayWrite: Bool = true, maxQueue: Int = 1 << 20, writersGroup: String? = nil
    ) -> SessionHarness {
        let h = SessionHarness(
            SessionConfig(
                client: 7, identity: .tester(mayWrite ? .writer : .reader), writersGroup: writersGroup,
                maxQueue: maxQueue))
        XCTAssertEqual(h.read().count, 1)  // hello
        return h
    }

    // MARK: - Greeting and every op

    func testHelloComesFirstAndSaysWhoTheClientIs() {
        let h = SessionHarness(SessionConfig(client: 42, identity: .tester(.reader)))
        let lines = h.read()
        XCTAssertEqual(lines.count, 1)
        let hello = h.json(lines[0])
        XCTAssertEqual(hello["event"] as? String, "hello")
        XCTAssertEqual(hello["client"] as? Int, 42)
        XCTAssertEqual(hello["seq"] as? Int, 10)
        XCTAssertEqual(hello["writer"] as? Bool, false)
        XCTAssertEqual(hello["protocol"] as? Int, 1)
        XCTAssertEqual(hello["log"] as? String, h.store.logID)
        XCTAssertEqual(h.session.lifecycle, .reading)
        XCTAssertTrue(h.session.wantsRead)
        XCTAssertTrue(h.takeActions().isEmpty)
    }

    func testHelloSaysTheStoresLog() {
        let store = InMemoryStore()
        store.logID = "5f0c1e2d3a4b59687766554433221100"
        let h = SessionHarness(store: store)
        XCTAssertEqual(h.json(h.read()[0])["log"] as? String, "5f0c1e2d3a4b59687766554433221100")
    }

    func testPingHelpAndListAnswerAtOnceWithoutActions() {
        let h = harness()
        h.send(#"{"op":"ping","id":1}"#)
        XCTAssertEqual(h.takeActions(), [])
        XCTAssertEqual(h.read(), [#"{"id":1,"ok":true}"#])
        h.send(#"{"op":"list"}"#)
        XCTAssertEqual(h.takeActions(), [])
        let list = h.json(h.read()[0])
        XCTAssertEqual((list["movies"] as? [Any])?.count, 10)
        XCTAssertEqual(list["seq"] as? Int, 10)
        h.send(#"{"op":"help"}"#)
        XCTAssertEqual(h.takeActions(), [])
        XCTAssertEqual(h.json(h.read()[0])["ok"] as? Bool, true)
        XCTAssertEqual(h.session.requests, 3)
    }

    func testAMutationIsSubmittedAndAnsweredWhenTheStoreSaysSo() {
        let h = harness()
        h.send(#"{"op":"toggle-watched","movie":"matrix","id":"a"}"#)
        XCTAssertEqual(
            h.takeActions(),
            [
                .submit(
                    ticket: 1, op: "toggle-watched",
                    MovieCommand(.toggleWatched(movie: "matrix"), by: "tester"))
            ])
        XCTAssertEqual(h.read(), [], "the reply waits for the commit")
        XCTAssertEqual(h.session.backlog, 1024, "a waiting reply counts against the cap")
        // The store commits; the session learns the outcome as a fact.
        h.store.submit(MovieCommand(.toggleWatched(movie: "matrix")), token: 1)
        h.store.flush()
        let batch = h.store.completions()
        let event = try! XCTUnwrap(batch.commands.first).result.get()
        h.hear(.commandAnswered(ticket: 1, .success(event)))
        XCTAssertEqual(h.takeActions(), [])
        let reply = h.json(h.read()[0])
        XCTAssertEqual(reply["id"] as? String, "a")
        XCTAssertEqual(reply["seq"] as? Int, 11)
        XCTAssertEqual((reply["movie"] as? [String: Any])?["watched"] as? Bool, true)
        XCTAssertEqual(h.session.backlog, 0)
    }

    func testEveryMutationOpGoesThroughTheStore() {
        let h = harness()
        XCTAssertEqual(h.json(h.exchange(#"{"op":"add","title":"Alien"}"#)[0])["seq"] as? Int, 11)
        XCTAssertEqual(
            h.json(h.exchange(#"{"op":"toggle-watched-with-friends","movie":"alien"}"#)[0])["seq"] as? Int, 12
        )
        XCTAssertEqual(
            h.json(h.exchange(#"{"op":"remove","movie":"alien","expect":12}"#)[0])["seq"] as? Int, 13)
        let refused = h.json(h.exchange(#"{"op":"remove","movie":"alien"}"#)[0])
        XCTAssertEqual((refused["error"] as? [String: Any])?["code"] as? String, "not-found")
        let conflict = h.json(h.exchange(#"{"op":"toggle-watched","movie":"matrix","expect":1}"#)[0])
        XCTAssertEqual((conflict["error"] as? [String: Any])?["code"] as? String, "conflict")
    }

    func testANonWriterIsForbiddenWithoutAnythingSubmitted() {
        let h = harness(mayWrite: false, writersGroup: "swiped-writers")
        h.send(#"{"op":"toggle-watched","movie":"matrix"}"#)
        let actions = h.takeActions()
        XCTAssertEqual(actions.count, 2)
        guard case .log(let entry) = actions[0] else { return XCTFail("\(actions)") }
        XCTAssertEqual(entry.message, "request failed")
        XCTAssertEqual(entry.level, .debug, "a refusal is one entry per request: debug")
        XCTAssertEqual(actions[1], .denied(op: "toggle-watched", .forbidden))
        XCTAssertEqual(
            h.read(),
            [
                #"{"ok":false,"error":{"code":"forbidden","message":"\"toggle-watched\" needs the role writer; this connection is tester (reader); members of the group \"swiped-writers\" are writers"}}"#
            ])
    }

    func testErrorsAreAnsweredInOrderAndLoggedOnce() {
        let h = harness()
        h.send("not json at all")
        h.send(#"{"op":"fly","id":3}"#)
        let actions = h.takeActions()
        XCTAssertEqual(actions.count, 2)
        for case .log(let entry) in actions { XCTAssertEqual(entry.message, "request failed") }
        let lines = h.read()
        XCTAssertEqual(lines.count, 2)
        XCTAssertEqual(
            lines[0],
            #"{"ok":false,"error":{"code":"bad-json","message":"a request is one JSON object per line, such as {\"op\":\"ping\"} ({\"op\":\"help\"} lists the ops); this line is not one: invalid literal (expected 'null') at byte 0"}}"#
        )
        XCTAssertEqual(h.json(lines[1])["id"] as? Int, 3)
        XCTAssertEqual((h.json(lines[1])["error"] as? [String: Any])?["code"] as? String, "unknown-op")
    }

    func testATooLargeLineIsSkippedWithOneError() {
        let h = SessionHarness(SessionConfig(client: 1, identity: .tester(.writer), maxLine: 64))
        _ = h.read()
        h.send(String(repeating: "x", count: 200))
        h.send(#"{"op":"ping"}"#)
        let lines = h.read()
        XCTAssertEqual(lines.count, 2)
        XCTAssertEqual((h.json(lines[0])["error"] as? [String: Any])?["code"] as? String, "too-large")
        XCTAssertEqual(lines[1], #"{"ok":true}"#)
    }

    // MARK: - Pipelining

    func testRepliesKeepRequestOrderBehindAPendingMutationAndReadsSeeIt() {
        let h = harness()
        h.send(#"{"op":"toggle-watched","movie":"matrix","id":1}"#)
        h.send(#"{"op":"ping","id":2}"#)
        h.send(#"{"op":"list","id":3}"#)
        h.send(#"{"op":"history","from":10,"id":4}"#)
        XCTAssertEqual(
            h.takeActions(),
            [
                .submit(
                    ticket: 1, op: "toggle-watched",
                    MovieCommand(.toggleWatched(movie: "matrix"), by: "tester"))
            ])
        XCTAssertEqual(h.read(), [], "nothing overtakes the pending mutation")
        h.store.submit(MovieCommand(.toggleWatched(movie: "matrix")), token: 1)
        h.store.flush()
        let event = try! h.store.completions().commands[0].result.get()
        h.hear(.commandAnswered(ticket: 1, .success(event)))
        // The history page is read only now that it is due, so that it sees the mutation.
        XCTAssertEqual(h.takeActions(), [.read(ticket: 2, .events(after: 10, limit: 100))])
        let lines = h.read()
        XCTAssertEqual(lines.count, 3, "the history reply still waits for its read")
        XCTAssertEqual(h.json(lines[0])["id"] as? Int, 1)
        XCTAssertEqual(lines[1], #"{"id":2,"ok":true}"#)
        let list = h.json(lines[2])
        XCTAssertEqual(list["seq"] as? Int, 11, "list is worded when due: it sees the toggle")
        h.store.read(.events(after: 10, limit: 100), token: 9)
        let page = h.store.completions().reads[0].result.mapError(WireError.init)
        h.hear(.readAnswered(ticket: 2, page))
        XCTAssertEqual(h.takeActions(), [])
        let history = h.json(h.read()[0])
        XCTAssertEqual(history["id"] as? Int, 4)
        XCTAssertEqual((history["events"] as? [Any])?.count, 1)
    }

    func testTheBacklogCapPausesReadingAndDrainingResumesIt() {
        let h = harness(maxQueue: 4096)
        // Many pings in one read, nothing written: past the cap the session stops answering and
        // reading; the lines left wait in the framer.
        h.receive(String(repeating: #"{"op":"ping"}"# + "\n", count: 1000))
        XCTAssertEqual(h.session.lifecycle, .paused)
        XCTAssertFalse(h.session.wantsRead)
        let answered = h.session.requests
        XCTAssertLessThan(answered, 1000)
        XCTAssertGreaterThan(h.session.backlog, 4096)
        XCTAssertEqual(h.takeActions(), [])
        // The peer reads: the rest is answered, in order, and reading resumes.
        let lines = h.read()
        XCTAssertEqual(lines.count, 1000)
        XCTAssertTrue(lines.allSatisfy { $0 == #"{"ok":true}"# })
        XCTAssertEqual(h.session.lifecycle, .reading)
        XCTAssertTrue(h.session.wantsRead)
    }

    // MARK: - Lifecycle

    func testHalfCloseAnswersTheLastLineThenCloses() {
        let h = harness()
        h.receive(#"{"op":"ping","id":1}"# + "\n" + #"{"op":"ping","id":2}"#)
        XCTAssertEqual(h.session.lifecycle, .reading)
        h.hear(.readEnded)
        XCTAssertEqual(h.takeActions(), [])
        XCTAssertEqual(h.session.lifecycle, .halfClosed)
        XCTAssertFalse(h.session.wantsRead)
        XCTAssertEqual(h.read(), [#"{"id":1,"ok":true}"#, #"{"id":2,"ok":true}"#])
        XCTAssertEqual(h.session.lifecycle, .closed(reason: .peerClosed))
    }

    func testHalfCloseWaitsForAPendingMutation() {
        let h = harness()
        h.receive(#"{"op":"toggle-watched","movie":"matrix"}"#)
        h.hear(.readEnded)
        XCTAssertEqual(h.session.lifecycle, .halfClosed)
        h.settle()
        XCTAssertEqual(h.session.lifecycle, .halfClosed, "the reply is not written yet")
        XCTAssertEqual(h.read().count, 1)
        XCTAssertEqual(h.session.lifecycle, .closed(reason: .peerClosed))
    }

    func testAHalfClosedSubscriberStaysUntilItClosesForGood() {
        let h = harness()
        h.send(#"{"op":"subscribe"}"#)
        h.settle()
        h.hear(.readEnded)
        XCTAssertEqual(h.read(), [#"{"ok":true,"seq":10}"#])
        XCTAssertEqual(h.session.lifecycle, .halfClosed)
    }

    func testByeForShutdownIsLastAndTheConnectionClosesOnceItIsWritten() {
        let h = harness()
        h.send(#"{"op":"ping"}"#)
        h.hear(.goodbye(.shutdown))
        XCTAssertEqual(h.takeActions(), [.arm(.goodbye, microseconds: 1_000_000)])
        XCTAssertEqual(h.session.lifecycle, .sayingBye(reason: .shutdown))
        XCTAssertFalse(h.session.wantsRead)
        XCTAssertEqual(h.read(), [#"{"ok":true}"#, #"{"event":"bye","reason":"shutdown"}"#])
        XCTAssertEqual(h.session.lifecycle, .closed(reason: .closedByServer))
    }

    func testAPeerThatDoesNotReadItsByeIsClosedByTheTimer() {
        let h = harness()
        h.hear(.goodbye(.shutdown))
        XCTAssertEqual(h.takeActions(), [.arm(.goodbye, microseconds: 1_000_000)])
        h.hear(.timerFired(.goodbye))
        XCTAssertEqual(h.takeActions(), [])
        XCTAssertEqual(h.session.lifecycle, .closed(reason: .byeNotRead(.shutdown)))
    }

    func testASlowSubscriberIsToldByeAndUnsubscribed() {
        let h = harness(maxQueue: 2048)
        h.send(#"{"op":"subscribe"}"#)
        XCTAssertEqual(h.takeActions(), [.subscription(active: true)])
        // The peer reads nothing; a toggle by someone else, many times.
        let other = InMemoryStoreDriver(h.store)
        var events = 0
        while h.session.lifecycle == .reading || h.session.lifecycle == .paused, events < 100 {
            let event = other.toggle("matrix")
            events += 1
            XCTAssertTrue(h.session.wantsLiveEvent(seq: event.seq))
            var line = JSONWriter()
            Encode.movieEvent(&line, event)
            h.hear(.liveEvent(seq: event.seq, line: line.bytes, written: nil))
        }
        XCTAssertGreaterThan(events, 1, "the queue was over the cap before the last event")
        let actions = h.takeActions()
        XCTAssertEqual(actions.count, 3, "\(actions)")
        guard case .log(let entry) = actions[0] else { return XCTFail("\(actions)") }
        XCTAssertEqual(entry.message, "subscriber too slow, disconnecting")
        XCTAssertEqual(
            Array(actions[1...]), [.subscription(active: false), .arm(.goodbye, microseconds: 1_000_000)])
        XCTAssertEqual(h.session.lifecycle, .sayingBye(reason: .slowConsumer))
        XCTAssertEqual(h.read().last, #"{"event":"bye","reason":"slow-consumer"}"#)
    }

    /// The fan-out lane (the manager writes part of a live event itself) against the slow path
    /// (the session queues all of it): for every split of the line, the same bytes reach the
    /// peer, the cursor moves alike, and no action is asked for.
    func testALiveEventWrittenInPartByTheManagerEndsAsTheQueuedOneDoes() {
        for written in [0, 1, 17] + [-1] {
            let slow = harness()
            let fast = harness()
            for h in [slow, fast] {
                h.send(#"{"op":"subscribe"}"#)
                XCTAssertEqual(h.takeActions(), [.subscription(active: true)])
                _ = h.read()
            }
            let event = InMemoryStoreDriver(slow.store).toggle("matrix")
            XCTAssertEqual(InMemoryStoreDriver(fast.store).toggle("matrix").seq, event.seq)
            var line = JSONWriter()
            Encode.movieEvent(&line, event)
            let bytes = line.bytes
            let n = written < 0 ? bytes.count : written
            slow.hear(.liveEvent(seq: event.seq, line: bytes, written: nil))
            XCTAssertTrue(fast.session.takesLiveEventsDirectly)
            fast.hear(.liveEvent(seq: event.seq, line: bytes, written: n))
            XCTAssertEqual(fast.takeActions(), [])
            XCTAssertEqual(slow.takeActions(), [])
            XCTAssertEqual(fast.session.pendingOutput, bytes.count - n)
            // What each peer reads: the manager's bytes, then what the session queued.
            let fastWire =
                String(decoding: bytes[..<n], as: UTF8.self) + fast.read().map { $0 + "\n" }.joined()
            let slowWire = slow.read().map { $0 + "\n" }.joined()
            XCTAssertEqual(fastWire, slowWire, "\(n) of \(bytes.count) bytes written by the manager")
            XCTAssertEqual(slowWire, String(decoding: bytes, as: UTF8.self))
            for h in [slow, fast] {
                XCTAssertTrue(h.session.caughtUp(to: event.seq))
                XCTAssertTrue(h.session.wantsLiveEvent(seq: event.seq + 1))
                XCTAssertEqual(h.session.lifecycle, .reading)
            }
        }
    }

    func testTheFanOutLaneIsClosedWhileOutputWaits() {
        let h = harness()
        h.send(#"{"op":"subscribe"}"#)
        XCTAssertEqual(h.takeActions(), [.subscription(active: true)])
        XCTAssertFalse(h.session.takesLiveEventsDirectly, "the subscribe reply waits to be written")
        _ = h.read()
        XCTAssertTrue(h.session.takesLiveEventsDirectly)
        h.send(#"{"op":"toggle-watched","movie":"matrix"}"#)
        XCTAssertFalse(h.session.takesLiveEventsDirectly, "a reply is owed: its slot waits")
    }

    // MARK: - Subscriptions

    func testSubscribeFromAnOldSeqCatchesUpFromTheLogThenGoesLive() {
        let h = harness()
        h.send(#"{"op":"subscribe","from":7}"#)
        XCTAssertEqual(h.takeActions(), [.subscription(active: true)])
        XCTAssertEqual(h.read(), [#"{"ok":true,"seq":10}"#])
        // Writing made room: the catch-up read is asked for.
        XCTAssertEqual(h.takeActions(), [.catchUp(ticket: 1, after: 7, limit: 256)])
        h.store.read(.events(after: 7, limit: 256), token: 1)
        let page = h.store.completions().reads[0].result.mapError(WireError.init)
        h.hear(.readAnswered(ticket: 1, page))
        XCTAssertEqual(h.takeActions(), [])
        let events = h.read().map { h.json($0)["seq"] as? Int }
        XCTAssertEqual(events, [8, 9, 10])
        // Caught up and written: its share of the daemon's cap on catch-ups is free.
        XCTAssertEqual(h.takeActions(), [.catchUpEnded])
        XCTAssertTrue(h.session.wantsLiveEvent(seq: 11))
        XCTAssertFalse(h.session.wantsLiveEvent(seq: 12))
    }

    func testUnsubscribeEndsTheSubscriptionAndAStaleSubscribeReplyStartsNothing() {
        let h = harness()
        h.send(#"{"op":"toggle-watched","movie":"matrix"}"#)
        h.send(#"{"op":"subscribe"}"#)  // worded late, behind the toggle
        h.send(#"{"op":"unsubscribe"}"#)  // newer: the subscribe must not start when due
        XCTAssertEqual(h.takeActions().count, 1)  // the submit
        h.settle()
        XCTAssertFalse(h.subscribed)
        let lines = h.read()
        XCTAssertEqual(lines.count, 3)
        XCTAssertEqual(lines[1], #"{"ok":true,"seq":11}"#)
        XCTAssertEqual(lines[2], #"{"ok":true}"#)
        XCTAssertFalse(h.session.wantsLiveEvent(seq: 12))
    }

    func testSubscribeFromTheFutureIsRefused() {
        let h = harness()
        h.send(#"{"op":"subscribe","from":99}"#)
        XCTAssertEqual(h.takeActions().count, 1)  // the log line
        XCTAssertEqual(
            h.read(),
            [
                #"{"ok":false,"error":{"code":"bad-request","message":"\"from\" (99) is ahead of the latest seq (10)"}}"#
            ])
    }

    func testAFailedCatchUpReadIsRetriedOnATimerNotAtOnce() {
        let h = harness()
        h.send(#"{"op":"subscribe","from":0}"#)
        _ = h.takeActions()
        _ = h.read()
        XCTAssertEqual(h.takeActions(), [.catchUp(ticket: 1, after: 0, limit: 256)])
        h.hear(.readAnswered(ticket: 1, .failure(WireError(.storage, "disk on fire"))))
        let actions = h.takeActions()
        XCTAssertEqual(actions.count, 2)
        XCTAssertEqual(actions[1], .arm(.retryCatchUp, microseconds: 1_000_000))
        h.hear(.resume)
        XCTAssertEqual(h.takeActions(), [], "no read until the timer")
        h.hear(.timerFired(.retryCatchUp))
        XCTAssertEqual(h.takeActions(), [.catchUp(ticket: 2, after: 0, limit: 256)])
    }

    // MARK: - Swipes and timers

    func testAFullSwipeFiresABoundActionAndTheRowClosesHalfASecondLater() {
        let h = harness()
        h.send(#"{"op":"drag","movie":"matrix","dx":60}"#)
        h.send(#"{"op":"drag","movie":"matrix","dx":300}"#)
        XCTAssertEqual(h.takeActions(), [])
        XCTAssertEqual(h.read().count, 2)
        h.send(#"{"op":"release","movie":"matrix","dx":330}"#)
        XCTAssertEqual(
            h.takeActions(),
            [
                .arm(.closeRow("matrix"), microseconds: 500_000),
                .submit(
                    ticket: 1, op: "release", MovieCommand(.toggleWatched(movie: "matrix"), by: "tester")),
            ])
        h.settle()
        let lines = h.read()
        // The reply (fired, with its seq), then the row re-rendered with its movie's change.
        XCTAssertEqual(lines.count, 2, "\(lines)")
        let fired = h.json(lines[0])["fired"] as? [String: Any]
        XCTAssertEqual(fired?["action"] as? String, "watched")
        XCTAssertEqual(fired?["seq"] as? Int, 11)
        XCTAssertEqual(h.json(lines[1])["event"] as? String, "row")
        h.advance(microseconds: 500_000)
        let closed = h.json(h.read()[0])
        XCTAssertEqual((closed["row"] as? [String: Any])?["phase"] as? String, "closed")
        XCTAssertTrue(h.timers.isEmpty)
    }

    func testATapOnAFiredRowsShowingButtonIsNotRevealedAndFiresNothing() {
        let h = harness()
        h.send(#"{"op":"drag","movie":"matrix","dx":60}"#)
        h.send(#"{"op":"release","movie":"matrix","dx":350}"#)
        h.settle()
        _ = h.read()
        h.send(#"{"op":"tap","movie":"matrix","action":"watched"}"#)
        let actions = h.takeActions()
        XCTAssertEqual(actions.count, 1, "only the log line: nothing submitted")
        XCTAssertEqual(
            h.read(),
            [
                #"{"ok":false,"error":{"code":"not-revealed","message":"row \"matrix\" has already fired \"watched\" and closes in a moment; its button takes no tap until then"}}"#
            ])
    }

    func testStartingToDragARowClosesTheRowBeingDraggedWithARowEvent() {
        let h = harness()
        h.send(#"{"op":"drag","movie":"matrix","dx":-60}"#)
        _ = h.read()
        h.send(#"{"op":"drag","movie":"seven","dx":-60}"#)
        XCTAssertEqual(h.takeActions(), [])
        let lines = h.read()
        XCTAssertEqual(lines.count, 2)
        let closed = h.json(lines[0])
        XCTAssertEqual(closed["event"] as? String, "row")
        XCTAssertEqual((closed["row"] as? [String: Any])?["movie"] as? String, "matrix")
        XCTAssertEqual((closed["row"] as? [String: Any])?["phase"] as? String, "closed")
        XCTAssertEqual((h.json(lines[1])["row"] as? [String: Any])?["movie"] as? String, "seven")
        h.send(#"{"op":"rows"}"#)
        let rows = h.json(h.read()[0])["rows"] as? [[String: Any]]
        XCTAssertEqual(rows?.map { $0["movie"] as? String }, ["seven"])
    }

    func testAReconfigureCancelsTheCloseTimerOfAFiredRow() {
        let h = harness()
        h.send(#"{"op":"drag","movie":"matrix","dx":60}"#)
        h.send(#"{"op":"release","movie":"matrix","dx":350}"#)
        h.perform()
        XCTAssertNotNil(h.timers[.closeRow("matrix")])
        h.send(#"{"op":"viewport","width":500}"#)
        XCTAssertEqual(h.takeActions(), [.cancel(.closeRow("matrix"))])
    }

    func testAGestureOnAMissingMovieIsNotFoundAndANonWriterCannotFireABoundAction() {
        let h = harness(mayWrite: false)
        h.send(#"{"op":"drag","movie":"nope","dx":60}"#)
        XCTAssertEqual((h.json(h.read()[0])["error"] as? [String: Any])?["code"] as? String, "not-found")
        h.send(#"{"op":"drag","movie":"matrix","dx":60}"#)
        h.send(#"{"op":"release","movie":"matrix","dx":350}"#)
        let lines = h.read()
        XCTAssertEqual((h.json(lines[1])["error"] as? [String: Any])?["code"] as? String, "forbidden")
        h.send(#"{"op":"rows"}"#)
        let rows = h.json(h.read()[0])["rows"] as? [[String: Any]]
        XCTAssertEqual(
            rows?.first?["phase"] as? String, "dragging", "a refused release leaves the row as it was")
        // Logged, and reported as a denial (the manager records who): nothing submitted.
        XCTAssertTrue(
            h.takeActions().allSatisfy {
                switch $0 {
                case .log, .denied(op: "release", .forbidden): true
                default: false
                }
            })
    }

    /// Issue 13: every op on a removed movie says the same, the gestures and `close` as the
    /// commands do; an id that never existed is also one message everywhere.
    func testEveryOpOnAMissingMovieGivesTheOneNotFound() {
        let h = harness()
        XCTAssertEqual(h.json(h.exchange(#"{"op":"remove","movie":"matrix"}"#)[0])["seq"] as? Int, 11)
        let ops = [
            #"{"op":"remove","movie":"%@"}"#, #"{"op":"toggle-watched","movie":"%@"}"#,
            #"{"op":"toggle-watched-with-friends","movie":"%@"}"#, #"{"op":"drag","movie":"%@","dx":-60}"#,
            #"{"op":"release","movie":"%@","dx":-300}"#, #"{"op":"tap","movie":"%@","action":"delete"}"#,
            #"{"op":"close","movie":"%@"}"#,
        ]
        for (movie, message) in [
            ("matrix", #"movie "matrix" was removed at seq 11"#), ("alien", #"no movie with id "alien""#),
        ] {
            for op in ops {
                let line = op.replacingOccurrences(of: "%@", with: movie)
                let error = h.json(h.exchange(line)[0])["error"] as? [String: Any]
                XCTAssertEqual(error?["code"] as? String, "not-found", line)
                XCTAssertEqual(error?["message"] as? String, message, line)
            }
        }
        XCTAssertEqual(h.store.latestSeq, 11, "nothing written")
    }

    func testAnotherClientsRemovalDropsThisClientsOpenRow() {
        let h = harness()
        h.send(#"{"op":"drag","movie":"matrix","dx":-100}"#)
        h.send(#"{"op":"release","movie":"matrix"}"#)
        _ = h.read()
        let event = InMemoryStoreDriver(h.store).remove("matrix")
        h.hear(.moviesChanged([event]))
        XCTAssertEqual(h.takeActions(), [])
        let row = h.json(h.read()[0])
        XCTAssertEqual(row["event"] as? String, "row")
        XCTAssertEqual(row["removed"] as? Bool, true)
        XCTAssertFalse(h.session.hasOpenRows)
    }

    // MARK: - Options

    /// The keys of the row in `line` (a reply's `row`, a `row` event's `row`, or each of `rows`),
    /// in order.
    private func rowKeys(_ line: String) -> [[String]] {
        guard let object = try? JSONParser.parse(Array(line.utf8)).objectValue else { return [] }
        if let rows = object["rows"]?.arrayValue {
            return rows.map { $0.objectValue?.members.map(\.key) ?? [] }
        }
        return [object["row"]?.objectValue?.members.map(\.key) ?? []]
    }

    private static let compact = ["movie", "offset", "phase", "edge", "fullSwipe", "buttons"]
    private static let full = compact + ["spring", "accessibilityActions"]

    func testOptionsSwitchesTheFormOfEveryRowThisConnectionReceives() {
        let h = harness()
        XCTAssertEqual(
            h.exchange(#"{"op":"options","id":1}"#), [#"{"id":1,"ok":true,"options":{"rows":"full"}}"#])
        XCTAssertEqual(rowKeys(h.exchange(#"{"op":"drag","movie":"matrix","dx":60}"#)[0]), [Self.full])
        XCTAssertEqual(
            h.exchange(#"{"op":"options","rows":"compact","id":2}"#),
            [#"{"id":2,"ok":true,"options":{"rows":"compact"}}"#])
        XCTAssertEqual(h.takeActions(), [], "options touches nothing but the connection")
        // The templated drag, the general path, rows, close.
        XCTAssertEqual(rowKeys(h.exchange(#"{"op":"drag","movie":"matrix","dx":70}"#)[0]), [Self.compact])
        XCTAssertEqual(
            h.exchange(#"{"op":"drag","movie":"matrix","dx":65}"#),
            [
                #"{"ok":true,"row":{"movie":"matrix","offset":65,"phase":"dragging","edge":"leading","fullSwipe":false,"buttons":[{"action":"watched","label":"Watched","icon":"eye","tint":"green","x":0,"width":32.5},{"action":"watched-with-friends","label":"With Friends","icon":"person.3","tint":"indigo","x":32.5,"width":32.5}]}}"#
            ])
        XCTAssertEqual(rowKeys(h.exchange(#"{"op":"release","movie":"matrix"}"#)[0]), [Self.compact])
        XCTAssertEqual(rowKeys(h.exchange(#"{"op":"rows"}"#)[0]), [Self.compact])
        XCTAssertEqual(rowKeys(h.exchange(#"{"op":"close","movie":"matrix"}"#)[0]), [Self.compact])
        // No argument: the options as they are, unchanged.
        XCTAssertEqual(h.exchange(#"{"op":"options"}"#), [#"{"ok":true,"options":{"rows":"compact"}}"#])
        // A full swipe: the fired reply, the row event of the movie's change, the close timer's.
        h.send(#"{"op":"drag","movie":"matrix","dx":60}"#)
        h.send(#"{"op":"release","movie":"matrix","dx":350}"#)
        h.settle()
        var lines = h.read()
        XCTAssertEqual(lines.count, 3, "\(lines)")
        XCTAssertTrue(lines[1].hasSuffix(#"]},"fired":{"action":"watched","seq":11}}"#), lines[1])
        XCTAssertTrue(lines[2].hasPrefix(#"{"event":"row","row":{"#), lines[2])
        XCTAssertEqual(lines.map(rowKeys), [[Self.compact], [Self.compact], [Self.compact]])
        h.advance(microseconds: 500_000)
        lines = h.read()
        XCTAssertEqual(lines.map(rowKeys), [[Self.compact]], "\(lines)")
        // Another client's removal.
        _ = h.exchange(#"{"op":"drag","movie":"seven","dx":-100}"#)
        let event = InMemoryStoreDriver(h.store).remove("seven")
        h.hear(.moviesChanged([event]))
        XCTAssertEqual(
            h.read(),
            [
                #"{"event":"row","row":{"movie":"seven","offset":0,"phase":"closed","edge":null,"fullSwipe":false,"buttons":[]},"removed":true}"#
            ])
        // And back.
        XCTAssertEqual(
            h.exchange(#"{"op":"options","rows":"full"}"#), [#"{"ok":true,"options":{"rows":"full"}}"#])
        XCTAssertEqual(rowKeys(h.exchange(#"{"op":"drag","movie":"matrix","dx":70}"#)[0]), [Self.full])
    }

    /// A reply is worded in the form in force when its request is handled, also when it then
    /// waits for a commit; what is worded later (a row event) takes the form in force then.
    func testARowReplyWaitingForItsCommitKeepsTheFormOfItsRequest() {
        let h = harness()
        h.send(#"{"op":"drag","movie":"matrix","dx":60}"#)
        h.send(#"{"op":"release","movie":"matrix","dx":350,"id":"r"}"#)
        h.send(#"{"op":"options","rows":"compact","id":"o"}"#)
        h.settle()
        let lines = h.read()
        XCTAssertEqual(lines.count, 4, "\(lines)")
        XCTAssertTrue(lines[1].hasPrefix(#"{"id":"r","ok":true,"row":"#), lines[1])
        XCTAssertEqual(rowKeys(lines[1]), [Self.full])
        XCTAssertEqual(lines[2], #"{"id":"o","ok":true,"options":{"rows":"compact"}}"#)
        XCTAssertEqual(rowKeys(lines[3]), [Self.compact])
    }

    func testABadRowsValueIsABadRequestNamingTheValues() {
        let h = harness()
        XCTAssertEqual(
            h.exchange(#"{"op":"options","rows":"short","id":1}"#),
            [
                #"{"id":1,"ok":false,"error":{"code":"bad-request","message":"\"rows\" must be \"full\" or \"compact\", not \"short\""}}"#
            ])
        XCTAssertEqual(h.exchange(#"{"op":"options"}"#), [#"{"ok":true,"options":{"rows":"full"}}"#])
    }

    // MARK: - Undo (issue 14)

    private func error(_ line: String, _ h: SessionHarness) -> [String: Any] {
        h.json(line)["error"] as? [String: Any] ?? [:]
    }

    func testUndoWalksBackThroughThisConnectionsOwnChanges() {
        let h = harness()
        XCTAssertNil(h.session.undoableChanges, "no history before the first change")
        _ = h.exchange(#"{"op":"list"}"#)
        _ = h.exchange(#"{"op":"toggle-watched","movie":"matrix","expect":1}"#)
        XCTAssertNil(h.session.undoableChanges, "nor after a refused one")
        _ = h.exchange(#"{"op":"toggle-watched","movie":"matrix"}"#)
        XCTAssertEqual(h.session.undoableChanges, 1)
        _ = h.exchange(#"{"op":"add","title":"Alien"}"#)
        _ = h.exchange(#"{"op":"remove","movie":"seven"}"#)
        let first = h.json(h.exchange(#"{"op":"undo","id":1}"#)[0])
        XCTAssertEqual(first["id"] as? Int, 1)
        XCTAssertEqual(first["seq"] as? Int, 14)
        XCTAssertEqual(first["undoes"] as? Int, 13)
        XCTAssertEqual((first["movie"] as? [String: Any])?["id"] as? String, "seven")
        let second = h.json(h.exchange(#"{"op":"undo"}"#)[0])
        XCTAssertEqual(second["undoes"] as? Int, 12)
        XCTAssertEqual((second["movie"] as? [String: Any])?["id"] as? String, "alien")
        let third = h.json(h.exchange(#"{"op":"undo"}"#)[0])
        XCTAssertEqual(third["undoes"] as? Int, 11)
        XCTAssertEqual((third["movie"] as? [String: Any])?["watched"] as? Bool, false)
        XCTAssertEqual(
            h.exchange(#"{"op":"undo","id":2}"#),
            [
                #"{"id":2,"ok":false,"error":{"code":"conflict","message":"this connection has no change left to undo","reason":"nothing-to-undo"}}"#
            ])
        let ids: [String] = h.store.withState { state in state.movies.map { $0.id } }
        XCTAssertEqual(ids, MovieState.seedCatalogue.map { $0.movieID })
        XCTAssertEqual(h.store.movie("matrix")?.watched, false)
        XCTAssertEqual(h.store.latestSeq, 16, "the nothing-to-undo wrote nothing")
    }

    /// A keyed undo sent again answers its first reply, on the same connection (whose next
    /// change would otherwise be undone) and on a new one (which has none), and undoes nothing
    /// more (issue 40). A key used by another op is a conflict for an undo.
    func testAKeyedUndoSentAgainAnswersItsFirstReplyOnAnyConnection() {
        let h = harness()
        _ = h.exchange(#"{"op":"toggle-watched","movie":"matrix","key":"t1"}"#)
        _ = h.exchange(#"{"op":"toggle-watched","movie":"seven"}"#)
        XCTAssertEqual(error(h.exchange(#"{"op":"undo","key":"t1"}"#)[0], h)["reason"] as? String, "key")
        XCTAssertEqual(h.store.movie("seven")?.watched, true, "an undo with a toggle's key undid something")
        let first = h.exchange(#"{"op":"undo","key":"u1"}"#)
        XCTAssertEqual(h.json(first[0])["undoes"] as? Int, 12)
        XCTAssertEqual(h.exchange(#"{"op":"undo","key":"u1"}"#), first, "the same connection")
        let other = SessionHarness(SessionConfig(client: 8, identity: .tester(.writer)), store: h.store)
        other.nextToken = 1000
        _ = other.read()
        // On a new connection the replay is the first reply but for `undoesBy`, which only
        // the connection that undid knew (protocol.md, undo).
        XCTAssertEqual(
            other.exchange(#"{"op":"undo","key":"u1"}"#),
            first.map { $0.replacingOccurrences(of: #","undoesBy":"tester""#, with: "") }, "a new connection")
        XCTAssertEqual(
            error(other.exchange(#"{"op":"undo","key":"u2"}"#)[0], other)["reason"] as? String,
            "nothing-to-undo")
        XCTAssertEqual(h.store.latestSeq, 13, "a replay wrote")
        XCTAssertEqual(h.store.movie("matrix")?.watched, true, "the second undo undid the older change")
        // The older change is still this connection's to undo.
        XCTAssertEqual(h.json(h.exchange(#"{"op":"undo"}"#)[0])["undoes"] as? Int, 11)
    }

    /// `undo` with `seq` undoes that change, whoever made it (issue 49: `swipectl undo SEQ`,
    /// where each call is a new connection), when the movie has not changed since; an undo is
    /// not undone, and a seq past the log is not-found.
    func testAnUndoWithASeqUndoesThatChangeFromAnyConnection() {
        let h = harness()
        _ = h.exchange(#"{"op":"toggle-watched","movie":"matrix"}"#)  // 11
        _ = h.exchange(#"{"op":"remove","movie":"seven"}"#)  // 12
        _ = h.exchange(#"{"op":"toggle-watched","movie":"inception"}"#)  // 13
        _ = h.exchange(#"{"op":"toggle-watched","movie":"inception"}"#)  // 14
        let other = SessionHarness(SessionConfig(client: 8, identity: .tester(.writer)), store: h.store)
        other.nextToken = 1000
        _ = other.read()
        let restored = other.json(other.exchange(#"{"op":"undo","seq":12,"id":"u"}"#)[0])
        XCTAssertEqual(restored["seq"] as? Int, 15)
        XCTAssertEqual(restored["undoes"] as? Int, 12)
        XCTAssertEqual((restored["movie"] as? [String: Any])?["id"] as? String, "seven")
        XCTAssertNotNil(h.store.movie("seven"), "seven was not restored")
        XCTAssertEqual(
            error(other.exchange(#"{"op":"undo","seq":13}"#)[0], other)["reason"] as? String, "changed-since",
            "inception changed at 14")
        XCTAssertEqual(
            error(other.exchange(#"{"op":"undo","seq":15}"#)[0], other)["code"] as? String, "bad-request")
        XCTAssertEqual(
            error(other.exchange(#"{"op":"undo","seq":99}"#)[0], other)["code"] as? String, "not-found")
        XCTAssertEqual(
            error(other.exchange(#"{"op":"undo","seq":0}"#)[0], other)["code"] as? String, "not-found")
        // Keyed, as any undo: sent again, the first reply.
        let keyed = other.exchange(#"{"op":"undo","seq":11,"key":"s11"}"#)
        XCTAssertEqual(other.json(keyed[0])["undoes"] as? Int, 11)
        XCTAssertEqual(other.exchange(#"{"op":"undo","seq":11,"key":"s11"}"#), keyed)
        XCTAssertEqual(h.store.movie("matrix")?.watched, false)
        // The connection that made them still undoes its own latest.
        XCTAssertEqual(h.json(h.exchange(#"{"op":"undo"}"#)[0])["undoes"] as? Int, 14)
        XCTAssertEqual(h.store.latestSeq, 17)
    }

    func testUndoAfterSomeoneElsesChangeIsAConflictAndTheNextWalksPastIt() {
        let h = harness()
        _ = h.exchange(#"{"op":"toggle-watched","movie":"matrix"}"#)
        _ = h.exchange(#"{"op":"toggle-watched","movie":"seven"}"#)
        let other = SessionHarness(SessionConfig(client: 8, identity: .tester(.writer)), store: h.store)
        other.nextToken = 1000
        _ = other.read()
        _ = other.exchange(#"{"op":"toggle-watched-with-friends","movie":"seven"}"#)
        XCTAssertEqual(h.store.latestSeq, 13)
        let refused = h.exchange(#"{"op":"undo"}"#)
        XCTAssertEqual(
            refused,
            [
                #"{"ok":false,"error":{"code":"conflict","message":"movie \"seven\" was changed by someone else since (at seq 13); seq 12 is not undone","reason":"changed-since"}}"#
            ])
        XCTAssertEqual(h.store.latestSeq, 13, "nothing written")
        let next = h.json(h.exchange(#"{"op":"undo"}"#)[0])
        XCTAssertEqual(next["undoes"] as? Int, 11, "the refused change is dropped: it can never be undone")
        XCTAssertEqual(error(h.exchange(#"{"op":"undo"}"#)[0], h)["reason"] as? String, "nothing-to-undo")
        // The other connection's own history is its own.
        XCTAssertEqual(other.json(other.exchange(#"{"op":"undo"}"#)[0])["undoes"] as? Int, 13)
    }

    func testUndoingTwoChangesOfOneMovieExpectsItsOwnUndoInBetween() {
        let h = harness()
        _ = h.exchange(#"{"op":"toggle-watched","movie":"matrix"}"#)
        _ = h.exchange(#"{"op":"remove","movie":"matrix"}"#)
        _ = h.exchange(#"{"op":"undo"}"#)
        let back = h.json(h.exchange(#"{"op":"undo"}"#)[0])
        XCTAssertEqual(back["seq"] as? Int, 14)
        XCTAssertEqual(back["undoes"] as? Int, 11)
        XCTAssertEqual(h.store.movie("matrix")?.watched, false)
        XCTAssertEqual(h.store.movie("matrix")?.version, 14)
    }

    func testUndoCoversFiredBoundActionsAndWaitsForTheChangesPipelinedBeforeIt() {
        let h = harness()
        _ = h.exchange(#"{"op":"drag","movie":"matrix","dx":250}"#)
        let fired = h.json(h.exchange(#"{"op":"release","movie":"matrix"}"#)[0])
        XCTAssertEqual((fired["fired"] as? [String: Any])?["seq"] as? Int, 11)
        h.receive(
            #"{"op":"toggle-watched-with-friends","movie":"seven"}"# + "\n" + #"{"op":"undo"}"# + "\n"
                + #"{"op":"undo"}"# + "\n")
        h.settle()
        let lines: [[String: Any]] = h.read().map { h.json($0) }.filter { $0["ok"] != nil }
        let seqs: [Int?] = lines.map { $0["seq"] as? Int }
        let undoes: [Int?] = lines.map { $0["undoes"] as? Int }
        XCTAssertEqual(seqs, [12, 13, 14])
        XCTAssertEqual(undoes, [nil, 12, 11])
        XCTAssertEqual(h.store.movie("matrix")?.watched, false)
        XCTAssertEqual(h.store.movie("seven")?.watchedWithFriends, false)
    }

    func testUndoKeepsTheLast100ChangesAndIsForbiddenToANonWriter() {
        let h = harness()
        for _ in 0..<105 { h.send(#"{"op":"toggle-watched","movie":"matrix"}"#) }
        h.settle()
        XCTAssertEqual(h.read().count, 105)
        XCTAssertEqual(h.session.undoableChanges, 100)
        let reader = harness(mayWrite: false, writersGroup: "w")
        XCTAssertEqual(error(reader.exchange(#"{"op":"undo"}"#)[0], reader)["code"] as? String, "forbidden")
        XCTAssertNil(reader.session.undoableChanges)
    }

    func testRestoreGoesThroughTheStoreAndAConflictSaysWhy() {
        let h = harness()
        _ = h.exchange(#"{"op":"remove","movie":"seven"}"#)
        let back = h.json(h.exchange(#"{"op":"restore","movie":"seven","expect":11}"#)[0])
        XCTAssertEqual(back["seq"] as? Int, 12)
        XCTAssertNil(back["undoes"])
        XCTAssertEqual(
            h.exchange(#"{"op":"restore","movie":"seven"}"#),
            [
                #"{"ok":false,"error":{"code":"conflict","message":"movie \"seven\" is not removed","reason":"not-removed"}}"#
            ])
        XCTAssertEqual(
            error(h.exchange(#"{"op":"toggle-watched","movie":"seven","expect":3}"#)[0], h)["reason"]
                as? String,
            "version")
        XCTAssertEqual(
            error(h.exchange(#"{"op":"restore","movie":"alien"}"#)[0], h)["code"] as? String, "not-found")
        // An undo of a restore removes it again.
        XCTAssertEqual(h.json(h.exchange(#"{"op":"undo"}"#)[0])["undoes"] as? Int, 12)
        XCTAssertNil(h.store.movie("seven"))
    }
}

/// Commits commands as another client of the same store would.
struct InMemoryStoreDriver {
    let store: InMemoryStore
    init(_ store: InMemoryStore) { self.store = store }

    private static let otherTokens = UInt64(1) << 40

    func commit(_ command: MovieCommand) -> CommittedEvent {
        store.submit(command, token: Self.otherTokens)
        store.flush()
        return try! store.completions().commands.first { $0.token == Self.otherTokens }!.result.get()
    }

    func toggle(_ movie: String) -> CommittedEvent { commit(MovieCommand(.toggleWatched(movie: movie))) }
    func remove(_ movie: String) -> CommittedEvent { commit(MovieCommand(.remove(movie: movie))) }

}

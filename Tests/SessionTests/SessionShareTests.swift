import Foundation
import JSONCodec
import Movies
import People
import Session
import SwipeEngine
import Wire
import XCTest

/// Issue 18, section 2 on the connections' side: `share` and `peers`, the rows a sharer hands
/// the manager (coalesced: each changed row once, in its latest state), the closed rows owed
/// when it stops sharing or goes, the `peers` reply, and a watcher's `peer-row` events (in line
/// with its replies, and the slow-consumer rule).
final class SessionShareTests: XCTestCase {
    private func harness(client: UInt64 = 7, maxQueue: Int = 1 << 20) -> SessionHarness {
        let h = SessionHarness(SessionConfig(client: client, identity: .tester(.writer), maxQueue: maxQueue))
        XCTAssertEqual(h.read().count, 1)  // hello
        return h
    }

    private func rows(_ h: SessionHarness) -> [String] {
        h.takePeerRows().map { "\($0.row) \($0.phase) \($0.offset)" }
    }

    func testANonSharingConnectionHandsOverNothing() {
        let h = harness()
        h.send(#"{"op":"drag","movie":"seven","dx":-30}"#)
        h.send(#"{"op":"release","movie":"seven"}"#)
        XCTAssertEqual(h.takeActions(), [])
        XCTAssertFalse(h.session.hasPeerRows)
        XCTAssertEqual(rows(h), [])
        XCTAssertEqual(h.store.withState { h.session.peerFarewell($0) }, [])
    }

    func testShareOnSaysSoAndEveryChangedRowIsHandedOverOnceInItsLatestState() {
        let h = harness()
        _ = h.exchange(#"{"op":"drag","movie":"matrix","dx":40}"#)
        h.send(#"{"op":"share","on":true,"id":1}"#)
        XCTAssertEqual(h.takeActions(), [.sharing(active: true), .peerRowsChanged])
        XCTAssertEqual(h.read(), [#"{"id":1,"ok":true,"share":{"on":true}}"#])
        XCTAssertTrue(h.session.isSharing)
        // Three drags and a release of seven (which closes matrix, rule 8): one "rows changed".
        for line in [
            #"{"op":"drag","movie":"seven","dx":-20}"#, #"{"op":"drag","movie":"seven","dx":-40}"#,
            #"{"op":"drag","movie":"seven","dx":-60}"#, #"{"op":"release","movie":"seven"}"#,
        ] { h.send(line) }
        XCTAssertEqual(h.takeActions(), [])
        _ = h.read()
        XCTAssertTrue(h.session.hasPeerRows)
        XCTAssertEqual(rows(h), ["matrix closed 0.0", "seven open -70.0"])
        XCTAssertFalse(h.session.hasPeerRows)
        XCTAssertEqual(rows(h), [])
        // The next change asks for the next flush.
        h.send(#"{"op":"close","movie":"seven"}"#)
        XCTAssertEqual(h.takeActions(), [.peerRowsChanged])
        XCTAssertEqual(rows(h), ["seven closed 0.0"])
    }

    func testSharingTwiceSaysItOnceAndShareOnAgainResendsWhatWatchersSawOpen() {
        let h = harness()
        _ = h.exchange(#"{"op":"share","on":true}"#)
        h.send(#"{"op":"share","on":true}"#)
        XCTAssertEqual(h.takeActions(), [])
        XCTAssertEqual(h.read(), [#"{"ok":true,"share":{"on":true}}"#])
        _ = h.exchange(#"{"op":"open","movie":"seven","edge":"trailing"}"#)
        XCTAssertEqual(rows(h), ["seven open -70.0"])
        // Off, then on again before the manager gathered the closed rows: the watchers get the
        // rows as they are, not closed ones.
        _ = h.exchange(#"{"op":"share","on":false}"#)
        h.send(#"{"op":"share","on":true}"#)
        XCTAssertEqual(h.takeActions(), [.sharing(active: true), .peerRowsChanged])
        _ = h.read()
        XCTAssertEqual(rows(h), ["seven open -70.0"])
    }

    func testRecordOnClosingTheRowsOfASharerHandsThemOver() {
        let h = harness()
        _ = h.exchange(#"{"op":"share","on":true}"#)
        _ = h.exchange(#"{"op":"open","movie":"seven","edge":"trailing"}"#)
        _ = rows(h)
        h.send(#"{"op":"record","on":true}"#)
        XCTAssertEqual(h.takeActions(), [.peerRowsChanged])
        XCTAssertEqual(rows(h), ["seven closed 0.0"])
    }

    func testRowsClosedByTheServerTimersAndOtherClientsChangesAreHandedOver() {
        let h = harness()
        _ = h.exchange(#"{"op":"share","on":true}"#)
        _ = h.exchange(#"{"op":"drag","movie":"seven","dx":300}"#)
        _ = h.exchange(#"{"op":"release","movie":"seven"}"#)
        XCTAssertEqual(rows(h), ["seven fired 390.0"])
        h.advance(microseconds: 600_000)
        XCTAssertEqual(rows(h), ["seven closed 0.0"])
        _ = h.exchange(#"{"op":"open","movie":"matrix","edge":"trailing"}"#)
        XCTAssertEqual(rows(h), ["matrix open -70.0"])
        let removal = InMemoryStoreDriver(h.store).remove("matrix")
        h.hear(.moviesChanged([removal]))
        XCTAssertEqual(rows(h), ["matrix closed 0.0"])
        _ = h.exchange(#"{"op":"open","movie":"inception","edge":"leading"}"#)
        _ = h.exchange(#"{"op":"viewport","direction":"rtl"}"#)
        XCTAssertEqual(rows(h), ["inception closed 0.0"])
    }

    func testShareOffOwesAClosedRowForEachRowTheWatchersSawOpen() {
        let h = harness()
        _ = h.exchange(#"{"op":"share","on":true}"#)
        _ = h.exchange(#"{"op":"open","movie":"seven","edge":"trailing"}"#)
        XCTAssertEqual(rows(h), ["seven open -70.0"])
        _ = h.exchange(#"{"op":"drag","movie":"matrix","dx":20}"#)  // not handed over yet
        h.send(#"{"op":"share","on":false}"#)
        XCTAssertEqual(h.takeActions(), [.sharing(active: false), .peerRowsChanged])
        XCTAssertEqual(h.read(), [#"{"ok":true,"share":{"on":false}}"#])
        XCTAssertFalse(h.session.isSharing)
        XCTAssertEqual(rows(h), ["matrix closed 0.0", "seven closed 0.0"])
        XCTAssertEqual(rows(h), [])
        // Private again: changes go nowhere.
        _ = h.exchange(#"{"op":"drag","movie":"seven","dx":-20}"#)
        XCTAssertEqual(h.takeActions(), [])
        XCTAssertEqual(h.store.withState { h.session.peerFarewell($0) }, [])
    }

    func testASharerThatGoesOwesAClosedRowForEachOpenRow() {
        let h = harness()
        _ = h.exchange(#"{"op":"share","on":true}"#)
        _ = h.exchange(#"{"op":"open","movie":"seven","edge":"trailing"}"#)
        _ = rows(h)
        _ = h.exchange(#"{"op":"drag","movie":"matrix","dx":20}"#)
        let farewell = h.store.withState { h.session.peerFarewell($0) }
        XCTAssertEqual(farewell.map(\.row), ["matrix", "seven"])
        XCTAssertEqual(farewell.map(\.phase), [.closed, .closed])
        XCTAssertEqual(farewell.map(\.offset), [0, 0])
    }

    func testPeersRepliesWithTheSharersRowsAndThenPeerRowsFollowInOrder() {
        let sharer = harness(client: 3)
        _ = sharer.exchange(#"{"op":"share","on":true}"#)
        _ = sharer.exchange(#"{"op":"viewport","width":500,"direction":"rtl"}"#)
        _ = sharer.exchange(#"{"op":"open","movie":"seven","edge":"trailing"}"#)
        let watcher = harness()
        _ = watcher.exchange(#"{"op":"options","rows":"compact"}"#)
        watcher.peersAnswer = { sharer.store.withState { [sharer.session.peerSnapshot($0)] } }
        let reply = watcher.exchange(#"{"op":"peers","watch":true,"id":9}"#)
        XCTAssertEqual(
            reply,
            [
                #"{"id":9,"ok":true,"watch":true,"peers":[{"client":3,"viewport":{"width":500,"direction":"rtl"},"rows":[{"movie":"seven","offset":70,"phase":"open","edge":"trailing","fullSwipe":false,"buttons":[{"action":"delete","label":"Delete","icon":"trash","tint":"red","role":"destructive","x":0,"width":70}]}]}]}"#
            ])
        XCTAssertTrue(watcher.session.isWatching)
        XCTAssertTrue(watcher.watching)
        var line = JSONWriter()
        Encode.peerRow(
            &line, client: 3, viewport: Viewport(width: 500, direction: .rtl),
            row: sharer.takePeerRows()[0], form: .compact)
        watcher.hear(.peerRow(line.bytes))
        XCTAssertEqual(
            watcher.read(),
            [
                #"{"event":"peer-row","client":3,"viewport":{"width":500,"direction":"rtl"},"row":{"movie":"seven","offset":70,"phase":"open","edge":"trailing","fullSwipe":false,"buttons":[{"action":"delete","label":"Delete","icon":"trash","tint":"red","role":"destructive","x":0,"width":70}]}}"#
            ])
        // Watching off: the reply still lists the sharers; no more events.
        XCTAssertEqual(
            watcher.json(watcher.exchange(#"{"op":"peers","watch":false}"#)[0])["watch"] as? Bool, false)
        watcher.hear(.peerRow(line.bytes))
        XCTAssertEqual(watcher.read(), [])
    }

    func testPeersAsksTheManagerAndItsReplyKeepsItsPlace() {
        let h = harness()
        let snapshot = PeerRows(
            client: 4, viewport: Viewport(),
            rows: [SwipeList(layout: MovieLayout.standard).render("matrix", flags: [])])
        h.peersAnswer = { [snapshot] }
        h.send(#"{"op":"toggle-watched","movie":"seven","id":1}"#)
        h.send(#"{"op":"peers","watch":true,"id":2}"#)
        h.send(#"{"op":"ping","id":3}"#)
        let actions = h.takeActions()
        XCTAssertEqual(actions.count, 2)
        guard case .peers(_, true) = actions.last else { return XCTFail("\(actions)") }
        XCTAssertTrue(h.session.isWatching)
        // The manager answers at once, before the toggle commits: the reply keeps its place.
        h.settle()
        let lines = h.read()
        XCTAssertEqual(lines.map { h.json($0)["id"] as? Int }, [1, 2, 3])
        XCTAssertTrue(
            lines[1].hasPrefix(
                #"{"id":2,"ok":true,"watch":true,"peers":[{"client":4,"viewport":{"width":390,"direction":"ltr"},"rows":[{"movie":"matrix","offset":0,"phase":"closed""#
            ), lines[1])
    }

    func testAPeerRowWaitsBehindAReplyThatWaitsForItsCommit() {
        let h = harness()
        _ = h.exchange(#"{"op":"peers","watch":true}"#)
        h.send(#"{"op":"toggle-watched","movie":"seven","id":1}"#)  // its reply waits for the store
        h.hear(.peerRow(Array(#"{"event":"peer-row"}"#.utf8) + [0x0A]))
        XCTAssertEqual(h.read(), [])
        h.settle()
        let lines = h.read()
        XCTAssertEqual(lines.count, 2)
        XCTAssertEqual(h.json(lines[0])["id"] as? Int, 1)
        XCTAssertEqual(lines[1], #"{"event":"peer-row"}"#)
    }

    func testAWatcherThatDoesNotReadIsToldByeAsASlowConsumer() {
        let h = harness(maxQueue: 4096)
        _ = h.exchange(#"{"op":"peers","watch":true}"#)
        let line = Array(String(repeating: "x", count: 1000).utf8) + [0x0A]
        for _ in 0..<5 { h.hear(.peerRow(line)) }  // 5,000 bytes: over the cap
        h.hear(.peerRow(line))
        XCTAssertEqual(
            h.takeActions().filter { if case .arm(.goodbye, _) = $0 { true } else { false } }.count, 1)
        XCTAssertEqual(h.session.lifecycle, .sayingBye(reason: .slowConsumer))
        h.perform()
        XCTAssertEqual(h.logs.map(\.message), ["peer watcher too slow, disconnecting"])
    }
}

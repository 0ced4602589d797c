import Movies
import SwipeEngine
import Terminal
import XCTest

/// Recording (`r`), sharing (`s`) and ghosts (`g`), without a daemon or files: each fact's
/// actions and every change of state.
final class TuiStateMachineSharingTests: XCTestCase {
    func testRecordingKeepsTheRowLinesAndSavesThemWithTheRecording() {
        var store = Fixture.listed()
        store.receivedRowLineIsIgnored("before")
        store.check({ $0.input(.char("r"), at: 1) }, [.redraw, .checkRecordDirectory])
        store.check({ $0.recordDirectoryChecked(problem: nil, at: 1) }, [.send(.record(on: true))]) {
            $0.recordBusy = true
        }
        store.check({ $0.input(.char("r"), at: 1) }, [.redraw]) {
            $0.model.status = "Wait: the daemon has not answered the last r yet"
            $0.statusUntil = 5
        }
        store.check({ $0.replied(to: .record(on: true), .closed([]), at: 2) }, [.redraw]) {
            $0.transcript = []
            $0.recordBusy = false
            $0.model.recording = .on
            $0.model.status = "Recording: r again stops and saves it"
            $0.statusUntil = 6
        }
        store.machine.receivedRowLine("{\"id\":4,\"ok\":true,\"row\":{}}")
        XCTAssertEqual(store.state.transcript, ["{\"id\":4,\"ok\":true,\"row\":{}}"])
        store.check({ $0.input(.char("r"), at: 3) }, [.redraw, .send(.record(on: false)), .send(.recording)])
        {
            $0.model.recording = .saving
            $0.recordBusy = true
        }
        store.check({ $0.input(.char("r"), at: 3) }, [.redraw]) {
            $0.model.status = "Wait: the daemon has not answered the last r yet"
            $0.statusUntil = 7
        }
        store.check({ $0.replied(to: .record(on: false), .ok, at: 3) }, [.redraw]) {
            $0.recordedRows = $0.transcript!
            $0.transcript = nil
        }
        let summary = TuiRecordingSummary(inputs: 1, cut: true)
        store.check(
            { $0.replied(to: .recording, .recording(summary), at: 3) },
            [
                .redraw, .saveRecording(rows: ["{\"id\":4,\"ok\":true,\"row\":{}}"], summary),
            ]
        ) {
            $0.recordBusy = false
            $0.model.recording = .off
            $0.recordedRows = []
        }
        store.check({ $0.recordingSaved(file: "swiped-recording-1.json", summary, at: 3) }, [.redraw]) {
            $0.model.status = "Saved swiped-recording-1.json and .rows (1 input, cut at its cap)"
            $0.statusUntil = 7
        }
        store.check({ $0.recordingNotSaved("cannot create x: Permission denied", at: 4) }, [.redraw]) {
            $0.model.status = "Not saved: cannot create x: Permission denied"
            $0.model.statusIsError = true
            $0.statusUntil = 8
        }
    }

    func testRecordingThatCannotStartOrBeFetchedSaysWhy() {
        var store = TuiTestStore(TuiOptions(socket: "s", recordDirectory: "/tmp/r"))
        store.check({ $0.input(.char("r"), at: 1) }, [.redraw, .checkRecordDirectory])
        store.check({ $0.recordDirectoryChecked(problem: "not a directory", at: 1) }, [.redraw]) {
            $0.model.status = "Cannot record into /tmp/r: not a directory (see --record-dir)"
            $0.model.statusIsError = true
            $0.statusUntil = 5
        }
        store.check({ $0.recordDirectoryChecked(problem: nil, at: 2) }, [.send(.record(on: true))]) {
            $0.recordBusy = true
        }
        store.check(
            { $0.replied(to: .record(on: true), .refused(description: "busy: no", message: "no"), at: 2) },
            [
                .redraw
            ]
        ) {
            $0.recordBusy = false
            $0.model.status = "Not recorded: no"
            $0.statusUntil = 6
        }
        store.check({ $0.replied(to: .record(on: true), .closed([]), at: 3) }, [.redraw]) {
            $0.transcript = []
            $0.model.recording = .on
            $0.model.status = "Recording: r again stops and saves it"
            $0.model.statusIsError = false
            $0.statusUntil = 7
        }
        store.check({ $0.input(.char("r"), at: 3) }, [.redraw, .send(.record(on: false)), .send(.recording)])
        {
            $0.model.recording = .saving
            $0.recordBusy = true
        }
        store.check(
            { $0.replied(to: .record(on: false), .refused(description: "e: a", message: "a"), at: 3) },
            [.redraw]
        ) {
            $0.transcript = nil
            $0.model.status = "a"
            $0.model.statusIsError = true
        }
        store.check({ $0.replied(to: .recording, .recording(nil), at: 3) }, [.redraw]) {
            $0.recordBusy = false
            $0.model.recording = .off
            $0.model.status = "The daemon's recording reply has no recording: nothing saved"
        }
        store.check(
            { $0.recordingSaved(file: "f.json", TuiRecordingSummary(inputs: nil, cut: false), at: 4) },
            [.redraw]
        ) {
            $0.model.status = "Saved f.json and .rows (?) in /tmp/r"
            $0.model.statusIsError = false
            $0.statusUntil = 8
        }
    }

    func testARecordingGoesWithItsConnection() {
        var store = Fixture.listed()
        store.check({ $0.input(.char("r"), at: 1) }, [.redraw, .checkRecordDirectory])
        store.check({ $0.recordDirectoryChecked(problem: nil, at: 1) }, [.send(.record(on: true))]) {
            $0.recordBusy = true
        }
        store.check({ $0.replied(to: .record(on: true), .closed([]), at: 1) }, [.redraw]) {
            $0.transcript = []
            $0.recordBusy = false
            $0.model.recording = .on
            $0.model.status = "Recording: r again stops and saves it"
            $0.statusUntil = 5
        }
        store.check({ $0.lost("x", at: 2) }, [.disconnect, .redraw]) {
            $0.connected = false
            $0.transcript = nil
            $0.model.recording = .lost
            $0.model.connection = .reconnecting(attempt: 1)
            $0.model.status = "Lost the daemon and the recording with it (x); reconnecting…"
            $0.model.statusIsError = true
            $0.statusUntil = nil
            $0.reconnectAt = 2 + 0.1
            $0.attempt = 1
        }
        store.check({ $0.tick(at: 3) }, [.connect]) { $0.reconnectAt = nil }
        store.check({ $0.connected(at: 3) }, [.redraw]) {
            $0.connected = true
            $0.model.connection = .connecting
        }
        store.check(
            { $0.hello(writer: true, seq: 7, at: 3) },
            [
                .redraw, .send(.viewport(width: 400, direction: .ltr)), .send(.subscribe(from: 7)),
            ]
        ) {
            $0.model.connection = .connected
            $0.model.status = "Reconnected; caught up from seq 7. The recording was lost"
            $0.model.statusIsError = false
            $0.statusUntil = 7
            $0.attempt = 0
        }
        // A lost recording: r starts a new one.
        store.check({ $0.input(.char("r"), at: 4) }, [.redraw, .checkRecordDirectory])
    }

    func testSharingAndGhostsAreAskedForAgainOnANewConnection() throws {
        var store = Fixture.listed()
        store.check({ $0.input(.char("s"), at: 1) }, [.redraw, .send(.share(on: true, quiet: false))])
        store.check({ $0.replied(to: .share(on: true, quiet: false), .ok, at: 1) }, [.redraw]) {
            $0.sharing = true
            $0.model.sharing = true
            $0.model.status = "Sharing your rows: people who show ghosts (g) see your fingers"
            $0.statusUntil = 5
        }
        store.check({ $0.input(.char("g"), at: 2) }, [.redraw, .send(.peers(watch: true, quiet: false))])
        let open = try Fixture.render("seven", [.open(row: "seven", edge: .trailing)])
        let peer = TuiPeer(width: 200, direction: .rtl, rows: ["seven": open])
        store.check(
            { $0.replied(to: .peers(watch: true, quiet: false), .peers([3: peer]), at: 2) }, [.redraw]
        ) {
            $0.watching = true
            $0.peers = [3: peer]
            $0.model.ghosts = 1
            $0.model.status = "Showing other people's rows faintly (g hides them)"
            $0.statusUntil = 6
        }
        // The ghost is drawn laid out again for this terminal: mirrored, and twice as wide.
        _ = store.machine.frame(at: 2)
        XCTAssertEqual(store.state.model.rows[2].ghosts.map(\.offset), [140])
        // A peer's row closes: its ghost goes; another opens.
        let closed = try Fixture.render("seven", [])
        store.check({ $0.received(.peerRow(client: 3, row: closed), at: 3) }, [.redraw]) {
            $0.peers = [:]
            $0.model.ghosts = 0
        }
        store.check(
            { $0.received(.peerRow(client: 4, row: open, width: 400, direction: .ltr), at: 3) }, [.redraw]
        ) {
            $0.peers = [4: TuiPeer(width: 400, direction: .ltr, rows: ["seven": open])]
            $0.model.ghosts = 1
        }
        store.check(
            { $0.received(.peerRow(client: 4, row: nil, unreadable: "malformed row object"), at: 3) },
            [.redraw]
        ) {
            $0.model.status = "The daemon sent a peer's row this client cannot read: malformed row object"
            $0.model.statusIsError = true
            $0.statusUntil = 7
        }
        // A new connection: shared and watched again, quietly; the ghosts are asked for anew.
        store.check({ $0.lost("x", at: 4) }, [.disconnect, .redraw]) {
            $0.connected = false
            $0.peers = [:]
            $0.model.ghosts = 0
            $0.model.connection = .reconnecting(attempt: 1)
            $0.model.status = "Lost the daemon (x); reconnecting…"
            $0.statusUntil = nil
            $0.reconnectAt = 4 + 0.1
            $0.attempt = 1
        }
        store.check({ $0.connected(at: 5) }, [.redraw]) {
            $0.connected = true
            $0.model.connection = .connecting
        }
        store.check(
            { $0.hello(writer: true, seq: 7, at: 5) },
            [
                .redraw, .send(.viewport(width: 400, direction: .ltr)), .send(.subscribe(from: 7)),
                .send(.share(on: true, quiet: true)), .send(.peers(watch: true, quiet: true)),
            ]
        ) {
            $0.model.connection = .connected
            $0.model.status = "Reconnected; caught up from seq 7"
            $0.model.statusIsError = false
            $0.statusUntil = 9
            $0.attempt = 0
        }
        store.check({ $0.replied(to: .share(on: true, quiet: true), .ok, at: 5) }, [.redraw])
        store.check(
            { $0.replied(to: .peers(watch: true, quiet: true), .peers([:], unreadable: "bad"), at: 5) },
            [.redraw]
        ) {
            $0.model.status = "A peer's row this client cannot read is not shown: bad"
            $0.model.statusIsError = true
        }
        // Off again.
        store.check({ $0.input(.char("g"), at: 6) }, [.redraw, .send(.peers(watch: false, quiet: false))])
        store.check({ $0.replied(to: .peers(watch: false, quiet: false), .peers([:]), at: 6) }, [.redraw]) {
            $0.watching = false
            $0.model.ghosts = nil
            $0.model.status = "Other people's rows hidden"
            $0.model.statusIsError = false
            $0.statusUntil = 10
        }
        store.check({ $0.received(.peerRow(client: 4, row: open), at: 6) }, [.redraw])
        store.check({ $0.input(.char("s"), at: 7) }, [.redraw, .send(.share(on: false, quiet: false))])
        store.check({ $0.replied(to: .share(on: false, quiet: false), .ok, at: 7) }, [.redraw]) {
            $0.sharing = false
            $0.model.sharing = false
            $0.model.status = "Your rows are private"
            $0.statusUntil = 11
        }
    }
}

/// "Ask before deleting": `c` and `--confirm-delete`.
final class TuiConfirmDeleteTests: XCTestCase {
    func testTheLayoutIsTheDaemonsDefaultWithDeleteAskingToBeConfirmed() {
        XCTAssertEqual(TuiRequest.layout(confirmDelete: false), MovieLayout.standard)
        var expected = MovieLayout.standard
        expected.trailing[0].confirm = true
        expected.trailing[0].confirmLabel = "Delete?"
        XCTAssertEqual(expected.trailing[0].action, "delete")
        XCTAssertEqual(TuiRequest.layout(confirmDelete: true), expected)
    }

    func testTheKeyTurnsItOnAndOffAndTheReplySaysSo() {
        var store = Fixture.listed()
        store.check(
            { $0.input(.char("c"), at: 1) }, [.redraw, .send(.configure(confirmDelete: true, quiet: false))])
        store.check(
            { $0.replied(to: .configure(confirmDelete: true, quiet: false), .closed(["seven"]), at: 1) },
            [.redraw]
        ) {
            $0.confirmDelete = true
            $0.model.confirmDelete = true
            $0.model.status = "Ask before deleting: on (a delete waits for its “Delete?” button or Enter)"
            $0.statusUntil = 5
        }
        store.check(
            { $0.input(.char("c"), at: 2) }, [.redraw, .send(.configure(confirmDelete: false, quiet: false))])
        store.check(
            {
                $0.replied(
                    to: .configure(confirmDelete: false, quiet: false),
                    .refused(description: "e: no", message: "no"), at: 2)
            }, [.redraw]
        ) {
            $0.model.status = "no"
            $0.model.statusIsError = true
            $0.statusUntil = 6
        }
        store.check(
            { $0.replied(to: .configure(confirmDelete: false, quiet: false), .closed([]), at: 3) }, [.redraw]
        ) {
            $0.confirmDelete = false
            $0.model.confirmDelete = false
            $0.model.status = "Ask before deleting: off"
            $0.model.statusIsError = false
            $0.statusUntil = 7
        }
    }

    /// `configure` lasts as long as its connection: it is sent on each one, quietly.
    func testTheOptionAsksOnTheFirstConnectionAndAfterEveryReconnect() {
        var store = TuiTestStore(TuiOptions(socket: "s", confirmDelete: true))
        XCTAssertTrue(store.state.confirmDelete)
        XCTAssertFalse(store.state.model.confirmDelete, "not before the daemon said so")
        let hello: [TuiAction] = [
            .redraw, .send(.viewport(width: 400, direction: .ltr)),
            .send(.configure(confirmDelete: true, quiet: true)),
            .send(.list),
        ]
        store.check({ $0.hello(writer: true, seq: 7, at: 0) }, hello) { $0.model.connection = .connected }
        store.check(
            { $0.replied(to: .configure(confirmDelete: true, quiet: true), .closed([]), at: 0) }, [.redraw]
        ) {
            $0.model.confirmDelete = true
        }
        store.check({ $0.lost("x", at: 1) }, [.disconnect, .redraw]) {
            $0.connected = false
            $0.model.connection = .reconnecting(attempt: 1)
            $0.model.status = "Lost the daemon (x); reconnecting…"
            $0.model.statusIsError = true
            $0.reconnectAt = 1 + 0.1
            $0.attempt = 1
        }
        store.check({ $0.connected(at: 2) }, [.redraw]) {
            $0.connected = true
            $0.model.connection = .connecting
        }
        store.check({ $0.hello(writer: true, seq: 7, at: 2) }, hello) {
            $0.model.connection = .connected
            $0.model.status = "Reconnected; caught up from seq 7"
            $0.model.statusIsError = false
            $0.statusUntil = 6
            $0.attempt = 0
        }
    }
}

extension TuiTestStore {
    /// Outside a recording, a row's line is kept nowhere.
    mutating func receivedRowLineIsIgnored(
        _ line: String, file: StaticString = #filePath, line l: UInt = #line
    ) {
        check(
            {
                $0.receivedRowLine(line); return []
            }, [], file: file, line: l)
    }
}

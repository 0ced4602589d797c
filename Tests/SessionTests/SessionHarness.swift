import Foundation
import JSONCodec
import Movies
import People
import Session
import StoreCore
import StoreTestSupport
import SwipeEngine
import TestSupport
import Wire
import XCTest

/// Drives one Session as the daemon's manager would, with no process and no socket: a fake
/// store (`InMemoryStore`, held to the SQLite store's outcomes by the contract tests) and a fake
/// clock (timers fire when `advance` passes them). Tests that assert every action call the
/// Session's inputs themselves and read `sink`; the helpers here carry actions out for the
/// steps a test is not about.
final class SessionHarness {
    let store: InMemoryStore
    let session: Session
    var sink = SessionActions()
    /// Store token → the session's ticket, and whether it is a read.
    var tokens: [UInt64: (ticket: UInt64, read: Bool)] = [:]
    var nextToken: UInt64 = 1
    /// Armed timers and when they fire (µs on the fake clock).
    var timers: [SessionTimer: UInt64] = [:]
    var now: UInt64 = 0
    var subscribed = false
    /// Whether the session holds a share of the daemon's cap on catch-ups (from its first
    /// `.catchUp` until `.catchUpEnded`).
    var catchUpShare = false
    /// Every journal line the session asked for.
    var logs: [SessionLog] = []
    /// Shared rows: whether the session shares, whether it said rows changed since the test
    /// last looked, and what the manager answers `peers` with.
    var sharing = false
    var peerRowsChanged = false
    var peersAnswer: () -> [PeerRows] = { [] }
    var watching = false
    private var peersAsked: [UInt64] = []
    private var statusAsked: [UInt64] = []
    /// What the session asked of the manager about people, oldest first (`answerPeople`).
    var peopleAsked: [(ticket: UInt64, ask: PeopleAsk)] = []
    /// The denials the session reported: the op and why.
    var denied: [(op: String, reason: DenialReason)] = []

    init(
        _ config: SessionConfig = SessionConfig(client: 7, identity: .tester(.writer)),
        store: InMemoryStore = InMemoryStore(), largeReplies: LargeReplies = LargeReplies()
    ) {
        self.store = store
        session = Session(
            config: config, latestSeq: store.latestSeq, log: store.logID, largeReplies: largeReplies)
    }

    // MARK: Inputs

    /// Gives the session one fact through its one entry, as the daemon's round does.
    func hear(_ input: SessionInput, at clock: UInt64? = nil) {
        store.withState { session.handle(input, at: clock, $0, &sink) }
    }

    /// Sends bytes as they would arrive (no newline added).
    func receive(_ text: String) {
        var bytes = Array(text.utf8)
        bytes.withUnsafeMutableBytes { hear(.bytes(UnsafeRawBufferPointer($0)), at: now) }
    }

    /// The shared rows due, which then count as sent, as the manager's flush does.
    func takePeerRows() -> [RowRender] {
        let rows = store.withState { session.peerRowsDue($0) }
        hear(.peerRowsSent(rows))
        return rows
    }

    /// One request line.
    func send(_ line: String) { receive(line + "\n") }

    /// Actions a test has looked at: `perform` still carries them out, first.
    private var taken: [SessionAction] = []

    /// The actions the last inputs produced, for a test to assert; `perform` (and so `settle`)
    /// still carries them out.
    func takeActions() -> [SessionAction] {
        let actions = sink.take()
        taken += actions
        return actions
    }

    /// Forgets the actions taken so far (a test that answered them by hand).
    func forgetTakenActions() { taken = [] }

    /// Writes everything the session has for its peer, as a socket taking it all would, and
    /// returns it as lines.
    func read() -> [String] {
        var text: [UInt8] = []
        repeat {
            while session.pendingOutput > 0 {
                let n = session.withPendingOutput { bytes -> Int in
                    text += bytes
                    return bytes.count
                }
                hear(.written(n))
                hear(.resume)
            }
            // A reply due once the output drained (behind a long `list`), as the daemon's
            // `afterWork` asks for it.
            if session.mayResume(latestSeq: store.latestSeq) {
                hear(.resume)
            }
        } while session.pendingOutput > 0
        return String(decoding: text, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            .dropLast().map(String.init)
    }

    /// Carries out the pending actions, lets the store commit and answer, and delivers every
    /// outcome and committed event, until nothing moves.
    func settle() {
        for _ in 0..<100 {
            perform()
            store.flush()
            let batch = store.completions()
            if batch.isEmpty && sink.isEmpty { return }
            deliver(batch)
        }
        XCTFail("the session and the store did not settle")
    }

    /// Plays the manager's answer to the oldest `PeopleAsk` waiting, and settles.
    func answerPeople(_ answer: PeopleAnswer) {
        perform()
        guard !peopleAsked.isEmpty else { return XCTFail("nothing asked of the manager") }
        let (ticket, _) = peopleAsked.removeFirst()
        hear(.peopleAnswered(ticket: ticket, answer))
        settle()
    }

    func perform() {
        let earlier = taken
        taken = []
        for action in earlier { carryOut(action) }
        sink.drain { carryOut($0) }
        while !peersAsked.isEmpty {
            let ticket = peersAsked.removeFirst()
            let peers = peersAnswer()
            hear(.peersAnswered(ticket: ticket, peers))
            sink.drain { carryOut($0) }
        }
        while !statusAsked.isEmpty {
            let ticket = statusAsked.removeFirst()
            hear(
                .statusAnswered(
                    ticket: ticket, MetricsSample.snapshot(), detail: session.identity.mayWrite,
                    connections: nil))
            sink.drain { carryOut($0) }
        }
    }

    private func carryOut(_ action: SessionAction) {
        switch action {
        case .submit(let ticket, _, let command):
            let token = take(ticket, read: false)
            store.submit(command, token: token)
        case .read(let ticket, let request):
            let token = take(ticket, read: true)
            store.read(request, token: token)
        case .catchUp(let ticket, let after, let limit):
            let token = take(ticket, read: true)
            store.read(.events(after: after, limit: limit), token: token)
            catchUpShare = true
        case .catchUpEnded:
            catchUpShare = false
        case .arm(let timer, let microseconds):
            timers[timer] = now + microseconds
        case .cancel(let timer):
            XCTAssertNotNil(timers.removeValue(forKey: timer), "cancelled \(timer), which was not armed")
        case .subscription(let active):
            subscribed = active
        case .log(let entry):
            logs.append(entry)
        case .sharing(let active):
            sharing = active
        case .peerRowsChanged:
            peerRowsChanged = true
        case .peers(let ticket, let watch):
            // Answered once the sink is drained (the daemon defers it the same way).
            watching = watch
            peersAsked.append(ticket)
        case .status(let ticket):
            statusAsked.append(ticket)
        case .people(let ticket, let ask):
            // Answered by the test (`answerPeople`): it plays the manager.
            peopleAsked.append((ticket, ask))
        case .denied(let op, let reason):
            denied.append((op, reason))
        }
    }

    private func take(_ ticket: UInt64, read: Bool) -> UInt64 {
        defer { nextToken += 1 }
        tokens[nextToken] = (ticket, read)
        return nextToken
    }

    func deliver(_ batch: Completions) {
        for outcome in batch.commands {
            guard let (ticket, _) = tokens.removeValue(forKey: outcome.token) else { continue }
            hear(.commandAnswered(ticket: ticket, outcome.result.mapError(WireError.init)))
        }
        for outcome in batch.reads {
            guard let (ticket, _) = tokens.removeValue(forKey: outcome.token) else { continue }
            hear(.readAnswered(ticket: ticket, outcome.result.mapError(WireError.init)))
        }
        for event in batch.committed {
            if subscribed && session.wantsLiveEvent(seq: event.seq) {
                var line = JSONWriter()
                Encode.movieEvent(&line, event)
                hear(.liveEvent(seq: event.seq, line: line.bytes, written: nil))
            }
            if session.hasOpenRows { hear(.moviesChanged([event]), at: now) }
        }
    }

    /// Moves the fake clock on, firing the timers it passes in order.
    func advance(microseconds: UInt64) {
        now += microseconds
        // Due timers in order; ties by name, so that two harnesses fire them alike.
        while let (timer, _) = timers.filter({ $0.value <= now }).min(by: {
            ($0.value, "\($0.key)") < ($1.value, "\($1.key)")
        }) {
            timers[timer] = nil
            hear(.timerFired(timer), at: now)
            settle()
        }
    }

    // MARK: Reading replies

    func json(_ line: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] ?? [:]
    }

    /// Sends `line`, settles, and returns the lines written.
    func exchange(_ line: String) -> [String] {
        send(line)
        settle()
        return read()
    }
}

extension Identity {
    /// A Unix peer named "tester" with `role`: what most tests connect as.
    static func tester(_ role: AccessRole) -> Identity {
        Identity(user: "tester", role: role, door: .unix(uid: 1000))
    }
}

// log-bench: durable append throughput through GroupCommitter (1 and 64 concurrent
// submitters, each submitting one event and waiting for its ack), the same with
// synchronous=NORMAL, SQLite one-row-per-commit as the baseline, the writer's CPU per transaction
// of 8 one-event batches (one movie and eight; TXN_STREAMS=N and TXN_FULL_ONLY=1 narrow it), and
// replay of 1,000,000 events
// with and without a snapshot (the steps SQLiteStore.open takes).
//
// usage: swift build -c release && .build/release/log-bench [--dir DIR] [--seconds S] [--events N]
// DIR must be on a real disk (not tmpfs) for fsync to mean anything; default /var/tmp.
import Dispatch
import EventLog
import Foundation
import Movies
import StoreTestSupport

var baseDir = "/var/tmp"
var seconds = 2.0
var replayEvents = 1_000_000
var appends = true
var txnOnly = false
var it = CommandLine.arguments.dropFirst().makeIterator()
while let a = it.next() {
    switch a {
    case "--dir": baseDir = it.next() ?? baseDir
    case "--seconds": seconds = Double(it.next() ?? "") ?? seconds
    case "--events": replayEvents = Int(it.next() ?? "") ?? replayEvents
    case "--replay-only": appends = false
    case "--txn-only": txnOnly = true
    default:
        print("usage: log-bench [--dir DIR] [--seconds S] [--events N] [--replay-only | --txn-only]")
        exit(64)
    }
}
let dir = "\(baseDir)/log-bench-\(getpid())"
try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: dir) }
var fileNo = 0
@MainActor func freshPath() -> String {
    fileNo += 1
    return "\(dir)/bench-\(fileNo).sqlite3"
}

func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var n = 0
    private var finishedThreads = 0
    var stop = false
    func finish() { lock.lock(); finishedThreads += 1; lock.unlock() }
    var finished: Int { lock.lock(); defer { lock.unlock() }; return finishedThreads }
    func add() { lock.lock(); n += 1; lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return n }
    var stopped: Bool { lock.lock(); defer { lock.unlock() }; return stop }
    func halt() { lock.lock(); stop = true; lock.unlock() }
}

func event(_ i: Int) -> NewEvent {
    NewEvent(stream: "movie\(i % 10)", kind: MovieEvent.Kind.watchedToggled.rawValue, payload: [])
}

/// Submitters threads each submit one event and wait for its ack; one dispatcher thread plays
/// the owner's event loop (waits on the eventfd, drains, wakes the submitter).
@MainActor func groupCommit(
    _ durability: Durability, submitters: Int, hold: CommitHold.Policy = .standard
) throws -> (
    perSecond: Double, perTxn: Double, txnPerSecond: Double
) {
    let committer = try GroupCommitter(path: freshPath(), durability: durability, hold: hold)
    let sems = (0..<submitters).map { _ in DispatchSemaphore(value: 0) }
    let counter = Counter()
    let done = DispatchSemaphore(value: 0)
    let dispatcher = Thread {
        while counter.finished < submitters {
            committer.wait(timeoutMs: 50)
            for c in committer.drain() {
                if case .failure(let e) = c.result { fatalError("commit failed: \(e)") }
                sems[Int(c.token)].signal()
            }
        }
        done.signal()
    }
    dispatcher.start()
    let start = now()
    let group = DispatchGroup()
    for i in 0..<submitters {
        group.enter()
        let t = Thread {
            var k = 0
            while !counter.stopped {
                committer.submit([event(i * 1_000_000 + k)], token: UInt64(i))
                sems[i].wait()
                counter.add()
                k += 1
            }
            counter.finish()
            group.leave()
        }
        t.start()
    }
    Thread.sleep(forTimeInterval: seconds)
    counter.halt()
    group.wait()
    let elapsed = now() - start
    done.wait()
    let stats = committer.stats
    committer.close()
    return (
        Double(counter.value) / elapsed, Double(stats.events) / Double(max(1, stats.transactions)),
        Double(stats.transactions) / elapsed
    )
}

/// One event per transaction on one connection: plain SQLite autocommit-style appends.
@MainActor func oneRowPerCommit(_ durability: Durability) throws -> Double {
    let log = try EventLog(path: freshPath(), durability: durability)
    defer { log.close() }
    let start = now()
    var n = 0
    while now() - start < seconds {
        _ = try log.append([event(n)])
        n += 1
    }
    return Double(n) / (now() - start)
}

func fmt(_ x: Double) -> String { String(format: "%10.0f", x) }

func threadCPU() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// What one group-commit transaction costs the writer thread: 8 one-event batches per
/// transaction (what the daemon's 16 × 1 toggle load makes), CPU time of this thread (user and
/// kernel: SQLite, its locks and writes, fdatasync's submission) and wall time per transaction.
@MainActor func transactionCost(_ durability: Durability, streams: Int) throws -> (
    cpuMicros: Double, wallMicros: Double
) {
    let log = try EventLog(path: freshPath(), durability: durability)
    defer { log.close() }
    var n = 0
    var transactions = 0
    let start = now()
    let cpu0 = threadCPU()
    while now() - start < seconds {
        let batches = (0..<8).map { i in
            [NewEvent(stream: "movie\((n + i) % streams)", kind: MovieEvent.Kind.watchedToggled.rawValue)]
        }
        for r in log.appendBatches(batches) { _ = try r.get() }
        n += 8
        transactions += 1
    }
    let cpu = threadCPU() - cpu0
    let wall = now() - start
    return (cpu / Double(transactions) * 1e6, wall / Double(transactions) * 1e6)
}

print("log-bench: \(dir) (\(seconds) s per run)")
if appends || txnOnly {
    print("one transaction of 8 one-event batches (the daemon's toggles at 16 × 1), writer thread:")
    for d
        in (ProcessInfo.processInfo.environment["TXN_FULL_ONLY"] != nil
        ? [Durability.full] : [.full, .normal])
    {
        for streams in (ProcessInfo.processInfo.environment["TXN_STREAMS"].map { [Int($0)!] } ?? [1, 8]) {
            let r = try transactionCost(d, streams: streams)
            print(
                "  \(d.rawValue.padding(toLength: 6, withPad: " ", startingAt: 0)) \(streams) movie\(streams == 1 ? " " : "s") CPU \(String(format: "%6.1f", r.cpuMicros)) µs, wall \(String(format: "%6.1f", r.wallMicros)) µs per transaction"
            )
        }
    }
}
if txnOnly { exit(0) }
if appends { print("durable appends (events/s, each submitter waits for its ack):") }
for d in [Durability.full, .normal] where appends {
    let base = try oneRowPerCommit(d)
    print(
        "  \(d.rawValue.padding(toLength: 6, withPad: " ", startingAt: 0)) SQLite one row per commit   \(fmt(base))   (\(String(format: "%.2f", 1000 / base)) ms per commit)"
    )
    for n in [1, 64] {
        let r = try groupCommit(d, submitters: n)
        print(
            "  \(d.rawValue.padding(toLength: 6, withPad: " ", startingAt: 0)) group commit, \(String(n).padding(toLength: 2, withPad: " ", startingAt: 0)) submitters \(fmt(r.perSecond))   (\(String(format: "%.1f", r.perTxn)) events/transaction, \(String(format: "%.0f", r.txnPerSecond)) transactions/s)"
        )
    }
}

// A disk in a slow spell, on demand: every fsync 5 ms slower (FaultInjection's VFS), 16
// submitters that each wait for their ack, with and without the hold after a slow commit
// (CommitHold): without it the submitters fall into two groups taking turns.
if appends {
    print("durable appends on a slow disk (each fsync + 5 ms), 16 submitters:")
    FaultInjection.install()
    FaultInjection.syncDelayMicros = 5000
    for (name, policy) in [("no hold  ", CommitHold.Policy.never), ("CommitHold", .standard)] {
        let r = try groupCommit(.full, submitters: 16, hold: policy)
        print(
            "  full   \(name)              \(fmt(r.perSecond))   (\(String(format: "%.1f", r.perTxn)) events/transaction, \(String(format: "%.0f", r.txnPerSecond)) transactions/s)"
        )
    }
    FaultInjection.uninstall()
}

// MARK: - Replay

let replayPath = freshPath()
var snapshotAt: UInt64 = 0
var expected = MovieState()
do {
    let t0 = now()
    let log = try EventLog(path: replayPath, durability: .normal)
    var state = MovieState()
    var seq: UInt64 = 0
    var batch: [NewEvent] = []
    var rng = SystemRandomNumberGenerator()
    func push(_ e: MovieEvent) {
        seq += 1
        state.apply(e, seq: seq)
        batch.append(NewEvent(stream: e.movieID, kind: e.kind.rawValue, payload: e.payload))
    }
    for e in MovieState.seedCatalogue { push(e) }
    for i in 0..<10 { push(.added(id: "extra_\(i)", title: "Extra \(i)", image: "extra_\(i)")) }
    let ids = state.movies.map(\.id)
    while seq < UInt64(replayEvents) {
        let id = ids[Int.random(in: 0..<ids.count, using: &rng)]
        push(Bool.random(using: &rng) ? .watchedToggled(id: id) : .watchedWithFriendsToggled(id: id))
        if batch.count == 10_000 {
            _ = try log.append(batch)
            batch = []
        }
        if seq == UInt64(replayEvents) - 5_000 {
            _ = try log.append(batch)
            batch = []
            try log.saveSnapshot(seq: seq, data: state.snapshotBytes())
            snapshotAt = seq
        }
    }
    _ = try log.append(batch)
    log.close()
    expected = state
    print("replay: wrote \(seq) events in \(String(format: "%.1f", now() - t0)) s; snapshot at \(snapshotAt)")
}

/// Open, load the newest snapshot (or not), fold the rest: what SQLiteStore.open does.
@MainActor func replay(useSnapshot: Bool) throws -> (seconds: Double, folded: Int) {
    let t0 = now()
    let log = try EventLog(path: replayPath, durability: .full)
    defer { log.close() }
    var state = MovieState()
    if useSnapshot, let snap = try log.latestSnapshot() { state = try MovieState(snapshot: snap.data) }
    var folded = 0
    var bad = false
    try log.forEachEvent(after: state.lastSeq) { e in
        guard let ev = try? MovieEvent(stream: e.stream, kind: e.kind, payload: e.payload) else {
            bad = true
            return false
        }
        state.apply(ev, seq: e.seq)
        folded += 1
        return true
    }
    let t = now() - t0
    precondition(!bad && state == expected, "replay differs from the fold")
    return (t, folded)
}
for useSnapshot in [false, true] {
    var best = Double.infinity
    var folded = 0
    for _ in 0..<3 {
        let r = try replay(useSnapshot: useSnapshot)
        best = min(best, r.seconds)
        folded = r.folded
    }
    print(
        "  start-up \(useSnapshot ? "with snapshot   " : "without snapshot"): \(String(format: "%7.3f", best)) s (best of 3; folded \(folded) events)"
    )
}

do {
    var best = Double.infinity
    for _ in 0..<3 {
        let t0 = now()
        let log = try EventLog(path: replayPath, durability: .full)
        var n = 0
        try log.forEachEvent(after: 0) { _ in
            n += 1; return true
        }
        log.close()
        best = min(best, now() - t0)
    }
    print("  (of which reading the rows from SQLite, no decode or fold: \(String(format: "%.3f", best)) s)")
}

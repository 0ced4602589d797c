// AbuseSupport: a small launcher for the real swiped binary and helpers for the reliability
// tests (Reliability*Tests.swift): start, kill, restart on the same state directory, read the
// daemon's RSS, read the whole history, fold it.
//
//     let daemon = try AbuseDaemon(state: dir.file("state"), socket: dir.file("s.sock"))
//     let client = try daemon.connect()       // LineClient, hello already read
//     daemon.kill(SIGKILL); _ = try daemon.wait()
//     try daemon.start()                      // same socket and state directory
//
// The Subprocess underneath always reaps the daemon (deinit kills and reaps it).

import Foundation
import Glibc
import XCTest

/// Whether the long variants run (`make soak`).
let soak = ProcessInfo.processInfo.environment["SWIPED_SOAK"] == "1"

final class AbuseDaemon {
    let socket: String
    let state: String
    let extraArguments: [String]
    private(set) var process: Subprocess?

    init(state: String, socket: String, arguments: [String] = [], start: Bool = true) throws {
        self.state = state
        self.socket = socket
        self.extraArguments = arguments
        if start { try self.start() }
    }

    deinit {
        if let process, process.isRunning { _ = try? process.wait(timeout: .zero) }
    }

    /// Starts a new daemon on the same socket and state directory, and waits until it answers.
    func start() throws {
        process = try Subprocess(
            Binaries.swiped, ["--socket", socket, "--state", state] + extraArguments,
            environment: [
                "NOTIFY_SOCKET": nil, "LISTEN_FDS": nil, "LISTEN_PID": nil, "SWIPED_WRITERS": nil,
                // An ASan build of swiped checks for leaks when it exits (make asan turns
                // them off for the test runner only); other builds ignore this.
                "ASAN_OPTIONS": "detect_leaks=1",
            ])
        let probe = try connect(timeout: .seconds(20))
        probe.close()
    }

    var pid: pid_t { process?.pid ?? -1 }
    var isRunning: Bool { process?.isRunning ?? false }
    var standardError: String { process?.standardError ?? "" }

    func kill(_ signal: Int32) { process?.kill(signal) }

    func wait(timeout: Duration = .seconds(10)) throws -> Termination {
        guard let process else { throw LineClientError("no daemon was started") }
        return try process.wait(timeout: timeout)
    }

    /// A connected client whose `hello` was read (and checked).
    func connect(timeout: Duration = .seconds(5)) throws -> LineClient {
        let deadline = Deadline(timeout)
        while true {
            let client = try LineClient(path: socket, timeout: deadline.remaining)
            // A stale socket file of a killed daemon: the connect may reach nobody; retry.
            if let hello = try? client.readJSON(timeout: deadline.remaining),
                hello["event"] as? String == "hello"
            {
                return client
            }
            client.close()
            if deadline.remaining == .zero { throw TimeoutError("no hello from \(socket)") }
            usleep(10_000)
        }
    }

    /// VmRSS of the daemon in kB.
    func rssKB() throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kb = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else { throw LineClientError("no VmRSS in /proc/\(pid)/status") }
        return kb
    }
}

/// The movie as the protocol shows it, for comparisons.
struct WireMovie: Equatable, CustomStringConvertible {
    var id: String
    var title: String
    var image: String
    var watched: Bool
    var watchedWithFriends: Bool
    var version: Int

    init(_ object: [String: Any]) throws {
        guard let id = object["id"] as? String, let title = object["title"] as? String,
            let image = object["image"] as? String, let watched = object["watched"] as? Bool,
            let friends = object["watchedWithFriends"] as? Bool, let version = object["version"] as? Int
        else { throw LineClientError("not a movie: \(object)") }
        self.id = id
        self.title = title
        self.image = image
        self.watched = watched
        self.watchedWithFriends = friends
        self.version = version
    }

    var description: String { "\(id)(w=\(watched),f=\(watchedWithFriends),v=\(version))" }
}

struct WireEvent {
    var seq: Int
    var kind: String
    var movie: WireMovie
}

extension LineClient {
    /// The whole history, page by page.
    func wholeHistory() throws -> [WireEvent] {
        var events: [WireEvent] = []
        while true {
            let reply = try request(
                ["op": "history", "from": events.last?.seq ?? 0, "limit": 1000], timeout: .seconds(20))
            guard reply["ok"] as? Bool == true, let page = reply["events"] as? [[String: Any]] else {
                throw LineClientError("history failed: \(reply)")
            }
            for e in page {
                guard let seq = e["seq"] as? Int, let kind = e["kind"] as? String,
                    let movie = e["movie"] as? [String: Any]
                else { throw LineClientError("not an event: \(e)") }
                events.append(WireEvent(seq: seq, kind: kind, movie: try WireMovie(movie)))
            }
            if page.count < 1000 { return events }
        }
    }

    /// `list`: the latest seq and the movies in list order.
    func listMovies() throws -> (seq: Int, movies: [WireMovie]) {
        let reply = try request(["op": "list"], timeout: .seconds(20))
        guard reply["ok"] as? Bool == true, let seq = reply["seq"] as? Int,
            let movies = reply["movies"] as? [[String: Any]]
        else { throw LineClientError("list failed: \(reply)") }
        return (seq, try movies.map(WireMovie.init))
    }
}

/// Folds a history computed from the kinds alone (not trusting the movies the events carry
/// beyond `added`), checking on the way that each event's movie is what the fold says.
/// Returns the movies in list order (the order they were added: a restored movie goes back to
/// its place, as it was when removed).
func foldHistory(_ events: [WireEvent], file: StaticString = #filePath, line: UInt = #line) -> [WireMovie] {
    var order: [String] = []
    var movies: [String: WireMovie] = [:]
    var addedAt: [String: Int] = [:]
    var removed: [String: WireMovie] = [:]
    for (index, event) in events.enumerated() {
        XCTAssertEqual(
            event.seq, index + 1, "history has a gap or is out of order at \(index)", file: file, line: line)
        let id = event.movie.id
        switch event.kind {
        case "added":
            XCTAssertNil(movies[id], "seq \(event.seq) adds \(id) twice", file: file, line: line)
            var m = event.movie
            XCTAssertFalse(
                m.watched || m.watchedWithFriends, "seq \(event.seq): added with flags", file: file,
                line: line)
            m.version = event.seq
            movies[id] = m
            order.append(id)
            addedAt[id] = event.seq
        case "restored":
            guard var m = removed.removeValue(forKey: id), let at = addedAt[id] else {
                XCTFail("seq \(event.seq) restores \(id), which is not removed", file: file, line: line)
                continue
            }
            m.version = event.seq
            movies[id] = m
            order.insert(id, at: order.firstIndex { addedAt[$0]! > at } ?? order.endIndex)
        case "watched-toggled", "watched-with-friends-toggled":
            guard var m = movies[id] else {
                XCTFail("seq \(event.seq) toggles missing movie \(id)", file: file, line: line)
                continue
            }
            if event.kind == "watched-toggled" { m.watched.toggle() } else { m.watchedWithFriends.toggle() }
            m.version = event.seq
            movies[id] = m
        case "removed":
            XCTAssertNotNil(
                movies[id], "seq \(event.seq) removes missing movie \(id)", file: file, line: line)
            removed[id] = movies.removeValue(forKey: id)
            order.removeAll { $0 == id }
            continue
        default:
            XCTFail("seq \(event.seq): unknown kind \(event.kind)", file: file, line: line)
            continue
        }
        XCTAssertEqual(
            event.movie, movies[id], "seq \(event.seq): the event's movie differs from the fold",
            file: file, line: line)
    }
    return order.compactMap { movies[$0] }
}

/// Thread-safe accumulation for worker threads.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func with<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
    var get: Value { with { $0 } }
}

/// Runs `body(i)` for i in 0..<count on separate threads and waits for all of them.
func runThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for i in 0..<count {
        group.enter()
        let thread = Thread {
            body(i)
            group.leave()
        }
        thread.stackSize = 4 << 20
        thread.start()
    }
    group.wait()
}

/// Percentile (0…1) of `values` (sorted here).
func percentile(_ values: [Double], _ p: Double) -> Double {
    guard !values.isEmpty else { return .nan }
    let sorted = values.sorted()
    let rank = Int((Double(sorted.count) * p).rounded(.up)) - 1
    return sorted[min(sorted.count - 1, max(0, rank))]
}

func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// Whether this test process (and so the daemon built with it) runs under ASan or TSan, whose
/// quarantine and shadow memory grow RSS without a leak and whose checks slow every request.
let sanitizerBuild: Bool = dlsym(nil, "__asan_init") != nil || dlsym(nil, "__tsan_init") != nil

/// How much the daemon's VmRSS may grow under abuse: 64 MB (512 MB under a sanitizer).
let rssGrowthBoundKB = sanitizerBuild ? 512 * 1024 : 64 * 1024

/// Ping p99 bound under abuse: 50 ms in a debug build (250 ms under a sanitizer).
let pingP99BoundMilliseconds: Double = sanitizerBuild ? 250 : 50

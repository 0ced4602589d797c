// The measurements that are not a closed loop: idle clients' memory, fan-out to many
// subscribers, start-up time to READY=1, and filling a log with a million events.
import CSystemd  // sys/epoll.h
import EventLog
import Movies

#if canImport(Glibc)
    import Glibc
#endif

/// Splits what is read into lines and hands each line's first 16 bytes to `body`.
final class LineScanner {
    var prefix: [UInt8] = []

    func feed(_ bytes: UnsafeRawBufferPointer, _ body: ([UInt8]) -> Void) {
        var i = 0
        while i < bytes.count {
            guard let newline = bytes[i...].firstIndex(of: 0x0A) else {
                if prefix.count < 16 { prefix += bytes[i..<min(bytes.count, i + 16 - prefix.count)] }
                return
            }
            if prefix.count < 16 { prefix += bytes[i..<min(newline, i + 16 - prefix.count)] }
            body(prefix)
            prefix.removeAll(keepingCapacity: true)
            i = newline + 1
        }
    }
}

func startsWith(_ bytes: [UInt8], _ text: String) -> Bool { bytes.starts(with: text.utf8) }

/// Reads lines from a blocking fd until `done` says so.
func readLines(_ fd: Int32, _ scanner: LineScanner, until done: @escaping ([UInt8]) -> Bool) {
    var buffer = [UInt8](repeating: 0, count: 65536)
    var finished = false
    while !finished {
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n < 0 && errno == EINTR { continue }
        if n <= 0 { fail("the server closed a connection") }
        buffer.withUnsafeBytes { raw in
            scanner.feed(UnsafeRawBufferPointer(rebasing: raw[0..<n])) { if done($0) { finished = true } }
        }
    }
}

// MARK: - Idle clients

/// Connects `count` clients as fast as it can (non-blocking connects; a full listen backlog
/// answers EAGAIN, and that connect is tried again once some hellos have been read), until
/// every one has read its first line; then they do nothing. Reports the time from the first
/// connect until the last hello was read, how many were refused (`bye`), and the server's
/// resident memory before and after.
func runIdle(socket: String, count: Int, pid: Int32, hold: Double) {
    raiseFileLimit(to: count + 64)
    guard let before = residentKiB(pid: pid) else { fail("cannot read /proc/\(pid)/status") }
    let epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
    var fds: [Int32] = []
    var greeted = 0
    var refused = 0
    var buffer = [UInt8](repeating: 0, count: 4096)
    var events = [epoll_event](repeating: epoll_event(), count: 512)
    let t0 = nowNanos()
    while greeted < count {
        while fds.count < count {
            guard let fd = connectUnix(socket, nonBlocking: true) else {
                if errno == EAGAIN { break }  // the backlog is full: read hellos first
                fail("connect: \(String(cString: strerror(errno)))")
            }
            var event = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(u64: UInt64(fds.count)))
            _ = epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event)
            fds.append(fd)
        }
        let n = epoll_wait(epoll, &events, Int32(events.count), 10)
        if nowNanos() - t0 > 60_000_000_000 { fail("idle: only \(greeted) of \(count) greeted within 60 s") }
        for k in 0..<max(0, Int(n)) {
            let fd = fds[Int(events[k].data.u64)]
            let r = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if r < 0 && (errno == EAGAIN || errno == EINTR) { continue }
            if r <= 0 { fail("the server closed a connection before its hello") }
            // The first line is hello (or bye); it fits in one read, as the server writes it at once.
            if startsWith(Array(buffer[0..<r]), "{\"event\":\"bye\"") { refused += 1 }
            greeted += 1
            _ = epoll_ctl(epoll, EPOLL_CTL_DEL, fd, nil)
        }
    }
    let connectNanos = nowNanos() - t0
    close(epoll)
    usleep(UInt32(hold * 1e6))
    guard let after = residentKiB(pid: pid) else { fail("the server died") }
    let perClient = Double(after - before) / Double(count)
    print(
        "idle clients=\(count) refused=\(refused) connect_ms=\(formatted(Double(connectNanos) / 1e6, digits: 1)) "
            + "rss_before_kib=\(before) rss_after_kib=\(after) per_client_kib=\(formatted(perClient, digits: 1))"
    )
    print(
        "RESULT label=idle clients=\(count) refused=\(refused) connect_ms=\(formatted(Double(connectNanos) / 1e6, digits: 1)) "
            + "rss_mib=\(formatted(Double(after) / 1024, digits: 1)) "
            + "rss_before_mib=\(formatted(Double(before) / 1024, digits: 1)) per_client_kib=\(formatted(perClient, digits: 1))"
    )
    for fd in fds { close(fd) }
}

// MARK: - Fan-out

/// Which lines of one socket's byte stream start with a given prefix, fed as the bytes come
/// (a line may arrive in pieces). Per subscriber it is one integer, so that 10,000 of them are
/// one flat array: the fan-out reader's own CPU is part of the figure it measures, on the same
/// two CPUs as the daemon (a class per socket cost a retain and release per read).
struct PrefixMatcher {
    /// Bytes of the current line matched against the prefix so far; -1 once it differs.
    var matched: Int32 = 0

    /// Feeds `bytes`; returns how many complete lines in them started with `prefix`.
    mutating func feed(_ bytes: UnsafeRawBufferPointer, prefix: UnsafeRawBufferPointer) -> Int {
        var found = 0
        var i = 0
        let count = bytes.count
        while i < count {
            // The prefix part of the line, byte by byte (it is 16 bytes; the rest is skipped
            // with memchr).
            while matched >= 0 && Int(matched) < prefix.count && i < count {
                let b = bytes[i]
                if b == 0x0A { break }
                matched = b == prefix[Int(matched)] ? matched + 1 : -1
                i += 1
            }
            guard i < count else { return found }
            guard let nl = memchr(bytes.baseAddress! + i, 0x0A, count - i) else { return found }
            i = bytes.baseAddress!.distance(to: UnsafeRawPointer(nl)) + 1
            if Int(matched) == prefix.count { found += 1 }
            matched = 0
        }
        return found
    }
}

/// One reader thread's share of the subscribers, with its own epoll set. Between rounds the
/// threads meet the main thread at a barrier, which also orders their measurements before the
/// main thread reads them.
final class FanoutReader: @unchecked Sendable {
    let fds: [Int32]
    let rounds: Int
    let barrier: UnsafeMutablePointer<pthread_barrier_t>
    /// The start of the line that carries the change.
    let prefix: [UInt8]
    /// Per round: when this thread read its first and its last subscriber's event.
    var first: [UInt64] = []
    var last: [UInt64] = []

    init(fds: [Int32], rounds: Int, barrier: UnsafeMutablePointer<pthread_barrier_t>, prefix: [UInt8]) {
        self.fds = fds
        self.rounds = rounds
        self.barrier = barrier
        self.prefix = prefix
    }

    func run() {
        let epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        for (i, fd) in fds.enumerated() {
            // Edge-triggered: a socket is reported once per arrival, not polled again at every
            // epoll_wait until it is drained, which is what level-triggered costs the reader
            // per socket. Each read below takes all there is (one event line is ~200 bytes).
            var event = epoll_event(
                events: EPOLLIN.rawValue | EPOLLET.rawValue, data: epoll_data_t(u64: UInt64(i)))
            _ = epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event)
        }
        let n = fds.count
        let sockets = UnsafeMutablePointer<Int32>.allocate(capacity: n)
        sockets.initialize(from: fds, count: n)
        let matchers = UnsafeMutablePointer<PrefixMatcher>.allocate(capacity: n)
        matchers.initialize(repeating: PrefixMatcher(), count: n)
        let got = UnsafeMutablePointer<Bool>.allocate(capacity: n)
        let capacity = 65536
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
        let prefix = UnsafeMutableRawBufferPointer.allocate(byteCount: self.prefix.count, alignment: 1)
        prefix.copyBytes(from: self.prefix)
        defer {
            sockets.deallocate()
            matchers.deallocate()
            got.deallocate()
            buffer.deallocate()
            prefix.deallocate()
        }
        var events = [epoll_event](repeating: epoll_event(), count: 1024)
        for _ in 0..<rounds {
            got.update(repeating: false, count: n)
            var received = 0
            var firstNow: UInt64 = 0
            var lastNow: UInt64 = 0
            let deadline = nowNanos() + 6_000_000_000
            while received < n {
                let ready = events.withUnsafeMutableBufferPointer {
                    epoll_wait(epoll, $0.baseAddress, Int32($0.count), 100)
                }
                if nowNanos() > deadline {
                    fail("fan-out: a reader saw only \(received) of its \(n) subscribers' events within 6 s")
                }
                for k in 0..<max(0, Int(ready)) {
                    let i = Int(events[k].data.u64)
                    while true {
                        // recv, not read: a socket's read goes through the file layer first
                        // (fdget_pos, vfs_read: 6 % of the reader's samples in perf).
                        let r = recv(sockets[i], buffer, capacity, 0)
                        if r < 0 && errno == EINTR { continue }
                        if r < 0 && errno == EAGAIN { break }
                        if r <= 0 { fail("the server closed a connection during fan-out") }
                        let lines = matchers[i].feed(
                            UnsafeRawBufferPointer(start: buffer, count: r),
                            prefix: UnsafeRawBufferPointer(prefix))
                        if lines > 0 && !got[i] {
                            got[i] = true
                            received += 1
                            let now = nowNanos()
                            if firstNow == 0 { firstNow = now }
                            lastNow = now
                        }
                        if r < capacity { break }
                    }
                }
            }
            first.append(firstNow)
            last.append(lastNow)
            pthread_barrier_wait(barrier)
        }
        close(epoll)
    }
}

/// Whom `runFanout` measures.
enum FanoutProtocol {
    /// swiped: `subscribe`, then a durable `toggle-watched` whose `movie` event every
    /// subscriber reads.
    case swiped
    /// redis-server, the reference: `SUBSCRIBE`, then one `PUBLISH` of a message as long as
    /// swiped's event line. Nothing is written to disk, so compare with swiped's figure less
    /// its ack (the commit).
    case redis
}

/// `count` subscribers; one writer toggles a movie (or publishes, for redis); time from the
/// toggle's send until the last subscriber has read its `movie` event (and until the writer's
/// ack), over `rounds` rounds.
/// The subscribers are read by `readers` threads (default 1), each with its own epoll set over
/// every readers-th subscriber, edge-triggered. On this machine's 2 CPUs, shared with the
/// daemon, a second reader thread did not make the last read come sooner (BENCHMARKS.md); what
/// did was edge-triggered epoll (a level-triggered set polls every ready socket once more).
func runFanout(
    socket: String, count: Int, rounds: Int, movie: String, readers: Int, server: FanoutProtocol
) {
    raiseFileLimit(to: count + 64)
    // A swiped `movie` event line is about 200 bytes; redis's message carries as many.
    let channel = "swiped-fanout"
    let message = String(repeating: "m", count: 200)
    let subscribe: String
    let subscribed: String
    let change: String
    let changed: String
    let prefix: String
    switch server {
    case .swiped:
        (subscribe, subscribed) = ("{\"op\":\"subscribe\"}\n", "{\"ok\":true")
        (change, changed) = ("{\"op\":\"toggle-watched\",\"movie\":\"\(movie)\"}\n", "{\"ok\"")
        prefix = "{\"event\":\"movie\""
    case .redis:
        // SUBSCRIBE's reply ends with the subscription count (`:1`); PUBLISH's is the number of
        // clients it reached; a message is `*3`, `$7`, `message`, the channel, the message.
        (subscribe, subscribed) = ("SUBSCRIBE \(channel)\r\n", ":")
        change = ["PUBLISH", channel, message].reduce("*3\r\n") { $0 + "$\($1.utf8.count)\r\n\($1)\r\n" }
        changed = ":"
        prefix = "message\r"
    }
    var subscribers: [Int32] = []
    for _ in 0..<count {
        let fd = connectRetrying(socket)
        guard writeAll(fd, Array(subscribe.utf8)) else { fail("subscribe failed") }
        subscribers.append(fd)
    }
    for fd in subscribers {
        readLines(fd, LineScanner()) { startsWith($0, subscribed) }
        setNonBlocking(fd)
    }
    let writer = connectRetrying(socket)
    let writerScanner = LineScanner()
    if server == .swiped {
        readLines(writer, writerScanner) { startsWith($0, "{\"event\":\"hello\"") }
    }

    let readers = max(1, min(readers, count))
    let barrier = UnsafeMutablePointer<pthread_barrier_t>.allocate(capacity: 1)
    pthread_barrier_init(barrier, nil, UInt32(readers + 1))
    let workers = (0..<readers).map { r in
        FanoutReader(
            fds: stride(from: r, to: count, by: readers).map { subscribers[$0] }, rounds: rounds,
            barrier: barrier, prefix: Array(prefix.utf8))
    }
    var threads: [pthread_t] = []
    for worker in workers {
        var thread = pthread_t()
        let box = Unmanaged.passRetained(worker).toOpaque()
        let r = pthread_create(
            &thread, nil,
            { arg in
                Unmanaged<FanoutReader>.fromOpaque(arg!).takeRetainedValue().run()
                return nil
            }, box)
        guard r == 0 else { fail("pthread_create: \(r)") }
        threads.append(thread)
    }

    let toggle = Array(change.utf8)
    var lastTimes: [UInt64] = []
    var ackTimes: [UInt64] = []
    var firstTimes: [UInt64] = []
    for round in 0..<rounds {
        let t0 = nowNanos()
        guard writeAll(writer, toggle) else { fail("the server closed the writer") }
        var acked: UInt64 = 0
        readLines(writer, writerScanner) { line in
            guard startsWith(line, changed) else { return false }
            acked = nowNanos()
            return true
        }
        pthread_barrier_wait(barrier)
        lastTimes.append(workers.map { $0.last[round] }.max()! - t0)
        firstTimes.append(workers.map { $0.first[round] }.min()! - t0)
        ackTimes.append(acked - t0)
        usleep(20_000)
    }
    for thread in threads { pthread_join(thread, nil) }
    pthread_barrier_destroy(barrier)
    barrier.deallocate()
    func median(_ xs: [UInt64]) -> UInt64 { xs.sorted()[xs.count / 2] }
    print(
        "fanout subscribers=\(count) readers=\(readers) rounds=\(rounds) last_median_us=\(micros(median(lastTimes))) "
            + "last_max_us=\(micros(lastTimes.max()!)) first_median_us=\(micros(median(firstTimes))) "
            + "ack_median_us=\(micros(median(ackTimes)))")
    print(
        "RESULT label=fanout subscribers=\(count) readers=\(readers) last_ms=\(formatted(Double(median(lastTimes)) / 1e6, digits: 2)) "
            + "last_max_ms=\(formatted(Double(lastTimes.max()!) / 1e6, digits: 2)) "
            + "first_ms=\(formatted(Double(median(firstTimes)) / 1e6, digits: 2)) "
            + "ack_ms=\(formatted(Double(median(ackTimes)) / 1e6, digits: 2))")
    for fd in subscribers + [writer] { close(fd) }
}

// MARK: - Start-up

/// Starts `arguments` with NOTIFY_SOCKET pointing at a datagram socket bound here; measures the
/// time until READY=1 and until a client connected to `socket` has read `hello`; then SIGTERM.
func runStartup(arguments: [String], socket: String, timeout: Double) {
    let notifyPath = "/tmp/loadgen-notify-\(getpid()).sock"
    unlink(notifyPath)
    let notify = Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        let bytes = Array(notifyPath.utf8)
        raw.copyBytes(from: bytes)
        raw[bytes.count] = 0
    }
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(notify, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
    }
    guard notify >= 0, bound == 0 else { fail("cannot bind \(notifyPath)") }
    defer {
        close(notify)
        unlink(notifyPath)
    }
    var environment: [String] = []
    var entry = environ
    while let pointer = entry.pointee {
        let pair = String(cString: pointer)
        if !pair.hasPrefix("NOTIFY_SOCKET=") { environment.append(pair) }
        entry += 1
    }
    environment.append("NOTIFY_SOCKET=\(notifyPath)")
    let argv = arguments.map { strdup($0) } + [nil]
    let envp = environment.map { strdup($0) } + [nil]
    defer {
        for p in argv { free(p) }
        for p in envp { free(p) }
    }
    var pid: pid_t = 0
    let t0 = nowNanos()
    let r = posix_spawnp(&pid, arguments[0], nil, nil, argv, envp)
    guard r == 0 else { fail("cannot start \(arguments[0]): \(String(cString: strerror(r)))") }
    var ready: UInt64 = 0
    var buffer = [UInt8](repeating: 0, count: 4096)
    while ready == 0 {
        var p = pollfd(fd: notify, events: Int16(POLLIN), revents: 0)
        _ = poll(&p, 1, 50)
        if nowNanos() - t0 > UInt64(timeout * 1e9) {
            kill(pid, SIGKILL)
            fail("no READY=1 within \(timeout) s")
        }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid {
            fail("\(arguments[0]) exited before READY=1 (status \(status))")
        }
        guard p.revents != 0 else { continue }
        let n = buffer.withUnsafeMutableBytes { recv(notify, $0.baseAddress, $0.count, 0) }
        if n > 0, String(decoding: buffer[0..<n], as: UTF8.self).split(separator: "\n").contains("READY=1") {
            ready = nowNanos()
        }
    }
    let fd = connectRetrying(socket)
    readLines(fd, LineScanner()) { startsWith($0, "{\"event\":\"hello\"") }
    let hello = nowNanos()
    close(fd)
    kill(pid, SIGTERM)
    var status: Int32 = 0
    waitpid(pid, &status, 0)
    print(
        "startup ready_ms=\(formatted(Double(ready - t0) / 1e6, digits: 1)) hello_ms=\(formatted(Double(hello - t0) / 1e6, digits: 1)) exit_status=\(status)"
    )
    print(
        "RESULT label=startup ready_ms=\(formatted(Double(ready - t0) / 1e6, digits: 1)) hello_ms=\(formatted(Double(hello - t0) / 1e6, digits: 1))"
    )
}

// MARK: - A log of a million events

/// Writes DIR/events.sqlite3 with the ten seed movies and `movies` more, added as "Movie 1"
/// (`movie_1`) and on (issue 33: a list of 100,000 movies in a second, where adding them
/// through a daemon takes a minute in a debug build).
func runFill(directory: String, movies: Int) {
    fillLog(directory: directory, what: "movies=\(movies)") { log, _ throws(LogError) in
        var n = 1
        while n <= movies {
            let batch = (n...min(n + 9_999, movies)).map { i -> NewEvent in
                let event = MovieEvent.added(id: "movie_\(i)", title: "Movie \(i)", image: "movie_\(i)")
                return NewEvent(stream: event.movieID, kind: event.kind.rawValue, payload: event.payload)
            }
            _ = try log.append(batch)
            n += batch.count
        }
    }
}

/// A new DIR/events.sqlite3 (any old one removed) with the ten seed movies, then what `more`
/// appends; the time it took, printed after `what`.
func fillLog(
    directory: String, what: String, _ more: (EventLog, [MovieEvent]) throws(LogError) -> Void
) {
    mkdir(directory, 0o755)
    let path = directory + "/events.sqlite3"
    unlink(path)
    unlink(path + "-wal")
    unlink(path + "-shm")
    let t0 = nowNanos()
    do throws(LogError) {
        let log = try EventLog(path: path, durability: .normal)
        let seeds = MovieState.seedCatalogue
        _ = try log.append(
            seeds.map { NewEvent(stream: $0.movieID, kind: $0.kind.rawValue, payload: $0.payload) })
        try more(log, seeds)
        log.close()
    } catch {
        fail("\(path): \(error)")
    }
    print("fill \(what) path=\(path) seconds=\(formatted(Double(nowNanos() - t0) / 1e9, digits: 2))")
}

/// Writes DIR/events.sqlite3 with the ten seed movies and then toggles, `count` events in all,
/// through the EventLog library in large batches (no snapshot: the daemon's first start folds
/// every event).
func runFill(directory: String, count: Int) {
    fillLog(directory: directory, what: "events=\(count)") { log, seeds throws(LogError) in
        var written = seeds.count
        var i = 0
        while written < count {
            var batch: [NewEvent] = []
            let n = min(10_000, count - written)
            batch.reserveCapacity(n)
            for _ in 0..<n {
                let id = seeds[i % seeds.count].movieID
                let event: MovieEvent =
                    (i / seeds.count) % 3 == 2 ? .watchedWithFriendsToggled(id: id) : .watchedToggled(id: id)
                batch.append(NewEvent(stream: id, kind: event.kind.rawValue, payload: event.payload))
                i += 1
            }
            _ = try log.append(batch)
            written += n
        }
    }
}

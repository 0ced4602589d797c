// The cross-daemon measurement of issue 17 (Benchmarks/postgres.sh): a change made on daemon A
// reaching a subscriber on daemon B, both daemons on one PostgreSQL database, while other
// clients load them.
#if canImport(Glibc)
    import Glibc
#endif

/// Splits what is read into whole lines.
final class WholeLines {
    private var partial: [UInt8] = []

    func feed(_ bytes: ArraySlice<UInt8>, _ body: ([UInt8]) -> Void) {
        var rest = bytes
        while let newline = rest.firstIndex(of: 0x0A) {
            partial += rest[rest.startIndex..<newline]
            body(partial)
            partial.removeAll(keepingCapacity: true)
            rest = rest[(newline + 1)...]
        }
        partial += rest
    }
}

/// The number after the first `"seq":` of a line, if any.
func seqField(_ line: [UInt8]) -> UInt64? {
    let key = Array("\"seq\":".utf8)
    guard line.count > key.count else { return nil }
    for start in 0...(line.count - key.count) where line[start..<start + key.count].elementsEqual(key) {
        var value: UInt64 = 0
        var i = start + key.count
        var digits = 0
        while i < line.count, line[i] >= 0x30, line[i] <= 0x39 {
            value = value * 10 + UInt64(line[i] - 0x30)
            i += 1
            digits += 1
        }
        return digits > 0 ? value : nil
    }
    return nil
}

/// One subscriber on `socket` (daemon B) and one writer on `writerSocket` (daemon A): each round
/// the writer toggles `movie` and the time from the send until the subscriber has read that
/// event (matched by the seq of the writer's reply) is recorded; also until the writer's reply.
/// Rounds are `pause` seconds apart. Prints p50, p99 and max, and with `slowMillis` each round
/// that took longer, with the time it started (UTC), to set next to the server's log.
func runCross(
    socket: String, writerSocket: String, rounds: Int, movie: String, pause: Double, slowMillis: Double?
) {
    let subscriber = connectRetrying(socket)
    guard writeAll(subscriber, Array("{\"op\":\"subscribe\"}\n".utf8)) else { fail("subscribe failed") }
    let writer = connectRetrying(writerSocket)
    let needle = Array("\"movie\":{\"id\":\"\(movie)\"".utf8)
    let eventPrefix = Array("{\"event\":\"movie\"".utf8)
    let subscriberLines = WholeLines()
    let writerLines = WholeLines()
    var arrivals: [UInt64: UInt64] = [:]  // seq → when the subscriber read it
    var subscribed = false
    var buffer = [UInt8](repeating: 0, count: 1 << 16)

    /// Reads what is there on both connections (waiting at most `timeout` ms); returns the
    /// writer's replies' seqs with their times.
    func pump(timeout: Int32) -> [(seq: UInt64, at: UInt64)] {
        var fds = [
            pollfd(fd: subscriber, events: Int16(POLLIN), revents: 0),
            pollfd(fd: writer, events: Int16(POLLIN), revents: 0),
        ]
        var replies: [(UInt64, UInt64)] = []
        let n = poll(&fds, 2, timeout)
        guard n > 0 else { return replies }
        for (k, pfd) in fds.enumerated() where pfd.revents != 0 {
            let r = buffer.withUnsafeMutableBytes { read(pfd.fd, $0.baseAddress, $0.count) }
            if r < 0 && errno == EINTR { continue }
            if r <= 0 { fail("the server closed a connection") }
            let now = nowNanos()
            if k == 0 {
                subscriberLines.feed(buffer[0..<r]) { line in
                    if !subscribed, line.starts(with: "{\"ok\":true".utf8) { subscribed = true }
                    guard line.starts(with: eventPrefix), contains(line, needle), let seq = seqField(line)
                    else { return }
                    arrivals[seq] = now
                }
            } else {
                writerLines.feed(buffer[0..<r]) { line in
                    if line.starts(with: "{\"ok\":true".utf8), let seq = seqField(line) {
                        replies.append((seq, now))
                    }
                    if line.starts(with: "{\"ok\":false".utf8) {
                        fail("the writer's toggle failed: \(String(decoding: line, as: UTF8.self))")
                    }
                }
            }
        }
        return replies
    }

    let setup = nowNanos()
    while !subscribed {
        _ = pump(timeout: 100)
        if nowNanos() - setup > 10_000_000_000 { fail("no reply to subscribe within 10 s") }
    }
    let toggle = Array("{\"op\":\"toggle-watched\",\"movie\":\"\(movie)\"}\n".utf8)
    var reach: [UInt64] = []
    var acks: [UInt64] = []
    for _ in 0..<rounds {
        let t0 = nowNanos()
        var started = timespec()
        if slowMillis != nil { clock_gettime(CLOCK_REALTIME, &started) }
        guard writeAll(writer, toggle) else { fail("the server closed the writer") }
        var seq: UInt64?
        var acked: UInt64 = 0
        while true {
            for reply in pump(timeout: 20) where seq == nil {
                seq = reply.seq
                acked = reply.at
            }
            if let seq, let at = arrivals[seq] {
                if let slowMillis, Double(at - t0) > slowMillis * 1e6 {
                    print(
                        "slow round started at \(utcClock(started)) UTC: reach \((at - t0) / 1000) µs, "
                            + "A's reply \((acked - t0) / 1000) µs, seq \(seq)")
                }
                reach.append(at - t0)
                acks.append(acked - t0)
                break
            }
            if nowNanos() - t0 > 10_000_000_000 {
                fail(
                    "the change (seq \(seq.map { "\($0)" } ?? "?")) did not reach the subscriber within 10 s")
            }
        }
        arrivals.removeAll(keepingCapacity: true)
        let until = nowNanos() + UInt64(pause * 1e9)
        while nowNanos() < until { _ = pump(timeout: 5) }
    }
    close(subscriber)
    close(writer)
    reach.sort()
    acks.sort()
    func quantile(_ xs: [UInt64], _ q: Double) -> String {
        formatted(Double(xs[min(xs.count - 1, Int(Double(xs.count) * q))]) / 1e6, digits: 2)
    }
    print(
        "cross rounds=\(rounds) reach_p50_ms=\(quantile(reach, 0.5)) reach_p99_ms=\(quantile(reach, 0.99)) "
            + "reach_max_ms=\(quantile(reach, 1)) ack_p50_ms=\(quantile(acks, 0.5)) ack_p99_ms=\(quantile(acks, 0.99))"
    )
    print(
        "RESULT label=cross rounds=\(rounds) p50_ms=\(quantile(reach, 0.5)) p99_ms=\(quantile(reach, 0.99)) "
            + "max_ms=\(quantile(reach, 1)) ack_p50_ms=\(quantile(acks, 0.5)) ack_p99_ms=\(quantile(acks, 0.99))"
    )
}

/// `time` as HH:MM:SS.mmm in UTC, to set next to a server's log.
func utcClock(_ time: timespec) -> String {
    var seconds = time.tv_sec
    var parts = tm()
    gmtime_r(&seconds, &parts)
    func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
    let millis = String(time.tv_nsec / 1_000_000 + 1000).dropFirst()  // zero-padded
    return "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)).\(millis)"
}

/// Whether `needle` occurs in `line`.
func contains(_ line: [UInt8], _ needle: [UInt8]) -> Bool {
    guard line.count >= needle.count else { return false }
    for start in 0...(line.count - needle.count) where line[start] == needle[0] {
        if line[start..<start + needle.count].elementsEqual(needle) { return true }
    }
    return false
}

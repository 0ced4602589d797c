// The closed-loop load: N connections spread over T threads, each thread one epoll set of
// non-blocking sockets (never a thread per connection). Every connection keeps W requests in
// flight: each reply read sends the next request at once. Replies come back in order on each
// connection, so a FIFO of send times per connection gives each request's latency.
import CSystemd  // sys/epoll.h

#if canImport(Glibc)
    import Glibc
#endif

struct LoadSpec {
    var socket = ""
    var connections = 16
    var window = 16
    var threads = 1
    var warmup = 1.0
    var duration = 5.0
    /// Sent in turn on each connection, each with a trailing "\n".
    var lines: [[UInt8]] = []
    /// Every line read is a reply (echo, redis). Otherwise the peer is swiped: lines starting
    /// with {"event" (hello, row and movie events) are not replies.
    var expectLines = false
    /// The server's pid: its CPU time over the measured window is reported per reply.
    var serverPID: Int32 = 0
}

/// What one thread measured.
struct LoadResult {
    var replies: UInt64 = 0
    var errors: UInt64 = 0
    var events: UInt64 = 0
    var histogram = Histogram()
    /// The server's CPU time per measured reply, in ns (with --pid).
    var serverCPUPerReply: Double?
}

final class LoadConnection {
    let fd: Int32
    var out: [UInt8] = []
    var outHead = 0
    var watchingOut = false
    /// Send times of the requests in flight (a ring).
    var sent: [UInt64]
    var sentHead = 0
    var sentCount = 0
    var nextLine = 0
    /// The first bytes of the line being read (classification needs at most 16).
    var prefix = [UInt8](repeating: 0, count: 16)
    var prefixLength = 0

    init(fd: Int32, window: Int) {
        self.fd = fd
        sent = [UInt64](repeating: 0, count: max(window, 1))
    }
}

final class LoadWorker: @unchecked Sendable {
    let spec: LoadSpec
    let connections: [LoadConnection]
    let epoll: Int32
    var result = LoadResult()
    var failure: String?
    var measureFrom: UInt64 = 0
    var measureTo: UInt64 = 0
    /// The server's CPU time at the start and end of the measured window (thread 0 reads it).
    var serverCPU: (from: UInt64?, to: UInt64?) = (nil, nil)

    init(spec: LoadSpec, fds: [Int32]) {
        self.spec = spec
        connections = fds.map { LoadConnection(fd: $0, window: spec.window) }
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        for (i, c) in connections.enumerated() {
            var event = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(u64: UInt64(i)))
            guard epoll_ctl(epoll, EPOLL_CTL_ADD, c.fd, &event) == 0 else { fail("epoll_ctl: \(errno)") }
        }
    }

    private static let eventPrefix = Array("{\"event\"".utf8)
    private static let errorPrefix = Array("{\"ok\":false".utf8)

    @inline(__always)
    private func enqueue(_ c: LoadConnection, at now: UInt64) {
        let line = spec.lines[c.nextLine]
        c.nextLine += 1
        if c.nextLine == spec.lines.count { c.nextLine = 0 }
        c.out.append(contentsOf: line)
        c.sent[(c.sentHead + c.sentCount) % c.sent.count] = now
        c.sentCount += 1
    }

    /// Sends what is queued; watches EPOLLOUT only while the socket is full.
    private func flush(_ c: LoadConnection, index: Int) -> Bool {
        while c.outHead < c.out.count {
            let n = c.out.withUnsafeBytes {
                send(c.fd, $0.baseAddress! + c.outHead, $0.count - c.outHead, Int32(MSG_NOSIGNAL))
            }
            if n > 0 {
                c.outHead += n
            } else if n < 0 && errno == EINTR {
                continue
            } else if n < 0 && errno == EAGAIN {
                if !c.watchingOut {
                    var event = epoll_event(
                        events: EPOLLIN.rawValue | EPOLLOUT.rawValue, data: epoll_data_t(u64: UInt64(index)))
                    _ = epoll_ctl(epoll, EPOLL_CTL_MOD, c.fd, &event)
                    c.watchingOut = true
                }
                return true
            } else {
                return false
            }
        }
        c.out.removeAll(keepingCapacity: true)
        c.outHead = 0
        if c.watchingOut {
            var event = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(u64: UInt64(index)))
            _ = epoll_ctl(epoll, EPOLL_CTL_MOD, c.fd, &event)
            c.watchingOut = false
        }
        return true
    }

    @inline(__always)
    private func lineEnded(_ c: LoadConnection, now: UInt64, sending: Bool) {
        let length = c.prefixLength
        c.prefixLength = 0
        if spec.expectLines {
            if length > 0 && c.prefix[0] == UInt8(ascii: "-") { result.errors += 1 }
        } else {
            if length >= 8 && c.prefix[0..<8].elementsEqual(LoadWorker.eventPrefix) {
                result.events += 1
                return
            }
            if length >= 11 && c.prefix[0..<11].elementsEqual(LoadWorker.errorPrefix) { result.errors += 1 }
        }
        guard c.sentCount > 0 else {
            failure = "a reply arrived for no request (is --expect-lines right for this server?)"
            return
        }
        let sentAt = c.sent[c.sentHead]
        c.sentHead += 1
        if c.sentHead == c.sent.count { c.sentHead = 0 }
        c.sentCount -= 1
        if now >= measureFrom && now < measureTo {
            result.replies += 1
            result.histogram.record(now &- sentAt)
        }
        if sending { enqueue(c, at: now) }
    }

    func run(start: UInt64) {
        measureFrom = start + UInt64(spec.warmup * 1e9)
        measureTo = measureFrom + UInt64(spec.duration * 1e9)
        for (i, c) in connections.enumerated() {
            for _ in 0..<spec.window { enqueue(c, at: start) }
            guard flush(c, index: i) else { failure = "the server closed a connection"; return }
        }
        let bufferSize = 256 * 1024
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: bufferSize)
        defer { buffer.deallocate() }
        var events = [epoll_event](repeating: epoll_event(), count: 256)
        while failure == nil {
            let n = epoll_wait(epoll, &events, Int32(events.count), 20)
            var now = nowNanos()
            if spec.serverPID > 0 && serverCPU.from == nil && now >= measureFrom {
                serverCPU.from = cpuNanos(pid: spec.serverPID)
            }
            if now >= measureTo {
                if spec.serverPID > 0 { serverCPU.to = cpuNanos(pid: spec.serverPID) }
                break
            }
            if n < 0 {
                if errno == EINTR { continue }
                failure = "epoll_wait: \(errno)"
                break
            }
            for k in 0..<Int(n) {
                let index = Int(events[k].data.u64)
                let c = connections[index]
                let flags = events[k].events
                if flags & EPOLLOUT.rawValue != 0, !flush(c, index: index) {
                    failure = "the server closed a connection"
                    break
                }
                guard flags & (EPOLLIN.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0 else {
                    continue
                }
                let r = read(c.fd, buffer, bufferSize)
                if r < 0 && (errno == EAGAIN || errno == EINTR) { continue }
                if r <= 0 {
                    failure = "the server closed a connection (read \(r), errno \(errno))"
                    break
                }
                now = nowNanos()
                let sending = now < measureTo
                var i = 0
                let total = Int(r)
                while i < total {
                    let start = buffer + i
                    let rest = total - i
                    let newline = memchr(start, 0x0A, rest)
                    let end =
                        newline.map {
                            UnsafeMutablePointer<UInt8>($0.assumingMemoryBound(to: UInt8.self)) - start
                        } ?? rest
                    if c.prefixLength < 16 {
                        let take = min(end, 16 - c.prefixLength)
                        for j in 0..<take { c.prefix[c.prefixLength + j] = start[j] }
                        c.prefixLength += take
                    }
                    if newline == nil { break }
                    i += end + 1
                    lineEnded(c, now: now, sending: sending)
                }
                if !flush(c, index: index) {
                    failure = "the server closed a connection"
                    break
                }
            }
        }
        for c in connections { close(c.fd) }
        close(epoll)
    }
}

/// Connects every client, then runs the threads and merges what they measured.
func runLoad(_ spec: LoadSpec) -> (LoadResult, Double) {
    var fds: [[Int32]] = Array(repeating: [], count: spec.threads)
    for i in 0..<spec.connections {
        let fd = connectRetrying(spec.socket)
        setNonBlocking(fd)
        fds[i % spec.threads].append(fd)
    }
    let workers = fds.map { LoadWorker(spec: spec, fds: $0) }
    let start = nowNanos()
    // measureFrom carries the common start to the other threads before they run.
    for worker in workers { worker.measureFrom = start }
    var threads: [pthread_t] = []
    for worker in workers.dropFirst() {
        var thread = pthread_t()
        let box = Unmanaged.passRetained(worker).toOpaque()
        let r = pthread_create(
            &thread, nil,
            { arg in
                let worker = Unmanaged<LoadWorker>.fromOpaque(arg!).takeRetainedValue()
                worker.run(start: worker.measureFrom)
                return nil
            }, box)
        guard r == 0 else { fail("pthread_create: \(r)") }
        threads.append(thread)
    }
    workers[0].run(start: start)
    for thread in threads { pthread_join(thread, nil) }
    var serverCPUPerReply: Double?
    if let from = workers[0].serverCPU.from, let to = workers[0].serverCPU.to {
        // Thread 0 samples at its first wake-up past each boundary: ≤ 20 ms late, of seconds.
        serverCPUPerReply = Double(to - from)
    }
    var total = LoadResult()
    for worker in workers {
        if let failure = worker.failure { fail(failure) }
        total.replies += worker.result.replies
        total.errors += worker.result.errors
        total.events += worker.result.events
        total.histogram.merge(worker.result.histogram)
    }
    if let cpu = serverCPUPerReply, total.replies > 0 {
        total.serverCPUPerReply = cpu / Double(total.replies)
    }
    return (total, spec.duration)
}

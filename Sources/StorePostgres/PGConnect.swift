// Connecting to one host: libpq's non-blocking connect, with a fresh attempt started every half
// second while no attempt has heard from the server yet.
//
// Why not PQconnectdbParams: a connect whose SYN is lost (a partition, a link just healed) is
// resent by the kernel 1 s after the first, then 2 s and 4 s later (Debian 12's 6.1; kernels
// with `tcp_syn_linear_timeouts` resend the first few 1 s apart), and libpq's `connect_timeout`
// is whole seconds, 2 at least. A reconnecting daemon therefore put a SYN on the wire once a
// second at best, and a write after a heal waited up to a second for it (docs/postgres.md,
// "Recovery after the heal"). Giving up on an attempt sooner would never reach a server whose
// round trip is longer; starting another beside it, and keeping whichever answers first, does
// both.
import CLibPQ
import Glibc
import StoreCore

extension PGConnection {
    /// How long every attempt may go without a word from the server before another starts.
    static let freshAttemptNanos: UInt64 = 500_000_000
    /// At most this many attempts at once (one host): 2 s of silence at the reconnection's
    /// `connect_timeout`.
    static let maxAttempts = 4

    enum Connected {
        case connected(OpaquePointer)
        /// libpq's message, or the timeout's.
        case failed(String)
    }

    /// Connects with these keywords (one host; `expand`: the dbname value is a connection
    /// string) within their `connect_timeout` as libpq reads it (none when 0 or absent, 2 s at
    /// least). Blocking.
    static func connect(_ pairs: [(String, String)], expand: Bool) -> Connected {
        var attempts: [(conn: OpaquePointer, wants: PostgresPollingStatusType)] = []
        var failure = "PostgreSQL: out of memory allocating a connection"
        func start() {
            let made = withCStrings(pairs.map(\.0)) { k in
                withCStrings(pairs.map(\.1)) { v in PQconnectStartParams(k, v, expand ? 1 : 0) }
            }
            guard let made else { return }
            guard PQstatus(made) != CONNECTION_BAD else {
                failure = message(made)
                return PQfinish(made)
            }
            // libpq's rule: before the first PQconnectPoll, wait as if it had said "writing".
            attempts.append((made, PGRES_POLLING_WRITING))
        }
        start()
        guard let first = attempts.first?.conn else { return .failed(failure) }
        let seconds = connectTimeout(first)
        let host = PQhost(first).map { String(cString: $0) } ?? "?"
        let port = PQport(first).map { String(cString: $0) } ?? "?"
        let server = "connection to server at \(host), port \(port)"
        var lastStart = SystemClock.monotonicNanoseconds()
        let deadline = seconds > 0 ? lastStart + UInt64(seconds) * 1_000_000_000 : UInt64.max
        defer { for a in attempts { PQfinish(a.conn) } }
        while !attempts.isEmpty {
            var now = SystemClock.monotonicNanoseconds()
            guard now < deadline else {
                return .failed("\(server) failed: timeout expired after \(seconds) s")
            }
            let silent = attempts.allSatisfy { PQstatus($0.conn) == CONNECTION_STARTED }
            if silent && attempts.count < maxAttempts && now - lastStart >= freshAttemptNanos {
                start()
                lastStart = now
            }
            var fds = attempts.map {
                pollfd(
                    fd: PQsocket($0.conn),
                    events: Int16($0.wants == PGRES_POLLING_READING ? POLLIN : POLLOUT),
                    revents: 0)
            }
            now = SystemClock.monotonicNanoseconds()
            var until = deadline
            if silent && attempts.count < maxAttempts { until = min(until, lastStart + freshAttemptNanos) }
            let ms = until > now ? Int32(min((until - now) / 1_000_000, 60_000)) + 1 : 0
            // A socket not there (between two addresses) is polled by libpq at once.
            if fds.contains(where: { $0.fd < 0 }) {
                for i in fds.indices where fds[i].fd < 0 { fds[i].revents = Int16(POLLOUT) }
            } else if poll(&fds, nfds_t(fds.count), ms) < 0 && errno != EINTR {
                return .failed("\(server) failed: poll: \(String(cString: strerror(errno)))")
            }
            for i in fds.indices.reversed() where fds[i].revents != 0 {
                let r = PQconnectPoll(attempts[i].conn)
                if r == PGRES_POLLING_OK {
                    return .connected(attempts.remove(at: i).conn)
                } else if r == PGRES_POLLING_FAILED {
                    failure = message(attempts[i].conn)
                    PQfinish(attempts.remove(at: i).conn)
                } else {
                    attempts[i].wants = r
                }
            }
        }
        return .failed(failure)
    }

    /// The `connect_timeout` libpq read for this connection, as connectDBComplete would use it:
    /// 0 (none) when absent or not above 0, 2 s at least.
    private static func connectTimeout(_ conn: OpaquePointer) -> Int {
        guard let options = PQconninfo(conn) else { return 0 }
        defer { PQconninfoFree(options) }
        var i = 0
        while let keyword = options[i].keyword {
            if String(cString: keyword) == "connect_timeout", let v = options[i].val {
                let n = Int(String(cString: v).filter { !$0.isWhitespace }) ?? 0
                return n <= 0 ? 0 : max(2, n)
            }
            i += 1
        }
        return 0
    }
}

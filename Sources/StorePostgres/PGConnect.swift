// Connecting to one host: libpq's non-blocking connect, with a fresh attempt started every half
// second while no attempt has heard from the server yet.
//
// Why not PQconnectdbParams: a connect whose SYN is lost (a partition, a link just healed) is
// resent by the kernel 1 s after the first, then 2 s and 4 s later (Debian 12's 6.1; kernels
// with `tcp_syn_linear_timeouts` resend the first few 1 s apart), and libpq's `connect_timeout`
// is whole seconds, 2 at least. A reconnecting daemon therefore put a SYN on the wire once a
// second at best, and a write after a heal waited up to a second for it (docs/postgres.md,
// "Recovery after the heal"). Giving up on an attempt sooner would never reach a server whose
// round trip is longer; starting another beside it, and keeping the first the server answers,
// does both.
//
// Only for a host that is one address (an IP address, `hostaddr`, a Unix socket): a host name
// may resolve to several, and libpq's blocking connect gives each its own `connect_timeout`
// before the next, which a fresh attempt (starting again at the first address) would never
// reach. A name is connected by PQconnectdbParams, as before.
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
        let options = settings(first)
        guard options.oneAddress else {
            PQfinish(attempts.removeFirst().conn)
            return blocking(pairs, expand: expand)
        }
        guard let seconds = timeout(options.connectTimeout) else {
            PQfinish(attempts.removeFirst().conn)
            return .failed(
                "invalid integer value \"\(options.connectTimeout ?? "")\" for connection option \"connect_timeout\""
            )
        }
        let server = "connection to server at \(options.host), port \(options.port)"
        var lastStart = SystemClock.monotonicNanoseconds()
        let deadline = seconds > 0 ? lastStart + UInt64(seconds) * 1_000_000_000 : UInt64.max
        defer { for a in attempts { PQfinish(a.conn) } }
        while !attempts.isEmpty {
            var now = SystemClock.monotonicNanoseconds()
            guard now < deadline else {
                let earlier = failure.hasPrefix("PostgreSQL: out of memory") ? "" : " (before: \(failure))"
                return .failed("\(server) failed: timeout expired after \(seconds) s\(earlier)")
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
            // A socket not there yet (between two steps) is handed to libpq at once.
            let ms =
                fds.contains { $0.fd < 0 }
                ? 0 : until > now ? Int32(min((until - now) / 1_000_000, 60_000)) + 1 : 0
            if poll(&fds, nfds_t(fds.count), ms) < 0 && errno != EINTR {
                return .failed("\(server) failed: poll: \(String(cString: strerror(errno)))")
            }
            for i in fds.indices where fds[i].fd < 0 { fds[i].revents = Int16(POLLOUT) }
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
            // Once the server answered one attempt, the others that are still waiting for it
            // are dropped: each would cost the server a session of its own.
            if attempts.contains(where: { PQstatus($0.conn) != CONNECTION_STARTED }) {
                for i in attempts.indices.reversed() where PQstatus(attempts[i].conn) == CONNECTION_STARTED {
                    PQfinish(attempts.remove(at: i).conn)
                }
            }
        }
        return .failed(failure)
    }

    /// libpq's own blocking connect (a host name: each of its addresses gets the timeout).
    private static func blocking(_ pairs: [(String, String)], expand: Bool) -> Connected {
        let made = withCStrings(pairs.map(\.0)) { k in
            withCStrings(pairs.map(\.1)) { v in PQconnectdbParams(k, v, expand ? 1 : 0) }
        }
        guard let made else { return .failed("PostgreSQL: out of memory allocating a connection") }
        if PQstatus(made) == CONNECTION_OK { return .connected(made) }
        defer { PQfinish(made) }
        return .failed(message(made))
    }

    /// What libpq made of the keywords for this connection.
    private static func settings(_ conn: OpaquePointer) -> (
        host: String, port: String, oneAddress: Bool, connectTimeout: String?
    ) {
        var values: [String: String] = [:]
        if let options = PQconninfo(conn) {
            defer { PQconninfoFree(options) }
            var i = 0
            while let keyword = options[i].keyword {
                if let v = options[i].val { values[String(cString: keyword)] = String(cString: v) }
                i += 1
            }
        }
        let host = values["host"] ?? ""
        let address = values["hostaddr"] ?? ""
        var scratch = in6_addr()
        let numeric =
            inet_pton(AF_INET, host, &scratch) == 1 || inet_pton(AF_INET6, host, &scratch) == 1
        // No host at all is the default Unix socket; a path or `@name` is one too.
        let one = !address.isEmpty || host.isEmpty || host.hasPrefix("/") || host.hasPrefix("@") || numeric
        return (address.isEmpty ? host : address, values["port"] ?? "", one, values["connect_timeout"])
    }

    /// `connect_timeout` as libpq's connectDBComplete reads it: 0 (none) when absent or not
    /// above 0, 2 s at least; nil for a value that is not a whole number (libpq refuses it). An
    /// Int32, as libpq's: seconds that fit keep the deadline's nanoseconds far from overflow.
    private static func timeout(_ value: String?) -> Int? {
        guard let value, !value.isEmpty else { return 0 }
        let trimmed = String(value.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
        guard let n = Int32(trimmed) else { return nil }
        return n <= 0 ? 0 : max(2, Int(n))
    }
}

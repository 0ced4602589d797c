// `STATUS=`, the line `systemctl status swiped` shows: the clients and the store's state, sent
// when it changes, at most once a second. A burst of connects, or a commit every millisecond,
// must not become a datagram each to the service manager: changes only mark the line stale, and
// one timer sends it (StatusPacing says when). Pure: the clock comes in as an argument.

enum StatusLine {
    /// `Serving 3 clients; 10 movies; store ok (sqlite, seq 1234)`. A store that is not usable
    /// says what it is doing after a colon: `store unavailable (postgres, seq 1234): PostgreSQL
    /// unreachable since 11:40:02 UTC, retrying; writes refused.`
    static func text(clients: Int, movies: Int, store: String, seq: UInt64, problem: String?) -> String {
        let line =
            "Serving \(clients) client\(clients == 1 ? "" : "s"); \(movies) movie\(movies == 1 ? "" : "s"); "
            + "store \(problem == nil ? "ok" : "unavailable") (\(store), seq \(seq))"
        guard let problem else { return line }
        return line + ": " + problem
    }
}

/// When `STATUS=` may go next, and whether it says anything new.
struct StatusPacing {
    /// At most one STATUS= a second.
    static let interval: UInt64 = 1_000_000_000

    /// The last line sent, and when it was last worked out (CLOCK_MONOTONIC, ns).
    private(set) var sent: String?
    private var checkedAt: UInt64?

    /// How long (µs) to wait from `now` before the line may be worked out again: 0 when that
    /// was a second or more ago, so that a change after a quiet spell shows at once.
    func delay(now: UInt64) -> UInt64 {
        guard let checkedAt else { return 0 }
        let elapsed = now &- checkedAt
        return elapsed >= Self.interval ? 0 : (Self.interval - elapsed) / 1000
    }

    /// The line to send now, or nil when it says what the last one said (a client that came
    /// and went within the second). Either way the next is a second away: connects that
    /// leave the count as it was must not have it worked out on every loop iteration.
    mutating func take(_ line: String, now: UInt64) -> String? {
        checkedAt = now
        guard line != sent else { return nil }
        sent = line
        return line
    }

    /// A line sent by other means (with READY=1): the next one is paced from it.
    mutating func record(_ line: String, now: UInt64) {
        sent = line
        checkedAt = now
    }
}

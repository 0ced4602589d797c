/// After a slow commit, how long the log writer holds its next transaction for the clients that
/// commit just answered.
///
/// Clients that wait for each reply (16 × window 1) come back within a few hundred µs of their
/// answer. While the disk is quick that is no matter: the writer starts the next transaction with
/// whoever is queued and the rest join the one after. But when `fdatasync` takes milliseconds
/// (this VM's disk in a busy spell: 1–15 ms, against 0.2–0.4 ms quiet), the clients split into
/// two groups that take turns, each transaction carrying half of them: the commands that came
/// during the last commit go at once, and the ones it answered come back a moment later, to wait
/// a whole slow commit. Waiting a quarter of the commit's time at most (never more than 1 ms)
/// for as many events as it committed lets them rejoin: one slow flush then serves everybody, as
/// PostgreSQL's `commit_delay` does for concurrent transactions. Gestures never wait for this:
/// only commands do, and only after a commit that was slow anyway.
///
/// Pure: the times are inputs (monotonic ns).
package struct CommitHold: Equatable, Sendable {
    /// Start the next transaction once this many events are queued…
    package let events: Int
    /// …or at this time, whichever comes first.
    package let deadline: UInt64

    package init(events: Int, deadline: UInt64) {
        self.events = events
        self.deadline = deadline
    }

    package struct Policy: Equatable, Sendable {
        /// A commit at least this slow holds the next one…
        package var slowNanos: UInt64
        /// …for this share of its time (4: a quarter)…
        package var share: UInt64
        /// …and never longer than this.
        package var maxNanos: UInt64

        package init(slowNanos: UInt64, share: UInt64, maxNanos: UInt64) {
            self.slowNanos = slowNanos
            self.share = share
            self.maxNanos = maxNanos
        }

        /// 1.5 ms: well above a quiet disk's flush (0.2–0.4 ms here), so that a quick disk never
        /// waits; a quarter of the commit, 1 ms at most.
        package static let standard = Policy(slowNanos: 1_500_000, share: 4, maxNanos: 1_000_000)
        /// Never holds (measuring without it).
        package static let never = Policy(slowNanos: .max, share: 1, maxNanos: 0)
    }

    /// The hold after a transaction that committed `committed` events in `duration` and ended
    /// at `now`, with `queued` events waiting then: nil when it was quick or wrote nothing.
    package static func after(
        duration: UInt64, committed: Int, queued: Int, now: UInt64, policy: Policy = .standard
    ) -> CommitHold? {
        guard committed > 0, policy.maxNanos > 0, duration >= policy.slowNanos else { return nil }
        return CommitHold(
            events: queued + committed, deadline: now + min(duration / max(policy.share, 1), policy.maxNanos))
    }
}

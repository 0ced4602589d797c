// Folding a flood of one warning (issue 40): while a shared database is away every command
// fails, and a line per failure (≈ 166 a second per daemon, measured) went past journald's rate
// limit, which then dropped other entries too. A warning that can repeat per request or per
// connection is logged through `Journal.logFolded`: the first of a kind at once, the next ones
// of that kind in the same interval only counted, and the count logged as one entry when the
// interval ends ("… repeated", REPEATED=N, with the fields of the last one). A kind is the
// message and a `fold` string the caller names (an error code, a reason): clients and movies
// differ from line to line and do not make a new kind.
//
// Pure: time is an input (CLOCK_MONOTONIC nanoseconds), so that tests drive it by hand. The
// Journal owns one; the Server arms a timer for `nextDeadline` (Server.swift, `foldTimer`).

/// The kinds of warning being folded and what each has counted.
struct LogFolds {
    struct Kind: Hashable {
        var message: String
        var fold: String
    }

    /// A kind's interval: when it began, how many were folded into it, the last one's fields.
    struct Window {
        var since: UInt64
        var folded: Int
        var priority: Priority
        var fields: [(String, String)]
    }

    /// What to log for a kind whose interval ended with folded entries.
    struct Summary {
        var priority: Priority
        var message: String
        var repeated: Int
        var fields: [(String, String)]
    }

    /// How long a kind's interval lasts: at most two entries of one kind per interval reach the
    /// journal (the first and the count), far below journald's default 10,000 per 30 s.
    let interval: UInt64
    /// At most this many kinds are tracked; a new kind past it is logged as it comes, unfolded
    /// (kinds are named by the code, not by clients, so this is never reached in practice; the
    /// bound keeps a mistake from growing the table without end).
    static let maxKinds = 256
    private(set) var windows: [Kind: Window] = [:]

    init(interval: UInt64 = 5_000_000_000) {
        self.interval = interval
    }

    /// Whether an entry of `kind` at `now` is logged (true) or folded into its interval's count
    /// (false). `ended` gets the summary of the kind's previous interval, when it had folded
    /// entries and ended before `now` without the timer having said so yet.
    mutating func admit(
        _ kind: Kind, _ priority: Priority, now: UInt64, fields: @autoclosure () -> [(String, String)],
        ended: inout Summary?
    ) -> Bool {
        if var w = windows[kind] {
            if now &- w.since < interval {
                w.folded += 1
                w.priority = priority
                w.fields = fields()
                windows[kind] = w
                return false
            }
            ended = summary(kind, w)
        } else if windows.count >= Self.maxKinds {
            return true
        }
        windows[kind] = Window(since: now, folded: 0, priority: priority, fields: [])
        return true
    }

    /// The summaries of the intervals ended by `now` that folded something; every ended interval
    /// is forgotten, so the next entry of its kind is logged at once.
    mutating func flush(now: UInt64) -> [Summary] {
        var out: [Summary] = []
        for (kind, w) in windows where now &- w.since >= interval {
            if let s = summary(kind, w) { out.append(s) }
            windows[kind] = nil
        }
        return out
    }

    /// When the next interval ends (nil when nothing is being folded).
    var nextDeadline: UInt64? {
        windows.values.map { $0.since &+ interval }.min()
    }

    private func summary(_ kind: Kind, _ w: Window) -> Summary? {
        guard w.folded > 0 else { return nil }
        let seconds = interval / 1_000_000_000
        return Summary(
            priority: w.priority, message: kind.message + " (repeated)", repeated: w.folded,
            fields: w.fields + [("REPEATED", "\(w.folded)"), ("INTERVAL", "\(seconds)s")])
    }
}

// Structured logging: every entry goes to the journal through sd_journal_sendv (the variadic
// sd_journal_send is not callable from Swift) with a constant MESSAGE and the data in fields
// (CLIENT=, PEER_UID=, OP=, MOVIE=, SEQ=, ERROR=), so `journalctl -o json` and
// `journalctl CLIENT=3` work. Every entry also goes to stderr as one readable line (StderrLines)
// for people running `swiped` by hand, in a terminal or with stderr in a pipe or a file: the
// same entries, those at or above `--log-level`. Not when stderr is itself connected to the
// journal (systemd's `StandardError=journal`, said by $JOURNAL_STREAM), where every entry would
// be logged twice, nor when it is /dev/null or closed.
import CSystemd
import Plumbing
import StoreCore
import StoreSQLite

#if canImport(Glibc)
    import Glibc
#endif

public enum Priority: Int, Sendable {
    case emerg = 0, alert, crit, err, warning, notice, info, debug

    var name: String {
        switch self {
        case .emerg: "emerg"
        case .alert: "alert"
        case .crit: "crit"
        case .err: "error"
        case .warning: "warning"
        case .notice: "notice"
        case .info: "info"
        case .debug: "debug"
        }
    }

    /// A level as systemd spells it (`LogLevelMax=`, `journalctl -p`): a name or 0-7.
    public init?(name: String) {
        switch name {
        case "emerg": self = .emerg
        case "alert": self = .alert
        case "crit": self = .crit
        case "err", "error": self = .err
        case "warning": self = .warning
        case "notice": self = .notice
        case "info": self = .info
        case "debug": self = .debug
        default:
            guard name.count == 1, let n = Int(name), let p = Priority(rawValue: n) else { return nil }
            self = p
        }
    }
}

public final class Journal {
    /// Where entries are also written as lines for people; nil when stderr is the journal,
    /// /dev/null or closed.
    let stderr: StderrLines?
    /// Entries above this priority (numerically) are dropped everywhere.
    public var maxPriority: Priority
    /// Whether journald's socket exists, looked at again at most once a second (CLOCK_MONOTONIC,
    /// ns): without it libsystemd tries, and silently fails, a sendmsg for every entry, which
    /// costs more than the entry's own work.
    private var journalPresent = true
    private var journalCheckedAt: UInt64 = 0
    /// After a failed send (journald not answering), sends are skipped until this instant.
    private var journalRetryAt: UInt64 = 0
    static let journalSocket = "/run/systemd/journal/socket"

    public init(maxPriority: Priority = .info) {
        self.maxPriority = maxPriority
        stderr = Journal.stderrWanted() ? StderrLines() : nil
    }

    /// Waits (a second at most) for the lines on their way to stderr: for the way out, so that
    /// the last entries ("stopping", "cannot start") are not lost with the process.
    public func finish() {
        stderr?.drain(milliseconds: 1000)
    }

    /// Whether an entry of `priority` goes anywhere: a caller with fields to gather first (a
    /// pattern match that copies strings) asks before it gathers them.
    public func takes(_ priority: Priority) -> Bool { priority.rawValue <= maxPriority.rawValue }

    /// Logs one entry. `message` stays constant for a kind of event; the data go in `fields`,
    /// which are only worked out when the entry goes somewhere (an entry per mutation would
    /// otherwise format its fields for nothing whenever journald is not there).
    public func log(
        _ priority: Priority, _ message: String, _ fields: @autoclosure () -> [(String, String)] = []
    ) {
        guard priority.rawValue <= maxPriority.rawValue else { return }
        let sending = journalReachable()
        guard stderr != nil || sending else { return }
        let fields = fields()
        if sending { send(priority, message, fields) }
        if let stderr {
            let line = StderrLines.format(
                microseconds: SystemClock.wallMicroseconds(), priority, message, fields)
            if let failure = stderr.append(line), sending, takes(.warning) {
                // The journal only: stderr is what failed.
                send(
                    .warning, "cannot write to stderr, its lines stop (the journal still has every entry)",
                    [("ERROR", failure)])
            }
        }
    }

    /// Warnings that can repeat per request or per connection, folded (LogFolds.swift).
    private var folds = LogFolds()
    /// Told when a fold's interval begins with none running, to arm the timer that calls
    /// `flushFolds` (the Server's); nil: the summaries wait for the next entry of their kind.
    public var foldsStarted: ((_ deadline: UInt64) -> Void)?

    /// `log`, for a warning that can come in a flood: the first of its kind (`message` and
    /// `fold`) in an interval is logged, the others of that interval counted and logged as one
    /// entry when it ends (LogFolds.swift). Only warnings and worse are folded: an entry of
    /// `info` or `debug` is one a person asked for each of (`--log-level debug`).
    public func logFolded(
        _ priority: Priority, _ message: String, fold: String = "",
        _ fields: @autoclosure () -> [(String, String)] = []
    ) {
        guard takes(priority) else { return }
        guard priority.rawValue <= Priority.warning.rawValue else { return log(priority, message, fields()) }
        let now = SystemClock.monotonicNanoseconds()
        let idle = folds.nextDeadline == nil
        var ended: LogFolds.Summary?
        let logNow = folds.admit(
            LogFolds.Kind(message: message, fold: fold), priority, now: now, fields: fields(), ended: &ended)
        if let ended { log(ended.priority, ended.message, ended.fields) }
        if logNow { log(priority, message, fields()) }
        if idle, let deadline = folds.nextDeadline { foldsStarted?(deadline) }
    }

    /// Logs the counts of the folds whose interval ended; returns when the next one ends.
    public func flushFolds() -> UInt64? {
        for s in folds.flush(now: SystemClock.monotonicNanoseconds()) { log(s.priority, s.message, s.fields) }
        return folds.nextDeadline
    }

    /// Whether an entry would be sent to journald now.
    private func journalReachable() -> Bool {
        let now = SystemClock.monotonicNanoseconds()
        if now &- journalCheckedAt >= 1_000_000_000 {
            journalCheckedAt = now
            journalPresent = access(Journal.journalSocket, F_OK) == 0
        }
        guard journalPresent else { return false }
        if journalRetryAt != 0 {
            guard now >= journalRetryAt else { return false }
            journalRetryAt = 0
        }
        return true
    }

    private func send(_ priority: Priority, _ message: String, _ fields: [(String, String)]) {
        var entries: [String] = [
            "MESSAGE=\(message)", "PRIORITY=\(priority.rawValue)", "SYSLOG_IDENTIFIER=swiped",
        ]
        entries.reserveCapacity(fields.count + 3)
        for (key, value) in fields { entries.append("\(key)=\(value)") }
        // One contiguous buffer for all entries; the iovecs point into it.
        var buffer: [UInt8] = []
        var ranges: [(Int, Int)] = []
        for entry in entries {
            let start = buffer.count
            buffer.append(contentsOf: entry.utf8)
            ranges.append((start, buffer.count - start))
        }
        buffer.withUnsafeMutableBytes { raw in
            var iov = ranges.map { start, length in
                iovec(iov_base: raw.baseAddress! + start, iov_len: length)
            }
            // A journal that is not there (nothing listens at /run/systemd/journal/socket) is
            // not an error for the daemon: stderr still has the line. Try again in a second.
            if sd_journal_sendv(&iov, Int32(iov.count)) < 0 {
                journalRetryAt = SystemClock.monotonicNanoseconds() + 1_000_000_000
            }
        }
    }

    /// Whether stderr should get the lines: it is open, not /dev/null (formatting lines for it
    /// would cost every entry something for nothing), and not the journal.
    static func stderrWanted() -> Bool {
        var st = stat()
        // Closed: fd 2 may later be a client's socket, which must never get a log line.
        guard fstat(2, &st) == 0 else { return false }
        var null = stat()
        if st.st_mode & S_IFMT == S_IFCHR && stat("/dev/null", &null) == 0 && st.st_rdev == null.st_rdev {
            return false
        }
        return !isJournal(st, journalStream: getenv("JOURNAL_STREAM").map { String(cString: $0) })
    }

    /// `$JOURNAL_STREAM` is "device:inode" of the stream systemd connected to stderr (systemd.exec(5)):
    /// stderr is the journal when its own device and inode are those, as systemd's own tools check.
    static func isJournal(_ st: stat, journalStream: String?) -> Bool {
        guard let journalStream else { return false }
        let parts = journalStream.split(separator: ":")
        guard parts.count == 2, let dev = UInt64(parts[0]), let ino = UInt64(parts[1]) else {
            return false
        }
        return UInt64(st.st_dev) == dev && UInt64(st.st_ino) == ino
    }
}

// Structured logging: every entry goes to the journal through sd_journal_sendv (the variadic
// sd_journal_send is not callable from Swift) with a constant MESSAGE and the data in fields
// (CLIENT=, PEER_UID=, OP=, MOVIE=, SEQ=, ERROR=), so `journalctl -o json` and
// `journalctl CLIENT=3` work. The same line goes to stderr for people running `swiped` by hand:
// every entry on a terminal; only notices and worse when stderr is a file or a pipe (a line per
// mutation there would cost more than the mutation's own work); nothing when stderr is itself
// connected to the journal ($JOURNAL_STREAM), which would log every entry twice.
import CSystemd
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
    /// Entries up to this priority are also written to fd 2 (nil: none).
    let echoPriority: Priority?
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
        if Journal.stderrIsJournal() {
            echoPriority = nil
        } else {
            echoPriority = isatty(2) == 1 ? .debug : .notice
        }
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
        let echo = echoPriority.map { priority.rawValue <= $0.rawValue } ?? false
        let sending = journalReachable()
        guard echo || sending else { return }
        let fields = fields()
        if sending { send(priority, message, fields) }
        if echo {
            var line = "swiped[\(priority.name)]: \(message)"
            for (key, value) in fields { line += " \(key)=\(value)" }
            writeStderr(line + "\n")
        }
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

    /// `$JOURNAL_STREAM` is "device:inode" of the stream systemd connected to stderr.
    static func stderrIsJournal() -> Bool {
        guard let value = getenv("JOURNAL_STREAM") else { return false }
        let parts = String(cString: value).split(separator: ":")
        guard parts.count == 2, let dev = UInt64(parts[0]), let ino = UInt64(parts[1]) else {
            return false
        }
        var st = stat()
        guard fstat(2, &st) == 0 else { return false }
        return UInt64(st.st_dev) == dev && UInt64(st.st_ino) == ino
    }
}

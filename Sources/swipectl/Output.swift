// Writing to the terminal through fds 1 and 2 (the C `stdout`/`stderr` globals are not
// concurrency-safe), and the exit statuses swipectl promises (swipectl(1), EXIT STATUS).
#if canImport(Glibc)
    import Glibc
#endif

/// swipectl's exit statuses.
enum ExitStatus: Int32 {
    /// Done.
    case ok = 0
    /// The daemon said no (`ok:false`), or MOVIE names no movie or several.
    case refused = 1
    /// The command line is wrong.
    case usage = 2
    /// The daemon could not be reached, refused the connection, or was lost mid-way.
    case unreachable = 3
    /// `status`: the daemon answered, but not with a status (an older daemon: `unknown-op`).
    case noStatus = 4
}

/// A failure that ends swipectl: the text for stderr and the exit status.
struct Failure: Error {
    var status: ExitStatus
    var message: String
    /// The daemon refused because the movie was removed, and `message` says how to restore it.
    var movieRemoved = false

    init(_ status: ExitStatus, _ message: String) {
        self.status = status
        self.message = message
    }

    static func usage(_ message: String) -> Failure {
        Failure(.usage, "\(message)\nTry 'swipectl --help'.")
    }
}

enum Output {
    /// Writes all of `text` to `fd`, retrying short writes and EINTR. A closed pipe on stdout
    /// ends the process with SIGPIPE, as for any filter.
    static func write(_ text: String, to fd: Int32) {
        var text = text
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let n = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return }
                offset += n
            }
        }
    }

    /// Standard output; one call per line or table, so that nothing sits in a buffer.
    static func out(_ text: String) { write(text, to: 1) }

    /// Standard error, each line prefixed with "swipectl: " unless it starts with spaces.
    static func error(_ text: String) {
        var lines = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lines += line.hasPrefix(" ") || line.hasPrefix("Try ") ? "\(line)\n" : "swipectl: \(line)\n"
        }
        write(lines, to: 2)
    }

    /// Whether standard output is a terminal (legends and hints are for people only).
    static var isTerminal: Bool { isatty(1) == 1 }
}

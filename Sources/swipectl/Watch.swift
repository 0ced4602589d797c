import JSONCodec
import SwipedClient
import Wire

// watch: subscribe, then print each event as it arrives until SIGINT or SIGTERM (exit 0).
// The signals are blocked and read from a signalfd, polled together with the socket, so an
// interrupt never lands in the middle of a line and needs no handler or global state.
#if canImport(Glibc)
    import Glibc
#endif

enum Watch {
    /// Waits between attempts to reach a daemon that went away: doubled each time, up to the last.
    static let backoff: [Double] = [0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 5]

    /// Follows the changes until SIGINT or SIGTERM. When the daemon goes away (it restarts, or
    /// says bye), a notice goes to stderr, and swipectl connects again with backoff and
    /// subscribes from the last seq it printed: no gap, no duplicate. When the daemon is back
    /// with another log (its hello's `log` changed: imported or restored meanwhile), the seqs
    /// printed so far mean nothing there: the watch says so and starts over from the new log's
    /// latest seq. With `once`, losing the daemon ends the watch (status 3). Each failed attempt
    /// to connect again says why, and when the next comes.
    static func run(_ conversation: Conversation, from: UInt64?, once: Bool) throws(Failure) {
        let signals = try StopSignals()
        defer { signals.close() }
        var conversation = conversation
        var last = from
        var resumed = false
        var startOver = false
        var columns: WatchColumns?
        while true {
            do {
                // The ids and seqs of the old log size nothing here.
                if startOver { columns = nil }
                if columns == nil && !conversation.json {
                    // The ids of now, for the ID column's width (the lines are aligned).
                    let list = try conversation.request("list", echo: false)
                    let ids = try MovieCommands.decodeMovies(list, conversation).map(\.id)
                    columns = WatchColumns(latestSeq: list.uint("seq") ?? 0, ids: ids)
                    if Output.isTerminal, let header = columns?.header { Output.out(header + "\n") }
                }
                let seq = try subscribe(conversation, from: startOver ? nil : last)
                if startOver {
                    Output.error(
                        "reconnected to \(conversation.socket.path), which serves another log now (imported or restored); starting over after its seq \(seq)."
                    )
                    last = seq
                    startOver = false
                } else if resumed {
                    Output.error(
                        "reconnected to \(conversation.socket.path); resuming after seq \(last ?? seq).")
                } else {
                    Output.error(
                        "watching \(conversation.socket.path) from seq \(from ?? seq); Ctrl-C stops.")
                }
                last = last ?? seq
                if try follow(conversation, signals, &last, &columns) { return }
            } catch let failure {
                guard failure.status == .unreachable, !once, last != nil else { throw failure }
                Output.error("\(failure.message); connecting again (Ctrl-C stops).")
                guard let next = try reconnect(conversation, signals) else { return }
                // Once set, kept until a subscribe succeeds (a daemon lost again meanwhile).
                startOver = startOver || !next.client.hello.continues(conversation.client.hello)
                conversation = next
                resumed = true
            }
        }
    }

    /// Subscribes from `from` (nil: from now) and returns the daemon's seq.
    private static func subscribe(_ conversation: Conversation, from: UInt64?) throws(Failure) -> UInt64 {
        var arguments: [(String, JSON)] = []
        if let from { arguments.append(("from", .number(JSONNumber(Int64(clamping: from))))) }
        let reply = try conversation.request("subscribe", arguments, echo: false)
        return reply.uint("seq") ?? 0
    }

    /// Prints events as they come, keeping `last` at the seq of the last one printed; true when
    /// a stop signal came.
    private static func follow(
        _ conversation: Conversation, _ signals: StopSignals, _ last: inout UInt64?,
        _ columns: inout WatchColumns?
    ) throws(Failure)
        -> Bool
    {
        let socket = conversation.client.connection.fd
        while true {
            // Whatever has already arrived, then wait for more.
            while let event = try next(conversation) {
                try show(event, conversation, &columns)
                if case .movie(let change, _) = event.event { last = change.seq }
            }
            var fds = [
                pollfd(fd: socket, events: Int16(POLLIN), revents: 0),
                pollfd(fd: signals.fd, events: Int16(POLLIN), revents: 0),
            ]
            if poll(&fds, 2, -1) < 0 {
                if errno == EINTR { continue }
                throw Failure(.unreachable, "poll: \(String(cString: strerror(errno)))")
            }
            if fds[1].revents != 0 { return true }
        }
    }

    /// A new conversation once the daemon answers again; nil when a stop signal came first.
    private static func reconnect(_ conversation: Conversation, _ signals: StopSignals) throws(Failure)
        -> Conversation?
    {
        var attempt = 0
        while true {
            var fd = pollfd(fd: signals.fd, events: Int16(POLLIN), revents: 0)
            let wait = backoff[min(attempt, backoff.count - 1)]
            if poll(&fd, 1, Int32(wait * 1000)) > 0 { return nil }
            attempt += 1
            let next = backoff[min(attempt, backoff.count - 1)]
            let again = "trying again in \(Swipe.format(next)) s (Ctrl-C stops)."
            let connection: Conversation
            do {
                connection = try conversation.reconnected()
            } catch {
                if Conversation.isRevoked(error) {
                    throw Conversation.revoked(conversation.socket, ended: false)
                }
                Output.error("\(Conversation.notAnswering(error, conversation.socket)); \(again)")
                continue
            }
            // Signed in on every connection, as the first: a token refused now (revoked or
            // expired meanwhile) ends the watch; a daemon lost again is tried again.
            do {
                try connection.signIn()
            } catch {
                guard error.status == .unreachable else { throw error }
                Output.error("\(error.message); \(again)")
                continue
            }
            return connection
        }
    }

    /// The next whole event already received; nil when none has (yet).
    private static func next(_ conversation: Conversation) throws(Failure) -> EventLine? {
        do {
            guard let event = try conversation.client.nextEventLine(timeout: 0) else {
                throw Failure(.unreachable, "the daemon at \(conversation.socket.path) closed the connection")
            }
            return event
        } catch let error as ClientError {
            if error.kind == .timeout { return nil }
            throw conversation.lost(error)
        } catch let failure as Failure {
            throw failure
        } catch {
            throw Failure(.unreachable, "\(error)")
        }
    }

    private static func show(_ event: EventLine, _ conversation: Conversation, _ columns: inout WatchColumns?)
        throws(Failure)
    {
        if conversation.json { Output.out(event.line + "\n") }
        switch event.event {
        case .movie(let change, let at):
            if let line = columns?.line(change, at: at) { Output.out(line + "\n") }
        case .bye(let reason):
            if reason == "revoked" { throw Conversation.revoked(conversation.socket, ended: true) }
            throw Failure(
                .unreachable, "the daemon at \(conversation.socket.path) ended the session: \(reason)")
        case .other(name: "role", let o):
            // Rights changed while watching (a role given, a token revoked): said, not fatal; a
            // role that can no longer read ends with bye.
            Output.error(
                "this connection is \(PeopleCommands.who(o.string("user"), o.string("role") ?? "?")) now")
        case .row, .other:
            break
        }
    }
}

/// SIGINT and SIGTERM, blocked for this thread and readable from a signalfd. signalfd(2) is
/// not in Swift's Glibc module (it needs _GNU_SOURCE), so it is looked up with dlsym.
struct StopSignals {
    let fd: Int32

    init() throws(Failure) {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &set, nil)
        typealias SignalFD = @convention(c) (Int32, UnsafePointer<sigset_t>, Int32) -> Int32
        guard let symbol = dlsym(nil, "signalfd") else {
            throw Failure(.unreachable, "signalfd is missing from the C library")
        }
        let fd = unsafeBitCast(symbol, to: SignalFD.self)(-1, &set, O_CLOEXEC)  // SFD_CLOEXEC == O_CLOEXEC
        guard fd >= 0 else { throw Failure(.unreachable, "signalfd: \(String(cString: strerror(errno)))") }
        self.fd = fd
    }

    func close() { _ = Glibc.close(fd) }
}

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
    static func run(_ session: Session, from: UInt64?) throws(Failure) {
        let signals = try StopSignals()
        defer { signals.close() }
        var arguments: [(String, JSON)] = []
        if let from { arguments.append(("from", .number(JSONNumber(Int64(clamping: from))))) }
        let reply = try session.request("subscribe", arguments, echo: false)
        let seq = reply.uint("seq") ?? 0
        Output.error("watching \(session.socket.path) from seq \(from ?? seq); Ctrl-C stops.")

        let socket = session.client.connection.fd
        while true {
            // Whatever has already arrived, then wait for more.
            while let event = try next(session) {
                try show(event, session)
            }
            var fds = [
                pollfd(fd: socket, events: Int16(POLLIN), revents: 0),
                pollfd(fd: signals.fd, events: Int16(POLLIN), revents: 0),
            ]
            if poll(&fds, 2, -1) < 0 {
                if errno == EINTR { continue }
                throw Failure(.unreachable, "poll: \(String(cString: strerror(errno)))")
            }
            if fds[1].revents != 0 { return }
        }
    }

    /// The next whole event already received; nil when none has (yet).
    private static func next(_ session: Session) throws(Failure) -> EventLine? {
        do {
            guard let event = try session.client.nextEventLine(timeout: 0) else {
                throw Failure(.unreachable, "the daemon at \(session.socket.path) closed the connection")
            }
            return event
        } catch let error as ClientError {
            if error.kind == .timeout { return nil }
            throw session.lost(error)
        } catch let failure as Failure {
            throw failure
        } catch {
            throw Failure(.unreachable, "\(error)")
        }
    }

    private static func show(_ event: EventLine, _ session: Session) throws(Failure) {
        if session.json { Output.out(event.line + "\n") }
        switch event.event {
        case .movie(let change, let at):
            if !session.json { Output.out(History.line(change, at: at) + "\n") }
        case .bye(let reason):
            throw Failure(.unreachable, "the daemon at \(session.socket.path) ended the session: \(reason)")
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

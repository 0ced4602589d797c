// One connection to the web listener until it is answered or becomes a WebSocket, as a state
// machine: the daemon does the I/O (Sources/Daemon/WebServer.swift) and this decides, as
// ScrapeConnection does for the metrics listener. One request per connection: read a head of
// at most `headBytes` within `headTimeout`, then either answer it (a file, an error) and close
// once the answer is written (within `writeTimeout`), or hand the connection over to the
// WebSocket it asked for (`upgraded`). A connection that sends its head slowly (a slowloris)
// is answered 408 at its deadline, or earlier when a new connection needs its place
// (`Stalest`): at most `maxConnections` wait at once, so that a flood of slow heads costs at
// most that many descriptors and timers, and a browser arriving among them still gets in.
//
// The daemon's side:
//   accept      → at `maxConnections`, evict the `Stalest` head (408); with none to evict,
//                 write the 503 of `WebLimits.busy` once and close; else `WebConnection(now:)`,
//                 a timer at `deadline`, wait for readable.
//   readable    → `received(bytes, now:)` (no bytes: the peer closed).
//   .serve(r)   → route `r` (Sources/WebSocket/WebRoute.swift): `respond(bytes)` for a file
//                 or a refusal (`refusal` says why, for the journal and the metrics), or, for
//                 a WebSocket, `upgraded()` and the connection goes on as a WebSocket with the
//                 bytes that followed its head (`rest`).
//   .write      → write `pending`, then `sent(n)`; a short write: wait for writable.
//   timer       → `timerFired(now:)`; re-arm at `deadline` unless `.close`.
//   .close      → close the fd and forget the connection.
public struct WebLimits: Equatable, Sendable {
    /// The longest request head, its final empty line included (431 past it).
    public var headBytes = 8192
    /// To send the whole head, from accept (then 408): a browser sends it in one piece.
    public var headTimeout: UInt64 = 5_000_000_000
    /// To take the whole answer, from when it is ready (then the connection is closed).
    public var writeTimeout: UInt64 = 10_000_000_000
    /// Connections not yet answered nor upgraded, at most (past it, the stalest head is evicted
    /// once it has waited `evictAfter`; else accepting waits for a place).
    public var maxConnections = 256
    /// How long a head must have been coming in before a new connection may evict it: a slow
    /// head (a slowloris) is older than this, while a connect storm's heads are fresh, and are
    /// answered within milliseconds if the newcomers wait in the kernel's backlog instead
    /// (issue 44: 10,000 at once, all served). 2 s, not 1: 100,000 browsers reconnecting to six
    /// daemons on two busy cores had 687 heads take more than a second to come. Nanoseconds.
    public var evictAfter: UInt64 = 2_000_000_000
    /// The longest POST body (the page's sign-in sends a token: 36 bytes); 413 past it. The body
    /// must come within `headTimeout` of the accept, as the head.
    public var bodyBytes = 4096

    public init() {}

    /// What a connection gets, once and without waiting, when `maxConnections` are all being
    /// answered and none can be evicted.
    public static let busy = Response.error(.serviceUnavailable)
}

public struct WebConnection: HeadWaiting, Sendable {
    public enum Action: Equatable, Sendable {
        /// Wait for more bytes (or the deadline).
        case read
        /// A request to route: call `respond`, `refuse` or `upgraded`.
        case serve(HTTPRequest)
        /// Write `pending`, then call `sent`.
        case write
        /// Close the connection.
        case close
    }

    enum State: Equatable {
        case reading
        /// A POST's head was read; its body (`needed` bytes in all) is coming.
        case readingBody(HTTPRequest, needed: Int)
        /// A request was handed out; its answer is awaited.
        case serving
        case writing(offset: Int)
        /// Handed over to a WebSocket: nothing more is decided here.
        case upgraded
        case closed
    }

    public let limits: WebLimits
    var state = State.reading
    var reader: HeadReader
    var buffer: [UInt8] = []
    /// Monotonic nanoseconds: when the timer should fire next.
    public private(set) var deadline: UInt64
    /// Why the request was refused by this machine (a bad head, its deadline, an eviction), if
    /// it was: its status and reason. An answer given with `respond` is not a refusal here.
    public private(set) var refusal: (status: Status, reason: String)?
    /// Whether it was evicted for a newer connection (its refusal is then a 408).
    public private(set) var evicted = false
    /// The bytes that came after the head in the read that ended it (a client may send its first
    /// frames without waiting for the 101): the WebSocket's first input.
    public private(set) var rest: [UInt8] = []
    public let since: UInt64
    public let serial: UInt64

    public init(now: UInt64, serial: UInt64 = 0, limits: WebLimits = WebLimits()) {
        self.limits = limits
        since = now
        self.serial = serial
        deadline = now &+ limits.headTimeout
        reader = HeadReader(maxBytes: limits.headBytes)
    }

    public var isReadingHead: Bool {
        switch state {
        case .reading, .readingBody: true
        case .serving, .writing, .upgraded, .closed: false
        }
    }

    /// The bytes still to write (`.write`).
    public var pending: ArraySlice<UInt8> {
        guard case .writing(let offset) = state else { preconditionFailure("nothing to write in \(state)") }
        return buffer[offset...]
    }

    /// Bytes read from the peer; none: the peer closed its side.
    public mutating func received(_ bytes: some Collection<UInt8>, now: UInt64) -> Action {
        switch state {
        case .reading:
            if bytes.isEmpty {
                state = .closed
                return .close
            }
            switch reader.append(bytes) {
            case .more:
                return .read
            case .complete(let restStart):
                rest = Array(bytes.dropFirst(restStart))
                switch RequestHead.parseRequest(reader.bytes, allowPost: true) {
                case .success(let request) where request.post:
                    guard Self.postPaths.contains(where: { request.path.elementsEqual($0.utf8) }) else {
                        return refuse(.methodNotAllowed, "POST to a path that takes none", now: now)
                    }
                    return startBody(request, now: now)
                case .success(let request):
                    state = .serving
                    return .serve(request)
                case .failure(let r):
                    return refuse(r.status, r.reason, head: r.head, now: now)
                }
            case .tooLarge:
                return refuse(.headerFieldsTooLarge, "request head over \(limits.headBytes) bytes", now: now)
            }
        case .readingBody(var request, let needed):
            if bytes.isEmpty {
                state = .closed
                return .close
            }
            request.body += bytes.prefix(needed - request.body.count)
            return bodyProgress(request, needed: needed)
        case .serving, .upgraded:
            preconditionFailure("bytes received in \(state)")
        case .writing:
            // One request per connection: nothing after the head is read once the answer is
            // being written (this is for a read that was under way).
            return .write
        case .closed:
            return .close
        }
    }

    /// The paths a POST may go to, the page's sign-in and sign-out (the daemon's
    /// `Server.signInPost`); any other is 405 before a byte of its body is read.
    public static let postPaths = ["/login", "/logout"]

    /// A POST's head is read: its `Content-Length` says how much body follows (at most
    /// `bodyBytes`; no chunked bodies: a sign-in's is a few bytes, whose length is known).
    private mutating func startBody(_ request: HTTPRequest, now: UInt64) -> Action {
        if !request.values("transfer-encoding").isEmpty {
            return refuse(
                .lengthRequired, "a POST with Transfer-Encoding: only Content-Length bodies", now: now)
        }
        let lengths = request.values("content-length")
        guard lengths.count == 1, let text = lengths.first, !text.isEmpty, text.utf8.count <= 9,
            text.utf8.allSatisfy(RequestHead.isDigit), let needed = Int(text)
        else {
            return refuse(
                lengths.isEmpty ? .lengthRequired : .badRequest, "a POST needs one Content-Length", now: now)
        }
        guard needed <= limits.bodyBytes else {
            return refuse(
                .contentTooLarge, "a POST body of \(needed) bytes, over \(limits.bodyBytes)", now: now)
        }
        var request = request
        request.body = Array(rest.prefix(needed))
        rest = []
        return bodyProgress(request, needed: needed)
    }

    private mutating func bodyProgress(_ request: HTTPRequest, needed: Int) -> Action {
        guard request.body.count == needed else {
            state = .readingBody(request, needed: needed)
            return .read
        }
        state = .serving
        return .serve(request)
    }

    /// The answer to the request `.serve` handed out (a file, a 304, a 404).
    public mutating func respond(_ response: [UInt8], now: UInt64) -> Action {
        precondition(state == .serving, "respond in \(state)")
        buffer = response
        state = .writing(offset: 0)
        deadline = now &+ limits.writeTimeout
        return .write
    }

    /// The request is refused: `status` with `extra` header lines, and why (`refusal`).
    public mutating func refuse(
        _ status: Status, _ reason: String, head: Bool = false, extra: [String] = [], now: UInt64
    ) -> Action {
        if isReadingHead { state = .serving }
        refusal = (status, reason)
        return respond(Response.error(status, head: head, extra: extra), now: now)
    }

    /// The request became a WebSocket: the daemon carries on with the socket and `rest`.
    public mutating func upgraded() {
        precondition(state == .serving, "upgraded in \(state)")
        state = .upgraded
    }

    /// Evicted for a newer connection (`Stalest`): answered 408, as at its deadline.
    public mutating func evict(now: UInt64) -> Action {
        precondition(isReadingHead, "evicted while not reading its head: \(state)")
        evicted = true
        return refuse(
            .requestTimeout, "evicted for a newer connection while its head was coming in", now: now)
    }

    /// `count` bytes of `pending` were written.
    public mutating func sent(_ count: Int) -> Action {
        guard case .writing(let offset) = state else { preconditionFailure("sent \(count) in \(state)") }
        precondition(
            count >= 0 && offset + count <= buffer.count, "sent \(count) of \(buffer.count - offset)")
        if offset + count == buffer.count {
            state = .closed
            return .close
        }
        state = .writing(offset: offset + count)
        return .write
    }

    /// The timer armed at `deadline` fired.
    public mutating func timerFired(now: UInt64) -> Action {
        switch state {
        case .reading, .readingBody:
            guard now >= deadline else { return .read }
            return refuse(.requestTimeout, "request head or body not sent within the time allowed", now: now)
        case .writing:
            guard now >= deadline else { return .write }
            state = .closed
            return .close
        case .serving, .upgraded:
            preconditionFailure("the timer fired in \(state)")
        case .closed:
            return .close
        }
    }
}

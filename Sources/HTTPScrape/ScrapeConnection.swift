// One connection to the metrics listener, as a state machine: the daemon does the I/O (reads,
// writes, a timer, the close) and this decides. One request per connection: read a head of at
// most `headBytes` within `headTimeout`, answer, close. A scraper that is slow or stuck costs
// the daemon one descriptor and one timer until its deadline, never a wait.
//
// The daemon's side (MetricsServer.swift):
//   accept          → `ScrapeLimits.admit(active:)`: past `maxConnections`, the `stalest` one
//                     still sending its head is `evict`ed (408) for it; with none, write the
//                     503 `admit` returns (once, non-blocking) and close; else
//                     `ScrapeConnection(now:)`, arm a timer at `deadline`, wait for readable.
//   readable        → read, `received(bytes, now:)`; read 0 bytes (EOF) → `received([], now:)`.
//                     Once the head is in (any action but `.read`), watch for writable only.
//   .serve(request) → build the body (MetricsSnapshot → Prometheus.text, or the store's health),
//                     `respond(Response…, now:)`.
//   .write          → write `pending`, then `sent(n)`; a short write: wait for writable.
//   timer           → `timerFired(now:)`; re-arm at `deadline` unless `.close`.
//   .close          → close the fd and forget the connection.
public struct ScrapeLimits: Equatable, Sendable {
    /// The longest request head, its final empty line included (431 past it).
    public var headBytes = 8192
    /// To send the whole head, from accept (then 408).
    public var headTimeout: UInt64 = 5_000_000_000
    /// To take the whole response, from when it is ready (then the connection is closed).
    public var writeTimeout: UInt64 = 5_000_000_000
    /// Connections served at once; more get 503.
    public var maxConnections = 4

    public init() {}

    public enum Admission: Equatable, Sendable {
        case accept
        /// Write these bytes once, without waiting, and close.
        case refuse([UInt8])
    }

    /// Whether a connection accepted while `active` others are being served may be served.
    public func admit(active: Int) -> Admission {
        active < maxConnections ? .accept : .refuse(Response.error(.serviceUnavailable))
    }
}

public struct ScrapeConnection: HeadWaiting, Sendable {
    public enum Action: Equatable, Sendable {
        /// Wait for more bytes (or the deadline).
        case read
        /// A request to answer: call `respond`.
        case serve(ScrapeRequest)
        /// Write `pending`, then call `sent`.
        case write
        /// Close the connection.
        case close
    }

    enum State: Equatable {
        /// Reading the head (into `reader`).
        case reading
        /// A request was handed out; its response is awaited.
        case serving
        case writing(offset: Int)
        case closed
    }

    public let limits: ScrapeLimits
    var state = State.reading
    var reader: HeadReader
    /// The response being written.
    var buffer: [UInt8] = []
    /// Monotonic nanoseconds: when the timer should fire next.
    public private(set) var deadline: UInt64
    /// Why the connection was refused, if it was (for the journal, at debug).
    public private(set) var refusal: (Status, String)?

    /// Monotonic nanoseconds: when it was accepted.
    public let since: UInt64
    /// Its place in the order of accepts: those of one wake-up share `since`.
    public let serial: UInt64

    public init(now: UInt64, serial: UInt64 = 0, limits: ScrapeLimits = ScrapeLimits()) {
        self.limits = limits
        since = now
        self.serial = serial
        deadline = now &+ limits.headTimeout
        reader = HeadReader(maxBytes: limits.headBytes)
    }

    /// Whether its head is still coming in: then it may be evicted for a new connection.
    public var isReadingHead: Bool {
        if case .reading = state { return true }
        return false
    }

    /// Which connection gives its place to a new one when all `maxConnections` are taken: the
    /// one that has been sending its head longest (index into `connections`), or nil when every
    /// one is being answered (the new one then gets 503). A scraper sends its whole head at
    /// once, so a head still coming in after the others arrived is a slow or stuck peer: four
    /// such sockets (one byte every 0.5 s) once made 22 of 24 Prometheus scrapes a 503. A
    /// flood of new connections evicts its own, stalest first; a scrape among them is answered
    /// in the time its head takes to arrive.
    public static func stalest(_ connections: some Sequence<ScrapeConnection>) -> Int? {
        Stalest.index(connections)
    }

    /// Evicted for a newer connection (`stalest`): answered 408, as at its deadline.
    public mutating func evict(now: UInt64) -> Action {
        precondition(isReadingHead, "evicted while not reading its head: \(state)")
        return refuse(
            .requestTimeout, "evicted for a newer connection while its head was coming in", now: now)
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
            case .complete:
                // One request per connection: what follows the head is never read.
                return decide(RequestHead.parse(reader.bytes), now: now)
            case .tooLarge:
                return refuse(.headerFieldsTooLarge, "request head over \(limits.headBytes) bytes", now: now)
            }
        case .serving:
            preconditionFailure("bytes received before the response to the request: \(state)")
        case .writing:
            // One request per connection: what follows the head is not read (the daemon stops
            // watching for readable once it writes; this is for a read that was under way).
            return .write
        case .closed:
            return .close
        }
    }

    /// The response to the request `.serve` handed out.
    public mutating func respond(_ response: [UInt8], now: UInt64) -> Action {
        precondition(state == .serving, "respond in \(state)")
        buffer = response
        state = .writing(offset: 0)
        deadline = now &+ limits.writeTimeout
        return .write
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
        guard now >= deadline else {
            switch state {
            case .reading: return .read
            case .serving: preconditionFailure("the timer fired while serving: \(state)")
            case .writing: return .write
            case .closed: return .close
            }
        }
        switch state {
        case .reading:
            return refuse(.requestTimeout, "request head not sent within the time allowed", now: now)
        case .serving: preconditionFailure("the timer fired while serving: \(state)")
        case .writing, .closed:
            state = .closed
            return .close
        }
    }

    private mutating func decide(_ outcome: HeadOutcome, now: UInt64) -> Action {
        switch outcome {
        case .request(let request):
            state = .serving
            return .serve(request)
        case .refuse(let status, let reason, let head):
            return refuse(status, reason, head: head, now: now)
        }
    }

    private mutating func refuse(_ status: Status, _ reason: String, head: Bool = false, now: UInt64)
        -> Action
    {
        refusal = (status, reason)
        state = .serving
        return respond(Response.error(status, head: head), now: now)
    }
}

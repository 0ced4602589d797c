// A typed Swift client of protocol v1 (protocol.md), for front ends written in Swift; swipectl,
// the benchmarks and the integration tests use it. Blocking and single-threaded: one request at
// a time, with events that arrive meanwhile kept for `nextEvent`.
import JSONCodec
import Movies
import SwipeEngine
import Wire

public struct Hello: Equatable, Sendable {
    public var protocolVersion: Int
    public var server: String
    public var client: UInt64
    public var seq: UInt64
    public var writer: Bool
    /// The person this connection acts for (nil: anonymous, or a daemon older than people).
    public var user: String?
    /// What it may do: none, reader, writer, admin (nil from a daemon older than roles: then
    /// `writer` says whether it may change the list).
    public var role: String?
    /// The log's id (nil from a daemon older than ids): another id than before means another
    /// log (imported, or restored from a backup), whose seqs are not the ones a client kept.
    public var log: String?

    /// Whether a client that was greeted with `previous` may go on from the seqs it kept (catch
    /// up with `subscribe` from its last one): false when the daemon now serves another log,
    /// and the client must start over (list again, subscribe from now). A hello without an id
    /// tells nothing either way: the client goes on, as it did before ids.
    public func continues(_ previous: Hello) -> Bool {
        guard let log, let before = previous.log else { return true }
        return log == before
    }
}

/// A message the daemon sent on its own.
public enum ServerEvent: Equatable, Sendable {
    case movie(CommittedEvent, at: String)
    /// `cancelled`: why the server closed the row, when it says (`timeout`: its confirmation got
    /// no tap in time).
    case row(RowRender, removed: Bool, cancelled: String? = nil)
    case bye(reason: String)
    case other(name: String, JSONObject)
}

/// A reply as the daemon sent it: the parsed object and the line itself (without its newline),
/// for front ends that show or forward the daemon's own bytes (`swipectl --json`).
public struct Reply: Equatable, Sendable {
    public var object: JSONObject
    public var line: String

    /// Whether the daemon answered `ok:true`.
    public var isOK: Bool { object.bool("ok") == true }

    /// For an `ok:false` reply, the daemon's error (kind `.server`, the protocol's code); else nil.
    public var error: ClientError? {
        if isOK { return nil }
        let error = object.object("error")
        return ClientError(
            .server, code: error?.string("code") ?? "internal",
            error?.string("message") ?? "the daemon said no")
    }
}

/// An event as the daemon sent it: decoded, and the line itself (without its newline).
public struct EventLine: Equatable, Sendable {
    public var event: ServerEvent
    public var line: String
}

public final class SwipedClient {
    public let connection: LineConnection
    public private(set) var hello: Hello
    /// The hello as the daemon sent it (without its newline).
    public let helloLine: String
    /// `auth`'s reply as the daemon sent it, once `signIn` succeeded: who the connection is
    /// since (`swipectl --json whoami`).
    public private(set) var signInLine: String?
    /// Seconds to wait for a reply.
    public var timeout: Double
    /// Whether requests carry an `id` (1, 2, 3…) that each reply must echo. Replies come in
    /// request order anyway; a front end that shows the daemon's reply lines (`swipectl --json`)
    /// turns ids off so that its own numbering does not appear in them.
    public var sendsIDs = true
    /// Events received while waiting for replies, oldest first.
    public var pendingEvents: [ServerEvent] { pending.map(\.event) }
    private var pending: [EventLine] = []
    private var nextID = 1

    public init(socketPath: String, timeout: Double = 10) throws(ClientError) {
        connection = try LineConnection(path: socketPath)
        self.timeout = timeout
        guard let line = try connection.readLine(timeout: timeout) else {
            throw ClientError(
                .closed, "the daemon at \(socketPath) closed the connection before saying hello")
        }
        hello = try SwipedClient.hello(try SwipedClient.object(line), line: line, socketPath: socketPath)
        helloLine = String(decoding: line, as: UTF8.self)
    }

    /// The first line from the daemon: its hello, or a `bye` (refused, thrown as `.closed` with
    /// the reason as code).
    public static func hello(_ object: JSONObject, line: [UInt8], socketPath: String) throws(ClientError)
        -> Hello
    {
        if object.string("event") == "bye" {
            throw ClientError(
                .closed, code: object.string("reason"),
                "the daemon at \(socketPath) refused the connection: \(object.string("reason") ?? "?")")
        }
        guard object.string("event") == "hello", let client = object.uint("client"),
            let seq = object.uint("seq")
        else {
            throw ClientError(
                .protocol, "expected hello from \(socketPath), got \(String(decoding: line, as: UTF8.self))")
        }
        return Hello(
            protocolVersion: Int(object.uint("protocol") ?? 0), server: object.string("server") ?? "?",
            client: client, seq: seq, writer: object.bool("writer") ?? true, user: object.string("user"),
            role: object.string("role"), log: object.string("log"))
    }

    /// Signs this connection in with `token` (the `auth` op): who it acts for now, and its
    /// role. A refused token throws `.server` (`forbidden`, saying why).
    @discardableResult
    public func signIn(token: String) throws(ClientError) -> (user: String, role: String) {
        let answer = try exchange("auth", [("token", .string(token))])
        if let error = answer.error { throw error }
        let reply = answer.object
        signInLine = answer.line
        let user = reply.string("user") ?? "?"
        let role = reply.string("role") ?? "?"
        hello.user = user
        hello.role = role
        hello.writer = role == "writer" || role == "admin"
        return (user, role)
    }

    // MARK: - Raw

    /// Sends one request object (its `id` is set here) and returns the `ok:true` reply; an
    /// `ok:false` reply throws `.server` with the protocol's code and message.
    @discardableResult
    public func call(_ op: String, _ arguments: [(String, JSON)] = []) throws(ClientError) -> JSONObject {
        let reply = try exchange(op, arguments)
        if let error = reply.error { throw error }
        return reply.object
    }

    /// Like `call`, but returns the reply whatever its `ok` (with the line as sent); throws only
    /// when no well-formed reply came (connection closed, timeout, garbled line).
    public func exchange(_ op: String, _ arguments: [(String, JSON)] = []) throws(ClientError) -> Reply {
        let id = sendsIDs ? nextID : nil
        if sendsIDs { nextID += 1 }
        var line = JSONWriter()
        line.object { w in
            if let id { w.field("id", id) }
            w.field("op", op)
            for (key, value) in arguments { w.field(key, value) }
        }
        line.newline()
        try connection.write(line.bytes)
        return try reply(id: id)
    }

    /// Sends a raw line and returns the raw reply line (events are kept aside).
    public func callRaw(_ line: String) throws(ClientError) -> String {
        try connection.writeLine(line)
        while true {
            guard let reply = try connection.readLine(timeout: timeout) else {
                throw ClientError(.closed, "the daemon closed the connection")
            }
            // A line that is not a JSON object is no event: it is the reply, returned as it
            // came for the caller to judge (swipectl call prints it and says what is wrong).
            if let object = try? SwipedClient.object(reply), object["event"] != nil {
                try keep(event: object, reply)
                continue
            }
            return String(decoding: reply, as: UTF8.self)
        }
    }

    /// The next reply, which must echo `id` (or carry none when `id` is nil).
    private func reply(id: Int?) throws(ClientError) -> Reply {
        while true {
            guard let line = try connection.readLine(timeout: timeout) else {
                throw ClientError(.closed, "the daemon closed the connection")
            }
            let object = try SwipedClient.object(line)
            if object["event"] != nil {
                try keep(event: object, line)
                continue
            }
            guard id.map({ object.uint("id") == UInt64($0) }) ?? (object["id"] == nil) else {
                throw ClientError(.protocol, "reply out of order: \(String(decoding: line, as: UTF8.self))")
            }
            return Reply(object: object, line: String(decoding: line, as: UTF8.self))
        }
    }

    private func keep(event object: JSONObject, _ line: [UInt8]) throws(ClientError) {
        let event = try SwipedClient.event(object)
        pending.append(EventLine(event: event, line: String(decoding: line, as: UTF8.self)))
        if case .bye(let reason) = event {
            throw ClientError(.closed, code: reason, "the daemon said bye: \(reason)")
        }
    }

    /// The next event: one kept earlier, else the next line from the daemon. nil at the end of
    /// the stream. `timeout` nil waits for ever; 0 returns only what has already arrived (and
    /// throws `.timeout` when no whole line has).
    public func nextEvent(timeout: Double?) throws(ClientError) -> ServerEvent? {
        try nextEventLine(timeout: timeout)?.event
    }

    /// `nextEvent`, with the line as the daemon sent it.
    public func nextEventLine(timeout: Double?) throws(ClientError) -> EventLine? {
        if !pending.isEmpty { return pending.removeFirst() }
        guard let line = try connection.readLine(timeout: timeout) else { return nil }
        let object = try SwipedClient.object(line)
        guard object["event"] != nil else {
            throw ClientError(.protocol, "unexpected reply: \(String(decoding: line, as: UTF8.self))")
        }
        return EventLine(event: try SwipedClient.event(object), line: String(decoding: line, as: UTF8.self))
    }

    // MARK: - Typed ops

    public func ping() throws(ClientError) { try call("ping") }

    public func list() throws(ClientError) -> (seq: UInt64, movies: [Movie]) {
        let reply = try call("list")
        guard let seq = reply.uint("seq"), case .array(let items)? = reply["movies"] else {
            throw ClientError(.protocol, "list reply without seq and movies")
        }
        return (seq, try items.map { (item) throws(ClientError) -> Movie in try SwipedClient.movie(item) })
    }

    public func add(title: String, image: String? = nil, key: String? = nil) throws(ClientError) -> (
        seq: UInt64, movie: Movie
    ) {
        var args: [(String, JSON)] = [("title", .string(title))]
        if let image { args.append(("image", .string(image))) }
        if let key { args.append(("key", .string(key))) }
        return try mutation(try call("add", args))
    }

    public func toggleWatched(_ movie: String, expect: UInt64? = nil, key: String? = nil) throws(ClientError)
        -> (seq: UInt64, movie: Movie)
    {
        try mutation(try call("toggle-watched", mutationArgs(movie, expect, key)))
    }

    public func toggleWatchedWithFriends(_ movie: String, expect: UInt64? = nil, key: String? = nil)
        throws(ClientError) -> (seq: UInt64, movie: Movie)
    {
        try mutation(try call("toggle-watched-with-friends", mutationArgs(movie, expect, key)))
    }

    public func remove(_ movie: String, expect: UInt64? = nil, key: String? = nil) throws(ClientError) -> (
        seq: UInt64, movie: Movie
    ) {
        try mutation(try call("remove", mutationArgs(movie, expect, key)))
    }

    /// Brings a removed movie back; `expect`: the seq of its removal.
    public func restore(_ movie: String, expect: UInt64? = nil, key: String? = nil) throws(ClientError) -> (
        seq: UInt64, movie: Movie
    ) {
        try mutation(try call("restore", mutationArgs(movie, expect, key)))
    }

    /// Undoes this connection's latest change not yet undone; `undoes` is that change's seq,
    /// `undoesBy` who made it (nil when the daemon does not say: an event without `by`).
    public func undo(key: String? = nil) throws(ClientError) -> (
        seq: UInt64, movie: Movie, undoes: UInt64, undoesBy: String?
    ) {
        let reply = try call("undo", key.map { [("key", JSON.string($0))] } ?? [])
        let (seq, movie) = try mutation(reply)
        guard let undoes = reply.uint("undoes") else {
            throw ClientError(.protocol, "undo reply without undoes")
        }
        return (seq, movie, undoes, reply.string("undoesBy"))
    }

    @discardableResult
    public func subscribe(from: UInt64? = nil) throws(ClientError) -> UInt64 {
        let reply = try call("subscribe", from.map { [("from", JSON.integer($0))] } ?? [])
        guard let seq = reply.uint("seq") else { throw ClientError(.protocol, "subscribe reply without seq") }
        return seq
    }

    public func unsubscribe() throws(ClientError) { try call("unsubscribe") }

    /// The events after `from`, at most `limit`; with `by`, only that person's (issue 46).
    public func history(from: UInt64 = 0, limit: Int = 100, by: String? = nil) throws(ClientError) -> (
        seq: UInt64, events: [CommittedEvent]
    ) {
        var arguments: [(String, JSON)] = [("from", .integer(from)), ("limit", .integer(UInt64(limit)))]
        if let by { arguments.append(("by", .string(by))) }
        let reply = try call("history", arguments)
        guard let seq = reply.uint("seq"), case .array(let items)? = reply["events"] else {
            throw ClientError(.protocol, "history reply without seq and events")
        }
        var events: [CommittedEvent] = []
        for item in items {
            guard case .object(let object) = item else {
                throw ClientError(.protocol, "history event is not an object")
            }
            events.append(try SwipedClient.committedEvent(object).0)
        }
        return (seq, events)
    }

    @discardableResult
    public func drag(_ movie: String, dx: Double) throws(ClientError) -> RowRender {
        try SwipedClient.row(
            try call("drag", [("movie", .string(movie)), ("dx", .double(dx))]).object("row"))
    }

    /// The row after the release, and the `fired` object when an action fired.
    @discardableResult
    public func release(_ movie: String, dx: Double? = nil, vx: Double? = nil) throws(ClientError) -> (
        row: RowRender, fired: JSONObject?
    ) {
        var args: [(String, JSON)] = [("movie", .string(movie))]
        if let dx { args.append(("dx", .double(dx))) }
        if let vx { args.append(("vx", .double(vx))) }
        let reply = try call("release", args)
        return (try SwipedClient.row(reply.object("row")), reply.object("fired"))
    }

    @discardableResult
    public func tap(_ movie: String, action: String) throws(ClientError) -> (
        row: RowRender, fired: JSONObject?
    ) {
        let reply = try call("tap", [("movie", .string(movie)), ("action", .string(action))])
        return (try SwipedClient.row(reply.object("row")), reply.object("fired"))
    }

    /// Opens the row on `edge` (the `open` op); the row after it.
    @discardableResult
    public func open(_ movie: String, edge: Edge) throws(ClientError) -> RowRender {
        try SwipedClient.row(
            try call("open", [("movie", .string(movie)), ("edge", .string(edge.rawValue))]).object("row"))
    }

    /// Fires `action` as a tap on its button would (the `perform` op): the row after it, and the
    /// `fired` object when it fired, or the action now waiting for its confirmation (`pending`).
    @discardableResult
    public func perform(_ movie: String, action: String) throws(ClientError) -> (
        row: RowRender, fired: JSONObject?, pending: String?
    ) {
        let reply = try call("perform", [("movie", .string(movie)), ("action", .string(action))])
        return (
            try SwipedClient.row(reply.object("row")), reply.object("fired"),
            reply.object("pending")?.string("action")
        )
    }

    public func rows() throws(ClientError) -> [RowRender] {
        guard case .array(let items)? = try call("rows")["rows"] else {
            throw ClientError(.protocol, "rows reply without rows")
        }
        return try items.map { (item) throws(ClientError) -> RowRender in
            guard case .object(let object) = item else {
                throw ClientError(.protocol, "row is not an object")
            }
            return try SwipedClient.row(object)
        }
    }

    private func mutationArgs(_ movie: String, _ expect: UInt64?, _ key: String?) -> [(String, JSON)] {
        var args: [(String, JSON)] = [("movie", .string(movie))]
        if let expect { args.append(("expect", .integer(expect))) }
        if let key { args.append(("key", .string(key))) }
        return args
    }

    private func mutation(_ reply: JSONObject) throws(ClientError) -> (seq: UInt64, movie: Movie) {
        guard let seq = reply.uint("seq"), let movie = reply["movie"] else {
            throw ClientError(.protocol, "mutation reply without seq and movie")
        }
        return (seq, try SwipedClient.movie(movie))
    }
}

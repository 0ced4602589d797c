// What the manager keeps per client: the socket and its timers around the connection's pure
// state machine (Sources/Session). Everything the connection decides is in `session`. A client
// comes over the Unix socket (its bytes are the Session's lines) or over a WebSocket (`web`: its
// text messages are the Session's lines, framed by WebTransport; Server+Web.swift).
import People
import Session
import WebSocket

#if canImport(Glibc)
    import Glibc
#endif

/// Who a connection is by its door alone, before any token.
enum BaseIdentity: Equatable {
    /// A Unix-socket peer: its user's name; its role comes from its groups (`AccessPolicy`).
    case unix(name: String, uid: UInt32)
    /// A WebSocket whose trusted proxy named its user.
    case proxy(name: String)
    /// A WebSocket nobody named.
    case anonymous
}

/// Who is on the other end, from SO_PEERCRED at connect time.
struct Peer {
    var pid: Int32 = 0
    var uid: UInt32 = UInt32.max
    var gid: UInt32 = UInt32.max
    var groups: [UInt32] = []
}

final class Connection {
    let fd: Int32
    let peer: Peer
    let session: Session
    /// Who the connection is without a token: a Unix peer's user, a trusted proxy's user, or
    /// nobody (an anonymous WebSocket). What it falls back to when its token goes, and what
    /// a re-judgement starts from (Server+People.swift).
    let base: BaseIdentity
    /// Where it comes from, for the sign-in throttle and the denials: a browser's address (as
    /// its trusted proxy forwarded it), `pid N` for a Unix peer.
    let address: String
    /// The epoll events this connection is watched for in the server's ConnectionPoller.
    var watched: UInt32 = 0
    /// The sd-event timers the session asked for, armed.
    var timers: [SessionTimer: EventLoop.Timer] = [:]
    /// nil: a Unix-socket client, whose socket carries the Session's bytes as they are. Else the
    /// WebSocket around them.
    let web: WebTransport?
    /// Set only by the Daemon's own tests: the connection has no socket (`fd` is -1) and what
    /// the manager writes to it goes to memory, as swift-nio's EmbeddedChannel does, so that a
    /// test drives the manager's round, its actions and `afterWork` as they run for a socket.
    let embedded: EmbeddedPeer?

    init(
        fd: Int32, peer: Peer, session: Session, base: BaseIdentity, address: String,
        web: WebTransport? = nil,
        embedded: EmbeddedPeer? = nil
    ) {
        self.fd = fd
        self.peer = peer
        self.session = session
        self.base = base
        self.address = address
        self.web = web
        self.embedded = embedded
    }

    var client: UInt64 { session.config.client }

    /// Writes what the socket takes of `bytes` now (0: it is full); the error that stopped it.
    @inline(__always)
    func send(_ bytes: UnsafeRawBufferPointer) throws(SystemError) -> Int {
        if let embedded { return embedded.take(bytes) }
        return try writeNonBlocking(fd, bytes)
    }
}

/// The far end of a connection without a socket (`Connection.embedded`): keeps what is written
/// to it, taking at most `room` bytes more (a full socket buffer, when 0).
final class EmbeddedPeer {
    private(set) var received: [UInt8] = []
    var room = Int.max

    func take(_ bytes: UnsafeRawBufferPointer) -> Int {
        let n = min(room, bytes.count)
        received += bytes[..<n]
        room -= n
        return n
    }

    /// The lines written since the last call, without their `\n`.
    func lines() -> [String] {
        defer { received.removeAll() }
        return String(decoding: received, as: UTF8.self).split(separator: "\n").map(String.init)
    }
}

/// A WebSocket's side of a Connection: the frames around the Session's lines, the keepalive,
/// where it came from (for the journal).
final class WebTransport {
    let link: FrameLink
    /// The browser's address and port.
    let remote: String
    /// The page's origin, as its handshake said (nil: none, not a browser).
    let origin: String?
    /// The one timer of the WebSocket: its keepalive (`--web-ping`), then, once our close frame
    /// is sent, the wait for the peer's (`closeGrace`).
    var timer: EventLoop.Timer?
    /// Loop time (µs) of the last read that brought bytes.
    var heard: UInt64
    /// Loop time (µs) when our ping went out, while it waits for an answer.
    var pingSent: UInt64?
    /// Loop time (µs) when our close frame was written: the peer has `closeGrace` to answer it.
    var closingSince: UInt64?
    /// Whether our close frame's code is counted (`status`, `/metrics`).
    var closeCounted = false

    /// How long a peer has to answer our close frame before its socket is closed regardless.
    static let closeGrace: UInt64 = 1_000_000

    init(link: FrameLink, remote: String, origin: String?, now: UInt64) {
        self.link = link
        self.remote = remote
        self.origin = origin
        heard = now
    }
}

/// A group of `--writers` or `--admins`, resolved to its gid (at start and on SIGHUP).
struct GroupPolicy {
    let group: String?
    /// nil with a group set: the group no longer exists, so nobody is in it (fail closed).
    let gid: UInt32?

    init(group: String?) {
        self.group = group
        gid = group.flatMap { getgrnam($0)?.pointee.gr_gid }
    }

    func contains(_ peer: Peer) -> Bool {
        guard let gid else { return false }
        return peer.gid == gid || peer.groups.contains(gid)
    }
}

/// What the groups give a Unix-socket peer (protocol.md, "Who may do what"): root and
/// `--admins` are admins; `--writers` are writers; the others readers when `--writers` is set,
/// writers when not (every peer could write before roles existed, and still can by default).
struct AccessPolicy {
    let writers: GroupPolicy
    let admins: GroupPolicy

    init(writers: String?, admins: String?) {
        self.writers = GroupPolicy(group: writers)
        self.admins = GroupPolicy(group: admins)
    }

    /// Whether a peer's supplementary groups matter (reading them costs a system call).
    var readsGroups: Bool { writers.group != nil || admins.group != nil }

    func role(of peer: Peer) -> AccessRole {
        if peer.uid == 0 || admins.contains(peer) { return .admin }
        guard writers.group != nil else { return .writer }
        return writers.contains(peer) ? .writer : .reader
    }
}

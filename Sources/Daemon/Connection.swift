// What the manager keeps per client: the socket and its timers around the connection's pure
// state machine (Sources/Session). Everything the connection decides is in `session`. A client
// comes over the Unix socket (its bytes are the Session's lines) or over a WebSocket (`web`: its
// text messages are the Session's lines, framed by WebTransport; Server+Web.swift).
import Session
import WebSocket

#if canImport(Glibc)
    import Glibc
#endif

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
    /// The epoll events this connection is watched for in the server's ConnectionPoller.
    var watched: UInt32 = 0
    /// The sd-event timers the session asked for, armed.
    var timers: [SessionTimer: EventLoop.Timer] = [:]
    /// nil: a Unix-socket client, whose socket carries the Session's bytes as they are. Else the
    /// WebSocket around them.
    let web: WebTransport?

    init(fd: Int32, peer: Peer, session: Session, web: WebTransport? = nil) {
        self.fd = fd
        self.peer = peer
        self.session = session
        self.web = web
    }

    var client: UInt64 { session.config.client }
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

/// `--writers GROUP`: who may change the shared state.
struct WritersPolicy {
    let group: String?
    /// nil with a group set: the group no longer exists, so only root may write (fail closed).
    let gid: UInt32?

    init(group: String?) {
        self.group = group
        gid = group.flatMap { getgrnam($0)?.pointee.gr_gid }
    }

    func allows(_ peer: Peer) -> Bool {
        guard group != nil else { return true }
        if peer.uid == 0 { return true }
        guard let gid else { return false }
        return peer.gid == gid || peer.groups.contains(gid)
    }
}

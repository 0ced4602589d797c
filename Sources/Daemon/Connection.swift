// What the manager keeps per client: the socket and its timers around the connection's pure
// state machine (Sources/Session). Everything the connection decides is in `session`.
import Session

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

    init(fd: Int32, peer: Peer, session: Session) {
        self.fd = fd
        self.peer = peer
        self.session = session
    }

    var client: UInt64 { session.config.client }
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

// Which socket systemd passed is which (sd_listen_fds_with_names(3)): the units name them with
// `FileDescriptorName=`, `protocol` on swiped.socket, `metrics` on swiped-metrics.socket and
// `web` on swiped-web.socket (one or several: a unit may listen on 127.0.0.1 and [::1]). The
// protocol must never end up on the metrics socket's TCP address, where there are no peer
// credentials and `--writers` would mean nothing; so the choice is by name, and the protocol
// socket must be a listening AF_UNIX stream socket whatever its name says.
//
// Unnamed and legacy sockets: with no LISTEN_FDNAMES (systemd-socket-activate without --fdname,
// an older service manager) every socket is named "unknown"; a socket unit without
// `FileDescriptorName=` (one installed before these names) passes its unit's name,
// "swiped.socket". Any name but `protocol`, `metrics` and `web` is such an unnamed socket: when no
// socket is named `protocol`, the first unnamed listening AF_UNIX stream socket is the protocol
// socket, as the first socket was before names. Every other unnamed socket is closed, with a
// warning (the unit passes something swiped does not use).

/// One socket as systemd passed it, and what it is.
struct PassedSocket: Equatable {
    let name: String
    /// A listening AF_UNIX stream socket (the protocol's kind).
    let isUnixListener: Bool
    /// A listening stream socket of any family (the metrics listener's kind: TCP or AF_UNIX).
    let isStreamListener: Bool
}

enum SocketNames {
    static let protocolName = "protocol"
    static let metricsName = "metrics"
    static let webName = "web"

    struct Selection: Equatable {
        /// Indices into the passed sockets.
        var protocolIndex: Int
        var metricsIndex: Int?
        /// The web listener's sockets.
        var webIndices: [Int] = []
        /// Sockets nobody uses: closed, each with a warning.
        var unused: [Int]
    }

    static func select(_ sockets: [PassedSocket]) -> Result<Selection, ListenError> {
        let named = { (name: String) in sockets.indices.filter { sockets[$0].name == name } }
        let protocols = named(protocolName)
        let metrics = named(metricsName)
        let web = named(webName)
        let unnamed = sockets.indices.filter {
            ![protocolName, metricsName, webName].contains(sockets[$0].name)
        }
        let all = sockets.map(\.name).joined(separator: ", ")
        guard protocols.count <= 1 else {
            return fail("systemd passed \(protocols.count) sockets named 'protocol' (\(all))")
        }
        guard metrics.count <= 1 else {
            return fail("systemd passed \(metrics.count) sockets named 'metrics' (\(all))")
        }
        let chosen: Int
        if let named = protocols.first {
            guard sockets[named].isUnixListener else {
                return fail(
                    "the socket systemd passed as 'protocol' is not a listening AF_UNIX stream socket")
            }
            chosen = named
        } else if let first = unnamed.first(where: { sockets[$0].isUnixListener }) {
            chosen = first
        } else {
            return fail("systemd passed no listening AF_UNIX stream socket for the protocol (passed: \(all))")
        }
        if let m = metrics.first, !sockets[m].isStreamListener {
            return fail("the socket systemd passed as 'metrics' is not a listening stream socket")
        }
        if web.contains(where: { !sockets[$0].isStreamListener }) {
            return fail("a socket systemd passed as 'web' is not a listening stream socket")
        }
        return .success(
            Selection(
                protocolIndex: chosen, metricsIndex: metrics.first, webIndices: web,
                unused: unnamed.filter { $0 != chosen }))
    }

    private static func fail(_ description: String) -> Result<Selection, ListenError> {
        .failure(ListenError(description: description))
    }
}

// Where the daemon listens: the socket systemd passed (socket activation,
// sd_listen_fds_with_names(3); PassedSockets.swift says which is which) or one it binds itself. Binding replaces a stale socket file left by a crash but never steals a
// socket another live daemon is serving, and never removes something that is not a socket.
import CSystemd

#if canImport(Glibc)
    import Glibc
#endif

public struct ListenError: Error, CustomStringConvertible, Sendable {
    public let description: String
}

public struct Listener {
    public let fd: Int32
    /// Human-readable: the path, and whether systemd passed it.
    public let origin: String
    public let boundPath: String?
    /// The socket systemd passed as `metrics` (swiped-metrics.socket), non-blocking, if any.
    public private(set) var metricsFD: Int32? = nil
    /// The sockets systemd passed as `web` (swiped-web.socket), non-blocking.
    public private(set) var webFDs: [Int32] = []
    /// What choosing among the passed sockets did, for the journal once it is open
    /// (`logPassedSockets`).
    private(set) var passedNotes: [(Priority, String, [(String, String)])] = []

    /// The protocol socket systemd passed, chosen by name (PassedSockets.swift), when it passed
    /// any; the metrics socket is kept in `metricsFD`, the web sockets in `webFDs`, sockets
    /// nobody uses are closed.
    public static func fromSystemd() throws(ListenError) -> Listener? {
        var names: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = nil
        let count = sd_listen_fds_with_names(1, &names)
        if count < 0 {
            throw ListenError(description: "sd_listen_fds_with_names: \(String(cString: strerror(-count)))")
        }
        defer {
            if let names {
                for i in 0..<Int(count) { free(names[i]) }
                free(names)
            }
        }
        if count == 0 { return nil }
        let start = swiped_listen_fds_start()
        let fds = Array(start..<(start + count))
        let sockets = fds.indices.map { i in
            PassedSocket(
                name: names?[i].map { String(cString: $0) } ?? "unknown",
                isUnixListener: sd_is_socket_unix(fds[i], Int32(SOCK_STREAM.rawValue), 1, nil, 0) > 0,
                isStreamListener: sd_is_socket(fds[i], AF_UNSPEC, Int32(SOCK_STREAM.rawValue), 1) > 0)
        }
        let selection: SocketNames.Selection
        switch SocketNames.select(sockets) {
        case .success(let chosen): selection = chosen
        case .failure(let error):
            for fd in fds { close(fd) }
            throw error
        }
        var notes: [(Priority, String, [(String, String)])] = []
        for i in selection.unused {
            notes.append(
                (
                    .warning, "closing a socket systemd passed that swiped does not use",
                    [
                        ("FD", "\(fds[i])"), ("FD_NAME", sockets[i].name),
                        ("ADDRESS", Listener.localAddress(fds[i]) ?? "?"),
                    ]
                ))
            close(fds[i])
        }
        let fd = fds[selection.protocolIndex]
        try Listener.prepare(fd)
        var listener = Listener(
            fd: fd, origin: "systemd (socket activation): \(Listener.localPath(fd) ?? "?")", boundPath: nil)
        if let m = selection.metricsIndex {
            try Listener.prepare(fds[m])
            // The manager serves /metrics and /health on it (Server+Metrics.swift).
            listener.metricsFD = fds[m]
        }
        for w in selection.webIndices {
            try Listener.prepare(fds[w])
            // The manager serves the page and its WebSocket on them (Server+Web.swift).
            listener.webFDs.append(fds[w])
        }
        listener.passedNotes = notes
        return listener
    }

    /// Logs what `fromSystemd` did besides taking the protocol socket (once the journal is open).
    func logPassedSockets(_ journal: Journal) {
        for (priority, message, fields) in passedNotes { journal.log(priority, message, fields) }
    }

    /// A blocking listener would stop the whole loop in accept(2) when a client gives up
    /// between the wake-up and the accept: not a socket to serve from.
    private static func prepare(_ fd: Int32) throws(ListenError) {
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0, fcntl(fd, F_SETFD, FD_CLOEXEC) == 0
        else {
            throw ListenError(
                description:
                    "the socket passed by systemd (fd \(fd)): fcntl: \(String(cString: strerror(errno)))")
        }
    }

    /// A socket's own address, for the journal: a path, or an IPv4/IPv6 address and port.
    static func localAddress(_ fd: Int32) -> String? { address(fd, peer: false) }

    /// The address of a socket's peer (a browser's), for the journal.
    static func peerAddress(_ fd: Int32) -> String? { address(fd, peer: true) }

    private static func address(_ fd: Int32, peer: Bool) -> String? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let r = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                peer ? getpeername(fd, $0, &length) : getsockname(fd, $0, &length)
            }
        }
        guard r == 0 else { return nil }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        switch Int32(storage.ss_family) {
        case AF_UNIX:
            return localPath(fd)
        case AF_INET:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { a in
                    var address = a.pointee.sin_addr
                    guard inet_ntop(AF_INET, &address, &text, socklen_t(text.count)) != nil else {
                        return nil
                    }
                    return "\(cText(text)):\(UInt16(bigEndian: a.pointee.sin_port))"
                }
            }
        case AF_INET6:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { a in
                    var address = a.pointee.sin6_addr
                    guard inet_ntop(AF_INET6, &address, &text, socklen_t(text.count)) != nil else {
                        return nil
                    }
                    return "[\(cText(text))]:\(UInt16(bigEndian: a.pointee.sin6_port))"
                }
            }
        default:
            return nil
        }
    }

    private static func cText(_ text: [CChar]) -> String {
        String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    public static func bind(path: String) throws(ListenError) -> Listener {
        guard var address = makeAddress(path) else {
            throw ListenError(description: "socket path '\(path)' is longer than 107 bytes")
        }
        var st = stat()
        if lstat(path, &st) == 0 {
            guard (st.st_mode & S_IFMT) == S_IFSOCK else {
                throw ListenError(description: "'\(path)' exists and is not a socket; not replacing it")
            }
            if try isLive(&address, path) {
                throw ListenError(description: "another daemon is listening on '\(path)'; not replacing it")
            }
            // Stale: nobody accepts on it.
            guard unlink(path) == 0 else {
                throw ListenError(
                    description:
                        "cannot remove the stale socket '\(path)': \(String(cString: strerror(errno)))")
            }
        }
        let fd = socket(
            AF_UNIX,
            Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw ListenError(description: "socket: \(String(cString: strerror(errno)))") }
        // The socket file's mode comes from the umask at bind(2): make it 0660 from the start,
        // so there is no moment when it is wider.
        let oldMask = umask(0o117)
        let r = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        let bindErrno = errno
        umask(oldMask)
        guard r == 0 else {
            close(fd)
            throw ListenError(description: "bind '\(path)': \(String(cString: strerror(bindErrno)))")
        }
        // The umask made it so already; this states it, and fails loudly should it not hold.
        guard chmod(path, 0o660) == 0 else {
            let e = errno
            close(fd)
            unlink(path)
            throw ListenError(description: "chmod '\(path)': \(String(cString: strerror(e)))")
        }
        guard listen(fd, SOMAXCONN) == 0 else {
            let e = errno
            close(fd)
            unlink(path)
            throw ListenError(description: "listen '\(path)': \(String(cString: strerror(e)))")
        }
        return Listener(fd: fd, origin: path, boundPath: path)
    }

    static func makeAddress(_ path: String) -> sockaddr_un? {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard !bytes.isEmpty, bytes.count < capacity else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return address
    }

    /// A socket file is live when a connect to it succeeds. Without a socket to probe with,
    /// nothing can be said: the start fails rather than remove a live daemon's socket.
    private static func isLive(_ address: inout sockaddr_un, _ path: String) throws(ListenError) -> Bool {
        let probe = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard probe >= 0 else {
            throw ListenError(
                description:
                    "cannot tell whether '\(path)' is served: socket: \(String(cString: strerror(errno)))")
        }
        defer { close(probe) }
        let r = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(probe, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        return r == 0 || errno == EAGAIN
    }

    private static func localPath(_ fd: Int32) -> String? {
        var address = sockaddr_un()
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let r = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard r == 0 else { return nil }
        return withUnsafeBytes(of: &address.sun_path) { raw in
            let bytes = raw.prefix(while: { $0 != 0 })
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    /// Removes the socket file this process bound (not one systemd owns); why not, if it could
    /// not (a file already gone is no failure).
    public func removeSocketFile() -> String? {
        guard let boundPath, unlink(boundPath) != 0, errno != ENOENT else { return nil }
        return "unlink '\(boundPath)': \(String(cString: strerror(errno)))"
    }
}

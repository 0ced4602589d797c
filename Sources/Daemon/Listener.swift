// Where the daemon listens: the socket systemd passed (socket activation, sd_listen_fds(3)) or
// one it binds itself. Binding replaces a stale socket file left by a crash but never steals a
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

    /// Takes the first socket passed by systemd, when there is one.
    public static func fromSystemd() throws(ListenError) -> Listener? {
        let count = sd_listen_fds(1)
        if count < 0 {
            throw ListenError(description: "sd_listen_fds: \(String(cString: strerror(-count)))")
        }
        if count == 0 { return nil }
        let fd = swiped_listen_fds_start()
        if count > 1 {
            // Extra sockets are closed so that they do not leak; the unit should pass one.
            for extra in (fd + 1)..<(fd + count) { close(extra) }
        }
        guard sd_is_socket_unix(fd, Int32(SOCK_STREAM.rawValue), 1, nil, 0) > 0 else {
            throw ListenError(
                description:
                    "the socket passed by systemd (fd \(fd)) is not a listening AF_UNIX stream socket")
        }
        // A blocking listener would stop the whole loop in accept(2) when a client gives up
        // between the wake-up and the accept: not a socket to serve from.
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0, fcntl(fd, F_SETFD, FD_CLOEXEC) == 0
        else {
            throw ListenError(
                description:
                    "the socket passed by systemd (fd \(fd)): fcntl: \(String(cString: strerror(errno)))")
        }
        return Listener(
            fd: fd, origin: "systemd (socket activation): \(Listener.localPath(fd) ?? "?")", boundPath: nil)
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

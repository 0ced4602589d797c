// The TCP listening sockets the daemon binds itself: `--metrics` and `--web`. (Under the shipped
// unit, RestrictAddressFamilies=AF_UNIX forbids them: systemd passes them instead.)
import CSystemd  // SOCK_NONBLOCK, SOCK_CLOEXEC (sys/socket.h, through the shim)

#if canImport(Glibc)
    import Glibc
#endif

enum TCPListen {
    /// A listening socket on `address`, non-blocking and close-on-exec. An IPv6 one takes IPv6
    /// only (IPV6_V6ONLY): `[::]:P` then leaves `0.0.0.0:P` free, so both can be bound (by
    /// default Linux would map IPv4 onto the IPv6 socket and refuse the second bind).
    static func bind(_ address: ListenAddress, backlog: Int32) throws(SystemError) -> Int32 {
        let family = address.isIPv6 ? AF_INET6 : AF_INET
        let fd = socket(
            family,
            Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemError("socket") }
        var one: Int32 = 1
        // A restart rebinds at once, whatever connections of the last run linger in TIME_WAIT.
        guard setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
            let error = SystemError("setsockopt SO_REUSEADDR")
            close(fd)
            throw error
        }
        let r: Int32
        if address.isIPv6 {
            guard
                setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size))
                    == 0
            else {
                let error = SystemError("setsockopt IPV6_V6ONLY")
                close(fd)
                throw error
            }
            var a = sockaddr_in6()
            a.sin6_family = sa_family_t(AF_INET6)
            a.sin6_port = address.port.bigEndian
            _ = inet_pton(AF_INET6, address.host, &a.sin6_addr)  // checked by ListenAddress
            r = withUnsafePointer(to: &a) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        } else {
            var a = sockaddr_in()
            a.sin_family = sa_family_t(AF_INET)
            a.sin_port = address.port.bigEndian
            _ = inet_pton(AF_INET, address.host, &a.sin_addr)  // checked by ListenAddress
            r = withUnsafePointer(to: &a) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        guard r == 0 else {
            let error = SystemError("bind \(address)")
            close(fd)
            throw error
        }
        guard listen(fd, backlog) == 0 else {
            let error = SystemError("listen \(address)")
            close(fd)
            throw error
        }
        return fd
    }
}

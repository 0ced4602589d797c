// Which socket to talk to, and why that one: the reason goes into every "cannot connect"
// message, so that a person sees at once whether the default or their option was wrong.
#if canImport(Glibc)
    import Glibc
#endif

struct SocketChoice: Equatable {
    var path: String
    /// Why this path, to follow "Tried PATH because " in messages.
    var reason: String

    /// `--socket`, else `$SWIPED_SOCKET`, else the first of `$XDG_RUNTIME_DIR/swiped.sock`
    /// (a daemon run by the user) and `/run/swiped/swiped.sock` (swiped.socket) that exists,
    /// else `./swiped.sock` (`make run`).
    static func resolve(
        option: String?, environment: [String: String],
        exists: (String) -> Bool = SocketChoice.exists
    ) -> SocketChoice {
        if let option { return SocketChoice(path: option, reason: "--socket says so") }
        if let path = environment["SWIPED_SOCKET"], !path.isEmpty {
            return SocketChoice(path: path, reason: "$SWIPED_SOCKET says so")
        }
        var tried: [String] = []
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
            let path = runtime + "/swiped.sock"
            if exists(path) {
                return SocketChoice(
                    path: path, reason: "it exists (the default, $XDG_RUNTIME_DIR/swiped.sock)")
            }
            tried.append(path)
        }
        let system = "/run/swiped/swiped.sock"
        if exists(system) {
            return SocketChoice(path: system, reason: "it exists (the default, swiped.socket's path)")
        }
        tried.append(system)
        return SocketChoice(
            path: "./swiped.sock",
            reason: "there is no --socket, no $SWIPED_SOCKET, and no \(tried.joined(separator: " or "))")
    }

    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }
}
